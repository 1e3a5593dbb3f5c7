//go:build !js

package ptc_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/a3s-lab/code-wasm/kernel"
	"github.com/a3s-lab/code-wasm/ptc"
	"github.com/a3s-lab/code-wasm/ptc/qjsengine"
)

// noTools is an Invoker with no tools: enough for Execute's own checks.
type noTools struct{}

func (noTools) Invoke(context.Context, string, json.RawMessage) *kernel.Result {
	return &kernel.Result{ExitCode: 1, Output: "no tools"}
}
func (noTools) Capabilities(string, json.RawMessage) (kernel.Capabilities, bool) {
	return kernel.Capabilities{}, false
}
func (noTools) ToolNames() []string { return nil }

// TestTimeoutLimitBound (B7): Execute itself (not only the kernel's schema
// check) refuses limits.timeoutMs above ptc.MaxTimeout, and takes it at the
// bound.
func TestTimeoutLimitBound(t *testing.T) {
	tool := ptc.New(ptc.Config{Engine: qjsengine.New()})
	for _, tc := range []struct {
		name string
		ms   int64
		ok   bool
	}{
		{"at the maximum", ptc.MaxTimeout.Milliseconds(), true},
		{"one over", ptc.MaxTimeout.Milliseconds() + 1, false},
		{"an hour", 3_600_000, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args, _ := json.Marshal(map[string]any{"type": "script", "source": "async function run(ctx) { return 1 }", "limits": map[string]any{"timeoutMs": tc.ms}})
			res, err := tool.Execute(context.Background(), &kernel.Call{Name: "program", Args: args, Invoker: noTools{}})
			if tc.ok {
				if err != nil || res.ExitCode != 0 {
					t.Fatalf("%v %+v", err, res)
				}
				return
			}
			k := kernel.KindOf(err)
			if k == nil || k.Type != kernel.ErrInvalidArgument || !strings.Contains(err.Error(), "limits.timeoutMs must be at most 600000") {
				t.Fatalf("err %v kind %+v", err, k)
			}
		})
	}
	var schema struct {
		Properties struct {
			Limits struct {
				Properties struct {
					TimeoutMs struct {
						Maximum int64 `json:"maximum"`
					} `json:"timeoutMs"`
				} `json:"properties"`
			} `json:"limits"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(tool.Parameters(), &schema); err != nil || schema.Properties.Limits.Properties.TimeoutMs.Maximum != ptc.MaxTimeout.Milliseconds() {
		t.Errorf("schema timeoutMs maximum = %d, %v", schema.Properties.Limits.Properties.TimeoutMs.Maximum, err)
	}
	d := tool.Description()
	for _, want := range []string{"run(ctx, inputs)", "30000", "600000", "maxToolCalls default 20", "65536", "setTimeout", "fetch", "process", "require", "import", "ctx.glob", "ctx.readFile", "ctx.grep"} {
		if !strings.Contains(d, want) {
			t.Errorf("description does not mention %q", want)
		}
	}
}
