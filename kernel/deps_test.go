package kernel_test

import (
	"os/exec"
	"runtime"
	"strings"
	"testing"
)

// TestKernelKnowsNoTool: the kernel imports no package that names a tool
// or holds a workspace (workspace, tools, core, ptc); tools come to it
// through the Tool interface and its optional interfaces.
func TestKernelKnowsNoTool(t *testing.T) {
	if runtime.GOOS == "js" {
		t.Skip("needs the go command")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	out, err := exec.Command(goBin, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	const mod = "github.com/a3s-lab/code-wasm/"
	for _, p := range strings.Fields(string(out)) {
		rel, ok := strings.CutPrefix(p, mod)
		if !ok {
			continue
		}
		for _, bad := range []string{"workspace", "tools", "core", "ptc"} {
			if rel == bad || strings.HasPrefix(rel, bad+"/") {
				t.Errorf("kernel depends on %s", p)
			}
		}
	}
}
