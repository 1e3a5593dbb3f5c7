package hostapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"

	"github.com/a3s-lab/code-wasm/core"
	"github.com/a3s-lab/code-wasm/kernel"
	"github.com/a3s-lab/code-wasm/workspace"
	"github.com/a3s-lab/code-wasm/workspace/memfs"
)

// Error codes crossing to JS (Error.code).
const (
	CodeSessionClosed     = "SESSION_CLOSED"
	CodeInvalidOptions    = "INVALID_OPTIONS"
	CodeInvalidCall       = "INVALID_CALL"
	CodeToolNotRegistered = "TOOL_NOT_REGISTERED"
	CodeUnknownSession    = "UNKNOWN_SESSION"
	CodeAborted           = "ABORTED"
	CodeToolFailed        = "TOOL_FAILED"
)

// Error is an error with a code for JS.
type Error struct {
	Code string
	Msg  string
}

func (e *Error) Error() string { return e.Msg }

func errf(code, format string, args ...any) *Error {
	return &Error{Code: code, Msg: fmt.Sprintf(format, args...)}
}

// Sessions is the table of live sessions of one wasm instance.
type Sessions struct {
	mu   sync.Mutex
	next int
	m    map[int]*entry
}

type entry struct {
	s    *core.Session
	subs map[int]*core.Subscription
	nsub int
}

// NewSessions returns an empty table.
func NewSessions() *Sessions { return &Sessions{m: map[int]*entry{}} }

// WorkspaceOptions is options.workspace.
type WorkspaceOptions struct {
	Kind  string            `json:"kind"`
	Files map[string]string `json:"files"`
	Root  string            `json:"root"`
}

// Options is the JSON form of createSession's options (the parts that are
// data; JS functions are handled by the loader).
type Options struct {
	Workspace     *WorkspaceOptions `json:"workspace"`
	ToolTimeoutMs *int64            `json:"toolTimeoutMs"`
}

// decodeStrict decodes JSON refusing unknown keys, naming the key.
func decodeStrict(raw []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	return nil
}

// Create builds a session from JSON options and returns its handle.
// driver, if not nil, is used for kinds other than memory (e.g. opfs).
func (t *Sessions) Create(ctx context.Context, raw []byte, drivers map[string]func(WorkspaceOptions) (workspace.Driver, error)) (int, error) {
	var o Options
	if len(raw) > 0 {
		if err := decodeStrict(raw, &o); err != nil {
			return 0, errf(CodeInvalidOptions, "createSession: invalid options: %v", err)
		}
	}
	var opts core.Options
	if o.ToolTimeoutMs != nil {
		if *o.ToolTimeoutMs < 0 {
			return 0, errf(CodeInvalidOptions, "createSession: toolTimeoutMs must be >= 0, got %d", *o.ToolTimeoutMs)
		}
		opts.Governance.ToolTimeout = msDuration(*o.ToolTimeoutMs)
	}
	wo := WorkspaceOptions{Kind: "memory"}
	if o.Workspace != nil {
		wo = *o.Workspace
	}
	var d workspace.Driver
	switch wo.Kind {
	case "memory", "":
		if wo.Root != "" {
			return 0, errf(CodeInvalidOptions, "createSession: workspace.root is not used by a memory workspace")
		}
		d = memfs.New()
	default:
		mk, ok := drivers[wo.Kind]
		if !ok {
			return 0, errf(CodeInvalidOptions, "createSession: workspace.kind %q is not supported here (supported: %s)", wo.Kind, kinds(drivers))
		}
		var err error
		if d, err = mk(wo); err != nil {
			return 0, errf(CodeInvalidOptions, "createSession: workspace: %v", err)
		}
	}
	ws, err := workspace.New(d)
	if err != nil {
		return 0, err
	}
	names := make([]string, 0, len(wo.Files))
	for n := range wo.Files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if _, err := ws.WriteFile(ctx, n, []byte(wo.Files[n])); err != nil {
			return 0, errf(CodeInvalidOptions, "createSession: workspace.files[%q]: %v", n, err)
		}
	}
	opts.Workspace = ws
	s, err := core.New(opts)
	if err != nil {
		return 0, errf(CodeInvalidOptions, "createSession: %v", err)
	}
	t.mu.Lock()
	t.next++
	id := t.next
	t.m[id] = &entry{s: s, subs: map[int]*core.Subscription{}}
	t.mu.Unlock()
	return id, nil
}

func kinds(drivers map[string]func(WorkspaceOptions) (workspace.Driver, error)) string {
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
		return nil, errf(CodeUnknownSession, "no session with handle %d", id)
	}
	return e, nil
}

// CallSync runs the methods that never block: toolNames, toolDefinitions,
// activeTools, isClosed.
func (t *Sessions) CallSync(id int, method string) (any, error) {
	e, err := t.get(id)
	if err != nil {
		return nil, err
	}
	switch method {
	case "toolNames":
		return e.s.ToolNames(), nil
	case "toolDefinitions":
		return e.s.ToolDefinitions(), nil
	case "activeTools":
		return e.s.ActiveTools(), nil
	case "isClosed":
		return e.s.IsClosed(), nil
	}
	return nil, errf(CodeInvalidCall, "unknown synchronous method %q", method)
}

// ToolResult is the JS wire form of a tool result (API.md).
type ToolResult struct {
	Name          string `json:"name"`
	Output        string `json:"output"`
	ExitCode      int    `json:"exitCode"`
	MetadataJSON  string `json:"metadataJson,omitempty"`
	ErrorKindJSON string `json:"errorKindJson,omitempty"`
}

// Wire converts a kernel result to its JS form.
func Wire(r *kernel.Result) ToolResult {
	w := ToolResult{Name: r.Name, Output: r.Output, ExitCode: r.ExitCode}
	if r.Metadata != nil {
		if b, err := json.Marshal(r.Metadata); err == nil {
			w.MetadataJSON = string(b)
		}
	}
	if r.ErrorKind != nil {
		if b, err := json.Marshal(r.ErrorKind); err == nil {
			w.ErrorKindJSON = string(b)
		}
	}
	return w
}

type toolCall struct {
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
}

// Call runs an asynchronous method with JSON arguments.
func (t *Sessions) Call(ctx context.Context, id int, method string, raw []byte) (any, error) {
	e, err := t.get(id)
	if err != nil {
		return nil, err
	}
	if method == "close" {
		e.s.Close()
		return true, nil
	}
	if e.s.IsClosed() {
		return nil, errf(CodeSessionClosed, "session is closed")
	}
	switch method {
	case "tool", "governedTool":
		var c toolCall
		if err := decodeStrict(raw, &c); err != nil {
			return nil, errf(CodeInvalidCall, "%s: %v", method, err)
		}
		if c.Name == "" {
			return nil, errf(CodeInvalidCall, "%s: tool name must be a non-empty string", method)
		}
		if len(c.Args) == 0 || string(c.Args) == "null" {
			c.Args = json.RawMessage(`{}`)
		}
		if c.Args[0] != '{' {
			return nil, errf(CodeInvalidCall, "%s: args must be an object", method)
		}
		var res *kernel.Result
		if method == "tool" {
			res, err = e.s.Tool(ctx, c.Name, c.Args)
		} else {
			res, err = e.s.GovernedTool(ctx, c.Name, c.Args)
		}
		if err != nil {
			return nil, mapErr(err)
		}
		return Wire(res), nil
	case "subscribe":
		t.mu.Lock()
		e.nsub++
		sid := e.nsub
		e.subs[sid] = e.s.Events()
		t.mu.Unlock()
		return sid, nil
	}
	return nil, errf(CodeInvalidCall, "unknown method %q", method)
}

// NextEvents waits for the next events of a subscription: {events, done}.
func (t *Sessions) NextEvents(ctx context.Context, id, sub int) (any, error) {
	e, err := t.get(id)
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	s, ok := e.subs[sub]
	t.mu.Unlock()
	if !ok {
		return map[string]any{"events": []kernel.Event{}, "done": true}, nil
	}
	evs, done, err := s.Next(ctx, 256)
	if err != nil {
		return nil, mapErr(err)
	}
	if done {
		t.mu.Lock()
		delete(e.subs, sub)
		t.mu.Unlock()
	}
	if evs == nil {
		evs = []kernel.Event{}
	}
	return map[string]any{"events": evs, "done": done}, nil
}

// Unsubscribe ends a subscription.
func (t *Sessions) Unsubscribe(id, sub int) {
	e, err := t.get(id)
	if err != nil {
		return
	}
	t.mu.Lock()
	s, ok := e.subs[sub]
	delete(e.subs, sub)
	t.mu.Unlock()
	if ok {
		s.Close()
	}
}

func mapErr(err error) error {
	switch {
	case errors.Is(err, core.ErrClosed):
		return errf(CodeSessionClosed, "session is closed")
	case errors.Is(err, core.ErrNotRegistered):
		return errf(CodeToolNotRegistered, "%v", err)
	case errors.Is(err, context.Canceled):
		return errf(CodeAborted, "the call was aborted")
	}
	var ae *Error
	if errors.As(err, &ae) {
		return ae
	}
	return err
}
