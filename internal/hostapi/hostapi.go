package hostapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"sort"
	"strings"
	"sync"

	"github.com/a3s-lab/code-wasm/core"
	"github.com/a3s-lab/code-wasm/internal/hostcall"
	"github.com/a3s-lab/code-wasm/kernel"
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
	names := make([]string, 0, len(w.Files))
	for n := range w.Files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if err := ws.PutFile(ctx, n, []byte(w.Files[n])); err != nil {
			closeDriver(ws)
			return nil, errf(CodeInvalidOptions, "createSession: options.workspace.files[%q]: %v", n, err)
		}
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
	e, err := t.get(id)
	if err != nil {
		return nil, err
	}
	switch method {
	case "isClosed":
		return e.s.IsClosed(), nil
	}
	if e.s.IsClosed() {
		return nil, errf(CodeSessionClosed, "%s: session is closed", method)
	}
	switch method {
	case "toolNames":
		return e.s.ToolNames(), nil
	case "toolDefinitions":
		return e.s.ToolDefinitions(), nil
	case "activeTools":
		return e.s.ActiveTools(), nil
	case "pendingConfirmations":
		return e.gov.pending(), nil
	case "subscribe":
		e.mu.Lock()
		e.nsub++
		sid := e.nsub
		e.subs[sid] = e.s.Events()
		e.mu.Unlock()
		return sid, nil
	case "registerHook":
		var h HookSpec
		if err := decodeArgs(method, raw, &h); err != nil {
			return nil, err
		}
		if err := h.validate("registerHook: hook"); err != nil {
			return nil, errf(CodeInvalidCall, "%v", err)
		}
		if h.Handler && e.host == nil {
			return nil, errf(CodeInvalidCall, "registerHook: a handler needs a host dispatcher")
		}
		if err := e.gov.registerHook(h); err != nil {
			return nil, errf(CodeInvalidCall, "registerHook: %v", err)
		}
		return true, nil
	case "unregisterHook":
		var a struct {
			ID string `json:"id"`
		}
		if err := decodeArgs(method, raw, &a); err != nil {
			return nil, err
		}
		return e.gov.unregisterHook(a.ID), nil
	case "setBudgetGuard":
		var b *BudgetSpec
		if err := decodeArgs(method, raw, &b); err != nil {
			return nil, err
		}
		if b != nil {
			if err := b.validate("setBudgetGuard: guard"); err != nil {
				return nil, errf(CodeInvalidCall, "%v", err)
			}
			if e.host == nil {
				return nil, errf(CodeInvalidCall, "setBudgetGuard: a guard needs a host dispatcher")
			}
		}
		e.gov.setBudget(b)
		return true, nil
	}
	return nil, errf(CodeInvalidCall, "unknown synchronous method %q", method)
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

// required checks a typed helper's string arguments, given as name/value
// pairs: a missing one is refused by name, never read as "" (a writeFile
// without content must not truncate the file).
func required(method string, pairs ...any) error {
	for i := 0; i+1 < len(pairs); i += 2 {
		missing := false
		switch p := pairs[i+1].(type) {
		case *string:
			missing = p == nil
		case *jsonString:
			missing = p == nil
		}
		if missing {
			return errf(CodeInvalidCall, "%s: %s is required (a string)", method, pairs[i])
		}
	}
	return nil
}

// jsonString is a string argument of a typed helper kept as its JSON
// text, so file content or a diff crosses to its tool without being
// decoded and encoded again (for a 100 MB writeFile that was two of the
// passes over the content; RATIONALE.md).
type jsonString json.RawMessage

// UnmarshalJSON keeps a JSON string as it is and refuses any other value.
func (s *jsonString) UnmarshalJSON(b []byte) error {
	if len(b) == 0 || b[0] != '"' {
		kind := "number"
		switch {
		case len(b) > 0 && (b[0] == 't' || b[0] == 'f'):
			kind = "bool"
		case len(b) > 0 && b[0] == '{':
			kind = "object"
		case len(b) > 0 && b[0] == '[':
			kind = "array"
		}
		return &json.UnmarshalTypeError{Value: kind, Type: reflect.TypeFor[string]()}
	}
	*s = append((*s)[:0], b...) // a copy: b is the decoder's buffer
	return nil
}

// toolArgs builds a tool's JSON arguments from key/value pairs, each value
// a *jsonString (its JSON text, as given), a string or a bool.
func toolArgs(pairs ...any) json.RawMessage {
	n := 2
	for i := 1; i < len(pairs); i += 2 {
		if v, ok := pairs[i].(*jsonString); ok {
			n += len(*v)
		}
		n += 64
	}
	b := make([]byte, 0, n)
	b = append(b, '{')
	for i := 0; i+1 < len(pairs); i += 2 {
		if i > 0 {
			b = append(b, ',')
		}
		b, _ = appendJSON(b, pairs[i])
		b = append(b, ':')
		if v, ok := pairs[i+1].(*jsonString); ok {
			b = append(b, *v...)
		} else {
			b, _ = appendJSON(b, pairs[i+1])
		}
	}
	return append(b, '}')
}

func appendJSON(b []byte, v any) ([]byte, error) {
	j, err := json.Marshal(v)
	return append(b, j...), err
}

type toolCall struct {
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
}

// Call runs an asynchronous method with JSON arguments (PROTOCOL.md §1
// call). The result is a JSON-encodable value.
func (t *Sessions) Call(ctx context.Context, id int, method string, raw []byte) (any, error) {
	e, err := t.get(id)
	if err != nil {
		return nil, err
	}
	if method == "close" {
		t.close(id, e)
		return true, nil
	}
	if e.s.IsClosed() {
		return nil, errf(CodeSessionClosed, "%s: session is closed", method)
	}
	if err := ctx.Err(); err != nil {
		return nil, errf(CodeAborted, "%s: the call was aborted", method)
	}
	switch method {
	case "tool", "governedTool":
		var c toolCall
		if err := decodeArgs(method, raw, &c); err != nil {
			return nil, err
		}
		if c.Name == "" {
			return nil, errf(CodeInvalidCall, "%s: the tool name must be a non-empty string", method)
		}
		if len(c.Args) == 0 || string(c.Args) == "null" {
			c.Args = json.RawMessage(`{}`)
		}
		if c.Args[0] != '{' {
			return nil, errf(CodeInvalidCall, "%s: args must be an object", method)
		}
		call := e.s.Tool
		if method == "governedTool" {
			call = e.s.GovernedTool
		}
		res, err := call(ctx, c.Name, c.Args)
		return e.result(ctx, method, res, err)
	case "readFile":
		var a struct {
			Path   *string `json:"path"`
			Offset int     `json:"offset"`
			Limit  int     `json:"limit"`
		}
		if err := decodeArgs(method, raw, &a); err != nil {
			return nil, err
		}
		if err := required(method, "path", a.Path); err != nil {
			return nil, err
		}
		out, err := e.s.ReadFile(ctx, *a.Path, core.ReadOptions{Offset: a.Offset, Limit: a.Limit})
		return e.typed(ctx, method, out, err)
	// writeFile, editFile and patchFile call their tools as core's helpers
	// do (Session.WriteFile etc.), with the strings passed on as JSON text.
	case "writeFile":
		var a struct {
			Path    *string     `json:"path"`
			Content *jsonString `json:"content"`
		}
		if err := decodeArgs(method, raw, &a); err != nil {
			return nil, err
		}
		if err := required(method, "path", a.Path, "content", a.Content); err != nil {
			return nil, err
		}
		res, err := e.s.Tool(ctx, "write", toolArgs("file_path", *a.Path, "content", a.Content))
		return e.result(ctx, method, res, err)
	case "editFile":
		var a struct {
			Path       *string     `json:"path"`
			OldString  *jsonString `json:"oldString"`
			NewString  *jsonString `json:"newString"`
			ReplaceAll bool        `json:"replaceAll"`
		}
		if err := decodeArgs(method, raw, &a); err != nil {
			return nil, err
		}
		if err := required(method, "path", a.Path, "oldString", a.OldString, "newString", a.NewString); err != nil {
			return nil, err
		}
		res, err := e.s.Tool(ctx, "edit", toolArgs("file_path", *a.Path, "old_string", a.OldString, "new_string", a.NewString, "replace_all", a.ReplaceAll))
		return e.result(ctx, method, res, err)
	case "patchFile":
		var a struct {
			Path *string     `json:"path"`
			Diff *jsonString `json:"diff"`
		}
		if err := decodeArgs(method, raw, &a); err != nil {
			return nil, err
		}
		if err := required(method, "path", a.Path, "diff", a.Diff); err != nil {
			return nil, err
		}
		res, err := e.s.Tool(ctx, "patch", toolArgs("file_path", *a.Path, "diff", a.Diff))
		return e.result(ctx, method, res, err)
	case "ls":
		var a struct {
			Path string `json:"path"`
		}
		if err := decodeArgs(method, raw, &a); err != nil {
			return nil, err
		}
		res, err := e.s.Ls(ctx, a.Path)
		return e.result(ctx, method, res, err)
	case "glob":
		var a struct {
			Pattern *string `json:"pattern"`
		}
		if err := decodeArgs(method, raw, &a); err != nil {
			return nil, err
		}
		if err := required(method, "pattern", a.Pattern); err != nil {
			return nil, err
		}
		paths, err := e.s.Glob(ctx, *a.Pattern)
		if paths == nil && err == nil {
			paths = []string{}
		}
		return e.typed(ctx, method, paths, err)
	case "grep":
		var a struct {
			Pattern *string `json:"pattern"`
		}
		if err := decodeArgs(method, raw, &a); err != nil {
			return nil, err
		}
		if err := required(method, "pattern", a.Pattern); err != nil {
			return nil, err
		}
		out, err := e.s.Grep(ctx, *a.Pattern)
		return e.typed(ctx, method, out, err)
	case "getArtifact":
		var a struct {
			URI *string `json:"uri"`
		}
		if err := decodeArgs(method, raw, &a); err != nil {
			return nil, err
		}
		if err := required(method, "uri", a.URI); err != nil {
			return nil, err
		}
		if art, ok := e.s.Artifact(*a.URI); ok {
			return art, nil
		}
		return nil, nil
	case "confirmToolUse":
		var a struct {
			ToolID   string `json:"toolId"`
			Approved *bool  `json:"approved"`
			Reason   string `json:"reason"`
		}
		if err := decodeArgs(method, raw, &a); err != nil {
			return nil, err
		}
		if a.ToolID == "" || a.Approved == nil {
			return nil, errf(CodeInvalidCall, "confirmToolUse: toolId (a non-empty string) and approved (a boolean) are required")
		}
		return e.gov.confirm(a.ToolID, *a.Approved, a.Reason), nil
	}
	return nil, errf(CodeInvalidCall, "unknown method %q", method)
}

// result turns a kernel answer into the wire form, applying the
// cancellation rule of PROTOCOL.md: a call that failed because its caller
// aborted → ABORTED; because the session closed under it → SESSION_CLOSED
// (the kernel may report such a call as cancelled, or as denied by a hook
// or guard that was cut short). A call that finished keeps its result.
func (e *entry) result(ctx context.Context, method string, res *kernel.Result, err error) (any, error) {
	if err != nil {
		return nil, mapErr(method, err)
	}
	if res.ExitCode != 0 {
		if ctx.Err() != nil {
			return nil, errf(CodeAborted, "%s: the call was aborted", method)
		}
		if e.s.IsClosed() {
			return nil, errf(CodeSessionClosed, "%s: the session was closed while the call ran", method)
		}
	}
	return Wire(res), nil
}

// typed is result for the helpers that return a plain value (readFile,
// glob, grep): a failed tool becomes TOOL_FAILED with the result as detail.
func (e *entry) typed(ctx context.Context, method string, v any, err error) (any, error) {
	var te *core.ToolError
	if errors.As(err, &te) {
		if _, cerr := e.result(ctx, method, te.Result, nil); cerr != nil {
			return nil, cerr
		}
		d, _ := json.Marshal(Wire(te.Result))
		msg := te.Result.Output
		// Tool errors already name their tool ("glob: path not found: x");
		// prefix only those that do not, so no message says "glob: glob:".
		if n := te.Result.Name; !strings.HasPrefix(msg, n+":") && !strings.HasPrefix(msg, n+" ") {
			msg = method + ": " + msg
		}
		return nil, &Error{Code: CodeToolFailed, Msg: msg, Detail: string(d)}
	}
	if err != nil {
		return nil, mapErr(method, err)
	}
	return v, nil
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
