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
