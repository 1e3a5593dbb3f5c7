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

func TestResolveLengthLimits(t *testing.T) {
	name255 := strings.Repeat("n", workspace.MaxNameBytes)
	deep := strings.Repeat(name255+"/", 16) // 16*256 = 4096 bytes with the slashes
	tests := []struct {
		name    string
		in      string
		ok      bool
		mention string // the error must contain this
	}{
		{"name at the limit", name255, true, ""},
		{"name over the limit", name255 + "x", false, "limit is 255 bytes"},
		{"name over the limit, multibyte", strings.Repeat("é", 128), false, "256 bytes long"},
		{"long name deep inside", "a/" + name255 + "x/b.txt", false, "limit is 255 bytes"},
		{"path at the limit", deep[:len(deep)-2], true, ""},
		{"path over the limit", deep + "x", false, "the limit is 4096 bytes"},
		{"long input that resolves short", strings.Repeat("a/../", 2000) + "x", true, ""},
		{"long name removed by dotdot", name255 + "xx/../ok", true, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := workspace.Resolve(tc.in)
			if tc.ok {
				if err != nil {
					t.Fatalf("Resolve: %v", err)
				}
				if len(got) > workspace.MaxPathBytes {
					t.Fatalf("resolved to %d bytes", len(got))
				}
				return
			}
			if !errors.Is(err, workspace.ErrInvalidPath) || !strings.Contains(err.Error(), tc.mention) {
				t.Fatalf("Resolve = %q, %v; want ErrInvalidPath mentioning %q", got, err, tc.mention)
			}
			if len(err.Error()) > 300 {
				t.Errorf("error is %d bytes: it should not echo the whole path", len(err.Error()))
			}
		})
	}
}

// TestDirectoryShapedPaths: a path written as a directory ("x/", "x/.")
// never names a file for the workspace's file operations.
func TestDirectoryShapedPaths(t *testing.T) {
	ctx := context.Background()
	newWS := func(t *testing.T) *workspace.Workspace {
		ws, err := workspace.New(memfs.New())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ws.WriteFile(ctx, "a.txt", []byte("A\n")); err != nil {
			t.Fatal(err)
		}
		if err := ws.MkdirAll(ctx, "src"); err != nil {
			t.Fatal(err)
		}
		return ws
	}
	writes := []struct {
		name string
		op   func(ws *workspace.Workspace, p string) error
	}{
		{"WriteFile", func(ws *workspace.Workspace, p string) error { _, err := ws.WriteFile(ctx, p, []byte("x")); return err }},
		{"PutFile", func(ws *workspace.Workspace, p string) error { return ws.PutFile(ctx, p, []byte("x")) }},
		{"WriteFileIfVersion", func(ws *workspace.Workspace, p string) error {
			_, err := ws.WriteFileIfVersion(ctx, p, []byte("x"), workspace.VersionOf([]byte("A\n")))
			return err
		}},
		{"AppendFile", func(ws *workspace.Workspace, p string) error {
			_, err := ws.AppendFile(ctx, p, []byte("x"), "")
			return err
		}},
	}
	for _, w := range writes {
		for _, p := range []string{"newdir/", "a.txt/", `a.txt\`, "src/", "a.txt/.", "new/sub/..", "."} {
			t.Run(w.name+"/"+p, func(t *testing.T) {
				ws := newWS(t)
				err := w.op(ws, p)
				if !errors.Is(err, workspace.ErrInvalidPath) {
					t.Fatalf("%s(%q) = %v; want ErrInvalidPath", w.name, p, err)
				}
				if p != "." && !strings.Contains(err.Error(), "so it names a directory") {
					t.Errorf("error %q does not say why", err)
				}
				if _, err := ws.Stat(ctx, "newdir"); !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("newdir exists after a refused write: %v", err)
				}
				if _, err := ws.Stat(ctx, "new"); !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("new exists after a refused write: %v", err)
				}
				if b, _, _ := ws.ReadFile(ctx, "a.txt"); string(b) != "A\n" {
					t.Errorf("a.txt = %q after a refused write", b)
				}
			})
		}
	}
	reads := []struct {
		path string
		want error
	}{
		{"a.txt/", workspace.ErrNotDir},
		{"a.txt/.", workspace.ErrNotDir},
		{`a.txt\`, workspace.ErrNotDir},
		{"src/", workspace.ErrIsDir},
		{"nope/", fs.ErrNotExist},
	}
	for _, r := range reads {
		t.Run("read/"+r.path, func(t *testing.T) {
			ws := newWS(t)
			_, _, err := ws.ReadFile(ctx, r.path)
			if !errors.Is(err, r.want) {
				t.Errorf("ReadFile(%q) = %v; want %v", r.path, err, r.want)
			}
			_, err = ws.ReadLines(ctx, r.path, 0, 0)
			if !errors.Is(err, r.want) {
				t.Errorf("ReadLines(%q) = %v; want %v", r.path, err, r.want)
			}
			if err != nil && !strings.HasPrefix(err.Error(), "read "+r.path+":") {
				t.Errorf("error %q does not name the read and the path as given", err)
			}
		})
	}
	t.Run("directory operations accept a trailing slash", func(t *testing.T) {
		ws := newWS(t)
		if _, err := ws.ReadDir(ctx, "src/"); err != nil {
			t.Errorf("ReadDir(src/): %v", err)
		}
		if err := ws.MkdirAll(ctx, "made/"); err != nil {
			t.Errorf("MkdirAll(made/): %v", err)
		}
		if err := ws.Walk(ctx, "src/", func(string, workspace.Entry) error { return nil }); err != nil {
			t.Errorf("Walk(src/): %v", err)
		}
		if b, _, err := ws.ReadFile(ctx, "a.txt"); err != nil || string(b) != "A\n" {
			t.Errorf("ReadFile(a.txt) = %q, %v", b, err)
		}
	})
}
