package core_test

import (
	"context"
	"strings"
	"testing"

	"github.com/a3s-lab/code-wasm/core"
	"github.com/a3s-lab/code-wasm/kernel"
	"github.com/a3s-lab/code-wasm/workspace"
	"github.com/a3s-lab/code-wasm/workspace/memfs"
)

// TestSearchesHonourPathRules: a path-scoped deny or ask rule keeps the
// files it names out of directory-wide searches too. Without it,
// `grep path:"."` showed the contents a `read(path:secrets/**)` rule keeps
// from a named read. Trusted host calls skip the gate and see everything.
func TestSearchesHonourPathRules(t *testing.T) {
	ctx := context.Background()
	files := map[string]string{
		"secrets/key.txt":      "TOKEN=hunter2\n",
		"secrets/deep/old.txt": "TOKEN=old\n",
		"notes/plan.txt":       "TOKEN is in secrets\n",
		"private.env":          "TOKEN=env\n",
		"src/main.go":          "package main // TOKEN\n",
	}
	newSession := func(t *testing.T, p kernel.PermissionPolicy) *core.Session {
		ws, err := workspace.New(memfs.New())
		if err != nil {
			t.Fatal(err)
		}
		for p, c := range files {
			if _, err := ws.WriteFile(ctx, p, []byte(c)); err != nil {
				t.Fatal(err)
			}
		}
		s, err := core.New(core.Options{Workspace: ws, Governance: kernel.Governance{Permission: p}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	tests := []struct {
		name       string
		policy     kernel.PermissionPolicy
		tool       string
		args       map[string]any
		hiddenText []string // must not appear
		shown      []string // must appear
	}{
		{"read rule hides from grep", kernel.PermissionPolicy{Enabled: true, Deny: []string{"read(path:secrets/**)"}, Allow: []string{"*"}},
			"grep", map[string]any{"pattern": "TOKEN", "output_mode": "content"}, []string{"hunter2", "TOKEN=old", "secrets/"}, []string{"notes/plan.txt", "private.env", "src/main.go"}},
		{"grep rule, files_with_matches", kernel.PermissionPolicy{Enabled: true, Deny: []string{"grep(path:secrets/**)", "grep(*.env)"}, Allow: []string{"*"}},
			"grep", map[string]any{"pattern": "TOKEN", "output_mode": "files_with_matches"}, []string{"secrets/", "private.env"}, []string{"notes/plan.txt", "src/main.go"}},
		{"ask rule hides too", kernel.PermissionPolicy{Enabled: true, Ask: []string{"*(path:secrets/**)"}, Allow: []string{"*"}},
			"grep", map[string]any{"pattern": "TOKEN", "output_mode": "count"}, []string{"secrets/"}, []string{"notes/plan.txt"}},
		{"glob", kernel.PermissionPolicy{Enabled: true, Deny: []string{"glob(path:secrets/**)"}, Allow: []string{"*"}},
			"glob", map[string]any{"pattern": "**/*.txt"}, []string{"secrets/"}, []string{"notes/plan.txt"}},
		{"ls of the root", kernel.PermissionPolicy{Enabled: true, Deny: []string{"ls(path:secrets/**)", "ls(path:private.env)"}, Allow: []string{"*"}},
			"ls", map[string]any{"path": "."}, []string{"secrets", "private.env"}, []string{"notes", "src"}},
		{"nested in a batch", kernel.PermissionPolicy{Enabled: true, Deny: []string{"read(path:secrets/**)"}, Allow: []string{"*"}},
			"batch", map[string]any{"invocations": []map[string]any{{"tool": "grep", "args": map[string]any{"pattern": "TOKEN", "output_mode": "content"}}}},
			[]string{"hunter2", "TOKEN=old"}, []string{"notes/plan.txt"}},
		{"read rule does not hide names from glob", kernel.PermissionPolicy{Enabled: true, Deny: []string{"read(path:secrets/**)"}, Allow: []string{"*"}},
			"glob", map[string]any{"pattern": "**/*.txt"}, nil, []string{"secrets/key.txt", "notes/plan.txt"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newSession(t, tc.policy)
			res, err := s.GovernedTool(ctx, tc.tool, tc.args)
			if err != nil {
				t.Fatal(err)
			}
			if res.ExitCode != 0 {
				t.Fatalf("governed %s failed: %s", tc.tool, res.Output)
			}
			for _, h := range tc.hiddenText {
				if strings.Contains(res.Output, h) {
					t.Errorf("governed %s shows %q:\n%s", tc.tool, h, res.Output)
				}
			}
			for _, w := range tc.shown {
				if !strings.Contains(res.Output, w) {
					t.Errorf("governed %s lost %q:\n%s", tc.tool, w, res.Output)
				}
			}
			if len(tc.hiddenText) > 0 && tc.tool != "batch" && res.Metadata["hidden_by_policy"] == nil {
				t.Errorf("metadata does not say entries were hidden: %v", res.Metadata)
			}
			// The trusted control plane skips the gate, and sees it all.
			trusted, err := s.Tool(ctx, tc.tool, tc.args)
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range tc.hiddenText {
				if h != "secrets/" && !strings.Contains(trusted.Output, h) {
					t.Errorf("trusted %s does not show %q:\n%s", tc.tool, h, trusted.Output)
				}
			}
		})
	}
}
