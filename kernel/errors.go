package kernel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"

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

// MarshalJSON writes the tagged form.
func (k ErrorKind) MarshalJSON() ([]byte, error) {
	m := map[string]any{"type": k.Type}
	switch k.Type {
	case ErrVersionConflict:
		m["path"], m["expected"], m["actual"] = k.Path, k.Expected, k.Actual
	case ErrRemoteGitConflict:
		m["code"], m["message"] = k.Code, k.Message
	case ErrNotFound:
		m["path"] = k.Path
	case ErrInvalidArgument, ErrUnsupported:
		m["message"] = k.Message
	case ErrHookDenied:
		m["reason"], m["retryable"] = k.Reason, k.Retryable
		if k.RetryAfterMs > 0 {
			m["retry_after_ms"] = k.RetryAfterMs
		} else {
			m["retry_after_ms"] = nil
		}
	case ErrTimeout:
		m["op"], m["duration_ms"] = k.Op, k.DurationMs
	case ErrTransport, ErrCancelled:
		m["op"] = k.Op
	case ErrPartialFailure:
		m["failed"], m["total"] = k.Failed, k.Total
	case ErrRateLimited:
		if k.RetryAfterMs > 0 {
			m["retry_after_ms"] = k.RetryAfterMs
		} else {
			m["retry_after_ms"] = nil
		}
	}
	return json.Marshal(m)
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
