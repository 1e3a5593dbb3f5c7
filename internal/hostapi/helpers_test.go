package hostapi

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/a3s-lab/code-wasm/kernel"
)

// Small assertion helpers (the module keeps testify out of its graph).

func msg(extra []any) string {
	if len(extra) == 0 {
		return ""
	}
	if f, ok := extra[0].(string); ok {
		return ": " + fmt.Sprintf(f, extra[1:]...)
	}
	return ": " + fmt.Sprint(extra...)
}

func equal(t *testing.T, want, got any, extra ...any) bool {
	t.Helper()
	if !reflect.DeepEqual(want, got) {
		t.Errorf("want %#v, got %#v%s", want, got, msg(extra))
		return false
	}
	return true
}

func notEqual(t *testing.T, bad, got any, extra ...any) {
	t.Helper()
	if reflect.DeepEqual(bad, got) {
		t.Errorf("did not want %#v%s", got, msg(extra))
	}
}

// contains checks a substring of a string, or an element of a []string.
func contains(t *testing.T, hay, needle any, extra ...any) {
	t.Helper()
	if !has(hay, needle) {
		t.Errorf("%#v does not contain %#v%s", hay, needle, msg(extra))
	}
}

func notContains(t *testing.T, hay, needle any, extra ...any) {
	t.Helper()
	if has(hay, needle) {
		t.Errorf("%#v contains %#v%s", hay, needle, msg(extra))
	}
}

func has(hay, needle any) bool {
	switch h := hay.(type) {
	case string:
		return strings.Contains(h, fmt.Sprint(needle))
	case []string:
		for _, x := range h {
			if x == needle {
				return true
			}
		}
	}
	return false
}

func noErr(t *testing.T, err error, extra ...any) {
	t.Helper()
	if err != nil {
		t.Fatalf("unexpected error: %v%s", err, msg(extra))
	}
}

func isErr(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		t.Fatal("expected an error, got nil")
	}
}

func eventually(t *testing.T, cond func() bool, within, tick time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within %v", within)
		}
		time.Sleep(tick)
	}
}

func eventOf(typ string, p map[string]any) kernel.Event {
	return kernel.Event{Version: 1, Type: typ, Payload: p}
}
