package hostapi

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// hostFunc is a Host built from per-kind answers, recording every call.
type hostFunc struct {
	mu    sync.Mutex
	calls []string
	kinds map[string]func(ctx context.Context, payload map[string]any) (any, error)
}

func (h *hostFunc) seen() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.calls...)
}

func (h *hostFunc) host(ctx context.Context, kind string, payload []byte) ([]byte, error) {
	var p map[string]any
	if err := json.Unmarshal(payload, &p); err != nil {
		return nil, err
	}
	h.mu.Lock()
	h.calls = append(h.calls, kind)
	h.mu.Unlock()
	f, ok := h.kinds[kind]
	if !ok {
		return nil, errors.New("no handler for host kind " + kind)
	}
	v, err := f(ctx, p)
	if err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

func create(t *testing.T, s *Sessions, opts string, host Host) int {
	t.Helper()
	id, err := s.Create(context.Background(), []byte(opts), host, Env{})
	noErr(t, err)
	return id
}

func codeOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

func TestCreateRejectsBadOptionsNamingTheKey(t *testing.T) {
	cases := []struct {
		name, opts, want string
	}{
		{"unknown top-level key", `{"wrkspace":{}}`, `unknown key options.wrkspace (known: workspace,`},
		{"unknown workspace key", `{"workspace":{"kind":"memory","fles":{}}}`, `unknown key options.workspace.fles (known: kind, files, root, sandbox, network)`},
		{"wrong type", `{"toolTimeoutMs":"5s"}`, `options.toolTimeoutMs must be a non-negative integer, got a string`},
		{"fractional timeout", `{"toolTimeoutMs":1.5}`, `options.toolTimeoutMs must be a non-negative integer, got 1.5`},
		{"file content not a string", `{"workspace":{"kind":"memory","files":{"a.txt":5}}}`, `options.workspace.files["a.txt"] must be a string, got 5`},
		{"deep wrong type", `{"hooks":[{"id":"a","event":"pre_tool_use"},{"id":"b","event":"pre_tool_use","config":{"timeoutMs":"1"}}]}`, `options.hooks[1].config.timeoutMs must be a non-negative integer, got a string`},
		{"same file twice", `{"workspace":{"kind":"memory","files":{"a.txt":"1","./a.txt":"2"}}}`, `files["./a.txt"] and ["a.txt"] both name the file a.txt`},
		{"same file via ..", `{"workspace":{"kind":"memory","files":{"d/../a.txt":"1","a.txt":"2"}}}`, `files["a.txt"] and ["d/../a.txt"] both name the file a.txt`},
		{"absolute file", `{"workspace":{"kind":"memory","files":{"/etc/passwd":"x"}}}`, `workspace.files["/etc/passwd"] is not a file path in the workspace`},
		{"root as file", `{"workspace":{"kind":"memory","files":{"":"x"}}}`, `workspace.files[""] is not a file path in the workspace`},
		{"directory-shaped file", `{"workspace":{"kind":"memory","files":{"d/":"x"}}}`, `workspace.files["d/"] is not a file path`},
		{"negative timeout", `{"toolTimeoutMs":-1}`, `toolTimeoutMs must be >= 0`},
		{"absurd timeout", `{"toolTimeoutMs":100000000000}`, `toolTimeoutMs must be at most`},
		{"unsupported kind", `{"workspace":{"kind":"s3"}}`, `workspace.kind "s3" is not supported here`},
		{"missing kind", `{"workspace":{"files":{}}}`, `workspace.kind is required`},
		{"root on memory", `{"workspace":{"kind":"memory","root":"/x"}}`, `workspace.root is not used`},
		{"escaping file", `{"workspace":{"kind":"memory","files":{"../x":"y"}}}`, `workspace.files["../x"]`},
		{"bad default decision", `{"permissionPolicy":{"defaultDecision":"maybe"}}`, `permissionPolicy.defaultDecision`},
		{"empty rule", `{"permissionPolicy":{"deny":[" "]}}`, `permissionPolicy.deny[0]`},
		{"bad timeout action", `{"confirmationPolicy":{"timeoutAction":"shrug"}}`, `confirmationPolicy.timeoutAction`},
		{"zero confirmation timeout", `{"confirmationPolicy":{"defaultTimeoutMs":0}}`, `confirmationPolicy.defaultTimeoutMs must be > 0`},
		{"yoloLanes refused", `{"confirmationPolicy":{"yoloLanes":["x"]}}`, `unknown key options.confirmationPolicy.yoloLanes`},
		{"hook without id", `{"hooks":[{"event":"pre_tool_use"}]}`, `hooks[0].id`},
		{"hook bad event", `{"hooks":[{"id":"a","event":"on_error"}]}`, `hooks[0].event must be one of pre_tool_use, post_tool_use`},
		{"hook twice", `{"hooks":[{"id":"a","event":"pre_tool_use"},{"id":"a","event":"post_tool_use"}]}`, `hooks[1].id "a" is used twice`},
		{"hook matcher key", `{"hooks":[{"id":"a","event":"pre_tool_use","matcher":{"skill":"x"}}]}`, `unknown key options.hooks[0].matcher.skill`},
		{"budget llm check", `{"budgetGuard":{"checkBeforeLlm":true}}`, `unknown key options.budgetGuard.checkBeforeLlm`},
		{"budget timeout", `{"budgetGuard":{"checkBeforeTool":true,"timeoutMs":0}}`, `budgetGuard.timeoutMs must be > 0`},
		{"trailing data", `{} {}`, `trailing data`},
		{"not an object", `[1]`, `must be an object`},
		{"functions without host", `{"confirmationHandler":true}`, `no host dispatcher`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := NewSessions()
			_, err := s.Create(context.Background(), []byte(c.opts), nil, Env{})
			isErr(t, err)
			equal(t, CodeInvalidOptions, codeOf(err))
			contains(t, err.Error(), c.want)
			equal(t, 0, s.Len(), "a refused session must not be kept")
		})
	}
}

func TestCallsAndTypedHelpers(t *testing.T) {
	s := NewSessions()
	id := create(t, s, `{"workspace":{"kind":"memory","files":{"a.txt":"one\ntwo\n"}}}`, nil)
	ctx := context.Background()

	names, err := s.CallSync(id, "toolNames", nil)
	noErr(t, err)
	contains(t, names, "read")
	notContains(t, names, "bash")

	out, err := s.Call(ctx, id, "readFile", []byte(`{"path":"a.txt","offset":1}`))
	noErr(t, err)
	equal(t, "     2\ttwo\n", firstLines(out.(string), 1))

	w, err := s.Call(ctx, id, "writeFile", []byte(`{"path":"b/c.txt","content":"hi\n"}`))
	noErr(t, err)
	equal(t, 0, w.(ToolResult).ExitCode)

	_, err = s.Call(ctx, id, "readFile", []byte(`{"path":"missing.txt"}`))
	isErr(t, err)
	equal(t, CodeToolFailed, codeOf(err))
	var detail ToolResult
	noErr(t, json.Unmarshal([]byte(err.(*Error).Detail), &detail))
	notEqual(t, 0, detail.ExitCode)
	contains(t, detail.ErrorKindJSON, `"type":"not_found"`)

	// A tool error that names its tool is not prefixed a second time.
	_, err = s.Call(ctx, id, "grep", []byte(`{"pattern":"("}`))
	isErr(t, err)
	equal(t, CodeToolFailed, codeOf(err))
	equal(t, 1, strings.Count(err.Error(), "grep:"))

	r, err := s.Call(ctx, id, "tool", []byte(`{"name":"read","args":{"file_path":"nope"}}`))
	noErr(t, err, "a tool that ran and failed is a result, not an error")
	equal(t, 1, r.(ToolResult).ExitCode)

	_, err = s.Call(ctx, id, "tool", []byte(`{"name":"bash","args":{"command":"ls"}}`))
	equal(t, CodeToolNotRegistered, codeOf(err))

	badCalls := []struct{ name, method, args, want string }{
		{"empty tool name", "tool", `{"name":"","args":{}}`, "non-empty"},
		{"args not object", "tool", `{"name":"read","args":[1]}`, "args must be an object"},
		{"unknown arg key", "readFile", `{"path":"a","ofset":1}`, `readFile: unknown key ofset (known: path, offset, limit)`},
		{"writeFile without content", "writeFile", `{"path":"a.txt"}`, "writeFile: content is required"},
		{"writeFile null content", "writeFile", `{"path":"a.txt","content":null}`, "writeFile: content is required"},
		{"editFile without newString", "editFile", `{"path":"a.txt","oldString":"one"}`, "editFile: newString is required"},
		{"editFile without oldString", "editFile", `{"path":"a.txt","newString":"x"}`, "editFile: oldString is required"},
		{"patchFile without diff", "patchFile", `{"path":"a.txt"}`, "patchFile: diff is required"},
		{"readFile without path", "readFile", `{}`, "readFile: path is required"},
		{"glob without pattern", "glob", `{}`, "glob: pattern is required"},
		{"grep without pattern", "grep", `{}`, "grep: pattern is required"},
		{"ls path not a string", "ls", `{"path":5}`, "ls: path must be a string, got 5"},
		{"fractional offset", "readFile", `{"path":"a.txt","offset":1.5}`, "readFile: offset must be a non-negative integer, got 1.5"},
		{"unknown method", "frobnicate", `{}`, `unknown method "frobnicate"`},
		{"confirm without approved", "confirmToolUse", `{"toolId":"x"}`, "approved"},
	}
	for _, c := range badCalls {
		t.Run(c.name, func(t *testing.T) {
			_, err := s.Call(ctx, id, c.method, []byte(c.args))
			isErr(t, err)
			equal(t, CodeInvalidCall, codeOf(err))
			contains(t, err.Error(), c.want)
		})
	}
	out, err = s.Call(ctx, id, "readFile", []byte(`{"path":"a.txt"}`))
	noErr(t, err)
	equal(t, "     1\tone\n     2\ttwo\n", out, "refused calls leave the file as it was")
}

func TestProgramListedOnlyWithAScriptEngine(t *testing.T) {
	cases := []struct {
		name   string
		env    Env
		listed bool
	}{
		{"kinds not stated", Env{}, true},
		{"ptc kinds offered", Env{HostKinds: []string{"ptc.start", "ptc.poll", "ptc.reply", "ptc.stop"}}, true},
		{"no extra kinds (workerd)", Env{HostKinds: []string{}}, false},
		{"other kinds only", Env{HostKinds: []string{"something.else"}}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := NewSessions()
			id, err := s.Create(context.Background(), []byte(`{}`), nil, c.env)
			noErr(t, err)
			names, err := s.CallSync(id, "toolNames", nil)
			noErr(t, err)
			has := false
			for _, n := range names.([]string) {
				has = has || n == "program"
			}
			equal(t, c.listed, has)
			contains(t, names, "read")
			_, err = s.Call(context.Background(), id, "tool", []byte(`{"name":"program","args":{"type":"script","source":"async function run(){return 1}"}}`))
			if !c.listed {
				equal(t, CodeToolNotRegistered, codeOf(err))
			}
		})
	}
}

func firstLines(s string, n int) string {
	ls := strings.SplitAfter(s, "\n")
	if len(ls) > n {
		ls = ls[:n]
	}
	return strings.Join(ls, "")
}

func TestTwoSessionsHaveSeparateWorkspaces(t *testing.T) {
	s := NewSessions()
	ctx := context.Background()
	a := create(t, s, `{"workspace":{"kind":"memory","files":{"x.txt":"A\n"}}}`, nil)
	b := create(t, s, `{"workspace":{"kind":"memory","files":{"x.txt":"B\n"}}}`, nil)
	_, err := s.Call(ctx, a, "writeFile", []byte(`{"path":"only-a.txt","content":"a"}`))
	noErr(t, err)
	ra, _ := s.Call(ctx, a, "readFile", []byte(`{"path":"x.txt"}`))
	rb, _ := s.Call(ctx, b, "readFile", []byte(`{"path":"x.txt"}`))
	contains(t, ra, "A")
	contains(t, rb, "B")
	_, err = s.Call(ctx, b, "readFile", []byte(`{"path":"only-a.txt"}`))
	equal(t, CodeToolFailed, codeOf(err))
}

// blockingHook is a pre_tool_use hook whose JS handler never answers until
// its context ends.
func blockingHook(started chan<- struct{}) *hostFunc {
	return &hostFunc{kinds: map[string]func(context.Context, map[string]any) (any, error){
		"hook": func(ctx context.Context, p map[string]any) (any, error) {
			started <- struct{}{}
			<-ctx.Done()
			return nil, ctx.Err()
		},
	}}
}

func TestAbortAndCloseWithCallsInFlight(t *testing.T) {
	// A pre_tool_use hook on write that never answers holds calls in flight.
	const opts = `{"hooks":[{"id":"wait","event":"pre_tool_use","handler":true,"matcher":{"tool":"write"},"config":{"timeoutMs":60000}}]}`
	t.Run("abort rejects ABORTED", func(t *testing.T) {
		started := make(chan struct{}, 1)
		s := NewSessions()
		id := create(t, s, opts, blockingHook(started).host)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			_, err := s.Call(ctx, id, "writeFile", []byte(`{"path":"a","content":"x"}`))
			done <- err
		}()
		<-started
		cancel()
		err := <-done
		equal(t, CodeAborted, codeOf(err), "%v", err)
		// The session stays usable, and the aborted write changed nothing.
		_, err = s.Call(context.Background(), id, "readFile", []byte(`{"path":"a"}`))
		equal(t, CodeToolFailed, codeOf(err))
		// A signal aborted before the call rejects without running it.
		_, err = s.Call(ctx, id, "readFile", []byte(`{"path":"a"}`))
		equal(t, CodeAborted, codeOf(err))
	})
	t.Run("close rejects SESSION_CLOSED", func(t *testing.T) {
		const n = 3
		started := make(chan struct{}, n)
		s := NewSessions()
		id := create(t, s, opts, blockingHook(started).host)
		sub, err := s.CallSync(id, "subscribe", nil)
		noErr(t, err)
		errs := make(chan error, n)
		for i := 0; i < n; i++ {
			go func() {
				_, err := s.Call(context.Background(), id, "tool", []byte(`{"name":"write","args":{"file_path":"x","content":"y"}}`))
				errs <- err
			}()
		}
		for i := 0; i < n; i++ {
			<-started
		}
		_, err = s.Call(context.Background(), id, "close", nil)
		noErr(t, err)
		for i := 0; i < n; i++ {
			err := <-errs
			equal(t, CodeSessionClosed, codeOf(err), "%v", err)
		}
		_, err = s.Call(context.Background(), id, "tool", []byte(`{"name":"read","args":{}}`))
		equal(t, CodeSessionClosed, codeOf(err))
		_, err = s.CallSync(id, "toolNames", nil)
		equal(t, CodeSessionClosed, codeOf(err))
		// The stream ends.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		equal(t, 1, s.Len(), "a closed session stays until its subscriptions drain")
		for {
			v, err := s.NextEvents(ctx, id, sub.(int))
			noErr(t, err)
			b, _ := json.Marshal(v)
			if strings.Contains(string(b), `"done":true`) {
				break
			}
		}
		equal(t, 0, s.Len())
	})
}

func TestActiveToolsListsARunningCall(t *testing.T) {
	// A post_tool_use hook runs while the call is still active.
	started := make(chan struct{}, 1)
	release := make(chan struct{})
	h := &hostFunc{kinds: map[string]func(context.Context, map[string]any) (any, error){
		"hook": func(ctx context.Context, p map[string]any) (any, error) {
			started <- struct{}{}
			<-release
			return nil, nil
		},
	}}
	s := NewSessions()
	id := create(t, s, `{"workspace":{"kind":"memory","files":{"a":"x"}},"hooks":[{"id":"after","event":"post_tool_use","handler":true}]}`, h.host)
	done := make(chan error, 1)
	go func() {
		_, err := s.Call(context.Background(), id, "readFile", []byte(`{"path":"a"}`))
		done <- err
	}()
	<-started
	v, err := s.CallSync(id, "activeTools", nil)
	noErr(t, err)
	b, _ := json.Marshal(v)
	var active []map[string]any
	noErr(t, json.Unmarshal(b, &active))
	if equal(t, 1, len(active), "%s", b) {
		equal(t, "read", active[0]["name"])
		equal(t, "host_direct_trusted", active[0]["origin"])
		_, ok := active[0]["startedAtMs"].(float64)
		equal(t, true, ok, "startedAtMs: %s", b)
	}
	close(release)
	noErr(t, <-done)
	v, _ = s.CallSync(id, "activeTools", nil)
	b, _ = json.Marshal(v)
	equal(t, "[]", string(b))
}

func TestHostGovernance(t *testing.T) {
	ctx := context.Background()
	type kinds = map[string]func(context.Context, map[string]any) (any, error)
	answer := func(v any) func(context.Context, map[string]any) (any, error) {
		return func(context.Context, map[string]any) (any, error) { return v, nil }
	}
	cases := []struct {
		name     string
		opts     string
		kinds    kinds
		method   string
		args     string
		wantExit int
		wantKind string // substring of errorKindJson
		wantHost string // a kind the host must have seen
	}{
		{"hook blocks", `{"hooks":[{"id":"h","event":"pre_tool_use","handler":true}]}`,
			kinds{"hook": answer(map[string]any{"action": "block", "reason": "no writes"})},
			"writeFile", `{"path":"a","content":"x"}`, 1, `"reason":"no writes"`, "hook"},
		{"hook continues on null", `{"hooks":[{"id":"h","event":"pre_tool_use","handler":true}]}`,
			kinds{"hook": answer(nil)}, "writeFile", `{"path":"a","content":"x"}`, 0, "", "hook"},
		{"hook that throws denies", `{"hooks":[{"id":"h","event":"pre_tool_use","handler":true}]}`,
			kinds{"hook": func(context.Context, map[string]any) (any, error) { return nil, errors.New("boom") }},
			"writeFile", `{"path":"a","content":"x"}`, 1, `hook_denied`, "hook"},
		{"hook with a bad action denies", `{"hooks":[{"id":"h","event":"pre_tool_use","handler":true}]}`,
			kinds{"hook": answer(map[string]any{"action": "maybe"})}, "writeFile", `{"path":"a","content":"x"}`, 1, `hook_denied`, "hook"},
		{"hook that never answers denies in its timeout", `{"hooks":[{"id":"h","event":"pre_tool_use","handler":true,"config":{"timeoutMs":50}}]}`,
			kinds{"hook": func(ctx context.Context, _ map[string]any) (any, error) { <-ctx.Done(); return nil, ctx.Err() }},
			"writeFile", `{"path":"a","content":"x"}`, 1, `hook_denied`, "hook"},
		{"hook matcher skips other tools", `{"hooks":[{"id":"h","event":"pre_tool_use","handler":true,"matcher":{"tool":"write"}}]}`,
			kinds{}, "tool", `{"name":"read","args":{"file_path":"f.txt"}}`, 0, "", ""},
		{"budget false denies", `{"budgetGuard":{"checkBeforeTool":true}}`,
			kinds{"budget": answer(false)}, "writeFile", `{"path":"a","content":"x"}`, 1, `hook_denied`, "budget"},
		{"budget null denies", `{"budgetGuard":{"checkBeforeTool":true}}`,
			kinds{"budget": answer(nil)}, "writeFile", `{"path":"a","content":"x"}`, 1, `hook_denied`, "budget"},
		{"budget allow", `{"budgetGuard":{"checkBeforeTool":true}}`,
			kinds{"budget": answer(map[string]any{"allow": true})}, "writeFile", `{"path":"a","content":"x"}`, 0, "", "budget"},
		{"budget stalls past its timeout", `{"budgetGuard":{"checkBeforeTool":true,"timeoutMs":50}}`,
			kinds{"budget": func(ctx context.Context, _ map[string]any) (any, error) { <-ctx.Done(); return nil, ctx.Err() }},
			"writeFile", `{"path":"a","content":"x"}`, 1, `hook_denied`, "budget"},
		{"permission deny", `{"permissionPolicy":{"deny":["write"]}}`, kinds{},
			"governedTool", `{"name":"write","args":{"file_path":"a","content":"x"}}`, 1, `hook_denied`, ""},
		{"permission does not bind trusted calls", `{"permissionPolicy":{"deny":["write"]}}`, kinds{},
			"tool", `{"name":"write","args":{"file_path":"a","content":"x"}}`, 0, "", ""},
		{"confirmation handler approves", `{"permissionPolicy":{"ask":["write"]},"confirmationHandler":true}`,
			kinds{"confirm": answer(true)}, "governedTool", `{"name":"write","args":{"file_path":"a","content":"x"}}`, 0, "", "confirm"},
		{"confirmation handler rejects", `{"permissionPolicy":{"ask":["write"]},"confirmationHandler":true}`,
			kinds{"confirm": answer(map[string]any{"approved": false, "reason": "not today"})},
			"governedTool", `{"name":"write","args":{"file_path":"a","content":"x"}}`, 1, `hook_denied`, "confirm"},
		{"confirmation handler garbage denies", `{"permissionPolicy":{"ask":["write"]},"confirmationHandler":true}`,
			kinds{"confirm": answer("yes")}, "governedTool", `{"name":"write","args":{"file_path":"a","content":"x"}}`, 1, `hook_denied`, "confirm"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := &hostFunc{kinds: c.kinds}
			s := NewSessions()
			id := create(t, s, `{"workspace":{"kind":"memory","files":{"f.txt":"f\n"}},`+c.opts[1:], h.host)
			r, err := s.Call(ctx, id, c.method, []byte(c.args))
			noErr(t, err)
			res := r.(ToolResult)
			equal(t, c.wantExit, res.ExitCode, "%+v", res)
			if c.wantKind != "" {
				contains(t, res.ErrorKindJSON, c.wantKind)
			}
			if c.wantHost != "" {
				contains(t, h.seen(), c.wantHost)
			} else {
				equal(t, 0, len(h.seen()), "%v", h.seen())
			}
			if c.wantExit != 0 && c.method != "tool" {
				// A denied write leaves the workspace as it was.
				_, err := s.Call(ctx, id, "readFile", []byte(`{"path":"a"}`))
				equal(t, CodeToolFailed, codeOf(err))
			}
		})
	}
}

// perText answers both security ops (sanitizeOutput {text} and
// sanitizeAll {texts}) with f applied to each text.
func perText(f func(string) any) func(context.Context, map[string]any) (any, error) {
	return func(_ context.Context, p map[string]any) (any, error) {
		if p["op"] == "sanitizeAll" {
			var out []any
			for _, t := range p["texts"].([]any) {
				out = append(out, f(t.(string)))
			}
			return out, nil
		}
		return f(p["text"].(string)), nil
	}
}

func TestSecurityProviderSanitisesAndFailsClosed(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name   string
		answer func(context.Context, map[string]any) (any, error)
		want   string
		absent string
	}{
		{"redacts", perText(func(t string) any { return strings.ReplaceAll(t, "SECRET", "[redacted]") }), "[redacted]", "SECRET"},
		{"object form", perText(func(string) any { return map[string]any{"text": "clean"} }), "clean", "SECRET"},
		{"throws", func(context.Context, map[string]any) (any, error) { return nil, errors.New("boom") }, "withheld", "SECRET"},
		{"garbage", func(context.Context, map[string]any) (any, error) { return 42, nil }, "withheld", "SECRET"},
		// The args batch fails, so the rest of the call is withheld too.
		{"batch of the wrong length", func(_ context.Context, p map[string]any) (any, error) {
			if p["op"] == "sanitizeAll" {
				return []any{"x"}, nil
			}
			return "clean", nil
		}, "withheld", "SECRET"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var batches, asks atomic.Int32
			answer := func(ctx context.Context, p map[string]any) (any, error) {
				asks.Add(1)
				if p["op"] == "sanitizeAll" {
					batches.Add(1)
				}
				return c.answer(ctx, p)
			}
			h := &hostFunc{kinds: map[string]func(context.Context, map[string]any) (any, error){"security": answer}}
			s := NewSessions()
			id := create(t, s, `{"workspace":{"kind":"memory","files":{"k.txt":"key=SECRET\n"}},"securityProvider":{"sanitizeOutput":true}}`, h.host)
			r, err := s.Call(ctx, id, "tool", []byte(`{"name":"read","args":{"file_path":"k.txt"}}`))
			noErr(t, err)
			out := r.(ToolResult).Output
			contains(t, out, c.want)
			notContains(t, out, c.absent)
			// A failing provider is asked once per call (args, output and
			// metadata are withheld after its first failure): a silent one
			// costs one timeout, not three.
			if n := asks.Load(); c.want == "withheld" && n != 1 {
				t.Errorf("the failing provider was asked %d times for one call, want 1", n)
			} else if c.want != "withheld" && n < 2 {
				t.Errorf("the provider was asked %d times for one call (args, output, metadata)", n)
			}
			// A write's metadata holds the content (before/after): its
			// strings cross in one batch, and come back clean or withheld.
			before := batches.Load()
			w, err := s.Call(ctx, id, "writeFile", []byte(`{"path":"k.txt","content":"SECRET two\n"}`))
			noErr(t, err)
			notContains(t, w.(ToolResult).MetadataJSON, "SECRET")
			if got := batches.Load() - before; got < 1 {
				t.Errorf("metadata was not sanitised in a batch (%d sanitizeAll calls)", got)
			}
		})
	}
}

func TestPendingConfirmationsAndConfirmToolUse(t *testing.T) {
	ctx := context.Background()
	s := NewSessions()
	id := create(t, s, `{"permissionPolicy":{"ask":["write"]},"confirmationPolicy":{"enabled":true}}`, nil)
	done := make(chan ToolResult, 1)
	go func() {
		r, err := s.Call(ctx, id, "governedTool", []byte(`{"name":"write","args":{"file_path":"a.txt","content":"x"}}`))
		if err != nil {
			t.Error(err)
		}
		done <- r.(ToolResult)
	}()
	var pend []map[string]any
	eventually(t, func() bool {
		v, err := s.CallSync(id, "pendingConfirmations", nil)
		noErr(t, err)
		b, _ := json.Marshal(v)
		_ = json.Unmarshal(b, &pend)
		return len(pend) == 1
	}, 5*time.Second, 5*time.Millisecond)
	equal(t, "write", pend[0]["toolName"])
	ok, err := s.Call(ctx, id, "confirmToolUse", []byte(`{"toolId":"nope","approved":true}`))
	noErr(t, err)
	equal(t, false, ok)
	ok, err = s.Call(ctx, id, "confirmToolUse", []byte(`{"toolId":"`+pend[0]["toolId"].(string)+`","approved":true}`))
	noErr(t, err)
	equal(t, true, ok)
	equal(t, 0, (<-done).ExitCode)
}

func TestRegisterHookAndBudgetAtRunTime(t *testing.T) {
	ctx := context.Background()
	h := &hostFunc{kinds: map[string]func(context.Context, map[string]any) (any, error){
		"hook": func(context.Context, map[string]any) (any, error) {
			return map[string]any{"action": "block", "reason": "late hook"}, nil
		},
		"budget": func(context.Context, map[string]any) (any, error) { return false, nil },
	}}
	s := NewSessions()
	id := create(t, s, `{}`, h.host)
	write := []byte(`{"path":"a","content":"x"}`)

	_, err := s.CallSync(id, "registerHook", []byte(`{"id":"late","event":"pre_tool_use","handler":true}`))
	noErr(t, err)
	r, _ := s.Call(ctx, id, "writeFile", write)
	contains(t, r.(ToolResult).Output, "late hook")
	ok, _ := s.CallSync(id, "unregisterHook", []byte(`{"id":"late"}`))
	equal(t, true, ok)
	r, _ = s.Call(ctx, id, "writeFile", write)
	equal(t, 0, r.(ToolResult).ExitCode)

	_, err = s.CallSync(id, "setBudgetGuard", []byte(`{"checkBeforeTool":true}`))
	noErr(t, err)
	r, _ = s.Call(ctx, id, "writeFile", write)
	equal(t, 1, r.(ToolResult).ExitCode)
	_, err = s.CallSync(id, "setBudgetGuard", []byte(`null`))
	noErr(t, err)
	r, _ = s.Call(ctx, id, "writeFile", write)
	equal(t, 0, r.(ToolResult).ExitCode)

	_, err = s.CallSync(id, "registerHook", []byte(`{"id":"","event":"pre_tool_use"}`))
	equal(t, CodeInvalidCall, codeOf(err))
	_, err = s.CallSync(id, "setBudgetGuard", []byte(`{"checkBeforeTool":true,"timeoutMs":-5}`))
	equal(t, CodeInvalidCall, codeOf(err))
}

func TestEventsCarryConvenienceFields(t *testing.T) {
	ctx := context.Background()
	s := NewSessions()
	id := create(t, s, `{"workspace":{"kind":"memory","files":{"a.txt":"hello\n"}}}`, nil)
	sub, err := s.CallSync(id, "subscribe", nil)
	noErr(t, err)
	_, err = s.Call(ctx, id, "tool", []byte(`{"name":"read","args":{"file_path":"a.txt"}}`))
	noErr(t, err)
	_, err = s.Call(ctx, id, "tool", []byte(`{"name":"read","args":{"file_path":"gone.txt"}}`))
	noErr(t, err)
	var evs []WireEvent
	for len(evs) < 2 || countType(evs, "tool_end") < 2 {
		v, err := s.NextEvents(ctx, id, sub.(int))
		noErr(t, err)
		b, _ := json.Marshal(v)
		var batch struct{ Events []WireEvent }
		noErr(t, json.Unmarshal(b, &batch))
		evs = append(evs, batch.Events...)
	}
	var ends []WireEvent
	for _, e := range evs {
		equal(t, 1, e.Version)
		if e.Type == "tool_end" {
			ends = append(ends, e)
		}
	}
	if !equal(t, 2, len(ends)) {
		return
	}
	equal(t, "read", ends[0].ToolName)
	equal(t, ends[0].InvocationID, ends[0].ToolID)
	if ends[0].ExitCode == nil || ends[1].ExitCode == nil {
		t.Fatal("tool_end without exitCode")
	}
	equal(t, 0, *ends[0].ExitCode)
	contains(t, ends[0].Text, "hello")
	equal(t, 1, *ends[1].ExitCode)
	contains(t, ends[1].ErrorKindJSON, "not_found")
	equal(t, "host_direct_trusted", string(ends[0].Origin))
}

func countType(evs []WireEvent, typ string) int {
	n := 0
	for _, e := range evs {
		if e.Type == typ {
			n++
		}
	}
	return n
}

func TestWireEventOf(t *testing.T) {
	// Upstream's field names: payload.id/name on execution events,
	// tool_id/tool_name on gate events.
	cases := []struct {
		name string
		typ  string
		p    map[string]any
		want WireEvent
	}{
		{"delta", "tool_output_delta", map[string]any{"id": "call-1", "name": "grep", "delta": "x"},
			WireEvent{ToolID: "call-1", ToolName: "grep", Text: "x"}},
		{"denied", "permission_denied", map[string]any{"tool_id": "call-2", "tool_name": "write", "reason": "no"},
			WireEvent{ToolID: "call-2", ToolName: "write", Text: "no"}},
		{"budget", "budget_threshold_hit", map[string]any{"message": "80%"}, WireEvent{Text: "80%"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := WireEventOf(eventOf(c.typ, c.p))
			equal(t, c.want.ToolID, w.ToolID)
			equal(t, c.want.ToolName, w.ToolName)
			equal(t, c.want.Text, w.Text)
		})
	}
}

// TestGovernedCallDefaults pins the table in npm/README.md "Permission and
// confirmation: the defaults": what governedTool('write') does under each
// option set, and that tool() (trusted) runs under all of them.
func TestGovernedCallDefaults(t *testing.T) {
	approve := &hostFunc{kinds: map[string]func(context.Context, map[string]any) (any, error){
		"confirm": func(context.Context, map[string]any) (any, error) { return true, nil },
	}}
	cases := []struct {
		name, opts string
		host       Host
		exit       int
		want       string
	}{
		{"no options: ask without a manager denies", `{}`, nil, 1, "no confirmation manager"},
		{"an allow rule", `{"permissionPolicy":{"allow":["write"]}}`, nil, 0, "Created a.txt"},
		{"policy disabled", `{"permissionPolicy":{"enabled":false}}`, nil, 0, "Created a.txt"},
		{"default decision allow", `{"permissionPolicy":{"defaultDecision":"allow"}}`, nil, 0, "Created a.txt"},
		{"a deny rule beats allow", `{"permissionPolicy":{"allow":["*"],"deny":["write"]}}`, nil, 1, "denied"},
		{"confirmation enabled, nobody answers", `{"confirmationPolicy":{"enabled":true,"defaultTimeoutMs":50}}`, nil, 1, "timed out"},
		{"a confirmation handler approves", `{"confirmationHandler":true}`, approve.host, 0, "Created a.txt"},
	}
	ctx := context.Background()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := NewSessions()
			id := create(t, s, c.opts, c.host)
			r, err := s.Call(ctx, id, "governedTool", []byte(`{"name":"write","args":{"file_path":"a.txt","content":"x"}}`))
			noErr(t, err)
			equal(t, c.exit, r.(ToolResult).ExitCode, r.(ToolResult).Output)
			contains(t, r.(ToolResult).Output, c.want)
			tr, err := s.Call(ctx, id, "tool", []byte(`{"name":"write","args":{"file_path":"b.txt","content":"x"}}`))
			noErr(t, err)
			equal(t, 0, tr.(ToolResult).ExitCode, "a trusted call skips permission and confirmation")
		})
	}
}
