package workspace_test

import (
	"context"
	"errors"
	"io/fs"
	"strings"
	"testing"

	"github.com/a3s-lab/code-wasm/workspace"
	"github.com/a3s-lab/code-wasm/workspace/memfs"
)

func TestSeed(t *testing.T) {
	ctx := context.Background()
	ws, err := workspace.New(memfs.New())
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{"a.txt": "one\n", "d/e/b.txt": "two\n", "./c.txt": "", "d/../f.txt": "four"}
	if err := workspace.Seed(ctx, ws, files); err != nil {
		t.Fatal(err)
	}
	for n, want := range map[string]string{"a.txt": "one\n", "d/e/b.txt": "two\n", "c.txt": "", "f.txt": "four"} {
		got, _, err := ws.ReadFile(ctx, n)
		if err != nil || string(got) != want {
			t.Errorf("%s: got %q, %v; want %q", n, got, err, want)
		}
	}
	// Bad keys are refused by name; the files before them (in path
	// order) are written, the ones after are not.
	for _, bad := range []string{"../out.txt", "/etc/x", "dir/", ""} {
		ws, err := workspace.New(memfs.New())
		if err != nil {
			t.Fatal(err)
		}
		err = workspace.Seed(ctx, ws, map[string]string{bad: "x", "~late.txt": "y"})
		if err == nil || !strings.Contains(err.Error(), `files["`+bad+`"]`) {
			t.Errorf("Seed with key %q: err %v; want one naming the key", bad, err)
		}
		if _, _, err := ws.ReadFile(ctx, "~late.txt"); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("Seed with key %q went on after it: %v", bad, err)
		}
	}
}
