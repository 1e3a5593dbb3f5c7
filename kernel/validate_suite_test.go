package kernel_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/a3s-lab/code-wasm/kernel"
)

// TestSchemaSuiteDraft2020 runs every required draft 2020-12 case
// (optional/ excluded) through the kernel's validator; remote $refs are
// served from the suite's remotes directory, in memory.
func TestSchemaSuiteDraft2020(t *testing.T) {
	groups := kernel.ReadSuite(t)
	remotes := map[string][]byte{}
	rdir := filepath.Join(kernel.SuiteDir, "remotes")
	err := filepath.WalkDir(rdir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(rdir, p)
		remotes["http://localhost:1234/"+filepath.ToSlash(rel)] = b
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	cases := 0
	for _, g := range groups {
		for _, tc := range g.Tests {
			cases++
			e := kernel.ValidateWithRemotes(g.Schema, tc.Data, remotes)
			if got := e == nil; got != tc.Valid {
				t.Errorf("%s: %s / %s: valid=%v, want %v (%v)", g.File, g.Description, tc.Description, got, tc.Valid, e)
			}
		}
	}
	t.Logf("%d required draft 2020-12 cases checked", cases)
	if cases < 1000 {
		t.Errorf("only %d cases found; the suite looks incomplete", cases)
	}
}
