package core_test

import (
	"testing"

	"github.com/a3s-lab/code-wasm/core"
	"github.com/a3s-lab/code-wasm/internal/testkit"
	"github.com/a3s-lab/code-wasm/kernel"
)

// newSession is a core session under g over a memory workspace holding
// files, closed when the test ends.
func newSession(t testing.TB, g kernel.Governance, files map[string]string) *core.Session {
	t.Helper()
	s, err := core.New(core.Options{Workspace: testkit.Workspace(t, files), Governance: g})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}
