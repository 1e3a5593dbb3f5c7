package workspace_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/a3s-lab/code-wasm/workspace"
	"github.com/a3s-lab/code-wasm/workspace/memfs"
)

// walkedFiles is what Files must return: the files a walk visits, in order.
func walkedFiles(t *testing.T, ws *workspace.Workspace, dir string) []string {
	t.Helper()
	var out []string
	err := ws.Walk(context.Background(), dir, func(p string, e workspace.Entry) error {
		if e.Kind != workspace.KindDir {
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestFilesAgreesWithWalk: after every one of 400 random changes (new
// files, overwrites, appends, removals, renames of files and directories,
// new directories), Files of every directory equals the files a walk of it
// visits, in order, with memfs's FileLister and with the walk fallback.
func TestFilesAgreesWithWalk(t *testing.T) {
	ctx := context.Background()
	for name, wrap := range map[string]func(*memfs.FS) workspace.Driver{
		"FileLister": func(f *memfs.FS) workspace.Driver { return f },
		"fallback":   func(f *memfs.FS) workspace.Driver { return plainDriver{f} },
	} {
		t.Run(name, func(t *testing.T) {
			ws, err := workspace.New(wrap(memfs.New()))
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(5, 6))
			names := []string{"a", "b", "a.go", "a-b", "z", "b.txt"}
			randPath := func() string {
				p := names[rng.IntN(len(names))]
				for d := rng.IntN(3); d > 0; d-- {
					p = names[rng.IntN(len(names))] + "/" + p
				}
				return p
			}
			for step := 0; step < 400; step++ {
				p, q := randPath(), randPath()
				var err error
				switch rng.IntN(6) {
				case 0, 1:
					_, err = ws.WriteFile(ctx, p, []byte(fmt.Sprint(step)))
				case 2:
					err = ws.MkdirAll(ctx, p)
				case 3:
					err = ws.Remove(ctx, p)
				case 4:
					err = ws.Rename(ctx, p, q)
				case 5:
					_, err = ws.AppendFile(ctx, p, []byte("+"), "")
				}
				_ = err // many random changes are refused (a file in the way); that is fine
				var dirs []string
				if err := ws.Walk(ctx, ".", func(p string, e workspace.Entry) error {
					if e.Kind == workspace.KindDir {
						dirs = append(dirs, p)
					}
					return nil
				}); err != nil {
					t.Fatal(err)
				}
				for _, d := range append(dirs, ".") {
					got, err := ws.Files(ctx, d)
					if err != nil {
						t.Fatalf("step %d: Files(%q): %v", step, d, err)
					}
					if want := walkedFiles(t, ws, d); !slices.Equal(got, want) {
						t.Fatalf("step %d: Files(%q) = %q, a walk visits %q", step, d, got, want)
					}
				}
			}
			if _, err := ws.Files(ctx, "no/such/dir"); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("Files of a missing directory: %v", err)
			}
			if _, err := ws.WriteFile(ctx, "file.txt", []byte("x")); err != nil {
				t.Fatal(err)
			}
			if _, err := ws.Files(ctx, "file.txt"); !errors.Is(err, workspace.ErrNotDir) {
				t.Errorf("Files of a file: %v", err)
			}
			if _, err := ws.Files(ctx, "../x"); err == nil {
				t.Error("Files of ../x: no error")
			}
		})
	}
}
