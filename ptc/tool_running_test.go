package ptc_test

import (
	"context"
	"encoding/json"
	"fmt"
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

// enforcing is an engine that enforces the script's timeout itself
// (ptc.TimeoutEnforcer): it reports the script running, and after `run`
// returns what `end` gives (a host slow to deliver an answer looks like
// this from Go).
type enforcing struct {
	run time.Duration
	end func() (json.RawMessage, error)
}

func (enforcing) Name() string     { return "enforcing" }
func (enforcing) ReportsRunning()  {}
func (enforcing) EnforcesTimeout() {}
func (e enforcing) Run(ctx context.Context, p *ptc.Program, b ptc.Bridge) (json.RawMessage, error) {
	p.Running()
	select {
	case <-time.After(e.run):
		return e.end()
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func runEnforcing(t *testing.T, e enforcing, timeoutMs int) *kernel.Result {
	t.Helper()
	args, _ := json.Marshal(map[string]any{"type": "script", "source": "async function run() { return 42 }", "limits": map[string]any{"timeoutMs": timeoutMs}})
	res, err := ptc.New(ptc.Config{Engine: e}).Execute(context.Background(), &kernel.Call{Name: "program", Args: args, Invoker: noInvoker{}})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// An engine that enforces timeoutMs where the script runs decides whether
// it timed out (issue 18): its answer reaching Go after timeoutMs (a busy
// host thread) is still a success; its own timeout is worded as the
// tool's; one that never answers is stopped EnforcedTimeoutGrace later.
func TestTimeoutEnforcedByTheEngine(t *testing.T) {
	ok := func() (json.RawMessage, error) { return json.RawMessage("42"), nil }
	res := runEnforcing(t, enforcing{run: 600 * time.Millisecond, end: ok}, 100)
	if res.ExitCode != 0 || !strings.Contains(res.Output, "Result:\n42") {
		t.Fatalf("a script that settled in time, its answer read late: %q", res.Output)
	}
	stopped := func() (json.RawMessage, error) {
		return nil, fmt.Errorf("%w (the program was stopped at its deadline (100 ms))", ptc.ErrScriptTimeout)
	}
	res = runEnforcing(t, enforcing{run: 100 * time.Millisecond, end: stopped}, 100)
	if res.ExitCode == 0 || res.Output != "program script timed out after 100 ms" || res.ErrorKind == nil || res.ErrorKind.Type != kernel.ErrTimeout {
		t.Fatalf("the engine's timeout: %q %+v", res.Output, res.ErrorKind)
	}
	defer func(g time.Duration) { ptc.EnforcedTimeoutGrace = g }(ptc.EnforcedTimeoutGrace)
	ptc.EnforcedTimeoutGrace = 200 * time.Millisecond
	start := time.Now()
	res = runEnforcing(t, enforcing{run: time.Hour, end: ok}, 100)
	if res.ExitCode == 0 || res.Output != "program script timed out after 100 ms" {
		t.Fatalf("an engine that never answers: %q", res.Output)
	}
	// Generous: the backstop is 300 ms; without it the run takes an hour.
	if el := time.Since(start); el > time.Minute {
		t.Fatalf("the backstop took %v", el)
	}
}
