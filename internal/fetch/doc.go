// Package fetch is the one HTTP client seam of the module (llm, and later
// mcp and web_fetch): one request, its status and headers, and its body as
// a stream. Under js/wasm it calls the JS global fetch through syscall/js
// (it works in browsers, Node and Workers; net/http would add 1.7 MB gzip
// and refuses fetch under Node, FIELD-NOTES.md), natively it uses net/http.
// Cancelling the context aborts the request and any body read.
//
// It is not a retrying or policy-aware client: retries, timeouts between
// stream reads and URL checks belong to its callers.
package fetch
