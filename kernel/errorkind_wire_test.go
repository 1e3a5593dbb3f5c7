package kernel

import (
	"bytes"
	"encoding/json"
	"testing"
)

// ErrorKind.MarshalJSON writes what the map it wrote through before
// wrote, byte for byte, for every type and its fields.
func TestErrorKindWireMatchesTheMap(t *testing.T) {
	old := func(k ErrorKind) []byte {
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
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	full := ErrorKind{Path: "a/<b>.txt", Expected: "e&1", Actual: "a\u2028", Code: "c", Message: "m \"q\" \x01 é", Reason: "r",
		Retryable: true, RetryAfterMs: 1500, Op: "op", DurationMs: 30000, Failed: 2, Total: 5}
	types := []ErrorType{ErrVersionConflict, ErrRemoteGitConflict, ErrNotFound, ErrInvalidArgument, ErrHookDenied, ErrUnsupported,
		ErrTimeout, ErrTransport, ErrCancelled, ErrPartialFailure, ErrRateLimited, "something_else", ""}
	for _, ty := range types {
		for _, k := range []ErrorKind{full, {}} {
			k.Type = ty
			got, err := json.Marshal(k)
			if err != nil {
				t.Fatal(err)
			}
			if want := old(k); !bytes.Equal(got, want) {
				t.Errorf("%q: %s, want %s", ty, got, want)
			}
			var back ErrorKind
			if err := json.Unmarshal(got, &back); err != nil || back.Type != ty {
				t.Errorf("%q: read back %+v, %v", ty, back, err)
			}
		}
	}
}
