// Package hostcall is the one Go→JS boundary type set every host-backed
// part shares: the host dispatcher (Func) through which Go asks the JS
// side to run a user function (npm/src/PROTOCOL.md §2), and the coded
// error (Coded) that crosses back to JS as an Error with a code. The PTC
// host engine, the governance bridge, and the coming LLM host clients,
// host tools, web search providers, Node directory host and Durable
// Object storage reach JS through Func. It imports nothing of syscall/js,
// so native code and tests use it too.
package hostcall

import "context"

// Func is a host dispatcher: it asks the JS side to run the handler of
// kind with a JSON payload and returns the JSON result. It must honour
// ctx. A nil Func means there is no JS side to ask.
type Func func(ctx context.Context, kind string, payload []byte) ([]byte, error)

// Coded is an error that crosses to JS as an Error whose `code` is
// ErrorCode() (npm/src/PROTOCOL.md lists the codes) and, when
// ErrorDetail() is not empty, whose `detail` is that JSON string.
type Coded interface {
	error
	ErrorCode() string
	ErrorDetail() string
}
