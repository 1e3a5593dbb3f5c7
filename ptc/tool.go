package ptc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/a3s-lab/code-wasm/kernel"
	"github.com/a3s-lab/code-wasm/workspace"
)

// Defaults and bounds (REFERENCE.md §2.13).
const (
	DefaultTimeout     = 30 * time.Second
	DefaultTaskTimeout = 600 * time.Second // when `task` is allowed
	// MaxTimeout bounds limits.timeoutMs: the longest REFERENCE.md allows
	// (600 s, the default when `task` is allowed).
	MaxTimeout            = 600 * time.Second
	DefaultMaxToolCalls   = 20
	DefaultMaxOutputBytes = 64 << 10
	// SettleGrace is how long an engine may take to stop after its context
	// ends before the tool stops waiting for it.
	SettleGrace = 500 * time.Millisecond
	// DefaultMaxStackDepth bounds recursion in engines that can count it.
	DefaultMaxStackDepth = 2000
)

// neverAllowed are removed from every allow-list: a program may not start
// another orchestrator of its own kind.
var neverAllowed = []string{"program", "dynamic_workflow", "parallel_task"}

// Config builds the program tool.
type Config struct {
	// Engine runs scripts. Nil leaves the tool registered but every call
	// fails as unsupported (a host with no engine).
	Engine Engine
	// Workspace is where `path` scripts are read from; nil refuses `path`.
	Workspace *workspace.Workspace
}

// Tool is the `program` tool.
type Tool struct{ cfg Config }

// New returns the program tool.
func New(cfg Config) *Tool { return &Tool{cfg: cfg} }

func (*Tool) Name() string { return "program" }

// Orchestrates marks program as an orchestrator: a program may not call
// program, directly or through another orchestrator.
func (*Tool) Orchestrates() {}

// SchemaBuiltin: program's schema is fixed at build time (kernel.BuiltinSchema).
func (*Tool) SchemaBuiltin() {}

func (*Tool) Description() string {
	return "Run a bounded JavaScript program that calls tools, to replace many grep/read turns with one call. " +
		"Shape: `async function run(ctx, inputs) { ... return value }` (plain or `export default`); inputs is the `inputs` argument. " +
		"ctx methods (each a governed nested tool call, awaited): ctx.tool(name, args) → {output, exitCode, metadata, errorKind?}; " +
		"ctx.tools.<name>(args); ctx.readFile(path) → file text; ctx.read(path|args) → result with .text; " +
		"ctx.grep(pattern, opts) → output text; ctx.glob(pattern, opts) → string[] of every matching path (at most 10000); ctx.ls(path) → output text. " +
		"A failed helper call throws; ctx.tool returns the failure. Return a JSON-serialisable value; a `summary` string in it heads the output. " +
		"Limits (override in `limits`): timeoutMs default 30000, at most 600000; " +
		"maxToolCalls default 20; maxOutputBytes default 65536 (64 KiB) per nested call's output, longer output is cut. " +
		"Plain JavaScript only: setTimeout/setInterval, fetch, process, require, import and the file system are unavailable; " +
		"use ctx for all I/O. Example: async function run(ctx) { const files = await ctx.glob('src/**/*.ts'); " +
		"const hits = await ctx.grep('TODO', {output_mode: 'count'}); return {summary: `${files.length} files`, hits}; }"
}

func (*Tool) Parameters() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{` +
		`"type":{"type":"string","enum":["script"],"description":"Always \"script\"."},` +
		`"language":{"type":"string","enum":["javascript"],"description":"Always \"javascript\"."},` +
		`"source":{"type":"string","maxLength":196608,"description":"Script text defining async function run(ctx, inputs)."},` +
		`"path":{"type":"string","description":"Workspace-relative .js or .mjs script, instead of source."},` +
		`"inputs":{"type":"object","description":"Passed to run as its second argument."},` +
		`"allowed_tools":{"type":"array","items":{"type":"string"},"description":"Tools the script may call; default every tool of this session except program itself."},` +
		`"limits":{"type":"object","properties":{` +
		`"timeoutMs":{"type":"integer","minimum":1,"maximum":600000,"description":"Script timeout in ms; default 30000, at most 600000."},` +
		`"maxToolCalls":{"type":"integer","minimum":1,"description":"Nested tool calls allowed; default 20."},` +
		`"maxOutputBytes":{"type":"integer","minimum":1,"description":"Bytes of each nested call's output the script sees; default 65536."}},"additionalProperties":false}` +
		`},"required":["type"],"additionalProperties":false}`)
}

// Capabilities: a program may call anything; schedule it alone.
func (*Tool) Capabilities(json.RawMessage) kernel.Capabilities { return kernel.Conservative() }

// Effects: a program changes nothing itself (its ctx calls are judged one
// by one); one run from a workspace `path` returns what it read there (a
// syntax error quotes the script), so read rules govern that path.
func (*Tool) Effects(args json.RawMessage) kernel.Effects {
	var a struct {
		Path string `json:"path"`
	}
	_ = json.Unmarshal(args, &a)
	return kernel.Effects{ReadsContent: a.Path != ""}
}

// Touches: the script file a `path` call runs (its content is the
// program, so path-scoped read rules govern it).
func (*Tool) Touches(args json.RawMessage) kernel.Touched {
	var a struct {
		Path *string `json:"path"`
	}
	_ = json.Unmarshal(args, &a)
	if a.Path == nil {
		return kernel.Touched{}
	}
	return kernel.Touched{Paths: []string{*a.Path}}
}

// Args is the program tool's argument object.
type Args struct {
	Type         string          `json:"type"`
	Language     string          `json:"language,omitempty"`
	Source       *string         `json:"source,omitempty"`
	Path         string          `json:"path,omitempty"`
	Inputs       json.RawMessage `json:"inputs,omitempty"`
	AllowedTools []string        `json:"allowed_tools,omitempty"`
	Limits       *Limits         `json:"limits,omitempty"`
}

// Limits bound one program; nil fields take the defaults.
type Limits struct {
	TimeoutMs      *int64 `json:"timeoutMs,omitempty"`
	MaxToolCalls   *int   `json:"maxToolCalls,omitempty"`
	MaxOutputBytes *int   `json:"maxOutputBytes,omitempty"`
}

// plan is a validated call.
type plan struct {
	name           string
	source         string
	inputs         json.RawMessage
	allowed        []string
	timeout        time.Duration
	maxToolCalls   int
	maxOutputBytes int
}

func (t *Tool) prepare(ctx context.Context, call *kernel.Call) (*plan, error) {
	var a Args
	dec := json.NewDecoder(bytes.NewReader(call.Args))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a); err != nil {
		return nil, kernel.InvalidArgument("program: invalid arguments: %v", err)
	}
	if a.Type != "script" {
		return nil, kernel.InvalidArgument("program: type must be \"script\", got %q", a.Type)
	}
	if a.Language != "" && a.Language != "javascript" {
		return nil, kernel.InvalidArgument("program: language must be \"javascript\", got %q", a.Language)
	}
	p := &plan{timeout: DefaultTimeout, maxToolCalls: DefaultMaxToolCalls, maxOutputBytes: DefaultMaxOutputBytes}
	switch {
	case a.Source != nil && a.Path != "":
		return nil, kernel.InvalidArgument("program: give either source or path, not both")
	case a.Source != nil:
		p.name, p.source = "inline.js", *a.Source
	case a.Path != "":
		src, err := t.readScript(ctx, a.Path)
		if err != nil {
			return nil, err
		}
		p.name, p.source = a.Path, src
	default:
		return nil, kernel.InvalidArgument("program: source or path is required")
	}
	src, err := NormalizeSource(p.source)
	if err != nil {
		return nil, kernel.InvalidArgument("program: %v", err)
	}
	p.source = src
	p.inputs = json.RawMessage(`{}`)
	if len(a.Inputs) > 0 && string(a.Inputs) != "null" {
		if a.Inputs[0] != '{' {
			return nil, kernel.InvalidArgument("program: inputs must be an object")
		}
		p.inputs = a.Inputs
	}
	visible := call.Invoker.ToolNames()
	if a.AllowedTools == nil {
		for _, n := range visible {
			if !slices.Contains(neverAllowed, n) {
				p.allowed = append(p.allowed, n)
			}
		}
	} else {
		for _, n := range a.AllowedTools {
			if slices.Contains(neverAllowed, n) {
				continue // always removed (REFERENCE.md §2.13)
			}
			if !slices.Contains(visible, n) {
				return nil, kernel.InvalidArgument("program: allowed_tools names %q, which is not a registered tool (registered: %s)", n, strings.Join(visible, ", "))
			}
			if !slices.Contains(p.allowed, n) {
				p.allowed = append(p.allowed, n)
			}
		}
		slices.Sort(p.allowed)
	}
	if slices.Contains(p.allowed, "task") {
		p.timeout = DefaultTaskTimeout
	}
	if l := a.Limits; l != nil {
		if l.TimeoutMs != nil {
			if *l.TimeoutMs < 1 {
				return nil, kernel.InvalidArgument("program: limits.timeoutMs must be >= 1, got %d", *l.TimeoutMs)
			}
			if *l.TimeoutMs > MaxTimeout.Milliseconds() {
				return nil, kernel.InvalidArgument("program: limits.timeoutMs must be at most %d (%d s), got %d; split the work into several programs", MaxTimeout.Milliseconds(), int(MaxTimeout.Seconds()), *l.TimeoutMs)
			}
			p.timeout = time.Duration(*l.TimeoutMs) * time.Millisecond
		}
		if l.MaxToolCalls != nil {
			if *l.MaxToolCalls < 1 {
				return nil, kernel.InvalidArgument("program: limits.maxToolCalls must be >= 1, got %d", *l.MaxToolCalls)
			}
			p.maxToolCalls = *l.MaxToolCalls
		}
		if l.MaxOutputBytes != nil {
			if *l.MaxOutputBytes < 1 {
				return nil, kernel.InvalidArgument("program: limits.maxOutputBytes must be >= 1, got %d", *l.MaxOutputBytes)
			}
			p.maxOutputBytes = *l.MaxOutputBytes
		}
	}
	return p, nil
}

func (t *Tool) readScript(ctx context.Context, p string) (string, error) {
	if ext := strings.ToLower(path.Ext(p)); ext != ".js" && ext != ".mjs" {
		return "", kernel.InvalidArgument("program: path must name a .js or .mjs file, got %q", p)
	}
	if t.cfg.Workspace == nil {
		return "", kernel.Errorf(kernel.ErrUnsupported, "program: this session has no workspace to read %q from", p)
	}
	if e, err := t.cfg.Workspace.Stat(ctx, p); err == nil && e.Size > MaxSourceBytes {
		return "", kernel.InvalidArgument("program: %s is %d bytes; the limit is %d (192 KiB)", p, e.Size, MaxSourceBytes)
	}
	b, _, err := t.cfg.Workspace.ReadFile(ctx, p)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// Execute validates, runs the script in the engine and shapes the result.
func (t *Tool) Execute(ctx context.Context, call *kernel.Call) (*kernel.Result, error) {
	if call.Invoker == nil {
		return nil, kernel.Errorf(kernel.ErrUnsupported, "program: no nested invoker (the tool must run through the kernel)")
	}
	p, err := t.prepare(ctx, call)
	if err != nil {
		return nil, err
	}
	if t.cfg.Engine == nil {
		return nil, kernel.Errorf(kernel.ErrUnsupported, "program: no JavaScript engine is available on this host")
	}
	br := newBridge(call, p)
	prog := &Program{Name: p.name, Source: p.source, Inputs: p.inputs, Methods: br.methods(),
		Tools: p.allowed, MaxStackDepth: DefaultMaxStackDepth}
	// The engine's own limits: it refuses inside the script what would
	// cost the host (a flood of calls past maxToolCalls, a 20 MB result).
	prog.MaxToolCalls, prog.MaxInFlight = p.maxToolCalls, DefaultMaxInFlight
	prog.MaxResultBytes, prog.MemoryBytes = DefaultMaxResultBytes, DefaultMemoryBytes

	// limits.timeoutMs counts the script's run: from Running when the
	// engine reports it (its start has EngineStartTimeout of its own), else
	// from here. An engine that enforces it where the script runs
	// (TimeoutEnforcer) decides; the timer here is then its backstop.
	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	prog.Timeout = p.timeout
	t0 := time.Now()
	var clock sync.Mutex
	var engineStart time.Duration = -1
	limit := p.timeout
	if _, ok := t.cfg.Engine.(TimeoutEnforcer); ok {
		limit += EnforcedTimeoutGrace
	}
	scriptTimer := func() *time.Timer { return time.AfterFunc(limit, func() { cancel(ErrScriptTimeout) }) }
	var timer *time.Timer
	if _, ok := t.cfg.Engine.(RunningReporter); ok {
		timer = time.AfterFunc(EngineStartTimeout, func() { cancel(errEngineStart) })
		prog.Running = sync.OnceFunc(func() {
			clock.Lock()
			defer clock.Unlock()
			if timer.Stop() {
				engineStart = time.Since(t0)
				timer = scriptTimer()
			}
		})
	} else {
		timer = scriptTimer()
	}
	defer func() {
		clock.Lock()
		timer.Stop()
		clock.Unlock()
	}()
	type outcome struct {
		v   json.RawMessage
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		kernel.GrowStack() // the run's JSON and host-call frames grew it in steps
		var o outcome
		defer func() {
			if r := recover(); r != nil {
				o = outcome{err: fmt.Errorf("engine %s panicked: %v", t.cfg.Engine.Name(), r)}
			}
			done <- o
		}()
		o.v, o.err = t.cfg.Engine.Run(runCtx, prog, br)
	}()
	var o outcome
	select {
	case o = <-done:
	case <-runCtx.Done():
		select {
		case o = <-done:
		case <-time.After(SettleGrace):
			o = outcome{err: runCtx.Err()}
		}
	}
	br.close()
	cause := context.Cause(runCtx)
	cancel(nil)
	br.settle(SettleGrace)
	clock.Lock()
	started := engineStart
	clock.Unlock()
	return t.result(ctx, cause, started, p, br, o.v, o.err)
}

// The cause that ends a run's context before the caller does when the
// engine does not start (ErrScriptTimeout when the script runs too long).
var errEngineStart = errors.New("program engine did not start")

func (t *Tool) result(parent context.Context, cause error, engineStart time.Duration, p *plan, br *bridge, value json.RawMessage, runErr error) (*kernel.Result, error) {
	calls := br.records()
	prog := map[string]any{
		"name":       p.name,
		"language":   "javascript",
		"runtime":    t.cfg.Engine.Name(),
		"success":    false,
		"tool_calls": calls,
	}
	if engineStart >= 0 {
		prog["engine_start_ms"] = engineStart.Milliseconds()
	}
	meta := map[string]any{"program": prog, "script_result": nil}
	// Timed out: the timer here ended the run, or the engine stopped the
	// script at its deadline (TimeoutEnforcer).
	timedOut := cause != nil || errors.Is(runErr, ErrScriptTimeout)
	fail := func(msg string, kind *kernel.ErrorKind) (*kernel.Result, error) {
		return &kernel.Result{Output: msg, ExitCode: 1, Metadata: meta, ErrorKind: kind}, nil
	}
	// The script's own faults (a tool outside allowed_tools, too many
	// calls, an exception, a syntax error, a result that is not JSON) are
	// invalid_argument{message}: the program is the argument.
	invalid := func(msg string) *kernel.ErrorKind {
		return &kernel.ErrorKind{Type: kernel.ErrInvalidArgument, Message: msg}
	}
	// A limit violation wins even if the script caught the thrown error.
	if v := br.violation(); v != nil {
		return fail(v.Error(), invalid(v.Error()))
	}
	var le *LimitError
	if errors.As(runErr, &le) {
		return fail(le.Message, invalid(le.Message))
	}
	if runErr != nil || timedOut {
		switch {
		case parent.Err() != nil && errors.Is(parent.Err(), context.DeadlineExceeded):
			return nil, parent.Err() // the kernel's own timeout: it words it
		case parent.Err() != nil:
			return fail("program script cancelled by caller", &kernel.ErrorKind{Type: kernel.ErrCancelled, Op: "program"})
		case errors.Is(cause, errEngineStart):
			msg := fmt.Sprintf("program engine error: the engine did not start within %d s", int(EngineStartTimeout.Seconds()))
			return fail(msg, &kernel.ErrorKind{Type: kernel.ErrUnsupported, Message: msg})
		case timedOut:
			ms := p.timeout.Milliseconds()
			return fail(fmt.Sprintf("program script timed out after %d ms", ms), &kernel.ErrorKind{Type: kernel.ErrTimeout, Op: "program", DurationMs: ms})
		}
		if errors.Is(runErr, ErrNoEngine) {
			return fail("program: "+runErr.Error(), &kernel.ErrorKind{Type: kernel.ErrUnsupported, Message: runErr.Error()})
		}
		var se *ScriptError
		if errors.As(runErr, &se) {
			return fail("program script error: "+se.Error(), invalid("program script error: "+se.Error()))
		}
		// The engine itself failed (not the script): unsupported, with why.
		return fail("program engine error: "+runErr.Error(), &kernel.ErrorKind{Type: kernel.ErrUnsupported, Message: "program engine error: " + runErr.Error()})
	}
	var result any
	if len(value) == 0 {
		value = json.RawMessage("null")
	}
	if len(value) > DefaultMaxResultBytes { // the engine refuses it first
		msg := fmt.Sprintf("program script error: the program result is %d bytes of JSON; the limit is %d", len(value), DefaultMaxResultBytes)
		return fail(msg, invalid(msg))
	}
	if err := json.Unmarshal(value, &result); err != nil {
		msg := "program: the script result is not JSON: " + err.Error()
		return fail(msg, invalid(msg))
	}
	meta["program"].(map[string]any)["success"] = true
	// Kept as the script's JSON, so its key order survives (a Go map would
	// sort the keys).
	meta["script_result"] = json.RawMessage(value)

	var b strings.Builder
	b.WriteString("Program script completed.\n")
	if m, ok := result.(map[string]any); ok {
		if s, ok := m["summary"].(string); ok && s != "" {
			b.WriteString(s)
			b.WriteString("\n")
		}
	}
	fmt.Fprintf(&b, "\nTool calls (%d):\n", len(calls))
	for i, c := range calls {
		status := "ok"
		if !c.Success {
			status = fmt.Sprintf("failed (exit %d)", c.ExitCode)
		}
		fmt.Fprintf(&b, "%d. %s %s, %d bytes", i+1, c.ToolName, status, c.OutputBytes)
		if c.Truncated {
			fmt.Fprintf(&b, " (truncated to %d)", p.maxOutputBytes)
		}
		b.WriteString("\n")
	}
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, value, "", "  "); err != nil {
		pretty.Write(value)
	}
	b.WriteString("\nResult:\n")
	b.Write(pretty.Bytes())
	b.WriteString("\n")
	return kernel.OK(b.String(), meta), nil
}
