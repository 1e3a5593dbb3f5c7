// Package hostcall is the one Go→JS boundary type set every host-backed
// part shares: the host dispatcher (Func) through which Go asks the JS
// side to run a user function (npm/src/PROTOCOL.md §2), and the coded
// error (Coded) that crosses back to JS as an Error with a code. The PTC
// host engine, the governance bridge, and the coming LLM host clients,
// host tools, web search providers, Node directory host and Durable
// Object storage reach JS through Func. It imports nothing of syscall/js,
// so native code and tests use it too.
package hostcall
