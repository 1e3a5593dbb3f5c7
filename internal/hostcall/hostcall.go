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

// extraKey keys the value WithExtra puts in a context.
type extraKey struct{}

// WithExtra returns ctx carrying v for the one host call made with it: a
// JS dispatcher (internal/jsbridge.Caller) hands v to the kind's handler
// beside the payload, as ctx.extra (npm/src/PROTOCOL.md §2). It carries
// what JSON cannot, such as a Go function the handler may call back
// synchronously (ptc.start's direct door, PROTOCOL.md §4).
func WithExtra(ctx context.Context, v any) context.Context {
	return context.WithValue(ctx, extraKey{}, v)
}

// Extra is the value WithExtra put in ctx, or nil.
func Extra(ctx context.Context) any { return ctx.Value(extraKey{}) }
