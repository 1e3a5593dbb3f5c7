package hostapi

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/a3s-lab/code-wasm/core"
	"github.com/a3s-lab/code-wasm/internal/hostcall"
	"github.com/a3s-lab/code-wasm/workspace"
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
	// Files are initial files moved as bytes beside the JSON options (the
	// npm package sends options.workspace.files so): written with the
	// JSON ones, before the session exists.
	Files []SeedChunk
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
	v, err := t.dispatch(ctx, id, method, raw, false)
	if _, ok := v.(*Bytes); ok {
		return nil, errf(CodeInvalidCall, "%s answers bytes: call it through api.callBytes", method)
	}
	return v, err
}

// dispatch finds the method's row in the table and runs it. A closed
// session answers SESSION_CLOSED to every method but those marked
// whenClosed, an aborted call ABORTED, before its arguments are read.
func (t *Sessions) dispatch(ctx context.Context, id int, name string, raw []byte, inSync bool) (any, error) {
	return t.dispatchWith(ctx, id, name, raw, inSync, nil)
}

func (t *Sessions) dispatchWith(ctx context.Context, id int, name string, raw []byte, inSync bool, in []byte) (any, error) {
	workspace.HostTurn() // the call came from JS: its event loop just ran
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
	return m.run(&call{ctx: ctx, t: t, id: id, e: e, method: name, in: in}, raw)
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

func mapErr(method string, err error) error {
	var ae *Error
	switch {
	case errors.As(err, &ae):
		return ae
	case errors.Is(err, core.ErrClosed):
		return errf(CodeSessionClosed, "%s: session is closed", method)
	case errors.Is(err, core.ErrNotRegistered):
		if strings.HasPrefix(err.Error(), method+": ") {
			return errf(CodeToolNotRegistered, "%v", err) // core named the method already
		}
		return errf(CodeToolNotRegistered, "%s: %v", method, err)
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return errf(CodeAborted, "%s: the call was aborted", method)
	}
	return errf(CodeInvalidCall, "%s: %v", method, err)
}
