package repocheck

import (
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
)

// TestWasmLinksNoHeavyStd: packages cut from the wasm for size stay out
// (docs: RATIONALE "Why does the project have its own SHA-256", "Why does
// the JSON-Schema fork hold numbers as decimals"). Importing crypto/sha256
// links the FIPS 140 module (about 50 KB gzip), math/big about 65 KB; the
// error names the importer. Use internal/digest and the fork's decimal.
func TestWasmLinksNoHeavyStd(t *testing.T) {
	if runtime.GOOS == "js" {
		t.Skip("needs the go command")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	for _, tags := range []string{"", "codewasm_core"} {
		cmd := exec.Command(goBin, "list", "-deps", "-tags", tags, "-f", "{{.ImportPath}}:{{join .Imports \" \"}}", "./wasm")
		cmd.Dir = moduleRoot(t)
		cmd.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list -deps ./wasm (tags %q): %v", tags, err)
		}
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			pkg, imports, _ := strings.Cut(line, ":")
			for _, imp := range strings.Fields(imports) {
				isCrypto := imp == "crypto" || strings.HasPrefix(imp, "crypto/")
				if imp == "math/big" || isCrypto && !strings.HasPrefix(pkg, "crypto") {
					t.Errorf("the wasm (tags %q) links %s, imported by %s", tags, imp, pkg)
				}
			}
		}
	}
}
