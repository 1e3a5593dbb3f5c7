package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/a3s-lab/code-wasm/kernel"
)

// Batch limits (REFERENCE.md §2.12).
const (
	BatchMaxInvocations      = 32
	BatchDefaultConcurrency  = 8
	BatchMaxConcurrency      = 16
	BatchMaxStep             = 32
	batchItemMetadataMaxSize = 4 << 10
)

// Batch is the `batch` tool: up to 32 tool calls, in steps, each child a
// nested invocation through the full kernel (call.Invoker). Children of a
// step run in parallel only when every one of them is read-only,
// idempotent, cancellation-safe and allows parallelism; otherwise the step
// runs serially.
type Batch struct{}

// NewBatch returns the batch tool. It holds no state.
func NewBatch() *Batch { return &Batch{} }

func (*Batch) Name() string { return "batch" }

func (*Batch) Description() string {
	return "Run up to 32 tool calls in one request. Calls in the same step run in parallel when all of them are read-only " +
		"(read, ls, glob, grep); otherwise they run one after another in request order. Use `step` (1-32) to order " +
		"dependent calls. Partial failures are reported per item with failed_indices; retry only those."
}

func (*Batch) Parameters() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{` +
		`"invocations":{"type":"array","minItems":1,"maxItems":32,"description":"The calls to make, 1 to 32.","items":{"type":"object","properties":{` +
		`"id":{"type":"string","minLength":1,"description":"Optional unique label for the call."},` +
		`"tool":{"type":"string","minLength":1,"description":"Tool name."},` +
		`"args":{"type":"object","description":"The tool's arguments."},` +
		`"step":{"type":"integer","minimum":1,"maximum":32,"description":"Execution step, default 1; lower steps run first."}},` +
		`"required":["tool","args"],"additionalProperties":false}},` +
		`"max_concurrency":{"type":"integer","minimum":1,"maximum":16,"description":"Parallel calls within a step, default 8."}},` +
		`"required":["invocations"],"additionalProperties":false}`)
}

func (*Batch) Capabilities(json.RawMessage) kernel.Capabilities { return kernel.Conservative() }

// Effects: a batch changes nothing itself; each child is judged by the
// permission rules (and any restriction the batch is under) on its own.
func (*Batch) Effects(json.RawMessage) kernel.Effects { return kernel.Effects{} }

// Orchestrates marks batch as an orchestrator: a batch may not contain
// itself, directly or through another orchestrator.
func (*Batch) Orchestrates() {}

type batchItem struct {
	ID   *string         `json:"id"`
	Tool string          `json:"tool"`
	Args json.RawMessage `json:"args"`
	Step *int            `json:"step"`
}

type batchArgs struct {
	Invocations    []batchItem `json:"invocations"`
	MaxConcurrency *int        `json:"max_concurrency"`
}

// parse checks everything that can be checked before any child runs.
func (a *batchArgs) check() error {
	n := len(a.Invocations)
	switch {
	case n == 0:
		return kernel.InvalidArgument("batch: invocations must list at least 1 call")
	case n > BatchMaxInvocations:
		return kernel.InvalidArgument("batch: at most %d invocations are allowed, got %d", BatchMaxInvocations, n)
	}
	if c := a.MaxConcurrency; c != nil && (*c < 1 || *c > BatchMaxConcurrency) {
		return kernel.InvalidArgument("batch: max_concurrency must be between 1 and %d, got %d", BatchMaxConcurrency, *c)
	}
	seen := map[string]int{}
	for i, it := range a.Invocations {
		if it.Tool == "" {
			return kernel.InvalidArgument("batch: invocations[%d]: tool is empty", i)
		}
		if it.Tool == "batch" {
			return kernel.InvalidArgument("batch: invocations[%d]: recursive batch calls are not allowed", i)
		}
		if it.ID != nil {
			if strings.TrimSpace(*it.ID) == "" {
				return kernel.InvalidArgument("batch: invocations[%d]: id is empty", i)
			}
			if j, dup := seen[*it.ID]; dup {
				return kernel.InvalidArgument("batch: invocations[%d]: id %q duplicates invocations[%d]", i, *it.ID, j)
			}
			seen[*it.ID] = i
		}
		if it.Step != nil && (*it.Step < 1 || *it.Step > BatchMaxStep) {
			return kernel.InvalidArgument("batch: invocations[%d]: step must be between 1 and %d, got %d", i, BatchMaxStep, *it.Step)
		}
		var obj map[string]json.RawMessage
		if json.Unmarshal(it.Args, &obj) != nil {
			return kernel.InvalidArgument("batch: invocations[%d]: args must be a JSON object", i)
		}
	}
	return nil
}

type batchOutcome struct {
	_     [0]func() // never compared: no equality function in the wasm
	index int
	step  int
	id    string
	tool  string
	res   *kernel.Result
}

func (*Batch) Execute(ctx context.Context, call *kernel.Call) (*kernel.Result, error) {
	var a batchArgs
	dec := json.NewDecoder(strings.NewReader(string(call.Args)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a); err != nil {
		return nil, kernel.InvalidArgument("batch: %v", err)
	}
	if err := a.check(); err != nil {
		return nil, err
	}
	if call.Invoker == nil {
		return nil, kernel.Errorf(kernel.ErrUnsupported, "batch: no invoker for nested calls")
	}
	requested := BatchDefaultConcurrency
	if a.MaxConcurrency != nil {
		requested = *a.MaxConcurrency
	}

	outs := make([]batchOutcome, len(a.Invocations))
	steps := map[int][]int{}
	for i, it := range a.Invocations {
		s := 1
		if it.Step != nil {
			s = *it.Step
		}
		id := ""
		if it.ID != nil {
			id = *it.ID
		}
		outs[i] = batchOutcome{index: i, step: s, id: id, tool: it.Tool}
		steps[s] = append(steps[s], i)
	}
	order := make([]int, 0, len(steps))
	for s := range steps {
		order = append(order, s)
	}
	slices.Sort(order)

	applied, anyParallel := 1, false
	for _, s := range order {
		idx := steps[s]
		conc := stepConcurrency(call.Invoker, a.Invocations, idx, requested)
		if conc > 1 {
			anyParallel = true
			applied = max(applied, conc)
		}
		run := func(ctx context.Context, i int) {
			it := a.Invocations[i]
			if err := ctx.Err(); err != nil {
				outs[i].res = &kernel.Result{Name: it.Tool, Output: "cancelled before it started", ExitCode: 1,
					ErrorKind: &kernel.ErrorKind{Type: kernel.ErrCancelled, Op: it.Tool}}
				return
			}
			outs[i].res = call.Invoker.Invoke(ctx, it.Tool, it.Args)
		}
		if conc <= 1 || len(idx) == 1 {
			for _, i := range idx {
				run(ctx, i)
			}
			continue
		}
		// At most conc children at once; children report failures as
		// results, and the kernel turns a child's panic into one.
		var wg sync.WaitGroup
		slots := make(chan struct{}, conc)
		for _, i := range idx {
			slots <- struct{}{}
			wg.Go(func() {
				defer func() { <-slots }()
				run(ctx, i)
			})
		}
		wg.Wait()
	}

	mode := "serial"
	switch {
	case len(order) > 1:
		mode = "staged"
	case anyParallel:
		mode = "parallel"
	}
	return batchResult(outs, requested, applied, mode, order), nil
}

// stepConcurrency is the requested concurrency capped by the smallest
// child max_parallelism when every child of the step is parallel-safe, and
// 1 otherwise.
func stepConcurrency(inv kernel.Invoker, items []batchItem, idx []int, requested int) int {
	conc := requested
	for _, i := range idx {
		c, ok := inv.Capabilities(items[i].Tool, items[i].Args)
		if !ok || !c.ParallelSafe() {
			return 1
		}
		conc = min(conc, c.MaxParallelism)
	}
	return max(conc, 1)
}

func batchResult(outs []batchOutcome, requested, applied int, mode string, steps []int) *kernel.Result {
	var b strings.Builder
	failed := []int{}
	results := make([]map[string]any, 0, len(outs))
	for _, o := range outs {
		id := o.id
		if id == "" {
			id = fmt.Sprintf("#%d", o.index)
		}
		fmt.Fprintf(&b, "--- [%d / step %d: %s · %s] ---\n", o.index, o.step, o.tool, id)
		ok := o.res.ExitCode == 0
		if ok {
			b.WriteString(o.res.Output)
		} else {
			failed = append(failed, o.index)
			b.WriteString("ERROR: ")
			b.WriteString(o.res.Output)
		}
		if !strings.HasSuffix(o.res.Output, "\n") {
			b.WriteByte('\n')
		}
		r := map[string]any{"index": o.index, "step": o.step, "id": o.id, "tool": o.tool, "success": ok,
			"exit_code": o.res.ExitCode, "output_bytes": len(o.res.Output), "error_kind": o.res.ErrorKind,
			"metadata": cutMetadata(o.res.Metadata)}
		results = append(results, r)
	}
	total, nf := len(outs), len(failed)
	status := "complete"
	switch {
	case nf == total:
		status = "failed"
	case nf > 0:
		status = "partial_failure"
		fmt.Fprintf(&b, "\n%d of %d invocations failed (failed_indices %v); retry only those.\n", nf, total, failed)
	}
	if status == "failed" {
		fmt.Fprintf(&b, "\nAll %d invocations failed.\n", total)
	}
	meta := map[string]any{
		"status": status, "requested_concurrency": requested, "applied_concurrency": applied,
		"execution_mode": mode, "steps": steps, "highest_step": steps[len(steps)-1],
		"total_count": total, "success_count": total - nf, "failure_count": nf,
		"failed_indices": failed, "binding_errors": []string{}, "results": results,
	}
	res := kernel.OK(b.String(), meta)
	if status == "failed" {
		res.ExitCode = 1
		res.ErrorKind = &kernel.ErrorKind{Type: kernel.ErrPartialFailure, Failed: nf, Total: total}
	}
	return res
}

// cutMetadata keeps a child's metadata when it encodes to at most 4 KiB.
func cutMetadata(m map[string]any) any {
	if m == nil {
		return nil
	}
	b, err := json.Marshal(m)
	if err != nil {
		return map[string]any{"omitted": true, "reason": err.Error()}
	}
	if len(b) > batchItemMetadataMaxSize {
		return map[string]any{"omitted": true, "bytes": len(b)}
	}
	return m
}
