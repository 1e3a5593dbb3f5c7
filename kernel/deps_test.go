package kernel_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
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

// TestKernelNamesNoTool: the kernel's own sources name no tool and no
// tool's argument keys (orchestrators are marked by Orchestrator, touched
// paths come from Toucher or the toolargs fallback).
func TestKernelNamesNoTool(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	bad := regexp.MustCompile(`"batch"|"program"|file_path`)
	n := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		n++
		for i, line := range strings.Split(string(b), "\n") {
			if bad.MatchString(line) {
				t.Errorf("%s:%d names a tool or its argument: %s", f, i+1, strings.TrimSpace(line))
			}
		}
	}
	if n == 0 {
		t.Fatal("no kernel sources found")
	}
}
