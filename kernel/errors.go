package kernel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strconv"

	"github.com/a3s-lab/code-wasm/errkind"
)

// ErrorType is the `type` tag of a serialised ErrorKind (REFERENCE.md §3.6).
// The kinds live in the leaf package errkind, which the packages that make
// errors import.
type ErrorType = errkind.Kind

// The error types, as errkind names them.
const (
	ErrVersionConflict   = errkind.VersionConflict
	ErrRemoteGitConflict = errkind.RemoteGitConflict
	ErrNotFound          = errkind.NotFound
	ErrInvalidArgument   = errkind.InvalidArgument
	ErrHookDenied        = errkind.HookDenied
	ErrUnsupported       = errkind.Unsupported
	ErrTimeout           = errkind.Timeout
	ErrTransport         = errkind.Transport
	ErrCancelled         = errkind.Cancelled
	ErrPartialFailure    = errkind.PartialFailure
	ErrRateLimited       = errkind.RateLimited
)

// ErrorKind is a structured failure reason. Only the fields of its Type are
// serialised, with a `type` tag:
//
//	version_conflict{path, expected, actual}   remote_git_conflict{code, message}
//	not_found{path}                            invalid_argument{message}
//	hook_denied{reason, retryable, retry_after_ms}
//	unsupported{message}                       timeout{op, duration_ms}
//	transport{op}                              cancelled{op}
//	partial_failure{failed, total}             rate_limited{retry_after_ms}
type ErrorKind struct {
	Type         ErrorType
	Path         string
	Expected     string
	Actual       string
	Code         string
	Message      string
	Reason       string
	Retryable    bool
	RetryAfterMs int64
	Op           string
	DurationMs   int64
	Failed       int
	Total        int
}

// MarshalJSON writes the tagged form: "type" and the fields of that type,
// keys in the order of their names (the map it wrote through before).
// Through errorKindWire rather than a map: a refused tool call's result
// spent half its encoding in this method's map (V8 profile of ctx
// read {} under js/wasm).
func (k ErrorKind) MarshalJSON() ([]byte, error) {
	w := errorKindWire{Type: k.Type}
	switch k.Type {
	case ErrVersionConflict:
		w.Path, w.Expected, w.Actual = &k.Path, &k.Expected, &k.Actual
	case ErrRemoteGitConflict:
		w.Code, w.Message = &k.Code, &k.Message
	case ErrNotFound:
		w.Path = &k.Path
	case ErrInvalidArgument, ErrUnsupported:
		w.Message = &k.Message
	case ErrHookDenied:
		w.Reason, w.Retryable, w.RetryAfterMs = &k.Reason, &k.Retryable, retryAfter(k.RetryAfterMs)
	case ErrTimeout:
		w.Op, w.DurationMs = &k.Op, &k.DurationMs
	case ErrTransport, ErrCancelled:
		w.Op = &k.Op
	case ErrPartialFailure:
		w.Failed, w.Total = &k.Failed, &k.Total
	case ErrRateLimited:
		w.RetryAfterMs = retryAfter(k.RetryAfterMs)
	}
	return json.Marshal(w)
}

// errorKindWire holds the fields one ErrorType writes: nil ones are left
// out; declared in the order of their JSON names.
type errorKindWire struct {
	Actual       *string         `json:"actual,omitempty"`
	Code         *string         `json:"code,omitempty"`
	DurationMs   *int64          `json:"duration_ms,omitempty"`
	Expected     *string         `json:"expected,omitempty"`
	Failed       *int            `json:"failed,omitempty"`
	Message      *string         `json:"message,omitempty"`
	Op           *string         `json:"op,omitempty"`
	Path         *string         `json:"path,omitempty"`
	Reason       *string         `json:"reason,omitempty"`
	RetryAfterMs json.RawMessage `json:"retry_after_ms,omitempty"`
	Retryable    *bool           `json:"retryable,omitempty"`
	Total        *int            `json:"total,omitempty"`
	Type         ErrorType       `json:"type"`
}

// retryAfter is retry_after_ms: the milliseconds, or null when not known.
func retryAfter(ms int64) json.RawMessage {
	if ms > 0 {
		return strconv.AppendInt(nil, ms, 10)
	}
	return json.RawMessage("null")
}

// UnmarshalJSON reads the tagged form.
func (k *ErrorKind) UnmarshalJSON(b []byte) error {
	var w struct {
		Type         ErrorType `json:"type"`
		Path         string    `json:"path"`
		Expected     string    `json:"expected"`
		Actual       string    `json:"actual"`
		Code         string    `json:"code"`
		Message      string    `json:"message"`
		Reason       string    `json:"reason"`
		Retryable    bool      `json:"retryable"`
		RetryAfterMs int64     `json:"retry_after_ms"`
		Op           string    `json:"op"`
		DurationMs   int64     `json:"duration_ms"`
		Failed       int       `json:"failed"`
		Total        int       `json:"total"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*k = ErrorKind(w)
	return nil
}

// Error is a tool failure with a kind. Tools return it (or any error, whose
// kind KindOf derives).
type Error struct {
	Kind ErrorKind
	Msg  string
	Err  error // optional cause
}

func (e *Error) Error() string {
	if e.Msg != "" {
		return e.Msg
	}
	if e.Err != nil {
		return e.Err.Error()
	}
	return string(e.Kind.Type)
}

func (e *Error) Unwrap() error { return e.Err }

// Errorf makes an *Error of the given type; the message becomes both the
// error text and, for invalid_argument and unsupported, the kind's message.
func Errorf(t ErrorType, format string, args ...any) *Error {
	msg := fmt.Sprintf(format, args...)
	k := ErrorKind{Type: t}
	if t == ErrInvalidArgument || t == ErrUnsupported {
		k.Message = msg
	}
	return &Error{Kind: k, Msg: msg}
}

// InvalidArgument is shorthand for Errorf(ErrInvalidArgument, ...).
func InvalidArgument(format string, args ...any) *Error {
	return Errorf(ErrInvalidArgument, format, args...)
}

// KindOf derives the structured kind of an error: an *Error's own kind;
// the kind an error in its tree reports (errkind.Error: workspace
// conflicts, path violations and path-shape errors, a directory where a
// file was wanted or the reverse: invalid_argument), with the path an
// errkind.Pathed error names; missing and existing paths (io/fs);
// context cancellation and deadlines. It returns nil for an unclassified
// error (the kernel then gives the failed result invalid_argument with the
// tool's message).
func KindOf(err error) *ErrorKind {
	if err == nil {
		return nil
	}
	var ke *Error
	if errors.As(err, &ke) {
		k := ke.Kind
		return &k
	}
	var ce errkind.Conflict
	if errors.As(err, &ce) {
		path, expected, actual := ce.Conflict()
		return &ErrorKind{Type: ErrVersionConflict, Path: path, Expected: expected, Actual: actual}
	}
	if errkind.Is(err, errkind.VersionConflict) {
		k := &ErrorKind{Type: ErrVersionConflict}
		k.Path, _ = errkind.Path(err)
		return k
	}
	if errors.Is(err, fs.ErrNotExist) || errkind.Is(err, errkind.NotFound) {
		k := &ErrorKind{Type: ErrNotFound}
		k.Path, _ = errkind.Path(err)
		return k
	}
	if errkind.Is(err, errkind.InvalidArgument) || errors.Is(err, fs.ErrExist) || errors.Is(err, fs.ErrInvalid) {
		// Path-shape errors: the call named a directory where a file was
		// wanted (or the reverse), or a path that already exists.
		return &ErrorKind{Type: ErrInvalidArgument, Message: err.Error()}
	}
	if errkind.Is(err, errkind.Unsupported) {
		return &ErrorKind{Type: ErrUnsupported, Message: err.Error()}
	}
	if errors.Is(err, context.Canceled) {
		return &ErrorKind{Type: ErrCancelled, Op: "tool"}
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return &ErrorKind{Type: ErrTimeout, Op: "tool"}
	}
	return nil
}
