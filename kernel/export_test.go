package kernel

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// memLoader serves remote schemas from memory (the test suite's remotes).
type memLoader map[string][]byte

func (m memLoader) Load(url string) (any, error) {
	b, ok := m[url]
	if !ok {
		return nil, fmt.Errorf("no remote %s", url)
	}
	return jsonUnmarshal(b)
}

// ValidateWithRemotes validates inst against schema with the kernel's
// validator, serving remote $refs from remotes.
func ValidateWithRemotes(schema, inst json.RawMessage, remotes map[string][]byte) *Error {
	c := newSchemaCache()
	c.loader = memLoader(remotes)
	return validateWith(c, "suite", schema, inst, false)
}

// SchemaCacheLen reports how many distinct schemas the kernel's cache has seen.
func (k *Kernel) SchemaCacheLen() int { return k.schemas.Len() }

// SuiteDir is the JSON-Schema test suite, next to the repository.
const SuiteDir = "../../shared/data/json-schema-test-suite"

// SuiteGroup is one schema of the suite's draft 2020-12 files with its cases.
type SuiteGroup struct {
	File        string          `json:"-"`
	Description string          `json:"description"`
	Schema      json.RawMessage `json:"schema"`
	Tests       []struct {
		Description string          `json:"description"`
		Data        json.RawMessage `json:"data"`
		Valid       bool            `json:"valid"`
	} `json:"tests"`
}

// ReadSuite reads every required draft 2020-12 group (optional/ excluded);
// it skips t when the suite is not next to the repository.
func ReadSuite(t testing.TB) []SuiteGroup {
	t.Helper()
	if _, err := os.Stat(SuiteDir); err != nil {
		t.Skipf("JSON-Schema test suite not found at %s (%v); skipping", SuiteDir, err)
	}
	files, _ := filepath.Glob(filepath.Join(SuiteDir, "tests", "draft2020-12", "*.json"))
	if len(files) == 0 {
		t.Fatal("no draft2020-12 test files")
	}
	var all []SuiteGroup
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var gs []SuiteGroup
		if err := json.Unmarshal(b, &gs); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for i := range gs {
			gs[i].File = filepath.Base(f)
		}
		all = append(all, gs...)
	}
	return all
}
