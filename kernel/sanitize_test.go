package kernel_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a3s-lab/code-wasm/kernel"
)

// fallible is a FallibleSanitizer standing in for a host provider behind a
// timeout: it cleans "SECRET", or (failing) waits delay and then reports
// the failure, as a provider that never answers does at its timeout.
type fallible struct {
	fail  bool
	delay time.Duration
	calls atomic.Int64
}

func (p *fallible) TrySanitizeAll(in []string) ([]string, error) {
	p.calls.Add(1)
	if p.fail {
		time.Sleep(p.delay)
		return nil, errors.New("it did not answer within the timeout")
	}
	out := make([]string, len(in))
	for i, s := range in {
		out[i] = strings.ReplaceAll(s, "SECRET", "***")
	}
	return out, nil
}

func (p *fallible) Sanitize(s string) string {
	out, err := p.TrySanitizeAll([]string{s})
	if err != nil {
		return kernel.Withheld(err)
	}
	return out[0]
}

// TestFailedSanitizerAskedOncePerCall: once the provider fails, the rest of
// the invocation's strings (args for events, output, metadata, deltas) are
// withheld without asking again, so a provider that never answers costs one
// timeout per call; a provider that answers is asked for every part.
func TestFailedSanitizerAskedOncePerCall(t *testing.T) {
	const timeout = 300 * time.Millisecond
	cases := []struct {
		name      string
		p         *fallible
		wantCalls func(int64) bool
		clean     bool
	}{
		{"never answers", &fallible{fail: true, delay: timeout}, func(n int64) bool { return n == 1 }, false},
		{"throws", &fallible{fail: true}, func(n int64) bool { return n == 1 }, false},
		{"answers", &fallible{}, func(n int64) bool { return n >= 3 }, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fx := newEffect("fx")
			fx.onRun = func(_ context.Context, call *kernel.Call) (*kernel.Result, error) {
				call.Emit("delta SECRET")
				return kernel.OK("out SECRET", map[string]any{"path": "SECRET/a", "n": 1}), nil
			}
			f := newKernel(t, kernel.Governance{Security: c.p}, []kernel.Tool{fx})
			start := time.Now()
			res := f.call(t, kernel.OriginHostTrusted, "fx", `{"msg":"SECRET"}`)
			took := time.Since(start)

			if n := c.p.calls.Load(); !c.wantCalls(n) {
				t.Errorf("the provider was asked %d times", n)
			}
			if c.p.delay > 0 && took >= 2*timeout {
				t.Errorf("the call took %v with a provider timeout of %v (want about one timeout)", took, timeout)
			}
			all, _ := json.Marshal(f.rec.all())
			b, _ := json.Marshal(res)
			seen := string(all) + string(b)
			if strings.Contains(seen, "SECRET") {
				t.Errorf("a raw secret leaked: %s", seen)
			}
			want := "[output withheld: the security provider failed: it did not answer within the timeout]"
			if c.clean {
				want = "out ***"
			}
			if res.Output != want {
				t.Errorf("output %q, want %q", res.Output, want)
			}
			if c.clean {
				if res.Metadata["path"] != "***/a" {
					t.Errorf("metadata %v", res.Metadata)
				}
				return
			}
			// Keys are cleaned too: withheld, they collapse into one.
			for k, v := range res.Metadata {
				if s, _ := v.(string); !strings.HasPrefix(k, "[output withheld:") || !strings.HasPrefix(s, "[output withheld:") {
					t.Errorf("metadata not withheld: %v", res.Metadata)
				}
			}
			for _, e := range f.rec.ofType(kernel.EventToolEnd) {
				if a, _ := json.Marshal(e.Payload["args"]); !strings.Contains(string(a), "withheld") {
					t.Errorf("tool_end args not withheld: %s", a)
				}
			}
		})
	}
}

// TestFailedSanitizerIsPerInvocation: a failure withholds only within its
// own call; the next call asks the provider again.
func TestFailedSanitizerIsPerInvocation(t *testing.T) {
	p := &fallible{fail: true}
	f := newKernel(t, kernel.Governance{Security: p}, []kernel.Tool{newEffect("fx")})
	f.call(t, kernel.OriginHostTrusted, "fx", `{"msg":"a"}`)
	f.call(t, kernel.OriginHostTrusted, "fx", `{"msg":"b"}`)
	if n := p.calls.Load(); n != 2 {
		t.Errorf("the provider was asked %d times over two calls, want 2", n)
	}
}
