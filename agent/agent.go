package agent

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/a3s-lab/code-wasm/errkind"
	"github.com/a3s-lab/code-wasm/internal/digest"
	"github.com/a3s-lab/code-wasm/kernel"
	"github.com/a3s-lab/code-wasm/llm"
)

// Event types of a run (REFERENCE.md §1.3); the tool events are the
// kernel's, the terminal failure is kernel.EventError.
const (
	EventAgentStart     = "agent_start"
	EventTurnStart      = "turn_start"
	EventTextDelta      = "text_delta"
	EventReasoningDelta = "reasoning_delta"
	EventToolStart      = "tool_start"
	EventToolInputDelta = "tool_input_delta"
	EventTurnEnd        = "turn_end"
	EventAgentEnd       = "agent_end"
)

// Limits of the loop.
const (
	// DefaultMaxToolRounds is upstream's max_tool_rounds.
	DefaultMaxToolRounds = 50
	// MaxParallel bounds the concurrent calls of one turn (batch's cap).
	MaxParallel = 16
	// DuplicateThreshold: a call whose name and arguments were executed
	// this many times among the last DuplicateWindow calls is not run
	// again (upstream's guard).
	DuplicateThreshold = 3
	DuplicateWindow    = 8
)

// Config is what a run needs.
type Config struct {
	Client llm.Client
	Kernel *kernel.Kernel
	// System is the system prompt ("" for none).
	System string
	// MaxToolRounds bounds the turns that call tools; 0 means
	// DefaultMaxToolRounds.
	MaxToolRounds int
	// Emit publishes the run's events (the session's bus).
	Emit func(kernel.Event)
	// Listening, when set, reports whether anyone would see an event now;
	// while it says no, the run's progress events (agent_start, turn_start,
	// the deltas, tool_start, turn_end) are not built. agent_end and error
	// always are.
	Listening func() bool
	// Parent is the parentId of the run's own events: the task call that
	// delegated it ("" for a session's run).
	Parent string
	// Visible, when set, says which of the session's tools the model is
	// offered (a delegated agent's policy); a call of any other is
	// answered as an unknown tool.
	Visible func(name string) bool
	// Progress, when set, hears the run's milestones (a delegated agent's
	// subagent_progress, upstream's): "tool_completed" after each tool
	// call with {tool, exit_code, output_bytes, error_kind?}, and
	// "turn_completed" before each turn_end with {turn, total_tokens,
	// prompt_tokens, completion_tokens}.
	Progress func(status string, metadata map[string]any)
	// Tools, when set, keeps the list of tools the model is offered
	// between runs (a session's runs share one); nil keeps it for one run.
	Tools *ToolList
}

// ToolList is the list of tools a run offered the model last, with the
// tools it was made from. A tool's name, description and schema are fixed
// for its value, so the list is made again only when the offered tools
// change: making it asked every tool for its description and schema on
// every send (73 µs of a send's ~1.75 ms of Go in a V8 profile under
// js/wasm).
type ToolList struct {
	mu   sync.Mutex
	src  []kernel.Tool
	defs []llm.Tool
}

// Result is what a finished run answers (AgentResult).
type Result struct {
	// Text is the model's last answer.
	Text string `json:"text"`
	// ToolCallsCount counts the tool calls the model made, refused ones
	// included.
	ToolCallsCount int       `json:"toolCallsCount"`
	Usage          llm.Usage `json:"usage"`
	// Messages is the conversation after the run: the history it started
	// from, the prompt, and every turn. A session keeps it as its history.
	Messages []llm.Message `json:"-"`
}

// Error is a run that did not finish: Kind is cancelled, timeout,
// rate_limited or transport (from the model's client), invalid_argument
// (the client refused the request) or partial_failure (the loop stopped
// it: max tool rounds, the duplicate guard). Result holds what the run had
// done.
type Error struct {
	kind    errkind.Kind
	Message string
	Result  *Result
	err     error
}

func (e *Error) Error() string { return e.Message }

// Kind reports the errkind of e.
func (e *Error) Kind() errkind.Kind { return e.kind }

// Unwrap returns the cause (the client's error), if any.
func (e *Error) Unwrap() error { return e.err }

// Run runs the loop once: prompt after history, under the run id id.
func Run(ctx context.Context, cfg Config, id, prompt string, history []llm.Message) (*Result, error) {
	if cfg.MaxToolRounds <= 0 {
		cfg.MaxToolRounds = DefaultMaxToolRounds
	}
	if cfg.Tools == nil {
		cfg.Tools = &ToolList{}
	}
	r := &run{cfg: cfg, id: id, res: &Result{}}
	r.res.Messages = append(slices.Clip(history), llm.Message{Role: llm.User, Text: prompt})
	if !r.quiet() {
		r.ev(EventAgentStart, map[string]any{"prompt": prompt})
	}
	if err := r.loop(ctx); err != nil {
		return nil, r.fail(ctx, err)
	}
	r.ev(EventAgentEnd, map[string]any{"text": r.res.Text, "usage": usageMap(r.res.Usage)})
	return r.res, nil
}

type run struct {
	cfg Config
	id  string
	res *Result
	// recent are the last executed calls, newest last.
	recent []*callSig
	// blocked is the call the guard refused last, nil after a call ran.
	blocked *callSig
}

// quiet: nobody would see a progress event built now.
func (r *run) quiet() bool { return r.cfg.Listening != nil && !r.cfg.Listening() }

func (r *run) ev(typ string, payload map[string]any) {
	r.cfg.Emit(kernel.Event{Version: 1, Type: typ, Payload: payload, InvocationID: r.id, ParentID: r.cfg.Parent,
		Origin: kernel.OriginAgent, TimeMs: time.Now().UnixMilli()})
}

func (r *run) turnEnd(turn int, usage llm.Usage) {
	if r.cfg.Progress != nil {
		r.cfg.Progress("turn_completed", map[string]any{"turn": turn, "total_tokens": usage.TotalTokens,
			"prompt_tokens": usage.PromptTokens, "completion_tokens": usage.CompletionTokens})
	}
	if !r.quiet() {
		r.ev(EventTurnEnd, map[string]any{"turn": turn, "usage": usageMap(usage)})
	}
}

// toolDone reports a finished call to Progress.
func (r *run) toolDone(name, output string, exitCode int, kind any) {
	if r.cfg.Progress == nil {
		return
	}
	m := map[string]any{"tool": name, "exit_code": exitCode, "output_bytes": len(output)}
	if kind != nil {
		m["error_kind"] = kind
	}
	r.cfg.Progress("tool_completed", m)
}

func usageMap(u llm.Usage) map[string]any {
	return map[string]any{"prompt_tokens": u.PromptTokens, "completion_tokens": u.CompletionTokens, "total_tokens": u.TotalTokens}
}

// fail turns err into the run's *Error and emits the terminal error event.
func (r *run) fail(ctx context.Context, err error) *Error {
	e := &Error{kind: errkind.Transport, Message: err.Error(), Result: r.res, err: err}
	var ae *Error
	var ke errkind.Error
	switch {
	case errors.As(err, &ae):
		e = ae
		e.Result = r.res
	case ctx.Err() != nil:
		e.kind, e.Message = errkind.Cancelled, "the agent run was cancelled: "+context.Cause(ctx).Error()
	case errors.As(err, &ke):
		e.kind = ke.Kind()
	}
	r.ev(kernel.EventError, map[string]any{"message": e.Message, "error_kind": map[string]any{"type": e.kind}})
	return e
}

func (r *run) loop(ctx context.Context) error {
	rounds := 0
	for turn := 1; ; turn++ {
		if !r.quiet() {
			r.ev(EventTurnStart, map[string]any{"turn": turn})
		}
		a, usage, err := r.turn(ctx)
		if err != nil {
			return err
		}
		r.res.Usage = r.res.Usage.Add(usage)
		r.res.Text = a.Text
		if len(a.ToolCalls) == 0 {
			r.res.Messages = append(r.res.Messages, a)
			r.turnEnd(turn, usage)
			return nil
		}
		r.res.ToolCallsCount += len(a.ToolCalls)
		if rounds++; rounds > r.cfg.MaxToolRounds {
			return &Error{kind: errkind.PartialFailure, Message: fmt.Sprintf("Max tool rounds (%d) exceeded: the model kept calling tools", r.cfg.MaxToolRounds)}
		}
		plans := r.plan(a.ToolCalls)
		a.ToolCalls = a.ToolCalls[:0]
		for _, p := range plans {
			a.ToolCalls = append(a.ToolCalls, p.call)
		}
		r.res.Messages = append(r.res.Messages, a)
		fatal := r.execute(ctx, plans)
		results := make([]llm.ToolResult, len(plans))
		for i, p := range plans {
			results[i] = p.result
		}
		r.res.Messages = append(r.res.Messages, llm.Message{Role: llm.User, ToolResults: results})
		r.turnEnd(turn, usage)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if fatal != nil {
			return fatal
		}
	}
}

// turn streams one model turn, emitting its deltas, and returns the
// assistant message (tool calls in index order) and the turn's usage.
func (r *run) turn(ctx context.Context) (llm.Message, llm.Usage, error) {
	req := llm.Request{System: r.cfg.System, Messages: r.res.Messages, Tools: r.tools()}
	type pending struct {
		call llm.ToolCall
		args strings.Builder
	}
	calls := map[int]*pending{}
	var text strings.Builder
	var usage llm.Usage
	finished := false
	for c, err := range r.cfg.Client.Stream(ctx, req) {
		if err != nil {
			return llm.Message{}, usage, err
		}
		switch c.Type {
		case llm.TextDelta:
			text.WriteString(c.Text)
			if !r.quiet() {
				r.ev(EventTextDelta, map[string]any{"text": c.Text})
			}
		case llm.ReasoningDelta:
			if !r.quiet() {
				r.ev(EventReasoningDelta, map[string]any{"text": c.Text})
			}
		case llm.ToolCallStart:
			calls[c.Index] = &pending{call: llm.ToolCall{ID: c.ID, Name: c.Name}}
			if !r.quiet() {
				r.ev(EventToolStart, map[string]any{"id": c.ID, "name": c.Name})
			}
		case llm.ToolCallDelta:
			p, ok := calls[c.Index]
			if !ok {
				return llm.Message{}, usage, &Error{kind: errkind.Transport, Message: fmt.Sprintf("the model's stream sent arguments for tool call %d before starting it", c.Index)}
			}
			p.args.WriteString(c.Fragment)
			if !r.quiet() {
				r.ev(EventToolInputDelta, map[string]any{"id": p.call.ID, "delta": c.Fragment})
			}
		case llm.Finish:
			usage, finished = c.Usage, true
		}
	}
	if !finished {
		if err := ctx.Err(); err != nil {
			return llm.Message{}, usage, err
		}
		return llm.Message{}, usage, &Error{kind: errkind.Transport, Message: "the model's stream ended without finishing the turn"}
	}
	idx := make([]int, 0, len(calls))
	for i := range calls {
		idx = append(idx, i)
	}
	slices.Sort(idx)
	m := llm.Message{Role: llm.Assistant, Text: text.String()}
	for _, i := range idx {
		p := calls[i]
		p.call.Arguments = p.args.String()
		m.ToolCalls = append(m.ToolCalls, p.call)
	}
	return m, usage, nil
}

// tools lists the session's tools as the model sees them (the registry
// may change between turns: registerTool, MCP). A turn that finds the
// same tool values under the same names as the run's last turn reuses its
// list: Parameters copies a built-in's constant schema on every call
// (12 KB a turn for the built-in tools). Only pointers are compared (a
// re-registered tool is a new one); a tool of another kind is read anew.
func (r *run) tools() []llm.Tool {
	reg := r.cfg.Kernel.Registry()
	names := r.names()
	tl := r.cfg.Tools
	tl.mu.Lock()
	defer tl.mu.Unlock()
	src := make([]kernel.Tool, 0, len(names))
	same := true
	for _, n := range names {
		t, ok := reg.Lookup(n)
		if !ok {
			continue
		}
		i := len(src)
		same = same && i < len(tl.src) && reflect.TypeOf(t).Kind() == reflect.Pointer && t == tl.src[i] && n == tl.defs[i].Name
		src = append(src, t)
		names[i] = n
	}
	if same && len(src) == len(tl.src) {
		return tl.defs
	}
	out := make([]llm.Tool, len(src))
	for i, t := range src {
		out[i] = llm.Tool{Name: names[i], Description: t.Description(), Parameters: t.Parameters()}
	}
	tl.src, tl.defs = src, out
	return out
}

// names are the tools the model is offered, sorted.
func (r *run) names() []string {
	names := r.cfg.Kernel.Registry().Names()
	if r.cfg.Visible != nil {
		names = slices.DeleteFunc(names, func(n string) bool { return !r.cfg.Visible(n) })
	}
	return names
}

// plan is one tool call of a turn: run it (args set, result empty), or
// answer it with result as it is.
type plan struct {
	call   llm.ToolCall
	args   json.RawMessage
	sig    *callSig
	run    bool
	result llm.ToolResult
	// ref says why the loop answered the call itself; fatal: the guard
	// refused it twice in a row, and the run stops.
	ref   refusal
	fatal bool
}

// plan decides, in call order, which calls run. Calls sharing an id are
// all refused and appear once in the transcript (a provider refuses a
// transcript that answers an id twice); an empty id gets a synthetic one
// so the refusal can be answered.
func (r *run) plan(calls []llm.ToolCall) []*plan {
	count := map[string]int{}
	for _, c := range calls {
		count[c.ID]++
	}
	var out []*plan
	seen := map[string]bool{}
	for i, c := range calls {
		if seen[c.ID] {
			continue
		}
		seen[c.ID] = true
		p := &plan{call: c}
		out = append(out, p)
		switch {
		case c.ID == "":
			p.call.ID = fmt.Sprintf("empty_id_%d", i)
			p.refuse(errkind.InvalidArgument, "Error: tool call %d (%s) has an empty id; it was not run", i, c.Name)
			continue
		case count[c.ID] > 1:
			p.refuse(errkind.InvalidArgument, "Error: %d tool calls share the id %q; none of them was run (give each call its own id)", count[c.ID], c.ID)
			continue
		}
		if _, ok := r.cfg.Kernel.Registry().Lookup(c.Name); !ok || (r.cfg.Visible != nil && !r.cfg.Visible(c.Name)) {
			p.refuse(errkind.NotFound, "Error: there is no tool named %q. Available tools: %s", c.Name, strings.Join(r.names(), ", "))
			continue
		}
		args, err := parseArgs(c.Arguments)
		if err != nil {
			p.refuse(errkind.InvalidArgument, "Error: the arguments of %s are not a JSON object (%v); call it again with valid JSON arguments", c.Name, err)
			continue
		}
		p.args = args
		p.sig = &callSig{name: c.Name, raw: args}
		if n := r.seen(p.sig); n >= DuplicateThreshold {
			if r.blocked != nil && r.blocked.same(p.sig) {
				p.refuse(errkind.PartialFailure, "Tool '%s' has been called %d times with identical arguments; the run stops.", c.Name, n)
				p.guard(n)
				p.fatal = true
				continue
			}
			r.blocked = p.sig
			p.refuse(errkind.PartialFailure, "Tool '%s' has been called %d times with identical arguments. Aborting to prevent infinite loop. Consider modifying your approach.", c.Name, n)
			p.guard(n)
			continue
		}
		p.run = true
		r.blocked = nil
		r.recent = append(r.recent, p.sig)
		if len(r.recent) > DuplicateWindow {
			r.recent = r.recent[len(r.recent)-DuplicateWindow:]
		}
	}
	return out
}

func (r *run) seen(c *callSig) int {
	n := 0
	for _, s := range r.recent {
		if s.same(c) {
			n++
		}
	}
	return n
}

// callSig is a call as the duplicate guard compares it: its name and the
// hash of its compact arguments, computed only when two calls of one name
// differ in their argument text (a run's first call and repeated text need
// no hash: json.Marshal and sha256 of every call were ~3 % of an agent
// turn's Go time in wasm).
type callSig struct {
	name string
	raw  json.RawMessage // a JSON object (parseArgs)
	sig  string          // signature, once computed
}

func (c *callSig) same(o *callSig) bool {
	if c.name != o.name {
		return false
	}
	if string(c.raw) == string(o.raw) {
		return true
	}
	return c.key() == o.key()
}

func (c *callSig) key() string {
	if c.sig == "" {
		var v map[string]any
		_ = json.Unmarshal(c.raw, &v) // checked by parseArgs
		c.sig = signature(c.name, v)
	}
	return c.sig
}

// refusal is the error kind and metadata of the tool_end event of a call
// the loop refused.
type refusal struct {
	kind     errkind.Kind
	metadata map[string]any
}

func (p *plan) refuse(k errkind.Kind, format string, a ...any) {
	p.result = llm.ToolResult{CallID: p.call.ID, Content: fmt.Sprintf(format, a...), IsError: true}
	p.ref = refusal{kind: k}
}

func (p *plan) guard(n int) {
	p.ref.metadata = map[string]any{"guard": "duplicate_tool_call", "duplicate_count": n, "threshold": DuplicateThreshold}
}

// parseArgs checks that s is a JSON object ("" is {}) without decoding
// it (json.Valid allocates nothing); the error of invalid JSON is
// json.Unmarshal's.
func parseArgs(s string) (json.RawMessage, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return json.RawMessage(`{}`), nil
	}
	if !json.Valid([]byte(s)) {
		var v any
		if err := json.Unmarshal([]byte(s), &v); err != nil {
			return nil, err
		}
	}
	if t[0] != '{' {
		return nil, fmt.Errorf("got %s", t[:1])
	}
	return json.RawMessage(s), nil
}

// signature is the tool name and a hash of the compact arguments (args
// decoded: json.Marshal sorts the keys).
func signature(name string, args map[string]any) string {
	b, _ := json.Marshal(args)
	sum := digest.Sum256(b)
	return name + ":" + hex.EncodeToString(sum[:])
}

// execute runs the turn's planned calls and fills their results: all at
// once (up to the bound) when every call to run is parallel-safe, else one
// after another. It reports the duplicate guard's fatal refusal.
func (r *run) execute(ctx context.Context, plans []*plan) error {
	var fatal error
	var torun []*plan
	for _, p := range plans {
		if p.run {
			torun = append(torun, p)
			continue
		}
		r.refused(p)
		if p.fatal && fatal == nil {
			fatal = &Error{kind: errkind.PartialFailure, Message: fmt.Sprintf("Agent made the same blocked duplicate tool call twice without changing approach; stopping after %d tool call attempts", r.res.ToolCallsCount)}
		}
	}
	if conc := r.concurrency(torun); conc > 1 {
		sem := make(chan struct{}, conc)
		var wg sync.WaitGroup
		for _, p := range torun {
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer func() { <-sem; wg.Done() }()
				r.invoke(ctx, p)
			}()
		}
		wg.Wait()
	} else {
		for _, p := range torun {
			r.invoke(ctx, p)
		}
	}
	return fatal
}

// concurrency is batch's rule for one step: 1 unless every call is
// parallel-safe, else MaxParallel capped by the smallest max_parallelism.
func (r *run) concurrency(ps []*plan) int {
	if len(ps) < 2 {
		return 1
	}
	conc := MaxParallel
	for _, p := range ps {
		t, ok := r.cfg.Kernel.Registry().Lookup(p.call.Name)
		if !ok {
			return 1
		}
		c := t.Capabilities(p.args)
		if !c.ParallelSafe() {
			return 1
		}
		conc = min(conc, c.MaxParallelism)
	}
	return conc
}

func (r *run) invoke(ctx context.Context, p *plan) {
	res, err := r.cfg.Kernel.Invoke(ctx, kernel.Request{Tool: p.call.Name, Args: p.args, Origin: kernel.OriginAgent, Parent: r.id})
	if err != nil {
		p.result = llm.ToolResult{CallID: p.call.ID, Content: "Error: " + err.Error(), IsError: true}
		kind := map[string]any{"message": err.Error()}
		if ke, ok := errors.AsType[errkind.Error](err); ok {
			kind["type"] = ke.Kind()
		}
		r.toolDone(p.call.Name, p.result.Content, 1, kind)
		return
	}
	p.result = llm.ToolResult{CallID: p.call.ID, Content: res.Output, IsError: res.ExitCode != 0}
	var kind any
	if res.ErrorKind != nil {
		kind = res.ErrorKind
	}
	r.toolDone(p.call.Name, res.Output, res.ExitCode, kind)
}

// refused emits the tool_end of a call the loop answered itself.
func (r *run) refused(p *plan) {
	pl := map[string]any{"id": p.call.ID, "name": p.call.Name, "output": p.result.Content, "exit_code": 1,
		"error_kind": map[string]any{"type": p.ref.kind, "message": p.result.Content}}
	if p.ref.metadata != nil {
		pl["metadata"] = p.ref.metadata
	}
	r.cfg.Emit(kernel.Event{Version: 1, Type: kernel.EventToolEnd, Payload: pl, ParentID: r.id,
		Origin: kernel.OriginAgent, TimeMs: time.Now().UnixMilli()})
	r.toolDone(p.call.Name, p.result.Content, 1, pl["error_kind"])
}
