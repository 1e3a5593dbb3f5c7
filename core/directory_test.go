//go:build !js

package core_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/a3s-lab/code-wasm/core"
	"github.com/a3s-lab/code-wasm/workspace"
	"github.com/a3s-lab/code-wasm/workspace/memfs"
)

func TestOptionsDirectory(t *testing.T) {
	root := t.TempDir()
	s, err := core.New(core.Options{Directory: root})
	if err != nil {
		t.Fatal(err)
	}
	if res, err := s.WriteFile(context.Background(), "d/a.txt", "real\n"); err != nil || res.ExitCode != 0 {
		t.Fatalf("write: %v %+v", err, res)
	}
	if b, err := os.ReadFile(filepath.Join(root, "d", "a.txt")); err != nil || string(b) != "real\n" {
		t.Fatalf("the file on disk holds %q, %v", b, err)
	}
	s.Close()
	if _, err := s.Workspace().Stat(context.Background(), "d/a.txt"); err == nil {
		t.Error("the directory is still open after the session closed")
	}

	ws, _ := workspace.New(memfs.New())
	for _, o := range []core.Options{
		{Directory: filepath.Join(root, "missing")},
		{Directory: filepath.Join(root, "d", "a.txt")},
		{Directory: root, Workspace: ws},
	} {
		if _, err := core.New(o); err == nil {
			t.Errorf("core.New(%+v) succeeded", o)
		} else if !strings.Contains(err.Error(), "Options.") {
			t.Errorf("error %q does not name the option", err)
		}
	}
}
