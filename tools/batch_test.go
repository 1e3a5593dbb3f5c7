package tools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/a3s-lab/code-wasm/kernel"
	"github.com/a3s-lab/code-wasm/tools"
)

// probe is a test tool: it counts runs (its side effect), tracks how many
// of its calls run at once, can wait at a barrier for `wait` siblings, and
// fails when asked.
type probe struct {
	name string
	caps kernel.Capabilities
	runs atomic.Int64
	mu   sync.Mutex
	cur  int
	peak int
}

func newProbe(name string, caps kernel.Capabilities) *probe {
	return &probe{name: name, caps: caps}
}

func (p *probe) Name() string        { return p.name }
func (p *probe) Description() string { return "probe" }
func (p *probe) Parameters() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{"wait":{"type":"integer"},"fail":{"type":"boolean"},"sleep_ms":{"type":"integer"},"out":{"type":"string"}},"additionalProperties":false}`)
}
func (p *probe) Capabilities(json.RawMessage) kernel.Capabilities { return p.caps }
func (p *probe) Execute(ctx context.Context, call *kernel.Call) (*kernel.Result, error) {
	var a struct {
		Wait    int    `json:"wait"`
		Fail    bool   `json:"fail"`
		SleepMs int    `json:"sleep_ms"`
		Out     string `json:"out"`
	}
	if err := json.Unmarshal(call.Args, &a); err != nil {
		return nil, err
	}
	p.runs.Add(1)
	p.mu.Lock()
	p.cur++
	p.peak = max(p.peak, p.cur)
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		p.cur--
		p.mu.Unlock()
	}()
	if a.Wait > 0 {
		// Barrier: succeed only if `wait` siblings arrive while this one
		// is still running, which serial execution can never do.
		deadline := time.After(2 * time.Second)
		for {
			p.mu.Lock()
			ok, cur := p.peak >= a.Wait, p.cur
			p.mu.Unlock()
			if ok {
				break
			}
			select {
			case <-deadline:
				return nil, fmt.Errorf("barrier: only %d of %d siblings arrived", cur, a.Wait)
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(time.Millisecond):
			}
		}
	}
	if a.SleepMs > 0 {
		select {
		case <-time.After(time.Duration(a.SleepMs) * time.Millisecond):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if a.Fail {
		return nil, kernel.Errorf(kernel.ErrNotFound, "asked to fail")
	}
	return kernel.OK("out:"+a.Out, map[string]any{"out": a.Out}), nil
}

type batchFixture struct {
	k      *kernel.Kernel
	ro     *probe // read-only, parallel-safe (max parallelism 4)
	wr     *probe // conservative (a "write")
	events func() []kernel.Event
}

func newBatchKernel(t *testing.T, g kernel.Governance) *batchFixture {
	t.Helper()
	if p := g.Permission; len(p.Deny)+len(p.Allow)+len(p.Ask) == 0 && p.DefaultDecision == "" {
		// These tests are about batch, not the gate: the zero policy asks,
		// and with no confirmation manager denies agent calls.
		g.Permission.DefaultDecision = kernel.DecisionAllow
	}
	f := &batchFixture{ro: newProbe("ro", kernel.ParallelSafeRead(4)), wr: newProbe("wr", kernel.Conservative())}
	reg := kernel.NewRegistry()
	for _, tl := range []kernel.Tool{tools.NewBatch(), f.ro, f.wr} {
		if err := reg.RegisterBuiltin(tl); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	var evs []kernel.Event
	f.events = func() []kernel.Event {
		mu.Lock()
		defer mu.Unlock()
		return append([]kernel.Event(nil), evs...)
	}
	k, err := kernel.New(kernel.Config{Registry: reg, Governance: g, OnEvent: func(e kernel.Event) {
		mu.Lock()
		evs = append(evs, e)
		mu.Unlock()
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.Close)
	f.k = k
	return f
}

func (f *batchFixture) batch(t *testing.T, ctx context.Context, args string) *kernel.Result {
	t.Helper()
	res, err := f.k.Invoke(ctx, kernel.Request{Tool: "batch", Args: json.RawMessage(args), Origin: kernel.OriginAgent})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func items(n int, tool, args string) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = fmt.Sprintf(`{"tool":%q,"args":%s}`, tool, args)
	}
	return `{"invocations":[` + strings.Join(parts, ",") + `]}`
}

// TestBatchRejectsUpFront: malformed batches are refused before any child
// runs.
func TestBatchRejectsUpFront(t *testing.T) {
	cases := []struct{ name, args, want string }{
		{"33 invocations", items(33, "wr", `{}`), "32"},
		{"empty list", `{"invocations":[]}`, "invocations"},
		{"nested batch", `{"invocations":[{"tool":"wr","args":{}},{"tool":"batch","args":{"invocations":[{"tool":"wr","args":{}}]}}]}`, "recursive batch"},
		{"duplicate id", `{"invocations":[{"id":"a","tool":"wr","args":{}},{"id":"a","tool":"wr","args":{}}]}`, "duplicates"},
		{"empty id", `{"invocations":[{"id":"","tool":"wr","args":{}}]}`, "id"},
		{"blank id", `{"invocations":[{"id":"  ","tool":"wr","args":{}}]}`, "id is empty"},
		{"step zero", `{"invocations":[{"tool":"wr","args":{},"step":0}]}`, "step"},
		{"step too high", `{"invocations":[{"tool":"wr","args":{},"step":33}]}`, "step"},
		{"step not integer", `{"invocations":[{"tool":"wr","args":{},"step":1.5}]}`, "step"},
		{"concurrency 17", `{"invocations":[{"tool":"wr","args":{}}],"max_concurrency":17}`, "max_concurrency"},
		{"args not object", `{"invocations":[{"tool":"wr","args":[1]}]}`, "args"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newBatchKernel(t, kernel.Governance{})
			res := f.batch(t, context.Background(), tc.args)
			if res.ErrorKind == nil || res.ErrorKind.Type != kernel.ErrInvalidArgument || !strings.Contains(res.Output, tc.want) {
				t.Fatalf("got %+v, want invalid_argument mentioning %q", res, tc.want)
			}
			if n := f.wr.runs.Load(); n != 0 {
				t.Fatalf("%d children ran before the rejection", n)
			}
		})
	}
}

// TestBatch32Accepted: 32 invocations run, each once, in request order.
func TestBatch32Accepted(t *testing.T) {
	f := newBatchKernel(t, kernel.Governance{})
	parts := make([]string, 32)
	for i := range parts {
		parts[i] = fmt.Sprintf(`{"id":"c%d","tool":"wr","args":{"out":"%d"}}`, i, i)
	}
	res := f.batch(t, context.Background(), `{"invocations":[`+strings.Join(parts, ",")+`]}`)
	if res.ExitCode != 0 || f.wr.runs.Load() != 32 {
		t.Fatalf("exit %d runs %d: %s", res.ExitCode, f.wr.runs.Load(), res.Output)
	}
	last := -1
	for i := range 32 {
		h := fmt.Sprintf("--- [%d / step 1: wr · c%d] ---\nout:%d\n", i, i, i)
		at := strings.Index(res.Output, h)
		if at <= last {
			t.Fatalf("item %d missing or out of order in:\n%s", i, res.Output)
		}
		last = at
	}
	m := res.Metadata
	if m["status"] != "complete" || m["total_count"] != 32 || m["success_count"] != 32 || m["execution_mode"] != "serial" || m["applied_concurrency"] != 1 {
		t.Errorf("metadata %v", m)
	}
}

// TestBatchParallelism: read-only children reach a sibling barrier (they
// run at once, capped by their max_parallelism); with a write among them
// the step runs serially.
func TestBatchParallelism(t *testing.T) {
	t.Run("read-only children run in parallel", func(t *testing.T) {
		f := newBatchKernel(t, kernel.Governance{})
		res := f.batch(t, context.Background(), items(4, "ro", `{"wait":4}`))
		if res.ExitCode != 0 || res.Metadata["status"] != "complete" {
			t.Fatalf("barrier not reached: %s", res.Output)
		}
		if res.Metadata["execution_mode"] != "parallel" || res.Metadata["applied_concurrency"] != 4 || f.ro.peak != 4 {
			t.Errorf("mode %v applied %v peak %d", res.Metadata["execution_mode"], res.Metadata["applied_concurrency"], f.ro.peak)
		}
	})
	t.Run("capped by the smallest max_parallelism and max_concurrency", func(t *testing.T) {
		f := newBatchKernel(t, kernel.Governance{})
		res := f.batch(t, context.Background(), strings.Replace(items(8, "ro", `{"sleep_ms":5}`), `]}`, `],"max_concurrency":2}`, 1))
		if res.ExitCode != 0 || f.ro.peak > 2 || res.Metadata["applied_concurrency"] != 2 || res.Metadata["requested_concurrency"] != 2 {
			t.Errorf("peak %d meta %v", f.ro.peak, res.Metadata)
		}
	})
	t.Run("a write among them serialises the step", func(t *testing.T) {
		f := newBatchKernel(t, kernel.Governance{})
		res := f.batch(t, context.Background(), `{"invocations":[{"tool":"ro","args":{"sleep_ms":5}},{"tool":"wr","args":{"sleep_ms":5}},{"tool":"ro","args":{"sleep_ms":5}},{"tool":"ro","args":{"sleep_ms":5}}]}`)
		if res.ExitCode != 0 || f.ro.peak != 1 || res.Metadata["execution_mode"] != "serial" {
			t.Errorf("peak %d meta %v", f.ro.peak, res.Metadata["execution_mode"])
		}
	})
	t.Run("steps run in order", func(t *testing.T) {
		f := newBatchKernel(t, kernel.Governance{})
		res := f.batch(t, context.Background(), `{"invocations":[{"id":"late","tool":"ro","args":{"out":"b"},"step":2},{"id":"early","tool":"ro","args":{"out":"a"},"step":1}]}`)
		var order []string
		for _, e := range f.events() {
			if e.Type == kernel.EventToolExecutionStart && e.Payload["name"] == "ro" {
				order = append(order, string(e.Payload["args"].(json.RawMessage)))
			}
		}
		if res.Metadata["execution_mode"] != "staged" || res.Metadata["highest_step"] != 2 || len(order) != 2 || !strings.Contains(order[0], `"a"`) {
			t.Errorf("order %v meta %v", order, res.Metadata)
		}
	})
}

// TestBatchFailures: some failed → partial_failure, still a success; all
// failed → error kind partial_failure{failed,total}.
func TestBatchFailures(t *testing.T) {
	f := newBatchKernel(t, kernel.Governance{})
	res := f.batch(t, context.Background(), `{"invocations":[{"tool":"wr","args":{}},{"tool":"wr","args":{"fail":true}},{"tool":"nope","args":{}},{"tool":"wr","args":{"bad":1}}]}`)
	if res.ExitCode != 0 || res.Metadata["status"] != "partial_failure" {
		t.Fatalf("got %+v", res)
	}
	if fi := fmt.Sprint(res.Metadata["failed_indices"]); fi != "[1 2 3]" {
		t.Errorf("failed_indices %s", fi)
	}
	if !strings.Contains(res.Output, "ERROR: asked to fail") || !strings.Contains(res.Output, "retry only those") {
		t.Errorf("output:\n%s", res.Output)
	}
	rs := res.Metadata["results"].([]map[string]any)
	if rs[1]["error_kind"].(*kernel.ErrorKind).Type != kernel.ErrNotFound || rs[3]["error_kind"].(*kernel.ErrorKind).Type != kernel.ErrInvalidArgument {
		t.Errorf("per-item kinds %v %v", rs[1]["error_kind"], rs[3]["error_kind"])
	}

	res = f.batch(t, context.Background(), `{"invocations":[{"tool":"wr","args":{"fail":true}},{"tool":"wr","args":{"fail":true}}]}`)
	if res.ExitCode != 1 || res.ErrorKind == nil || res.ErrorKind.Type != kernel.ErrPartialFailure || res.ErrorKind.Failed != 2 || res.ErrorKind.Total != 2 || res.Metadata["status"] != "failed" {
		t.Fatalf("got %+v", res)
	}
}

// TestBatchChildrenGoverned: children are nested invocations through the
// full kernel: policy applies to them, and their events name the batch as
// parent.
func TestBatchChildrenGoverned(t *testing.T) {
	f := newBatchKernel(t, kernel.Governance{Permission: kernel.PermissionPolicy{Allow: []string{"batch", "ro"}, Deny: []string{"wr"}}})
	res := f.batch(t, context.Background(), `{"invocations":[{"tool":"ro","args":{}},{"tool":"wr","args":{}}]}`)
	if res.Metadata["status"] != "partial_failure" || f.wr.runs.Load() != 0 || f.ro.runs.Load() != 1 {
		t.Fatalf("got %s (wr runs %d)", res.Output, f.wr.runs.Load())
	}
	// A trusted host call of batch passes the host policy on: the denied
	// tool runs, as host_direct_nested_trusted.
	hres, err := f.k.Invoke(context.Background(), kernel.Request{Tool: "batch", Origin: kernel.OriginHostTrusted,
		Args: json.RawMessage(`{"invocations":[{"tool":"wr","args":{}}]}`)})
	if err != nil || hres.ExitCode != 0 || f.wr.runs.Load() != 1 {
		t.Fatalf("host policy not inherited: %v %+v", err, hres)
	}
	var batchID string
	for _, e := range f.events() {
		if e.Type == kernel.EventToolEnd && e.Payload["name"] == "batch" && e.Origin == kernel.OriginAgent {
			batchID = e.InvocationID
		}
	}
	for _, e := range f.events() {
		if e.Type != kernel.EventToolEnd || e.Payload["name"] == "batch" {
			continue
		}
		if e.Origin == kernel.OriginHostNestedTrusted {
			if e.Payload["name"] != "wr" || e.ParentID == batchID {
				t.Errorf("host-nested child %v under %q", e.Payload["name"], e.ParentID)
			}
			continue
		}
		if e.ParentID != batchID || e.Origin != kernel.OriginNested {
			t.Errorf("child %v parent %q origin %q, want parent %q nested", e.Payload["name"], e.ParentID, e.Origin, batchID)
		}
	}
}

// TestBatchCancelCancelsChildren: cancelling the batch cancels its running
// children and the ones not yet started.
func TestBatchCancelCancelsChildren(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	f := newBatchKernel(t, kernel.Governance{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan *kernel.Result, 1)
	go func() { done <- f.batch(t, ctx, items(3, "ro", `{"sleep_ms":60000}`)) }()
	for len(f.k.Active()) < 4 { // the batch and its 3 parallel children
		time.Sleep(time.Millisecond)
	}
	cancel()
	select {
	case res := <-done:
		if res.ExitCode == 0 {
			t.Fatalf("cancelled batch succeeded: %s", res.Output)
		}
		for _, r := range res.Metadata["results"].([]map[string]any) {
			if r["error_kind"].(*kernel.ErrorKind).Type != kernel.ErrCancelled {
				t.Errorf("child %v not cancelled", r)
			}
		}
	case <-time.After(5 * time.Second):
		t.Fatal("batch did not end after cancel")
	}
	if a := f.k.Active(); len(a) != 0 {
		t.Errorf("still active: %v", a)
	}
}
