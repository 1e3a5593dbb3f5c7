package testkit

import (
	"context"
	"errors"
	"io/fs"
	"testing"

	"github.com/a3s-lab/code-wasm/kernel"
	"github.com/a3s-lab/code-wasm/workspace"
	"github.com/a3s-lab/code-wasm/workspace/memfs"
)

// Workspace returns a memory workspace holding files (workspace.Seed).
func Workspace(t testing.TB, files map[string]string) *workspace.Workspace {
	t.Helper()
	ws, err := workspace.New(memfs.New())
	if err != nil {
		t.Fatal(err)
	}
	if err := workspace.Seed(context.Background(), ws, files); err != nil {
		t.Fatal(err)
	}
	return ws
}

// Snapshot reads every file of ws (path → content) and names every
// directory ("dir/" → ""), so a test can check that a refused call changed
// nothing.
func Snapshot(t testing.TB, ws *workspace.Workspace) map[string]string {
	t.Helper()
	ctx := context.Background()
	out := map[string]string{}
	err := ws.Walk(ctx, ".", func(p string, e workspace.Entry) error {
		if e.Kind == workspace.KindDir {
			out[p+"/"] = ""
			return nil
		}
		b, _, err := ws.ReadFile(ctx, p)
		if err != nil {
			return err
		}
		out[p] = string(b)
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	return out
}

// KindOf is r's error type, "" for a success.
func KindOf(r *kernel.Result) kernel.ErrorType {
	if r.ErrorKind == nil {
		return ""
	}
	return r.ErrorKind.Type
}
