//go:build !js

package core_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/a3s-lab/code-wasm/core"
	"github.com/a3s-lab/code-wasm/internal/testkit"
	"github.com/a3s-lab/code-wasm/kernel"
)

// TestGovernedProgramChildPaths: a governed program's ctx.tool('read',
// {files: [...]}) is a nested invocation whose every path the deny rule
// sees.
func TestGovernedProgramChildPaths(t *testing.T) {
	s := newSession(t, kernel.Governance{Permission: kernel.PermissionPolicy{
		Deny: []string{"read(path:secrets/**)"}, Allow: []string{"*"}}},
		map[string]string{"a.txt": "a\n", "secrets/k.txt": "API_KEY=1\n"})
	src := `async function run(ctx) {
  const out = {};
  for (const [name, files] of [["mixed", [{path: "a.txt"}, {path: "x/../secrets/k.txt"}]], ["clean", [{path: "a.txt"}]]]) {
    try { out[name] = (await ctx.tool("read", {files})).output; } catch (e) { out[name] = "ERR " + e.message; }
  }
  return out;
}`
	res, err := s.GovernedTool(context.Background(), "program", map[string]any{"type": "script", "source": src})
	if err != nil {
		t.Fatal(err)
	}
	var got struct{ Mixed, Clean string }
	raw, _ := json.Marshal(res.Metadata["script_result"])
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatalf("exit %d %s: %v", res.ExitCode, res.Output, err)
	}
	if !strings.Contains(got.Mixed, `denied by permission rule "read(path:secrets/**)"`) || strings.Contains(got.Mixed, "API_KEY") {
		t.Errorf("mixed read not denied: %q", got.Mixed)
	}
	if strings.HasPrefix(got.Clean, "ERR") || strings.Contains(got.Clean, "denied") || !strings.Contains(got.Clean, "a") {
		t.Errorf("clean read failed: %q", got.Clean)
	}
}

// TestSessionSanitisesEditMetadata: a secret in the before/after of an
// edit, in a not_found path, and in event payloads is cleaned.
func TestSessionSanitisesEditMetadata(t *testing.T) {
	const secret = "sk-live-9f8e7d"
	s := newSession(t, kernel.Governance{Security: kernel.SanitizerFunc(func(x string) string {
		return strings.ReplaceAll(x, secret, "[redacted]")
	})}, map[string]string{"cfg.env": "KEY=" + secret + "\nMODE=dev\n"})
	sub := s.Events()
	defer sub.Close()
	ctx := context.Background()
	res, err := s.EditFile(ctx, "cfg.env", "MODE=dev", "MODE=prod", false)
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("edit: %v %+v", err, res)
	}
	b, _ := json.Marshal(res)
	if strings.Contains(string(b), secret) || !strings.Contains(string(b), "[redacted]") {
		t.Errorf("edit result: %s", b)
	}
	res, err = s.Tool(ctx, "read", map[string]any{"file_path": "keys/" + secret + ".txt"})
	if err != nil {
		t.Fatal(err)
	}
	if res.ErrorKind == nil || res.ErrorKind.Type != kernel.ErrNotFound || strings.Contains(res.ErrorKind.Path+res.Output, secret) {
		t.Errorf("not_found: %+v %q", res.ErrorKind, res.Output)
	}
	data, _, _ := s.Workspace().ReadFile(ctx, "cfg.env")
	if !strings.Contains(string(data), secret) {
		t.Fatal("the sanitiser changed the file itself")
	}
	wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	for n := 0; n < 2; {
		evs, _, err := sub.Next(wctx, 0)
		if err != nil {
			t.Fatal("events missing:", err)
		}
		for _, e := range evs {
			pb, _ := json.Marshal(e.Payload)
			if strings.Contains(string(pb), secret) {
				t.Errorf("%s leaks: %s", e.Type, pb)
			}
			if e.Type == kernel.EventToolEnd {
				n++
			}
		}
	}
}

// TestProgramHugeResultBounded: a result just under the engine's 1 MiB
// cap (`"x".repeat(9e5)`; the spec reviewer's 5e6 is now refused in the
// engine) comes back with small metadata and an artifact holding it all.
func TestProgramHugeResultBounded(t *testing.T) {
	s := newSession(t, kernel.Governance{}, nil)
	res, err := s.Program(context.Background(), core.ProgramOptions{Source: `async function run(){ return "x".repeat(9e5) }`})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("%v %+v", err, res.ErrorKind)
	}
	b, _ := json.Marshal(res.Metadata)
	if len(b) > 100<<10 {
		t.Fatalf("metadata is %d bytes", len(b))
	}
	t.Logf("metadata %d bytes, output %d bytes", len(b), len(res.Output))
	ref, _ := res.Metadata["metadata_artifact"].(map[string]any)
	a, ok := s.Artifact(ref["artifact_uri"].(string))
	if !ok || !strings.Contains(a.Content, strings.Repeat("x", 9e5)) {
		t.Fatalf("artifact %v ok=%v", ref, ok)
	}
}

// TestGovernedDefaults: a governed call with no options asks the default
// policy, which with no confirmation manager denies; confirmation enabled
// puts it in the pending list, and ConfirmToolUse lets it run.
func TestGovernedDefaults(t *testing.T) {
	ctx := context.Background()
	s := newSession(t, kernel.Governance{}, map[string]string{"a.txt": "a\n"})
	res, err := s.GovernedTool(ctx, "write", map[string]any{"file_path": "a.txt", "content": "b\n"})
	if err != nil || testkit.KindOf(res) != kernel.ErrHookDenied || !strings.Contains(res.Output, "no confirmation manager") {
		t.Fatalf("%v %+v", err, res)
	}
	if res, _ := s.Tool(ctx, "read", map[string]any{"file_path": "a.txt"}); !strings.Contains(res.Output, "a") || res.ExitCode != 0 {
		t.Fatalf("trusted read: %+v", res)
	}

	s = newSession(t, kernel.Governance{Confirmation: kernel.ConfirmationPolicy{Enabled: true}}, map[string]string{"a.txt": "a\n"})
	done := make(chan *kernel.Result, 1)
	go func() {
		r, _ := s.GovernedTool(ctx, "write", map[string]any{"file_path": "a.txt", "content": "b\n"})
		done <- r
	}()
	var pend []kernel.PendingConfirmation
	for deadline := time.Now().Add(5 * time.Second); len(pend) == 0 && time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		pend = s.PendingConfirmations()
	}
	if len(pend) != 1 || pend[0].ToolName != "write" {
		t.Fatalf("pending %v", pend)
	}
	if !s.ConfirmToolUse(pend[0].ToolID, true, "ok") {
		t.Fatal("ConfirmToolUse found nothing")
	}
	if r := <-done; r.ExitCode != 0 {
		t.Fatalf("approved write: %+v", r)
	}
	data, _, _ := s.Workspace().ReadFile(ctx, "a.txt")
	if string(data) != "b\n" {
		t.Fatalf("file %q", data)
	}
}
