package udiff

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// needBinary skips under js/wasm (no exec there) and fails natively when a
// binary the oracle needs is missing: the oracles must run natively.
func needBinary(t *testing.T, name string) string {
	t.Helper()
	if runtime.GOOS == "js" || runtime.GOOS == "wasip1" {
		t.Skipf("%s oracle: exec is unavailable under %s", name, runtime.GOOS)
	}
	p, err := exec.LookPath(name)
	if err != nil {
		t.Fatalf("%s oracle needs the %s binary on PATH (make deps installs it): %v", name, name, err)
	}
	return p
}

// randomText makes a file from a small line alphabet so that diffs have
// shared context, with the given line ending and final-newline choice.
func randomText(r *rand.Rand, eol string, finalNL bool) string {
	n := r.Intn(40)
	if n == 0 {
		return ""
	}
	words := []string{"alpha", "beta", "gamma", "delta", "", "  indented", "tab\there", "unicode ✓", "}", "{", "return x", "x := 1"}
	var b strings.Builder
	for i := 0; i < n; i++ {
		b.WriteString(words[r.Intn(len(words))])
		if i < n-1 || finalNL {
			b.WriteString(eol)
		}
	}
	return b.String()
}

// mutate derives a second version: deletions, insertions and changes.
func mutate(r *rand.Rand, s, eol string, finalNL bool) string {
	var lines []string
	if s != "" {
		lines = strings.Split(strings.TrimSuffix(s, eol), eol)
	}
	ops := r.Intn(6)
	for i := 0; i < ops; i++ {
		switch k := r.Intn(3); {
		case k == 0 && len(lines) > 0:
			j := r.Intn(len(lines))
			lines = append(lines[:j], lines[j+1:]...)
		case k == 1:
			j := r.Intn(len(lines) + 1)
			lines = append(lines[:j], append([]string{fmt.Sprintf("new %d", r.Intn(100))}, lines[j:]...)...)
		case len(lines) > 0:
			lines[r.Intn(len(lines))] = fmt.Sprintf("changed %d", r.Intn(100))
		}
	}
	if r.Intn(8) == 0 {
		return ""
	}
	if len(lines) == 0 {
		return ""
	}
	out := strings.Join(lines, eol)
	if finalNL {
		out += eol
	}
	return out
}

// TestApplyOracleGNUDiff: whatever GNU `diff -u` prints for a random pair
// of files, Apply applies and reproduces the target byte for byte. Pairs share
// one line-ending convention (patch keeps the file's own ending); the final
// newline varies independently on each side.
func TestApplyOracleGNUDiff(t *testing.T) {
	diffBin := needBinary(t, "diff")
	dir := t.TempDir()
	r := rand.New(rand.NewSource(20261130))
	const pairs = 600
	applied, crlf, noNL, empty := 0, 0, 0, 0
	for i := 0; i < pairs; i++ {
		eol := "\n"
		if i%3 == 0 {
			eol = "\r\n"
		}
		aNL, bNL := r.Intn(4) != 0, r.Intn(4) != 0
		a := randomText(r, eol, aNL)
		b := mutate(r, a, eol, bNL)
		if i%10 == 0 {
			b = randomText(r, eol, bNL) // unrelated content
		}
		pa, pb := filepath.Join(dir, "a"), filepath.Join(dir, "b")
		if err := os.WriteFile(pa, []byte(a), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(pb, []byte(b), 0o644); err != nil {
			t.Fatal(err)
		}
		ctxFlag := []string{"-u", "-U0", "-U1", "-U5"}[i%4]
		out, err := exec.Command(diffBin, ctxFlag, pa, pb).Output()
		var ee *exec.ExitError
		if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 1) {
			t.Fatalf("pair %d: diff failed: %v", i, err)
		}
		if a == b {
			if len(out) != 0 {
				t.Fatalf("pair %d: diff printed output for equal files", i)
			}
			continue
		}
		got, _, perr := Apply([]byte(a), string(out))
		if perr != nil || string(got) != b {
			t.Fatalf("pair %d (%s): patch did not reproduce the target\nbefore %q\nwant   %q\ngot    %q\nerr %v\ndiff:\n%s", i, ctxFlag, a, b, got, perr, out)
		}
		// Our own diff generator must agree with our applier too.
		own := Format("a", "b", []byte(a), []byte(b), 3)
		if got2, _, err := Apply([]byte(a), own); err != nil || string(got2) != b {
			t.Fatalf("pair %d: Format output does not apply: %v\n%s", i, err, own)
		}
		applied++
		if eol == "\r\n" && strings.Contains(a+b, "\r\n") {
			crlf++
		}
		if bytes.Contains(out, []byte(`\ No newline`)) {
			noNL++
		}
		if a == "" || b == "" {
			empty++
		}
	}
	if applied < 500 || crlf < 100 || noNL < 100 || empty < 20 {
		t.Fatalf("oracle coverage too small: applied=%d crlf=%d no-newline=%d empty-side=%d", applied, crlf, noNL, empty)
	}
	t.Logf("applied %d diffs (crlf %d, no-newline %d, empty side %d)", applied, crlf, noNL, empty)
}

// FuzzApply feeds the parser arbitrary diffs (it must fail cleanly or
// produce a result) and checks that a diff of two versions reproduces the
// second byte for byte, whatever their line endings.
func FuzzApply(f *testing.F) {
	f.Add([]byte("a\nb\nc\n"), []byte("a\nB\nc\n"), "@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n")
	f.Add([]byte(""), []byte("x\r\ny\r\n"), "@@ -0,0 +1,2 @@\n+x\r\n+y\r\n")
	f.Add([]byte("a\nb"), []byte("a\nb\n"), "@@ -2 +2 @@\n-b\n\\ No newline at end of file\n+b\n")
	f.Add([]byte("x\r\n"), []byte(""), "--- a\n+++ b\n@@ -1 +0,0 @@\n-x\n")
	f.Add([]byte("1\n2\n3\n4\n5\n6\n7\n8\n9\n"), []byte("1\n2\nX\n4\n5\n6\n7\nY\n9\n"), "@@ -1,0 +1 @@\n+q\n@@ -3 +4 @@\n-3\n+Z\n")
	f.Fuzz(func(t *testing.T, a, b []byte, diff string) {
		orig := append([]byte(nil), a...)
		out, n, err := Apply(a, diff)
		if !bytes.Equal(a, orig) {
			t.Fatal("Apply modified its input")
		}
		if err == nil && n < 1 {
			t.Fatalf("success with %d hunks (output %q)", n, out)
		}
		d := Format("a", "b", a, b, 3)
		if d == "" {
			if !bytes.Equal(a, b) {
				t.Fatal("empty diff for different inputs")
			}
			return
		}
		if CRLFTranslated(a, d) {
			return // a CR-free diff of a CRLF file is read as CRLF lines
		}
		got, _, err := Apply(a, d)
		if err != nil || !bytes.Equal(got, b) {
			t.Fatalf("round trip failed: %v\na=%q\nb=%q\ngot=%q\ndiff:\n%s", err, a, b, got, d)
		}
	})
}
