// Package llmtest is the scripted provider server and the conformance
// suite every llm.Client must pass.
//
// The server (Start, native only: a wasm instance cannot listen; the
// helper binary cmd/llmtestserver serves it to js/wasm tests in Node and
// Chromium) answers POST ${URL}/s/<id>/v1/chat/completions and
// /s/<id>/v1/messages over real HTTP on 127.0.0.1 from a Script loaded
// with Remote.Load: streams in each provider's wire format, rendered from
// provider-neutral Events (text, reasoning, interleaved tool-call
// fragments, pings, errors after a 200, truncation, stalls, byte-split
// writes, raw bytes for quirks), and error answers (429/529 with
// retry-after). It validates requests as the real APIs do (headers,
// max_tokens, roles, every tool call answered by its result in the next
// message) and answers a violation with the provider's own 400 body. It
// records every request and every client that left before the stream
// ended, and sends CORS headers so pages on another origin can use it.
//
// Run is the conformance suite: text, one and two tool calls per turn with
// interleaved fragments, usage, stop reasons, reasoning, each provider's
// quirks, retries, timeouts and cancellation, for both wire formats.
//
// It is not a model: it answers what the script says, in order.
package llmtest
