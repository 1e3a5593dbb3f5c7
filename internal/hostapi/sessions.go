package hostapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"

	"github.com/a3s-lab/code-wasm/core"
	"github.com/a3s-lab/code-wasm/ptc"
	"github.com/a3s-lab/code-wasm/workspace"
	"github.com/a3s-lab/code-wasm/workspace/memfs"
)

// sessionMethods are the methods about the session itself.
var sessionMethods = []row{
	method("isClosed", syncCall|whenClosed, func(c *call, _ *noArgs) (any, error) { return c.e.s.IsClosed(), nil }),
	method("close", whenClosed, func(c *call, _ *noArgs) (any, error) {
		c.t.close(c.id, c.e)
		return true, nil
	}),
}

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
	ws, err := buildWorkspace(ctx, o.Workspace, env, host)
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
	if err := o.laterOptions(host, &opts); err != nil {
		closeDriver(ws)
		return 0, errf(CodeInvalidOptions, "createSession: options.%v", err)
	}
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

func buildWorkspace(ctx context.Context, wo *WorkspaceOptions, env Env, host Host) (*workspace.Workspace, error) {
	drivers := env.Drivers
	w := WorkspaceOptions{Kind: "memory"}
	if wo != nil {
		w = *wo
	}
	files, err := seedFiles(w.Files, env.Files)
	if err != nil {
		return nil, errf(CodeInvalidOptions, "%v", err)
	}
	if err := checkFiles(files); err != nil {
		return nil, err
	}
	var d workspace.Driver
	switch w.Kind {
	case "memory":
		if w.Root != "" {
			return nil, errf(CodeInvalidOptions, "createSession: options.workspace.root is not used by a memory workspace")
		}
		d = memfs.New()
	case "r2": // the Worker entry's (r2.go)
		if d, err = openR2(w, env, host); err != nil {
			return nil, err
		}
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
	if err := enableExec(d, w, env, host); err != nil {
		if c, ok := d.(io.Closer); ok {
			c.Close()
		}
		return nil, err
	}
	ws, err := workspace.New(d)
	if err != nil {
		return nil, err
	}
	names := slices.Sorted(maps.Keys(files))
	for _, n := range names {
		if err := ws.PutFile(ctx, n, files[n]); err != nil {
			closeDriver(ws)
			return nil, errf(CodeInvalidOptions, "createSession: options.workspace.files[%q]: %v", n, err)
		}
	}
	return ws, nil
}

// checkFiles refuses initial files whose keys do not name a file in the
// workspace, or name the same file twice ("a.txt", "./a.txt",
// "d/../a.txt"): a map cannot say which content was meant.
func checkFiles(files map[string][]byte) error {
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
