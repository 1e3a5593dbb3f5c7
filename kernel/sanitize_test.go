package kernel_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
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

// jsonInner is s JSON-encoded, without the quotes; ascii also escapes
// every non-ASCII character (\u00e9), as some encoders do.
func jsonInner(s string, ascii bool) string {
	b, _ := json.Marshal(s)
	out := string(b[1 : len(b)-1])
	if !ascii {
		return out
	}
	var w strings.Builder
	for _, r := range out {
		switch {
		case r < 0x80:
			w.WriteRune(r)
		case r > 0xffff:
			r1, r2 := (r-0x10000)>>10+0xd800, (r-0x10000)&0x3ff+0xdc00
			fmt.Fprintf(&w, `\u%04x\u%04x`, r1, r2)
		default:
			fmt.Fprintf(&w, `\u%04x`, r)
		}
	}
	return w.String()
}

// forms are the spellings of secret a leak could take: the literal, JSON-
// escaped once and twice (with and without ASCII escapes), Go-quoted.
func forms(secret string) []string {
	goq := strconv.Quote(secret)
	once := jsonInner(secret, false)
	return []string{secret, once, jsonInner(secret, true), jsonInner(once, false), jsonInner(jsonInner(secret, true), false), goq[1 : len(goq)-1]}
}

// TestSanitiserSeesEscapedSecrets: finding 8. A provider that matches the
// literal secret also cleans it where a tool emits it escaped: a JSON
// string in the output (a program's result), twice-escaped JSON, a Go-quoted
// error message, metadata strings and raw JSON, streamed deltas, and a
// nested call's output quoted by its parent; in the result and in every
// event. Text without the secret is left byte for byte.
func TestSanitiserSeesEscapedSecrets(t *testing.T) {
	secrets := map[string]string{
		"quote":         `pa"ss`,
		"backslash":     `c:\key\x`,
		"newline":       "line1\nline2",
		"control":       "a\x01b\tc",
		"non-ASCII":     "pässwörd-😀",
		"html-escaped":  "a<b>&c",
		"all of them":   "\"\\\n\x02é<",
		"plain literal": "hunter2",
	}
	type emit struct {
		name string
		res  func(secret string) (*kernel.Result, error)
	}
	jsonOf := func(v any) string { b, _ := json.MarshalIndent(v, "", "  "); return string(b) }
	emits := []emit{
		{"output: a script result as JSON", func(s string) (*kernel.Result, error) {
			return kernel.OK("Result:\n"+jsonOf(map[string]any{"token": s, "list": []string{"x", s}}), nil), nil
		}},
		{"output: JSON inside a JSON string", func(s string) (*kernel.Result, error) {
			inner, _ := json.Marshal(map[string]string{"k": s})
			return kernel.OK(jsonOf(map[string]string{"wrapped": string(inner)}), nil), nil
		}},
		{"output: ASCII-escaped JSON", func(s string) (*kernel.Result, error) {
			return kernel.OK(`{"t": "`+jsonInner(s, true)+`"}`, nil), nil
		}},
		{"error: Go-quoted", func(s string) (*kernel.Result, error) {
			return nil, kernel.InvalidArgument("line does not match: file: %q", s)
		}},
		{"metadata: script_result raw JSON and string leaves", func(s string) (*kernel.Result, error) {
			raw, _ := json.Marshal(map[string]any{"deep": []any{map[string]string{"v": s}}})
			inner, _ := json.Marshal(s)
			return kernel.OK("ok", map[string]any{"script_result": json.RawMessage(raw), "text": "quoted " + string(inner), "nested": map[string]any{"json": string(raw)}}), nil
		}},
		{"delta: streamed JSON", func(s string) (*kernel.Result, error) {
			return nil, nil // the delta is emitted by the tool below
		}},
	}
	for sname, secret := range secrets {
		for _, em := range emits {
			t.Run(sname+"/"+em.name, func(t *testing.T) {
				p := kernel.SanitizerFunc(func(s string) string { return strings.ReplaceAll(s, secret, "[redacted]") })
				leak := newEffect("leak")
				leak.onRun = func(_ context.Context, call *kernel.Call) (*kernel.Result, error) {
					if em.name == "delta: streamed JSON" {
						b, _ := json.Marshal(map[string]string{"chunk": secret})
						call.Emit(string(b))
						return kernel.OK("done", nil), nil
					}
					return em.res(secret)
				}
				// quoter is a program stand-in: its output is its child's
				// result as JSON text.
				quoter := newEffect("quoter")
				quoter.onRun = func(ctx context.Context, call *kernel.Call) (*kernel.Result, error) {
					return kernel.OK("Result:\n"+jsonOf(call.Invoker.Invoke(ctx, "leak", json.RawMessage(`{"msg":"x"}`))), nil), nil
				}
				f := newKernel(t, kernel.Governance{Security: p}, []kernel.Tool{leak, fan{"fan"}, quoter})
				// Directly, as a batch child, and as a child whose result
				// the parent quotes as JSON.
				direct := f.call(t, kernel.OriginAgent, "leak", `{"msg":"x"}`)
				nested := f.call(t, kernel.OriginAgent, "fan", `{"calls":[{"tool":"leak","args":{"msg":"x"}}]}`)
				quoted := f.call(t, kernel.OriginAgent, "quoter", `{"msg":"x"}`)
				var texts []string
				for _, r := range []*kernel.Result{direct, nested, quoted} {
					b, _ := json.Marshal(r)
					texts = append(texts, r.Output, string(b))
				}
				for _, e := range f.rec.all() {
					b, _ := json.Marshal(e.Payload)
					texts = append(texts, string(b))
				}
				for _, form := range forms(secret) {
					for _, txt := range texts {
						if strings.Contains(txt, form) {
							t.Fatalf("secret leaked as %q in %s", form, txt)
						}
					}
				}
				if direct.ExitCode == 0 && em.name != "delta: streamed JSON" && !strings.Contains(direct.Output+fmt.Sprint(direct.Metadata), "[redacted]") {
					t.Errorf("nothing was redacted: %q %v", direct.Output, direct.Metadata)
				}
			})
		}
	}
}

// TestSanitiserLeavesOtherTextAlone: escaped literals without a secret,
// odd quotes and stray backslashes come back byte for byte; a pathological
// run of quotes and backslashes is cleaned in linear time.
func TestSanitiserLeavesOtherTextAlone(t *testing.T) {
	p := kernel.SanitizerFunc(func(s string) string { return strings.ReplaceAll(s, "SECRET", "***") })
	texts := []string{
		`{"a": "x\"y", "b": "\u00e9\\"}`,
		`He said "hi and "x\"y" then \ left`,
		`path "C:\temp" and "unterminated \"`,
		"two\n\"lines\\\" here\"\n",
		`"\q" is not an escape`,
	}
	out := newEffect("out")
	f := newKernel(t, kernel.Governance{Security: p}, []kernel.Tool{out})
	for _, txt := range texts {
		out.onRun = func(context.Context, *kernel.Call) (*kernel.Result, error) { return kernel.OK(txt, nil), nil }
		if res := f.call(t, kernel.OriginAgent, "out", `{"msg":"x"}`); res.Output != txt {
			t.Errorf("changed %q into %q", txt, res.Output)
		}
	}
	// The secret escaped in prose with an odd quote before it is found.
	odd := `say "hi, then "SEC\"RET" no` // decodes to SEC"RET: not the secret
	out.onRun = func(context.Context, *kernel.Call) (*kernel.Result, error) {
		return kernel.OK(odd+` and "x \u0053ECRET"`, nil), nil
	}
	if res := f.call(t, kernel.OriginAgent, "out", `{"msg":"x"}`); !strings.HasSuffix(res.Output, `and "x ***"`) || !strings.HasPrefix(res.Output, odd) {
		t.Errorf("got %q", res.Output)
	}

	big := strings.Repeat(`"\`, 1<<19) + strings.Repeat(`\"`, 1<<19)
	out.onRun = func(context.Context, *kernel.Call) (*kernel.Result, error) { return kernel.OK(big, nil), nil }
	start := time.Now()
	res := f.call(t, kernel.OriginHostTrusted, "out", `{"msg":"x"}`)
	if d := time.Since(start); d > 10*time.Second || res.ExitCode != 0 {
		t.Fatalf("2 MiB of quotes and backslashes took %v (exit %d)", d, res.ExitCode)
	}
}
