package hostapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"sync"

	"github.com/a3s-lab/code-wasm/core"
	"github.com/a3s-lab/code-wasm/internal/hostcall"
	"github.com/a3s-lab/code-wasm/ptc"
	"github.com/a3s-lab/code-wasm/workspace"
	"github.com/a3s-lab/code-wasm/workspace/memfs"
)

// Error codes crossing to JS (Error.code). npm/src/PROTOCOL.md lists them.
const (
	CodeSessionClosed     = "SESSION_CLOSED"
	CodeInvalidOptions    = "INVALID_OPTIONS"
	CodeInvalidCall       = "INVALID_CALL"
	CodeToolNotRegistered = "TOOL_NOT_REGISTERED"
	CodeUnknownSession    = "UNKNOWN_SESSION"
	CodeAborted           = "ABORTED"
	CodeToolFailed        = "TOOL_FAILED"
	// CodeWorkspaceBusy: the workspace is held by another session that
	// may not share it (an OPFS root open in another tab or worker).
	CodeWorkspaceBusy = "WORKSPACE_BUSY"
	// CodePanic: a Go panic, reported with a short message (the stack
	// goes to the console, never into the error).
	CodePanic = "PANIC"
)

// Error is an error with a code for JS. Detail, when set, is JSON the JS
// side attaches to the Error (the failed ToolResult of a typed helper).
type Error struct {
	Code   string
	Msg    string
	Detail string
}

func (e *Error) Error() string { return e.Msg }

// ErrorCode is the JS Error's code (hostcall.Coded).
func (e *Error) ErrorCode() string { return e.Code }

// ErrorDetail is the JS Error's detail, or "" (hostcall.Coded).
func (e *Error) ErrorDetail() string { return e.Detail }

var _ hostcall.Coded = (*Error)(nil)

func errf(code, format string, args ...any) *Error {
	return &Error{Code: code, Msg: fmt.Sprintf(format, args...)}
}

// Host is the session's host dispatcher (npm/src/PROTOCOL.md §2): a nil
// Host means the session has no JS callbacks.
type Host = hostcall.Func

// Drivers maps workspace kinds beyond memory to their constructors. A
// constructor may return an *Error to choose the code (WORKSPACE_BUSY);
// other errors become INVALID_OPTIONS.
type Drivers map[string]func(WorkspaceOptions) (workspace.Driver, error)

// Env is what the host offers sessions besides their options.
type Env struct {
	// Drivers serve workspace kinds other than memory.
	Drivers Drivers
	// HostKinds are the dispatcher kinds the host answers beyond the
	// governance ones (hook, budget, confirm, security), e.g. "ptc.start".
	// nil means not stated: every kind is assumed. A host that states its
	// kinds without the PTC ones has no script engine, and its sessions
	// list no program tool.
	HostKinds []string
}

// hasScriptEngine reports whether the host runs program scripts.
func (env Env) hasScriptEngine() bool {
	if env.HostKinds == nil {
		return true
	}
	for _, k := range env.HostKinds {
		if k == "ptc.start" {
			return true
		}
	}
	return false
}

// Sessions is the table of live sessions of one wasm instance.
type Sessions struct {
	mu   sync.Mutex
	next int
	m    map[int]*entry
}

type entry struct {
	s    *core.Session
	host Host
	gov  *governance

	mu   sync.Mutex
	subs map[int]*core.Subscription
	nsub int
}

// NewSessions returns an empty table.
func NewSessions() *Sessions { return &Sessions{m: map[int]*entry{}} }

// Create builds a session from JSON options and returns its handle. host
// answers the JS callbacks the options name; env says what else the host
// offers (workspace drivers, a script engine).
func (t *Sessions) Create(ctx context.Context, raw []byte, host Host, env Env) (int, error) {
	var o Options
	if len(raw) > 0 {
		if err := decodeStrict("createSession", "options", raw, &o); err != nil {
			return 0, &Error{Code: CodeInvalidOptions, Msg: err.Error()}
		}
	}
	if err := o.validate(); err != nil {
		return 0, errf(CodeInvalidOptions, "createSession: options.%v", err)
	}
	if host == nil && o.needsHost() {
		return 0, errf(CodeInvalidOptions, "createSession: options name JS functions but no host dispatcher was given")
	}
	ws, err := buildWorkspace(ctx, o.Workspace, env.Drivers)
	if err != nil {
		return 0, err
	}
	gov := newGovernance(&o, host)
	// The program tool runs on the host's JS engine through the PTC kinds of
	// the dispatcher (PROTOCOL.md "PTC"); no host, no engine.
	opts := core.Options{Workspace: ws, Governance: gov.kernel(), ProgramEngine: ptc.NewHostEngine(host)}
	// A host without a script engine (Cloudflare Workers) lists no program
	// tool rather than one that always fails: the surface is what works.
	opts.NoProgram = !env.hasScriptEngine()
	s, err := core.New(opts)
	if err != nil {
		closeDriver(ws)
		return 0, errf(CodeInvalidOptions, "createSession: %v", err)
	}
	gov.attach(s)
	t.mu.Lock()
	t.next++
	id := t.next
	t.m[id] = &entry{s: s, host: host, gov: gov, subs: map[int]*core.Subscription{}}
	t.mu.Unlock()
	return id, nil
}

func buildWorkspace(ctx context.Context, wo *WorkspaceOptions, drivers Drivers) (*workspace.Workspace, error) {
	w := WorkspaceOptions{Kind: "memory"}
	if wo != nil {
		w = *wo
	}
	if err := checkFiles(w.Files); err != nil {
		return nil, err
	}
	var d workspace.Driver
	switch w.Kind {
	case "memory":
		if w.Root != "" {
			return nil, errf(CodeInvalidOptions, "createSession: options.workspace.root is not used by a memory workspace")
		}
		d = memfs.New()
	case "":
		return nil, errf(CodeInvalidOptions, "createSession: options.workspace.kind is required (supported: %s)", kinds(drivers))
	default:
		mk, ok := drivers[w.Kind]
		if !ok {
			return nil, errf(CodeInvalidOptions, "createSession: options.workspace.kind %q is not supported here (supported: %s)", w.Kind, kinds(drivers))
		}
		var err error
		if d, err = mk(w); err != nil {
			var he *Error
			if errors.As(err, &he) {
				return nil, he
			}
			return nil, errf(CodeInvalidOptions, "createSession: options.workspace: %v", err)
		}
	}
	ws, err := workspace.New(d)
	if err != nil {
		return nil, err
	}
	if err := workspace.Seed(ctx, ws, w.Files); err != nil {
		closeDriver(ws)
		return nil, errf(CodeInvalidOptions, "createSession: options.workspace.%v", err)
	}
	return ws, nil
}

// checkFiles refuses initial files whose keys do not name a file in the
// workspace, or name the same file twice ("a.txt", "./a.txt",
// "d/../a.txt"): a map cannot say which content was meant.
func checkFiles(files map[string]string) error {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	seen := make(map[string]string, len(names))
	for _, n := range names {
		r, err := workspace.ResolveFile("write", n)
		if err != nil {
			return errf(CodeInvalidOptions, "createSession: options.workspace.files[%q] is not a file path in the workspace: %v", n, err)
		}
		if prev, dup := seen[r]; dup {
			return errf(CodeInvalidOptions, "createSession: options.workspace.files[%q] and [%q] both name the file %s; give each file once", prev, n, r)
		}
		seen[r] = n
	}
	return nil
}

func kinds(drivers Drivers) string {
	ks := []string{"memory"}
	for k := range drivers {
		ks = append(ks, k)
	}
	sort.Strings(ks[1:])
	return fmt.Sprint(ks)
}

func (t *Sessions) get(id int) (*entry, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e, ok := t.m[id]
	if !ok {
		if id > 0 && id <= t.next {
			// Handles are never reused: a missing one below next was closed.
			return nil, errf(CodeSessionClosed, "session is closed")
		}
		return nil, errf(CodeUnknownSession, "no session with handle %d", id)
	}
	return e, nil
}

// Len is the number of live sessions.
func (t *Sessions) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.m)
}

// CallSync runs the methods that never block (PROTOCOL.md §1 callSync).
func (t *Sessions) CallSync(id int, method string, raw []byte) (any, error) {
	return t.dispatch(context.Background(), id, method, raw, true)
}

// Call runs an asynchronous method with JSON arguments (PROTOCOL.md §1
// call). The result is a JSON-encodable value.
func (t *Sessions) Call(ctx context.Context, id int, method string, raw []byte) (any, error) {
	return t.dispatch(ctx, id, method, raw, false)
}

// dispatch finds the method's row in the table and runs it. A closed
// session answers SESSION_CLOSED to every method but those marked
// whenClosed, an aborted call ABORTED, before its arguments are read.
func (t *Sessions) dispatch(ctx context.Context, id int, name string, raw []byte, inSync bool) (any, error) {
	e, err := t.get(id)
	if err != nil {
		return nil, err
	}
	m, ok := methods[name]
	ok = ok && m.sync == inSync
	if !ok || !m.whenClosed {
		if e.s.IsClosed() {
			return nil, errf(CodeSessionClosed, "%s: session is closed", name)
		}
		if err := ctx.Err(); err != nil && !inSync {
			return nil, errf(CodeAborted, "%s: the call was aborted", name)
		}
	}
	if !ok {
		if inSync {
			return nil, errf(CodeInvalidCall, "unknown synchronous method %q", name)
		}
		return nil, errf(CodeInvalidCall, "unknown method %q", name)
	}
	return m.run(&call{ctx: ctx, t: t, id: id, e: e, method: name}, raw)
}

// MaxCallBytes bounds one call's JSON arguments from JS (createSession's
// options, which may seed a whole workspace, are not bounded). Every
// JSON pass over a call costs time and memory in proportion to it (a
// 100 MB write took 13–31 s and 1.2–1.4 GB under Node, most of it
// encoding/json decoding the content again at each layer), so one call
// carries at most 16 MiB: the write tool's own limit, with larger files
// written in parts (mode=append). The npm package checks the same bound
// before the call crosses.
const MaxCallBytes = 16 << 20

func decodeArgs(method string, raw []byte, v any) error {
	if len(raw) == 0 {
		raw = []byte("{}")
	}
	if len(raw) > MaxCallBytes {
		return errf(CodeInvalidCall, "%s: the call's arguments are %d bytes of JSON; the limit is %d bytes (16 MiB) per call (write a larger file in parts: write with mode=append)", method, len(raw), MaxCallBytes)
	}
	if err := decodeStrict(method, "", raw, v); err != nil {
		return &Error{Code: CodeInvalidCall, Msg: err.Error()}
	}
	return nil
}

// closeDriver lets a driver that holds resources (the OPFS log handle and
// its Web Lock) go with its session, or with a session that failed to start.
func closeDriver(ws *workspace.Workspace) {
	if ws == nil {
		return
	}
	if c, ok := ws.Driver().(io.Closer); ok {
		c.Close()
	}
}

func (t *Sessions) close(id int, e *entry) {
	e.s.Close()
	closeDriver(e.s.Workspace())
	e.gov.close()
	t.release(id, e)
}

// release drops a closed session's entry once no event subscription is
// left to drain (Bus.Close keeps queued events readable).
func (t *Sessions) release(id int, e *entry) {
	if !e.s.IsClosed() {
		return
	}
	e.mu.Lock()
	n := len(e.subs)
	e.mu.Unlock()
	if n == 0 {
		t.mu.Lock()
		delete(t.m, id)
		t.mu.Unlock()
	}
}

// NextEvents waits for the next events of a subscription: {events, done}.
func (t *Sessions) NextEvents(ctx context.Context, id, sub int) (any, error) {
	type batch struct {
		Events []WireEvent `json:"events"`
		Done   bool        `json:"done"`
	}
	e, err := t.get(id)
	if err != nil {
		// A closed session has left the table: its streams are over.
		return batch{Events: []WireEvent{}, Done: true}, nil
	}
	e.mu.Lock()
	s, ok := e.subs[sub]
	e.mu.Unlock()
	if !ok {
		return batch{Events: []WireEvent{}, Done: true}, nil
	}
	evs, done, err := s.Next(ctx, 256)
	if err != nil {
		return nil, mapErr("nextEvents", err)
	}
	if done {
		e.mu.Lock()
		delete(e.subs, sub)
		e.mu.Unlock()
		t.release(id, e)
	}
	out := make([]WireEvent, len(evs))
	for i, ev := range evs {
		out[i] = WireEventOf(ev)
	}
	return batch{Events: out, Done: done}, nil
}

// Unsubscribe ends a subscription.
func (t *Sessions) Unsubscribe(id, sub int) {
	e, err := t.get(id)
	if err != nil {
		return
	}
	e.mu.Lock()
	s, ok := e.subs[sub]
	delete(e.subs, sub)
	e.mu.Unlock()
	if ok {
		s.Close()
	}
	t.release(id, e)
}

func mapErr(method string, err error) error {
	var ae *Error
	switch {
	case errors.As(err, &ae):
		return ae
	case errors.Is(err, core.ErrClosed):
		return errf(CodeSessionClosed, "%s: session is closed", method)
	case errors.Is(err, core.ErrNotRegistered):
		return errf(CodeToolNotRegistered, "%s: %v", method, err)
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return errf(CodeAborted, "%s: the call was aborted", method)
	}
	return errf(CodeInvalidCall, "%s: %v", method, err)
}
