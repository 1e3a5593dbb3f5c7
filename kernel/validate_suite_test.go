package kernel_test

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/a3s-lab/code-wasm/kernel"
)

// suiteDir is the JSON-Schema test suite, next to the repository.
const suiteDir = "../../shared/data/json-schema-test-suite"

// TestSchemaSuiteDraft2020 runs every required draft 2020-12 case
// (optional/ excluded) through the kernel's validator; remote $refs are
// served from the suite's remotes directory, in memory.
func TestSchemaSuiteDraft2020(t *testing.T) {
	if _, err := os.Stat(suiteDir); err != nil {
		t.Skipf("JSON-Schema test suite not found at %s (%v); skipping", suiteDir, err)
	}
	remotes := map[string][]byte{}
	rdir := filepath.Join(suiteDir, "remotes")
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
	files, _ := filepath.Glob(filepath.Join(suiteDir, "tests", "draft2020-12", "*.json"))
	if len(files) == 0 {
		t.Fatal("no draft2020-12 test files")
	}
	cases := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var groups []struct {
			Description string          `json:"description"`
			Schema      json.RawMessage `json:"schema"`
			Tests       []struct {
				Description string          `json:"description"`
				Data        json.RawMessage `json:"data"`
				Valid       bool            `json:"valid"`
			} `json:"tests"`
		}
		if err := json.Unmarshal(b, &groups); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, g := range groups {
			for _, tc := range g.Tests {
				cases++
				e := kernel.ValidateWithRemotes(g.Schema, tc.Data, remotes)
				if got := e == nil; got != tc.Valid {
					t.Errorf("%s: %s / %s: valid=%v, want %v (%v)", filepath.Base(f), g.Description, tc.Description, got, tc.Valid, e)
				}
			}
		}
	}
	t.Logf("%d required draft 2020-12 cases checked", cases)
	if cases < 1000 {
		t.Errorf("only %d cases found; the suite looks incomplete", cases)
	}
}
