package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/a3s-lab/code-wasm/kernel"
)

// Delegation limits (REFERENCE.md §2.15, research §2.3).
const (
	// MaxTasks bounds the tasks of one task or parallel_task call.
	MaxTasks = 32
	// DefaultMaxParallelTasks is the session's shared bound on running
	// children (maxParallelTasks).
	DefaultMaxParallelTasks = 8
	// ContextChars is how much of a child's answer the parent's context
	// gets: the first ContextHead and last ContextTail characters when it
	// is longer; the whole answer is kept as an artifact.
	ContextChars = 4000
	ContextHead  = 3000
	ContextTail  = 800
)

// Subagent events (REFERENCE.md §1.3).
const (
	EventSubagentStart = "subagent_start"
	// EventSubagentProgress is a child's milestone (Config.Progress):
	// {task_id, session_id, status, metadata}, before its subagent_end.
	EventSubagentProgress = "subagent_progress"
	EventSubagentEnd      = "subagent_end"
)

// TaskSpec is one task of a task or parallel_task call.
type TaskSpec struct {
	Agent       string `json:"agent"`
	Description string `json:"description"`
	Prompt      string `json:"prompt"`
	// Background starts the task detached (task only): the call returns
	// its id at once; the result arrives as its subagent_end event and
	// through Delegation.Background.
	Background bool `json:"background,omitempty"`
	// MaxSteps overrides the agent's step limit.
	MaxSteps int `json:"max_steps,omitempty"`
	// OutputSchema asks the child to answer with JSON of this schema;
	// the parsed answer is the result's structured metadata.
	OutputSchema json.RawMessage `json:"output_schema,omitempty"`
}

// FanOut is the arguments of task and parallel_task.
type FanOut struct {
	Tasks               []TaskSpec `json:"tasks"`
	AllowPartialFailure bool       `json:"allow_partial_failure,omitempty"`
	TimeoutMs           int        `json:"timeout_ms,omitempty"`
	MinSuccessCount     int        `json:"min_success_count,omitempty"`
}

// Delegation runs a session's delegated agents: the task and
// parallel_task tools, the shared concurrency bound and the background
// tasks. Children share the session's model, kernel (workspace, hooks,
// budget, sanitiser, artifacts) and event stream; each runs under its
// agent's narrowing of the session's policy.
type Delegation struct {
	cfg     Config
	catalog *Catalog
	sem     chan struct{}
	n       atomic.Int64

	root   context.Context
	cancel context.CancelFunc
	mu     sync.Mutex
	closed bool
	bg     map[string]*Background
	wg     sync.WaitGroup
	// seen memoizes visible per agent (its policy is fixed): agent name →
	// *sync.Map of tool name → bool. Deciding it per tool per child cost
	// ~1 ms a child under js/wasm.
	seen sync.Map
}

// Background is a background task's state.
type Background struct {
	ID    string `json:"taskId"`
	Agent string `json:"agent"`
	// Done is false while the task runs; then Result holds its outcome.
	Done   bool           `json:"done"`
	Result *kernel.Result `json:"result,omitempty"`
	done   chan struct{}
}

// NewDelegation builds the delegation of a session whose model, kernel
// and event sink are cfg's; maxParallel 0 means DefaultMaxParallelTasks.
func NewDelegation(cfg Config, catalog *Catalog, maxParallel int) *Delegation {
	if maxParallel <= 0 {
		maxParallel = DefaultMaxParallelTasks
	}
	root, cancel := context.WithCancel(context.Background())
	return &Delegation{cfg: cfg, catalog: catalog, sem: make(chan struct{}, maxParallel), root: root, cancel: cancel, bg: map[string]*Background{}}
}

// Catalog is the delegation's agent catalog.
func (d *Delegation) Catalog() *Catalog { return d.catalog }

// Tools are task and parallel_task.
func (d *Delegation) Tools() []kernel.Tool {
	return []kernel.Tool{&taskTool{d: d}, &taskTool{d: d, parallel: true}}
}

// Close cancels the background tasks and waits until each has settled
// (published its subagent_end).
func (d *Delegation) Close() {
	d.mu.Lock()
	d.closed = true
	d.mu.Unlock()
	d.cancel()
	d.wg.Wait()
}

// Background returns background task id's state: still running, or its
// result. wait blocks until it finished or ctx ends.
func (d *Delegation) Background(ctx context.Context, id string, wait bool) (Background, bool) {
	d.mu.Lock()
	b, ok := d.bg[id]
	d.mu.Unlock()
	if !ok {
		return Background{}, false
	}
	if wait {
		select {
		case <-b.done:
		case <-ctx.Done():
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return *b, true
}

// taskTool is task (unified form, 1..32, background allowed) or
// parallel_task (2..32, no background).
type taskTool struct {
	d        *Delegation
	parallel bool

	// The catalog does not change after NewCatalog: the description and
	// both schemas are built once (building them every turn was a tenth of
	// an agent turn's Go time in wasm).
	once              sync.Once
	desc              string
	params, validated json.RawMessage
}

func (t *taskTool) build() {
	t.once.Do(func() {
		t.desc = t.description()
		t.params, t.validated = t.schema(true), t.schema(false)
	})
}

func (t *taskTool) Name() string {
	if t.parallel {
		return ParallelTaskTool
	}
	return TaskTool
}

func (t *taskTool) Description() string { t.build(); return t.desc }

func (t *taskTool) description() string {
	if t.parallel {
		return "Run 2 to 32 independent tasks at once, each by a delegated agent with its own tools and step limit, and get all their answers. " +
			"Each agent starts with no context: give it a complete prompt. " + t.d.catalog.describe()
	}
	return "Delegate 1 to 32 tasks to agents that work on their own (concurrently when several) and answer with a report. " +
		"Each agent starts with no context: give it a complete prompt. background: true returns a task id at once. " + t.d.catalog.describe()
}

func (t *taskTool) schema(enum bool) json.RawMessage {
	agentField := map[string]any{"type": "string", "description": t.d.catalog.describe()}
	if enum {
		agentField["enum"] = t.d.catalog.Names()
	}
	item := map[string]any{"type": "object", "additionalProperties": false, "required": []string{"agent", "description", "prompt"},
		"properties": map[string]any{
			"agent":         agentField,
			"description":   map[string]any{"type": "string", "description": "A short (3-5 word) label of the task."},
			"prompt":        map[string]any{"type": "string", "description": "The complete instructions for the agent."},
			"max_steps":     map[string]any{"type": "integer", "minimum": 1, "description": "Overrides the agent's step limit."},
			"output_schema": map[string]any{"type": "object", "description": "A JSON Schema the agent's answer must follow."},
		}}
	minItems := 1
	if t.parallel {
		minItems = 2
	} else {
		item["properties"].(map[string]any)["background"] = map[string]any{"type": "boolean", "description": "Start the task detached and return its id at once."}
	}
	s := map[string]any{"type": "object", "additionalProperties": false, "required": []string{"tasks"},
		"properties": map[string]any{
			"tasks":                 map[string]any{"type": "array", "minItems": minItems, "maxItems": MaxTasks, "items": item},
			"allow_partial_failure": map[string]any{"type": "boolean", "description": "Succeed when some tasks fail."},
			"timeout_ms":            map[string]any{"type": "integer", "minimum": 1, "description": "Mark the tasks unfinished after this long failed."},
			"min_success_count":     map[string]any{"type": "integer", "minimum": 1, "description": "With allow_partial_failure: return once this many tasks succeeded."},
		}}
	b, _ := json.Marshal(s)
	return b
}

func (t *taskTool) Parameters() json.RawMessage { t.build(); return t.params }

// ValidationSchema leaves the agent names to Execute, whose error lists
// the catalog.
func (t *taskTool) ValidationSchema() json.RawMessage { t.build(); return t.validated }

func (*taskTool) Capabilities(json.RawMessage) kernel.Capabilities { return kernel.Conservative() }

// Effects: a task changes nothing itself; each child's calls are judged.
func (*taskTool) Effects(json.RawMessage) kernel.Effects { return kernel.Effects{} }

func (*taskTool) Touches(json.RawMessage) kernel.Touched { return kernel.Touched{} }

// check refuses a fan-out before any child runs; the error names what is
// wrong.
func (t *taskTool) check(a *FanOut) error {
	name := t.Name()
	lo := 1
	if t.parallel {
		lo = 2
	}
	if n := len(a.Tasks); n < lo || n > MaxTasks {
		return kernel.InvalidArgument("%s takes %d to %d tasks, got %d", name, lo, MaxTasks, n)
	}
	if a.MinSuccessCount != 0 {
		if !a.AllowPartialFailure {
			return kernel.InvalidArgument("%s: min_success_count needs allow_partial_failure: true", name)
		}
		if a.MinSuccessCount < 1 || a.MinSuccessCount > len(a.Tasks) {
			return kernel.InvalidArgument("%s: min_success_count must be between 1 and the task count %d, got %d", name, len(a.Tasks), a.MinSuccessCount)
		}
	}
	if a.TimeoutMs < 0 {
		return kernel.InvalidArgument("%s: timeout_ms must be >= 1, got %d", name, a.TimeoutMs)
	}
	bg := 0
	for i, s := range a.Tasks {
		if _, ok := t.d.catalog.Lookup(s.Agent); !ok {
			return kernel.InvalidArgument("%s: tasks[%d].agent %q is not an agent of the catalog: %s", name, i, s.Agent, strings.Join(t.d.catalog.Names(), ", "))
		}
		if strings.TrimSpace(s.Prompt) == "" {
			return kernel.InvalidArgument("%s: tasks[%d].prompt is empty", name, i)
		}
		if s.MaxSteps < 0 {
			return kernel.InvalidArgument("%s: tasks[%d].max_steps must be >= 1", name, i)
		}
		if s.Background {
			if t.parallel {
				return kernel.InvalidArgument("parallel_task does not take background tasks (tasks[%d]); use task with background: true", i)
			}
			bg++
		}
	}
	if bg > 0 && bg < len(a.Tasks) {
		return kernel.InvalidArgument("%s: either every task is background or none (%d of %d are)", name, bg, len(a.Tasks))
	}
	if bg > 0 && (a.TimeoutMs > 0 || a.MinSuccessCount > 0) {
		return kernel.InvalidArgument("%s: timeout_ms and min_success_count do not apply to background tasks", name)
	}
	return nil
}

func (t *taskTool) Execute(ctx context.Context, call *kernel.Call) (*kernel.Result, error) {
	var a FanOut
	if err := json.Unmarshal(call.Args, &a); err != nil {
		return nil, kernel.InvalidArgument("%s: %v", t.Name(), err)
	}
	if _, in := ctx.Value(childKey{}).(bool); in {
		return nil, kernel.InvalidArgument("%s is not available inside a delegated agent or skill (no recursive delegation)", t.Name())
	}
	if err := t.check(&a); err != nil {
		return nil, err
	}
	if a.Tasks[0].Background {
		return t.d.background(ctx, call, a.Tasks)
	}
	return t.d.fanOut(ctx, call, &a, t.parallel || len(a.Tasks) > 1)
}

// childKey marks a context inside a delegated agent or skill.
type childKey struct{}

// outcome is one child's result.
type outcome struct {
	id, agent  string
	started    bool
	success    bool
	output     string
	structured any
	err        string
}

func (d *Delegation) nextID() string { return "task-" + strconv.FormatInt(d.n.Add(1), 10) }

// fanOut runs the tasks (at most the shared bound at once) and answers
// the call. With many, the result is the parallel form.
func (d *Delegation) fanOut(ctx context.Context, call *kernel.Call, a *FanOut, many bool) (*kernel.Result, error) {
	start := time.Now()
	fctx, stop := context.WithCancel(ctx)
	defer stop()
	var timedOut, early atomic.Bool
	if a.TimeoutMs > 0 {
		tm := time.AfterFunc(time.Duration(a.TimeoutMs)*time.Millisecond, func() { timedOut.Store(true); stop() })
		defer tm.Stop()
	}
	outs := make([]outcome, len(a.Tasks))
	var wg sync.WaitGroup
	var succ atomic.Int64
	for i, s := range a.Tasks {
		outs[i] = outcome{id: d.nextID(), agent: s.Agent}
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case d.sem <- struct{}{}:
			case <-fctx.Done():
				return
			}
			defer func() { <-d.sem }()
			if fctx.Err() != nil {
				return
			}
			outs[i] = d.child(fctx, call, outs[i].id, s)
			if !outs[i].success && fctx.Err() != nil {
				outs[i].err = "" // stopped by the fan-out: its reason below
			}
			if outs[i].success && a.MinSuccessCount > 0 && succ.Add(1) >= int64(a.MinSuccessCount) {
				early.Store(true)
				stop()
			}
		}()
	}
	wg.Wait()
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	why := "cancelled"
	switch {
	case early.Load():
		why = "returned early: min_success_count reached"
	case timedOut.Load():
		why = fmt.Sprintf("timed out after %d ms", a.TimeoutMs)
	}
	nok := 0
	for i := range outs {
		o := &outs[i]
		if o.success {
			nok++
			continue
		}
		if o.err == "" {
			o.err = "unfinished: " + why
			if !o.started {
				o.err = "not started: " + why
			}
		}
	}
	results := make([]any, len(outs))
	var text strings.Builder
	for i, o := range outs {
		results[i] = d.resultMeta(o)
		if many {
			fmt.Fprintf(&text, "## Task %d (%s: %s): %s\n", i+1, o.agent, a.Tasks[i].Description, map[bool]string{true: "succeeded", false: "failed"}[o.success])
		}
		if o.success {
			text.WriteString(d.forContext(o).output)
		} else {
			text.WriteString("Error: " + o.err)
		}
		if many {
			text.WriteString("\n\n")
		}
	}
	okAll := nok == len(outs)
	tolerated := a.AllowPartialFailure && nok >= max(a.MinSuccessCount, 1)
	var meta map[string]any
	if many {
		meta = map[string]any{"task_count": len(a.Tasks), "result_count": len(outs), "success_count": nok, "failed_count": len(outs) - nok,
			"all_success": okAll, "partial_failure": !okAll && nok > 0, "allow_partial_failure": a.AllowPartialFailure,
			"timeout_ms": a.TimeoutMs, "timed_out": timedOut.Load() && !early.Load(), "min_success_count": a.MinSuccessCount,
			"returned_early": early.Load(), "duration_ms": time.Since(start).Milliseconds(), "results": results}
	} else {
		meta = results[0].(map[string]any)
	}
	res := &kernel.Result{Output: strings.TrimRight(text.String(), "\n"), Metadata: meta}
	if !okAll && !tolerated {
		res.ExitCode = 1
		res.ErrorKind = &kernel.ErrorKind{Type: kernel.ErrPartialFailure, Message: fmt.Sprintf("%d of %d tasks failed", len(outs)-nok, len(outs))}
	}
	return res, nil
}

// forContext cuts a successful child's answer for the parent's context,
// keeping the whole as an artifact.
func (d *Delegation) forContext(o outcome) outcome {
	if r := []rune(o.output); len(r) > ContextChars {
		o.output = string(r[:ContextHead]) + "\n\n[… " + strconv.Itoa(len(r)-ContextHead-ContextTail) + " characters cut; the whole answer is artifact " +
			d.artifact(o).URI + " …]\n\n" + string(r[len(r)-ContextTail:])
	}
	return o
}

func (d *Delegation) artifact(o outcome) kernel.Artifact {
	return d.cfg.Kernel.PutArtifact(TaskTool, o.output, len(string([]rune(o.output)[:ContextHead])))
}

// resultMeta is one result's metadata (REFERENCE.md §2.15).
func (d *Delegation) resultMeta(o outcome) map[string]any {
	m := map[string]any{"task_id": o.id, "session_id": o.id, "agent": o.agent, "success": o.success,
		"output_bytes": len(o.output), "truncated_for_context": false, "artifact_id": nil, "artifact_uri": nil,
		"structured": o.structured, "source_anchors": []any{}}
	if !o.success {
		m["error"] = o.err
	}
	if len([]rune(o.output)) > ContextChars {
		a := d.artifact(o)
		m["truncated_for_context"], m["artifact_id"], m["artifact_uri"] = true, a.ID, a.URI
	}
	return m
}

// child runs one delegated agent and publishes its subagent_start and,
// whatever happens, its one subagent_end.
func (d *Delegation) child(ctx context.Context, call *kernel.Call, id string, s TaskSpec) outcome {
	def, _ := d.catalog.Lookup(s.Agent)
	o := outcome{id: id, agent: def.Name, started: true}
	d.ev(EventSubagentStart, id, call.ID, map[string]any{"task_id": id, "session_id": id, "parent_session_id": call.ParentID,
		"agent": def.Name, "description": s.Description})
	policy := def.Permissions
	policy.Deny = slices.Concat(policy.Deny, delegationDeny)
	askDenies := def.ConfirmationInheritance == "deny" ||
		(def.ConfirmationInheritance == "" && len(def.Permissions.Allow)+len(def.Permissions.Deny)+len(def.Permissions.Ask) == 0)
	cctx := kernel.WithNarrowing(context.WithValue(ctx, childKey{}, true), kernel.Narrowing{Label: def.Name + " agent", Policy: policy, AskDenies: askDenies})
	system := def.Prompt
	if len(s.OutputSchema) > 0 {
		system += "\n\nAnswer with only a JSON value that follows this JSON Schema, no prose around it:\n" + string(s.OutputSchema)
	}
	cfg := Config{Client: d.cfg.Client, Kernel: d.cfg.Kernel, Emit: d.cfg.Emit, Listening: d.cfg.Listening, System: system,
		MaxToolRounds: cmp(s.MaxSteps, def.MaxSteps), Parent: call.ID, Visible: d.visible(def.Name, policy),
		Progress: func(status string, m map[string]any) {
			d.ev(EventSubagentProgress, id, call.ID, map[string]any{"task_id": id, "session_id": id, "status": status, "metadata": m})
		}}
	res, err := Run(cctx, cfg, id, s.Prompt, nil)
	if err != nil {
		o.err = err.Error()
		if e, ok := err.(*Error); ok && e.Result != nil {
			o.output = e.Result.Text
		}
	} else {
		o.success, o.output = true, res.Text
		if len(s.OutputSchema) > 0 {
			if json.Unmarshal([]byte(strings.TrimSpace(res.Text)), &o.structured) != nil {
				o.success, o.err = false, "the answer is not the JSON output_schema asks for"
			}
		}
	}
	p := map[string]any{"task_id": id, "session_id": id, "agent": def.Name, "success": o.success, "output": o.output}
	if !o.success {
		p["error"] = o.err
	}
	d.ev(EventSubagentEnd, id, call.ID, p)
	return o
}

func cmp(a, b int) int {
	if a > 0 {
		return a
	}
	return b
}

// visible offers a child the tools its policy may allow: not denied by
// name, and allowed by a rule or by a non-deny default.
func visible(p kernel.PermissionPolicy) func(string) bool {
	return func(name string) bool {
		if d, rule := p.Decide(name, json.RawMessage(`{}`)); d == kernel.DecisionDeny && rule != "" && !strings.Contains(rule, "(") {
			return false
		} else if d != kernel.DecisionDeny {
			return true
		}
		return slices.ContainsFunc(p.Allow, func(r string) bool {
			n := strings.TrimSpace(strings.SplitN(r, "(", 2)[0])
			return strings.EqualFold(n, name)
		})
	}
}

// visible is visible(p) memoized for the agent named agent.
func (d *Delegation) visible(agent string, p kernel.PermissionPolicy) func(string) bool {
	m, _ := d.seen.LoadOrStore(agent, &sync.Map{})
	memo, decide := m.(*sync.Map), visible(p)
	return func(name string) bool {
		if v, ok := memo.Load(name); ok {
			return v.(bool)
		}
		v := decide(name)
		memo.Store(name, v)
		return v
	}
}

func (d *Delegation) ev(typ, id, parent string, p map[string]any) {
	d.cfg.Emit(kernel.Event{Version: 1, Type: typ, Payload: p, InvocationID: id, ParentID: parent,
		Origin: kernel.OriginAgent, TimeMs: time.Now().UnixMilli()})
}

// background starts the tasks detached from the call (session close
// cancels them) and answers with their ids.
func (d *Delegation) background(ctx context.Context, call *kernel.Call, specs []TaskSpec) (*kernel.Result, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil, kernel.ErrClosed
	}
	base := context.WithoutCancel(ctx)
	var ids []string
	for _, s := range specs {
		b := &Background{ID: d.nextID(), Agent: s.Agent, done: make(chan struct{})}
		d.bg[b.ID] = b
		ids = append(ids, b.ID)
		d.wg.Add(1)
		go func() {
			defer d.wg.Done()
			bctx, cancel := context.WithCancel(base)
			defer cancel()
			stop := context.AfterFunc(d.root, cancel)
			defer stop()
			select {
			case d.sem <- struct{}{}:
			case <-bctx.Done():
				d.settle(b, outcome{id: b.ID, agent: s.Agent, err: "not started: the session closed"})
				return
			}
			o := d.child(bctx, call, b.ID, s)
			<-d.sem
			d.settle(b, o)
		}()
	}
	out := "Task started in background. Task ID: " + strings.Join(ids, ", ")
	return kernel.OK(out, map[string]any{"task_ids": ids, "background": true}), nil
}

func (d *Delegation) settle(b *Background, o outcome) {
	o = d.forContext(o)
	r := &kernel.Result{Name: TaskTool, Output: o.output, Metadata: d.resultMeta(o)}
	if !o.success {
		r.Output, r.ExitCode = "Error: "+o.err, 1
		r.ErrorKind = &kernel.ErrorKind{Type: kernel.ErrPartialFailure, Message: o.err}
	}
	d.mu.Lock()
	b.Done, b.Result = true, r
	d.mu.Unlock()
	close(b.done)
}
