//go:build !js

package dirfs_test

import (
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/a3s-lab/code-wasm/workspace/dirfs"
)

// extraSteps: 50 random steps per extra natively, not the suite's 150.
// Every step is real file-system calls (os.Root opens a path one
// component at a time), and with -race on the shared machine the
// package took 482 s at 150, most of it in the extras; their Go code
// (FS) is the same on both hosts.
const extraSteps = 50

// openDir opens root natively (os.Root) and closes it after the test.
func openDir(t testing.TB, root string) *dirfs.FS {
	t.Helper()
	d, err := dirfs.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// startSwapper points the link sw at each target in turn, atomically
// (a new link renamed over it), until stop, which returns the swaps made.
func startSwapper(t *testing.T, sw string, targets ...string) (stop func() int64) {
	quit, done := make(chan struct{}), make(chan struct{})
	var swaps atomic.Int64
	tmp := filepath.Join(filepath.Dir(sw), "sw.tmp")
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-quit:
				return
			default:
			}
			os.Remove(tmp)
			if os.Symlink(targets[i%len(targets)], tmp) == nil && os.Rename(tmp, sw) == nil {
				swaps.Add(1)
			}
		}
	}()
	return func() int64 {
		close(quit)
		<-done
		return swaps.Load()
	}
}

func TestOpenRefusesBadRoots(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	os.WriteFile(file, []byte("x"), 0o644)
	for _, root := range []string{filepath.Join(dir, "missing"), file} {
		if d, err := dirfs.Open(root); err == nil {
			d.Close()
			t.Errorf("Open(%q) succeeded", root)
		} else {
			t.Log(err)
		}
	}
}
