package core_test

import (
	"context"
	"encoding/json"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/a3s-lab/code-wasm/core"
	"github.com/a3s-lab/code-wasm/kernel"
)

// holeFiles is the workspace of the red team's governance findings.
var holeFiles = map[string]string{
	"secrets/key.txt": "TOKEN=hunter2\nSECOND=swordfish\n",
	"src/main.go":     "package main\n\nfunc main() {}\n",
}

type govSession struct {
	*core.Session
	sub *core.Subscription
}

func newGovSession(t *testing.T, g kernel.Governance, files map[string]string) *govSession {
	t.Helper()
	s := newSession(t, g, files)
	sub := s.Events()
	t.Cleanup(sub.Close)
	return &govSession{s, sub}
}

func (s *govSession) governed(t *testing.T, tool string, args any) *kernel.Result {
	t.Helper()
	res, err := s.GovernedTool(context.Background(), tool, args)
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	return res
}

// published is every event payload so far, as JSON.
func (s *govSession) published(t *testing.T) []string {
	t.Helper()
	var out []string
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		evs, _, err := s.sub.Next(ctx, 0)
		cancel()
		if err != nil {
			return out
		}
		for _, e := range evs {
			b, _ := json.Marshal(e)
			out = append(out, string(b))
		}
	}
}

// everything is what a result and the events show.
func (s *govSession) everything(t *testing.T, res ...*kernel.Result) string {
	t.Helper()
	var b strings.Builder
	for _, r := range res {
		j, _ := json.Marshal(r)
		b.WriteString(r.Output)
		b.Write(j)
	}
	for _, e := range s.published(t) {
		b.WriteString(e)
	}
	return b.String()
}

// leaks reports which parts of the secret file show in text.
func leaks(text string) []string {
	var out []string
	for _, part := range []string{"hunter2", "swordfish", "TOKEN=", "SECOND="} {
		if strings.Contains(text, part) {
			out = append(out, part)
		}
	}
	return out
}

// TestDeniedContentStaysHidden: finding 3. With a read rule keeping
// secrets/ from view, no other tool hands the content back: not edit's
// before/after (dry run or not), not patch's mismatch message, not the
// answer to "is this text there" that either gives, not write's record of
// what it replaced; in the result or in any event; nested in a batch too.
func TestDeniedContentStaysHidden(t *testing.T) {
	policy := kernel.PermissionPolicy{Deny: []string{"read(path:secrets/**)"}, Allow: []string{"*"}}
	edit := func(old string, dry bool) map[string]any {
		return map[string]any{"file_path": "secrets/key.txt", "old_string": old, "new_string": "X", "dry_run": dry}
	}
	patch := func(line string) map[string]any {
		return map[string]any{"file_path": "secrets/key.txt", "diff": "@@ -1,1 +1,1 @@\n-" + line + "\n+X\n"}
	}
	cases := []struct {
		name   string
		tool   string
		args   any
		denied bool
		// ownText: the arguments carry text of the file (the caller's
		// own guess), so only the result is searched for leaks, not
		// the events that echo the arguments.
		ownText bool
	}{
		// The cases.
		{"edit dry run returns the file as metadata.before", "edit", edit("TOKEN", true), true, false},
		{"patch quotes the file's line back", "patch", patch("guess"), true, false},
		// Variants: the oracles and the other spellings.
		{"edit that would write", "edit", edit("TOKEN", false), true, false},
		{"edit as an oracle (old_string not found)", "edit", edit("nope", true), true, false},
		{"edit through a dot-dot path", "edit", map[string]any{"file_path": "src/../secrets/key.txt", "old_string": "TOKEN", "new_string": "X", "dry_run": true}, true, false},
		{"patch walking the second line", "patch", map[string]any{"file_path": "secrets/key.txt", "diff": "@@ -2,1 +2,1 @@\n-guess\n+X\n"}, true, false},
		{"patch that matches", "patch", patch("TOKEN=hunter2"), true, true},
		{"edit and patch as batch children", "batch", map[string]any{"invocations": []map[string]any{
			{"tool": "edit", "args": edit("TOKEN", true)}, {"tool": "patch", "args": patch("guess")}}}, false, false},
		// write is not a content reader: it runs, and does not tell what it
		// replaced, nor whether the file already ended with a chunk.
		{"write does not show what it replaced", "write", map[string]any{"file_path": "secrets/key.txt", "content": "new\n"}, false, false},
		{"write append does not confirm the file's tail", "write", map[string]any{"file_path": "secrets/key.txt", "content": "swordfish\n", "mode": "append", "expected_offset": 21}, false, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newGovSession(t, kernel.Governance{Permission: policy}, holeFiles)
			before := snapshot(t, s.Workspace())
			res := s.governed(t, tc.tool, tc.args)
			if tc.denied && (res.ExitCode == 0 || res.ErrorKind == nil || res.ErrorKind.Type != kernel.ErrHookDenied ||
				!strings.Contains(res.Output, `"read(path:secrets/**)"`)) {
				t.Fatalf("not denied by the read rule: exit %d %q", res.ExitCode, res.Output)
			}
			seen := s.everything(t, res)
			if tc.ownText {
				b, _ := json.Marshal(res)
				seen = res.Output + string(b)
			}
			if strings.Contains(seen, "already") {
				t.Fatalf("the file's tail was confirmed: %q", res.Output)
			}
			if l := leaks(seen); len(l) > 0 {
				t.Fatalf("%v leaked: %s %v", l, res.Output, res.Metadata)
			}
			if tc.tool != "write" && !maps.Equal(before, snapshot(t, s.Workspace())) {
				t.Fatal("a refused call changed the workspace")
			}
			if tc.tool == "batch" {
				var m struct {
					Results []struct {
						ErrorKind *kernel.ErrorKind `json:"error_kind"`
					}
				}
				b, _ := json.Marshal(res.Metadata)
				_ = json.Unmarshal(b, &m)
				if len(m.Results) != 2 || m.Results[0].ErrorKind == nil || m.Results[0].ErrorKind.Type != kernel.ErrHookDenied || m.Results[1].ErrorKind.Type != kernel.ErrHookDenied {
					t.Fatalf("batch children not denied: %s", b)
				}
			}
			if tc.name == "write does not show what it replaced" && res.Metadata["before_withheld"] != true {
				t.Errorf("metadata %v", res.Metadata)
			}
		})
	}

	// The same calls on a file no rule hides show what they always did;
	// a trusted host call skips the gate and sees everything.
	s := newGovSession(t, kernel.Governance{Permission: policy}, holeFiles)
	if res := s.governed(t, "edit", map[string]any{"file_path": "src/main.go", "old_string": "main()", "new_string": "run()", "dry_run": true}); res.ExitCode != 0 || res.Metadata["before"] != holeFiles["src/main.go"] {
		t.Errorf("unhidden edit: %q %v", res.Output, res.Metadata)
	}
	if res, _ := s.Tool(context.Background(), "edit", edit("TOKEN", true)); res.ExitCode != 0 || res.Metadata["before"] != holeFiles["secrets/key.txt"] {
		t.Errorf("trusted edit: %q", res.Output)
	}
	// A large file compacts its change metadata; the hidden side stays
	// hidden there too (no preview, no diff of the old text).
	big := strings.Repeat("TOKEN=hunter2\n", 6000)
	s = newGovSession(t, kernel.Governance{Permission: policy}, map[string]string{"secrets/big.txt": big})
	res := s.governed(t, "write", map[string]any{"file_path": "secrets/big.txt", "content": strings.Repeat("y\n", 40000)})
	if l := leaks(s.everything(t, res)); res.ExitCode != 0 || len(l) > 0 {
		t.Fatalf("exit %d, %v leaked", res.ExitCode, l)
	}
}

// TestAskReadRuleConfirmsContentReaders: an ask rule for read makes an
// allowed content reader ask; the human's answer decides.
func TestAskReadRuleConfirmsContentReaders(t *testing.T) {
	for _, approve := range []bool{false, true} {
		var asked string
		conf := confirmer(func(r kernel.ConfirmRequest) bool { asked = r.ToolName; return approve })
		s := newGovSession(t, kernel.Governance{Confirmer: conf,
			Permission: kernel.PermissionPolicy{Ask: []string{"read(path:secrets/**)"}, Allow: []string{"*"}}}, holeFiles)
		res := s.governed(t, "edit", map[string]any{"file_path": "secrets/key.txt", "old_string": "TOKEN", "new_string": "X", "dry_run": true})
		if asked != "edit" || (res.ExitCode == 0) != approve {
			t.Fatalf("approve=%v: asked %q, exit %d %q", approve, asked, res.ExitCode, res.Output)
		}
	}
}

type confirmer func(kernel.ConfirmRequest) bool

func (c confirmer) Confirm(_ context.Context, r kernel.ConfirmRequest) (kernel.ConfirmDecision, error) {
	return kernel.ConfirmDecision{Approved: c(r)}, nil
}

// TestDenyAllWrites: finding 3's second half. `deny: ['write']` names the
// write tool only; the @mutating class denies every call that may change
// the workspace — write, edit, patch, alone or as batch children — and
// leaves reads, searches, dry runs and orchestrators running.
func TestDenyAllWrites(t *testing.T) {
	readOnly := kernel.PermissionPolicy{Deny: []string{"@mutating"}, DefaultDecision: kernel.DecisionAllow}
	scoped := kernel.PermissionPolicy{Deny: []string{"@mutating(path:secrets/**)"}, DefaultDecision: kernel.DecisionAllow}
	write := map[string]any{"file_path": "src/main.go", "content": "x"}
	appendArgs := map[string]any{"file_path": "src/main.go", "content": "x", "mode": "append", "expected_offset": 30}
	edit := map[string]any{"file_path": "src/main.go", "old_string": "main()", "new_string": "run()"}
	patch := map[string]any{"file_path": "src/main.go", "diff": "@@ -1,1 +1,1 @@\n-package main\n+package x\n"}
	batch := func(inv ...map[string]any) map[string]any { return map[string]any{"invocations": inv} }
	cases := []struct {
		name    string
		policy  kernel.PermissionPolicy
		tool    string
		args    map[string]any
		changes bool
	}{
		{"write", readOnly, "write", write, false},
		{"write append", readOnly, "write", appendArgs, false},
		{"edit", readOnly, "edit", edit, false},
		{"patch", readOnly, "patch", patch, false},
		{"batch of write, edit and patch", readOnly, "batch", batch(
			map[string]any{"tool": "write", "args": map[string]any{"file_path": "new.txt", "content": "x"}},
			map[string]any{"tool": "edit", "args": edit}, map[string]any{"tool": "patch", "args": patch, "step": 2}), false},
		{"a class scoped to a path: outside it", scoped, "edit", edit, true},
		{"a class scoped to a path: inside it", scoped, "write", map[string]any{"file_path": "secrets/./key.txt", "content": "x"}, false},
		{"the write rule names the write tool only", kernel.PermissionPolicy{Deny: []string{"write"}, DefaultDecision: kernel.DecisionAllow}, "edit", edit, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newGovSession(t, kernel.Governance{Permission: tc.policy}, holeFiles)
			before := snapshot(t, s.Workspace())
			res := s.governed(t, tc.tool, tc.args)
			if changed := !maps.Equal(before, snapshot(t, s.Workspace())); changed != tc.changes {
				t.Fatalf("changed=%v, want %v: exit %d %q", changed, tc.changes, res.ExitCode, res.Output)
			}
			if !tc.changes && !strings.Contains(res.Output, "@mutating") {
				t.Fatalf("the refusal does not name the rule: %q", res.Output)
			}
		})
	}
	// What a read-only session still does.
	s := newGovSession(t, kernel.Governance{Permission: readOnly}, holeFiles)
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"read", map[string]any{"file_path": "src/main.go"}},
		{"grep", map[string]any{"pattern": "main"}},
		{"glob", map[string]any{"pattern": "**"}},
		{"ls", map[string]any{"path": "."}},
		{"edit", map[string]any{"file_path": "src/main.go", "old_string": "main()", "new_string": "run()", "dry_run": true}},
		{"batch", batch(map[string]any{"tool": "read", "args": map[string]any{"file_path": "src/main.go"}})},
	} {
		if res := s.governed(t, c.tool, c.args); res.ExitCode != 0 {
			t.Errorf("%s in a read-only session: %q", c.tool, res.Output)
		}
	}
}
