package workspace_test

import (
	"context"
	"errors"
	"io/fs"
	"testing"

	"github.com/a3s-lab/code-wasm/workspace"
	"github.com/a3s-lab/code-wasm/workspace/memfs"
)

// noDataReader hides memfs's DataReader, so ReadData takes ReadFile.
type noDataReader struct{ workspace.Driver }

// TestReadDataAgreesWithReadFile: ReadData gives ReadFile's bytes and
// ReadFile's errors, with and without the driver's DataReader.
func TestReadDataAgreesWithReadFile(t *testing.T) {
	ctx := context.Background()
	for name, wrap := range map[string]func(*memfs.FS) workspace.Driver{
		"DataReader": func(f *memfs.FS) workspace.Driver { return f },
		"fallback":   func(f *memfs.FS) workspace.Driver { return noDataReader{f} },
	} {
		t.Run(name, func(t *testing.T) {
			m := memfs.New()
			for p, c := range map[string]string{"a.txt": "alpha\n", "d/b.txt": "beta", "empty": ""} {
				if err := m.PutFile(ctx, p, []byte(c)); err != nil {
					t.Fatal(err)
				}
			}
			ws, err := workspace.New(wrap(m))
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range []string{"a.txt", "./d//b.txt", "empty", "d", ".", "missing", "a.txt/", "a.txt/x", "../a.txt", "d/"} {
				got, gerr := ws.ReadData(ctx, p)
				want, _, werr := ws.ReadFile(ctx, p)
				if string(got) != string(want) || (gerr == nil) != (werr == nil) {
					t.Errorf("ReadData(%q) = %q, %v; ReadFile gave %q, %v", p, got, gerr, want, werr)
					continue
				}
				if werr != nil && gerr.Error() != werr.Error() {
					t.Errorf("ReadData(%q) error %q, ReadFile's %q", p, gerr, werr)
				}
				for _, target := range []error{fs.ErrNotExist, workspace.ErrIsDir, workspace.ErrNotDir} {
					if errors.Is(gerr, target) != errors.Is(werr, target) {
						t.Errorf("ReadData(%q): errors.Is(%v) differs from ReadFile's", p, target)
					}
				}
			}
			cancelled, cancel := context.WithCancel(ctx)
			cancel()
			if _, err := ws.ReadData(cancelled, "a.txt"); !errors.Is(err, context.Canceled) {
				t.Errorf("ReadData with a cancelled context: %v", err)
			}
		})
	}
}
