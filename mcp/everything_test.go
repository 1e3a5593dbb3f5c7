//go:build !js

package mcp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a3s-lab/code-wasm/core"
	"github.com/a3s-lab/code-wasm/kernel"
	"github.com/a3s-lab/code-wasm/mcp"
)

// everything is a running @modelcontextprotocol/server-everything in
// streamableHttp mode on 127.0.0.1, started with an empty environment.
type everything struct {
	cmd  *exec.Cmd
	URL  string
	mu   sync.Mutex
	reqs map[string]int // requests seen, by method
}

func startEverything(t testing.TB, port string) *everything {
	t.Helper()
	root, _ := filepath.Abs("..")
	bin := filepath.Join(root, "node_modules/@modelcontextprotocol/server-everything/dist/index.js")
	if _, err := os.Stat(bin); err != nil {
		t.Skip("server-everything not installed (npm ci)")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("no node")
	}
	cmd := exec.Command(node, "--import", filepath.Join(root, "mcp/testdata/loopback.mjs"), bin, "streamableHttp")
	cmd.Env = []string{"PORT=" + port}
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	e := &everything{cmd: cmd, reqs: map[string]int{}}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			if a, ok := strings.CutPrefix(line, "LISTENING "); ok {
				addr <- a
			}
			if m, ok := strings.CutPrefix(line, "REQ "); ok {
				e.mu.Lock()
				e.reqs[m]++
				e.mu.Unlock()
			}
		}
	}()
	select {
	case a := <-addr:
		e.URL = "http://" + a + "/mcp"
	case <-time.After(20 * time.Second):
		t.Fatal("server-everything did not start in 20 s")
	}
	return e
}

func (e *everything) requests(method string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.reqs[method]
}

func (e *everything) kill() { e.cmd.Process.Kill(); e.cmd.Wait() }

func newSession(t testing.TB, gov kernel.Governance, servers ...mcp.Config) *core.Session {
	t.Helper()
	s, err := core.New(core.Options{Governance: gov, McpServers: servers})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

func call(t *testing.T, s *core.Session, name string, args any) *kernel.Result {
	t.Helper()
	res, err := s.Tool(context.Background(), name, args)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

func TestEverything(t *testing.T) {
	e := startEverything(t, "0")
	s := newSession(t, kernel.Governance{}, mcp.Config{Name: "everything", URL: e.URL})
	st := s.McpStatus()
	if len(st) != 1 || st[0].State != "connected" || st[0].ToolCount < 10 {
		t.Fatalf("status %+v", st)
	}
	names := strings.Join(s.ToolNames(), " ")
	for _, n := range []string{"mcp__everything__echo", "mcp__everything__get-sum", "mcp__everything__get-structured-content", "mcp__everything__get-tiny-image", "mcp__everything__trigger-long-running-operation"} {
		if !strings.Contains(names, n) {
			t.Errorf("toolNames lacks %s: %s", n, names)
		}
	}
	if strings.Contains(names, "simulate-research-query") || !strings.Contains(strings.Join(st[0].Warnings, " "), "simulate-research-query: skipped, it requires task support") {
		t.Errorf("the task-required tool was not skipped with a warning: %v", st[0].Warnings)
	}

	res := call(t, s, "mcp__everything__echo", map[string]any{"message": "hello wasm"})
	if res.ExitCode != 0 || res.Output != "Echo: hello wasm" || res.Metadata["trust"] != "external" {
		t.Errorf("echo: %+v", res)
	}
	res = call(t, s, "mcp__everything__get-sum", map[string]any{"a": 2, "b": 40})
	if res.ExitCode != 0 || !strings.Contains(res.Output, "42") {
		t.Errorf("get-sum: %+v", res)
	}
	res = call(t, s, "mcp__everything__get-structured-content", map[string]any{"location": "New York"})
	if st, ok := res.Metadata["structured"].(map[string]any); res.ExitCode != 0 || !ok || st["temperature"] == nil {
		t.Errorf("structuredContent did not reach metadata: %+v", res)
	}
	res = call(t, s, "mcp__everything__get-tiny-image", nil)
	if res.ExitCode != 0 || !strings.Contains(res.Output, "[image image/png") {
		t.Errorf("image summary: %+v", res)
	}
	// The draft-07 schema is enforced by the kernel before any request.
	before := e.requests("POST")
	res = call(t, s, "mcp__everything__get-sum", map[string]any{"a": "two", "b": 1})
	if res.ExitCode == 0 || res.ErrorKind == nil || res.ErrorKind.Type != kernel.ErrInvalidArgument || e.requests("POST") != before {
		t.Errorf("bad args: %+v (posts %d → %d)", res, before, e.requests("POST"))
	}
	// removeMcp unregisters and sends DELETE.
	if err := s.RemoveMcp(context.Background(), "everything"); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(strings.Join(s.ToolNames(), " "), "mcp__") || len(s.McpStatus()) != 0 {
		t.Errorf("after removeMcp: %v %v", s.ToolNames(), s.McpStatus())
	}
	deadline := time.Now().Add(5 * time.Second)
	for e.requests("DELETE") == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if e.requests("DELETE") != 1 {
		t.Errorf("DELETE requests: %d", e.requests("DELETE"))
	}
}

func TestEverythingGoverned(t *testing.T) {
	t0 := time.Now()
	e := startEverything(t, "0")
	t.Logf("server up in %v", time.Since(t0))
	gov := kernel.Governance{Permission: kernel.PermissionPolicy{Deny: []string{"mcp__everything__echo"}, Allow: []string{"*"}},
		// A pre-hook rewriting get-sum's b: a number is kept, a string
		// must fail the server's draft-07 schema before any request.
		Hooks: []kernel.Hook{{ID: "rewrite", Event: kernel.HookPreToolUse, Matcher: kernel.HookMatcher{Tool: "mcp__everything__get-sum"},
			Handler: func(_ context.Context, req kernel.HookRequest) (kernel.HookResponse, error) {
				var a map[string]any
				json.Unmarshal(req.Args, &a)
				if a["a"] == float64(-1) {
					return kernel.HookResponse{Action: kernel.HookContinue, Modified: json.RawMessage(`{"a":1,"b":"two"}`)}, nil
				}
				return kernel.HookResponse{Action: kernel.HookContinue, Modified: json.RawMessage(`{"a":100,"b":1}`)}, nil
			}}}}
	s := newSession(t, gov, mcp.Config{Name: "everything", URL: e.URL})
	before := e.requests("POST")
	res, err := s.GovernedTool(context.Background(), "mcp__everything__echo", map[string]any{"message": "x"})
	if err != nil || res.ExitCode == 0 {
		t.Fatalf("denied echo ran: %+v %v", res, err)
	}
	if e.requests("POST") != before {
		t.Errorf("a denied call reached the server: %d → %d POSTs", before, e.requests("POST"))
	}
	res = call(t, s, "mcp__everything__get-sum", map[string]any{"a": 1, "b": 2})
	if res.ExitCode != 0 || !strings.Contains(res.Output, "101") {
		t.Errorf("the rewritten get-sum: %+v", res)
	}
	before = e.requests("POST")
	res = call(t, s, "mcp__everything__get-sum", map[string]any{"a": -1, "b": 2})
	if res.ErrorKind == nil || res.ErrorKind.Type != kernel.ErrInvalidArgument || e.requests("POST") != before {
		t.Errorf("a rewrite failing the schema: %+v (POSTs %d → %d)", res, before, e.requests("POST"))
	}
	// A batch of 8 echo calls runs them in parallel (read-only, idempotent).
	var inv []map[string]any
	for i := range 8 {
		inv = append(inv, map[string]any{"tool": "mcp__everything__get-sum", "args": map[string]any{"a": i, "b": 1}})
	}
	res = call(t, s, "batch", map[string]any{"invocations": inv})
	if res.ExitCode != 0 || res.Metadata["execution_mode"] != "parallel" {
		t.Fatalf("batch of 8 get-sum: %+v", res.Metadata)
	}
	// 8 one-second operations in parallel end long before 8 s.
	inv = inv[:0]
	for range 8 {
		inv = append(inv, map[string]any{"tool": "mcp__everything__trigger-long-running-operation", "args": map[string]any{"duration": 1, "steps": 1}})
	}
	start := time.Now()
	res = call(t, s, "batch", map[string]any{"invocations": inv})
	if res.ExitCode != 0 || res.Metadata["execution_mode"] != "parallel" {
		t.Fatalf("batch of 8 long operations: %+v", res)
	}
	if d := time.Since(start); d > 6*time.Second {
		t.Errorf("8 × 1 s operations took %v: not parallel", d)
	}
	// A tool without readOnlyHint+idempotentHint runs alone.
	inv = []map[string]any{{"tool": "mcp__everything__toggle-simulated-logging", "args": map[string]any{}}, {"tool": "mcp__everything__toggle-simulated-logging", "args": map[string]any{}}}
	res = call(t, s, "batch", map[string]any{"invocations": inv})
	if res.Metadata["execution_mode"] != "serial" {
		t.Errorf("a non-read-only tool ran in parallel: %+v", res.Metadata)
	}
}

func TestEverythingRestart(t *testing.T) {
	e := startEverything(t, "0")
	s := newSession(t, kernel.Governance{}, mcp.Config{Name: "everything", URL: e.URL})
	port := strings.TrimSuffix(strings.TrimPrefix(e.URL, "http://127.0.0.1:"), "/mcp")

	// Killed mid long-running operation: transport at once.
	done := make(chan *kernel.Result, 1)
	go func() {
		done <- call(t, s, "mcp__everything__trigger-long-running-operation", map[string]any{"duration": 30, "steps": 30})
	}()
	time.Sleep(700 * time.Millisecond)
	e.kill()
	killed := time.Now()
	select {
	case res := <-done:
		if res.ExitCode == 0 || res.ErrorKind == nil || res.ErrorKind.Type != kernel.ErrTransport {
			t.Errorf("killed mid-call: %+v", res)
		}
		// The operation runs 30 s: the bound tells "at once" from "at its end".
		if d := time.Since(killed); d > 5*time.Second {
			t.Errorf("transport took %v after the kill", d)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the call hung after the server was killed")
	}

	// Restarted on the same port: the next call re-initializes and succeeds.
	startEverything(t, port)
	res := call(t, s, "mcp__everything__echo", map[string]any{"message": "after restart"})
	if res.ExitCode != 0 || res.Output != "Echo: after restart" {
		t.Errorf("after restart: %+v", res)
	}
}

func TestEverythingCancel(t *testing.T) {
	e := startEverything(t, "0")
	s := newSession(t, kernel.Governance{}, mcp.Config{Name: "everything", URL: e.URL})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(500*time.Millisecond, cancel)
	before := e.requests("POST")
	res, err := s.Tool(ctx, "mcp__everything__trigger-long-running-operation", map[string]any{"duration": 30, "steps": 30})
	if err != nil || res.ErrorKind == nil || res.ErrorKind.Type != kernel.ErrCancelled {
		t.Fatalf("aborted call: %+v %v", res, err)
	}
	// The call's POST, then notifications/cancelled.
	deadline := time.Now().Add(5 * time.Second)
	for e.requests("POST") < before+2 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if e.requests("POST") < before+2 {
		t.Errorf("no notifications/cancelled POST: %d → %d", before, e.requests("POST"))
	}
}

func TestUnreachable(t *testing.T) {
	s := newSession(t, kernel.Governance{}, mcp.Config{Name: "gone", URL: "http://127.0.0.1:1/mcp"})
	st := s.McpStatus()
	if len(st) != 1 || st[0].State != "failed" || st[0].Error == "" || st[0].ToolCount != 0 {
		t.Fatalf("status %+v", st)
	}
	if strings.Contains(strings.Join(s.ToolNames(), " "), "mcp__") {
		t.Errorf("registered tools of an unreachable server: %v", s.ToolNames())
	}
	for _, bad := range []mcp.Config{{Name: "a__b", URL: "http://x/"}, {Name: "a b", URL: "http://x/"}, {Name: "ok", URL: "ftp://x/"}} {
		if _, err := s.AddMcp(context.Background(), bad); err == nil || !strings.Contains(err.Error(), "addMcp") {
			t.Errorf("%+v accepted: %v", bad, err)
		}
	}
	_ = fmt.Sprint
}

// BenchmarkEverythingEcho is an echo call through the kernel natively; its
// CPU and memory profiles show the client's own cost per call (the server
// is another process).
func BenchmarkEverythingEcho(b *testing.B) {
	e := startEverything(b, "0")
	s := newSession(b, kernel.Governance{}, mcp.Config{Name: "everything", URL: e.URL})
	ctx := context.Background()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		msg := fmt.Sprintf("m%d", i)
		res, err := s.Tool(ctx, "mcp__everything__echo", map[string]any{"message": msg})
		if err != nil || res.Output != "Echo: "+msg {
			b.Fatalf("echo: %v %+v", err, res)
		}
	}
}
