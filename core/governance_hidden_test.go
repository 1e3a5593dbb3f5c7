package core_test

import (
	"context"
	"encoding/json"
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
		"config/prod.env":      "TOKEN=prodenv\n",
		"my.env/readme.txt":    "TOKEN readme\n",
	}
	tests := []struct {
		name       string
		policy     kernel.PermissionPolicy
		tool       string
		args       map[string]any
		hiddenText []string // must not appear
		shown      []string // must appear
	}{
		{"read rule hides from grep", kernel.PermissionPolicy{Deny: []string{"read(path:secrets/**)"}, Allow: []string{"*"}},
			"grep", map[string]any{"pattern": "TOKEN", "output_mode": "content"}, []string{"hunter2", "TOKEN=old", "secrets/"}, []string{"notes/plan.txt", "private.env", "src/main.go"}},
		{"grep rule, files_with_matches", kernel.PermissionPolicy{Deny: []string{"grep(path:secrets/**)", "grep(*.env)"}, Allow: []string{"*"}},
			"grep", map[string]any{"pattern": "TOKEN", "output_mode": "files_with_matches"}, []string{"secrets/", "private.env"}, []string{"notes/plan.txt", "src/main.go"}},
		{"ask rule hides too", kernel.PermissionPolicy{Ask: []string{"*(path:secrets/**)"}, Allow: []string{"*"}},
			"grep", map[string]any{"pattern": "TOKEN", "output_mode": "count"}, []string{"secrets/"}, []string{"notes/plan.txt"}},
		{"glob", kernel.PermissionPolicy{Deny: []string{"glob(path:secrets/**)"}, Allow: []string{"*"}},
			"glob", map[string]any{"pattern": "**/*.txt"}, []string{"secrets/"}, []string{"notes/plan.txt"}},
		{"ls of the root", kernel.PermissionPolicy{Deny: []string{"ls(path:secrets/**)", "ls(path:private.env)"}, Allow: []string{"*"}},
			"ls", map[string]any{"path": "."}, []string{"secrets", "private.env"}, []string{"notes", "src"}},
		{"nested in a batch", kernel.PermissionPolicy{Deny: []string{"read(path:secrets/**)"}, Allow: []string{"*"}},
			"batch", map[string]any{"invocations": []map[string]any{{"tool": "grep", "args": map[string]any{"pattern": "TOKEN", "output_mode": "content"}}}},
			[]string{"hunter2", "TOKEN=old"}, []string{"notes/plan.txt"}},
		{"grep of the hidden file itself", kernel.PermissionPolicy{Deny: []string{"read(path:secrets/**)"}, Allow: []string{"*"}},
			"grep", map[string]any{"pattern": "TOKEN", "path": "secrets/key.txt"}, []string{"hunter2"}, []string{"No matches"}},
		// A search hides exactly what the rule would deny a call naming the
		// path: a bare '*' crosses '/', as in Decide; a directory the rule
		// names does not hide files the rule does not name.
		{"bare pattern as Decide matches it", kernel.PermissionPolicy{Deny: []string{"read(*.env)"}, Allow: []string{"*"}},
			"grep", map[string]any{"pattern": "TOKEN", "output_mode": "files_with_matches"}, []string{"prod.env", "private.env"}, []string{"my.env/readme.txt", "notes/plan.txt"}},
		{"one level only", kernel.PermissionPolicy{Deny: []string{"read(path:secrets/*)"}, Allow: []string{"*"}},
			"grep", map[string]any{"pattern": "TOKEN", "output_mode": "files_with_matches"}, []string{"secrets/key.txt"}, []string{"secrets/deep/old.txt"}},
		{"a rule naming a directory", kernel.PermissionPolicy{Deny: []string{"glob(path:secrets)"}, Allow: []string{"*"}},
			"glob", map[string]any{"pattern": "secrets/*"}, nil, []string{"secrets/key.txt"}},
		{"read rule does not hide names from glob", kernel.PermissionPolicy{Deny: []string{"read(path:secrets/**)"}, Allow: []string{"*"}},
			"glob", map[string]any{"pattern": "**/*.txt"}, nil, []string{"secrets/key.txt", "notes/plan.txt"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newSession(t, kernel.Governance{Permission: tc.policy}, files)
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

// TestSearchHidesWhatDecideDenies: for each of several read rules, a
// governed grep of "." leaves out exactly the files a read naming the file
// would be denied.
func TestSearchHidesWhatDecideDenies(t *testing.T) {
	ctx := context.Background()
	files := []string{"a.env", "x/b.env", "x/y/c.env", "my.env/d.txt", "secrets/k", "secrets/deep/k", "secretsX/k", "src/s.go", "src/a/b/t.go"}
	rules := []string{"read(*.env)", "read(path:*.env)", "read(path:**/*.env)", "read(path:secrets/*)", "read(path:secrets/**)",
		"read(secrets)", "read(secrets*)", "read(path:src/**/*.go)", "read(src/*)", "*(path:x/**)"}
	for _, rule := range rules {
		t.Run(rule, func(t *testing.T) {
			ws, err := workspace.New(memfs.New())
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range files {
				if _, err := ws.WriteFile(ctx, f, []byte("TOKEN\n")); err != nil {
					t.Fatal(err)
				}
			}
			policy := kernel.PermissionPolicy{Deny: []string{rule}, Allow: []string{"*"}}
			s, err := core.New(core.Options{Workspace: ws, Governance: kernel.Governance{Permission: policy}})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			res, err := s.GovernedTool(ctx, "grep", map[string]any{"pattern": "TOKEN", "output_mode": "files_with_matches"})
			if err != nil || res.ExitCode != 0 {
				t.Fatalf("grep: %v %v", err, res)
			}
			shown := map[string]bool{}
			for _, l := range strings.Split(res.Output, "\n") {
				shown[l] = true
			}
			for _, f := range files {
				b, _ := json.Marshal(map[string]any{"file_path": f})
				d, _ := policy.Decide("read", b)
				if denied := d == kernel.DecisionDeny; denied == shown[f] {
					t.Errorf("%s: read of %s denied=%v, but grep shows it=%v", rule, f, denied, shown[f])
				}
			}
		})
	}
}
