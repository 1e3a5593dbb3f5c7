package ptc_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/a3s-lab/code-wasm/kernel"
	"github.com/a3s-lab/code-wasm/ptc"
)

// slowStart is an engine whose start takes `start` before it reports the
// script running (ptc.RunningReporter), then runs for `run` and returns 42.
type slowStart struct{ start, run time.Duration }

func (slowStart) Name() string    { return "slow-start" }
func (slowStart) ReportsRunning() {}
func (e slowStart) Run(ctx context.Context, p *ptc.Program, b ptc.Bridge) (json.RawMessage, error) {
	select {
	case <-time.After(e.start):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	p.Running()
	select {
	case <-time.After(e.run):
		return json.RawMessage("42"), nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func runSlow(t *testing.T, e slowStart, timeoutMs int) (*kernel.Result, map[string]any) {
	t.Helper()
	args, _ := json.Marshal(map[string]any{"type": "script", "source": "async function run() { return 42 }", "limits": map[string]any{"timeoutMs": timeoutMs}})
	res, err := ptc.New(ptc.Config{Engine: e}).Execute(context.Background(), &kernel.Call{Name: "program", Args: args, Invoker: noInvoker{}})
	if err != nil {
		t.Fatal(err)
	}
	return res, res.Metadata["program"].(map[string]any)
}

// noInvoker is an Invoker with no tools.
type noInvoker struct{}

func (noInvoker) Invoke(context.Context, string, json.RawMessage) *kernel.Result {
	return &kernel.Result{ExitCode: 1, Output: "no tools"}
}
func (noInvoker) Capabilities(string, json.RawMessage) (kernel.Capabilities, bool) {
	return kernel.Capabilities{}, false
}
func (noInvoker) ToolNames() []string { return nil }

// limits.timeoutMs counts the script's run, not the engine's start (issue
// 18): a start three times the timeout still succeeds and is reported as
// engine_start_ms; a script that runs past the timeout after a slow start
// still times out.
func TestTimeoutCountsFromRunning(t *testing.T) {
	res, meta := runSlow(t, slowStart{start: 600 * time.Millisecond, run: 10 * time.Millisecond}, 200)
	if res.ExitCode != 0 || meta["success"] != true {
		t.Fatalf("slow start, quick script: %q", res.Output)
	}
	if ms, _ := meta["engine_start_ms"].(int64); ms < 600 {
		t.Errorf("engine_start_ms = %v, want >= 600", meta["engine_start_ms"])
	}
	res, _ = runSlow(t, slowStart{start: 300 * time.Millisecond, run: time.Hour}, 200)
	if res.ExitCode == 0 || !strings.Contains(res.Output, "timed out after 200 ms") {
		t.Fatalf("slow start, endless script: %q", res.Output)
	}
}
