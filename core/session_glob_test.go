package core_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/a3s-lab/code-wasm/core"
	"github.com/a3s-lab/code-wasm/kernel"
	"github.com/a3s-lab/code-wasm/workspace"
	"github.com/a3s-lab/code-wasm/workspace/memfs"
)

// TestGlobReturnsEveryPath (B8): Session.Glob pages through the tool until
// done, instead of returning its first page; past MaxGlobPaths it fails
// with a message saying what to do.
func TestGlobReturnsEveryPath(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name    string
		files   int
		wantErr bool
	}{
		{"none", 0, false},
		{"one page", 999, false},
		{"page boundary", 2000, false},
		{"several pages", 2500, false},
		{"at the bound", core.MaxGlobPaths, false},
		{"over the bound", core.MaxGlobPaths + 1, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ws, err := workspace.New(memfs.New())
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < tc.files; i++ {
				if err := ws.PutFile(ctx, fmt.Sprintf("d%02d/f%05d.txt", i%37, i), nil); err != nil {
					t.Fatal(err)
				}
			}
			if err := ws.PutFile(ctx, "other.md", nil); err != nil {
				t.Fatal(err)
			}
			s, err := core.New(core.Options{Workspace: ws})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			paths, err := s.Glob(ctx, "**/*.txt")
			if tc.wantErr {
				var te *core.ToolError
				if !errors.As(err, &te) || te.Kind() == nil || te.Kind().Type != kernel.ErrInvalidArgument ||
					!strings.Contains(err.Error(), "narrow the pattern") || !strings.Contains(err.Error(), fmt.Sprint(tc.files)) {
					t.Fatalf("Glob over the bound = %d paths, %v", len(paths), err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(paths) != tc.files {
				t.Fatalf("Glob returned %d paths, want %d", len(paths), tc.files)
			}
			seen := map[string]bool{}
			for i, p := range paths {
				if seen[p] || !strings.HasSuffix(p, ".txt") || (i > 0 && paths[i-1] >= p) {
					t.Fatalf("path %d %q: duplicate, unsorted or not matching", i, p)
				}
				seen[p] = true
			}
		})
	}
}

// TestProgramGlobReturnsEveryPath (B8): ctx.glob in a program returns every
// match, as one governed ctx call; past the bound the script gets an error
// it can catch, saying how to narrow or page.
func TestProgramGlobReturnsEveryPath(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		files int
		want  string // in the output
	}{
		{"several pages", 2500, `"n": 2500`},
		{"over the bound", 10001, "narrow the pattern"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws, err := workspace.New(memfs.New())
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < tc.files; i++ {
				if err := ws.PutFile(ctx, fmt.Sprintf("d%02d/f%05d.txt", i%37, i), nil); err != nil {
					t.Fatal(err)
				}
			}
			s, err := core.New(core.Options{Workspace: ws})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			src := `async function run(ctx) {
				try {
					const p = await ctx.glob('**/*.txt');
					return { n: p.length, unique: new Set(p).size, calls: 1 };
				} catch (e) { return { error: String(e && e.message || e) }; }
			}`
			res, err := s.Tool(ctx, "program", map[string]any{"type": "script", "source": src})
			if err != nil {
				t.Fatal(err)
			}
			if res.ExitCode != 0 || !strings.Contains(res.Output, tc.want) {
				t.Fatalf("exit %d output %s", res.ExitCode, res.Output)
			}
			if strings.Contains(tc.want, "n:") && !strings.Contains(res.Output, fmt.Sprintf(`"unique": %d`, tc.files)) {
				t.Errorf("duplicates in %s", res.Output)
			}
			if !strings.Contains(res.Output, "Tool calls (1)") {
				t.Errorf("ctx.glob counted as more than one call: %s", res.Output)
			}
		})
	}
}
