package udiff

import (
	"bytes"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// gitCmd runs git in dir with no user or system configuration.
func gitCmd(t *testing.T, git, dir string, args ...string) ([]byte, error) {
	t.Helper()
	c := exec.Command(git, append([]string{"-c", "core.autocrlf=false", "-c", "core.safecrlf=false"}, args...)...)
	c.Dir = dir
	c.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "HOME="+dir)
	var stderr bytes.Buffer
	c.Stderr = &stderr
	out, err := c.Output()
	if err != nil {
		return out, &gitError{err, stderr.String()}
	}
	return out, nil
}

type gitError struct {
	err    error
	stderr string
}

func (e *gitError) Error() string { return e.err.Error() + ": " + e.stderr }

// gitDiff is the diff git itself prints from before to after, with the
// headers of a one-file patch of f.
func gitDiff(t *testing.T, git string, before, after []byte) string {
	t.Helper()
	return gitDiffU(t, git, before, after, "-U3")
}

// gitDiffU is gitDiff with git diff's context flag.
func gitDiffU(t *testing.T, git string, before, after []byte, u string) string {
	t.Helper()
	dir := t.TempDir()
	write(t, filepath.Join(dir, "old"), before)
	write(t, filepath.Join(dir, "new"), after)
	out, err := gitCmd(t, git, dir, "diff", "--no-index", "--no-color", u, "--", "old", "new")
	if err != nil && !strings.Contains(err.Error(), "exit status 1") {
		t.Fatal(err)
	}
	// Keep the hunks; the headers name f (a new file's diff keeps
	// --- /dev/null, as git prints it).
	body := out[bytes.Index(out, []byte("\n@@"))+1:]
	if len(before) == 0 {
		return "--- /dev/null\n+++ b/f\n" + string(body)
	}
	return "--- a/f\n+++ b/f\n" + string(body)
}

func write(t *testing.T, p string, b []byte) {
	t.Helper()
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// gitApply applies diff to a file f holding before with `git apply` and
// returns f afterwards, or git's refusal. The patch tool needs the file to
// exist, so a new file's diff (--- /dev/null) goes to an empty f, which git
// wants absent: for git, an empty f is no f. A diff whose hunks have no
// context at all (diff -U0) is positioned by its headers alone, which git
// does with --unidiff-zero.
func gitApply(t *testing.T, git string, before []byte, diff string) ([]byte, error) {
	t.Helper()
	dir := t.TempDir()
	if !(len(before) == 0 && strings.HasPrefix(diff, "--- /dev/null\n")) {
		write(t, filepath.Join(dir, "f"), before)
	}
	write(t, filepath.Join(dir, "p.diff"), []byte(diff))
	args := []string{"apply"}
	if hunks, _, err := parse(diff); err == nil && !hasContext(hunks) {
		args = append(args, "--unidiff-zero")
	}
	if _, err := gitCmd(t, git, dir, append(args, "--check", "p.diff")...); err != nil {
		return nil, err
	}
	if _, err := gitCmd(t, git, dir, append(args, "p.diff")...); err != nil {
		t.Fatalf("git apply --check passed but git apply failed: %v", err)
	}
	return os.ReadFile(filepath.Join(dir, "f"))
}

func hasContext(hunks []hunk) bool {
	for _, h := range hunks {
		for _, l := range h.lines {
			if l.op == ' ' {
				return true
			}
		}
	}
	return false
}

// sameAsGit applies diff with Apply and with git apply and requires the
// same outcome: the same bytes, or both refusing.
func sameAsGit(t *testing.T, git string, before []byte, diff string) ([]byte, error) {
	t.Helper()
	want, gerr := gitApply(t, git, before, diff)
	got, _, err := Apply(before, diff)
	switch {
	case gerr != nil && err == nil:
		t.Fatalf("git apply refuses (%v) but Apply applied it, giving %q\nbefore %q\ndiff:\n%s", gerr, got, before, diff)
	case gerr == nil && err != nil:
		t.Fatalf("git apply gives %q but Apply refused: %v\nbefore %q\ndiff:\n%s", want, err, before, diff)
	case gerr == nil && !bytes.Equal(got, want):
		t.Fatalf("Apply and git apply differ\nbefore %q\ngit    %q\nApply  %q\ndiff:\n%s", before, want, got, diff)
	}
	return got, err
}

// TestApplyLikeGitApply: the shapes of real commits that an earlier patch
// got wrong (issue 18: replaying ripgrep, bat, fzf and jq history), each
// diff made by git from the two versions and applied by Apply and by real
// git apply, which must agree byte for byte; then the same diff applied
// again to its own result, where both must agree again (refuse, for an
// append at the end of the file).
func TestApplyLikeGitApply(t *testing.T) {
	git := needBinary(t, "git")
	cases := []struct {
		name          string
		before, after string
	}{
		// A real commit adding a file with mixed line endings (it was written all CRLF).
		{"new file with mixed endings", "", "[package]\r\nname = \"x\"\nversion = \"1\"\r\n\r\n[deps]\n"},
		{"new file CRLF without final newline", "", "a\r\nb\r\nc"},
		// CRLF -> LF and back (it was reported applied and left unchanged).
		{"CRLF to LF", "one\r\ntwo\r\nthree\r\n", "one\ntwo\nthree\n"},
		{"LF to CRLF", "one\ntwo\nthree\n", "one\r\ntwo\r\nthree\r\n"},
		{"CRLF to LF in the middle of a file", "1\r\n2\r\n3\r\n4\r\n5\r\n6\r\n7\r\n8\r\n", "1\r\n2\r\n3\r\n4\n5\r\n6\r\n7\r\n8\r\n"},
		// Lines of the other ending added (they were normalised).
		{"CRLF lines added to an LF file", "a\nb\nc\nd\n", "a\nb\nx\r\ny\r\nc\nd\n"},
		{"LF lines added to a CRLF file", "a\r\nb\r\nc\r\nd\r\n", "a\r\nb\r\nx\ny\nc\r\nd\r\n"},
		{"edit inside a mixed file", "a\r\nb\nc\r\nd\ne\r\n", "a\r\nb\nC\r\nd\ne\r\n"},
		// A stray CR inside a line (it was refused as "CR-only line endings").
		{"stray CR inside a line", "x = 1\ny = \"a\rb\"\nz = 3\n", "x = 1\ny = \"ab\"\nz = 3\n"},
		{"stray CR kept, other line edited", "x = 1\ny = \"a\rb\"\nz = 3\n", "x = 2\ny = \"a\rb\"\nz = 3\n"},
		{"CR-only file edited", "a\rb\rc\r", "a\rB\rc\r"},
		// Appends at the end of the file (re-applied, they duplicated the lines).
		{"append at the end", "1\n2\n3\n4\n5\n6\n", "1\n2\n3\n4\n5\n6\n7\n8\n"},
		{"append at the end of a CRLF file", "1\r\n2\r\n3\r\n4\r\n", "1\r\n2\r\n3\r\n4\r\n5\r\n"},
		{"append after a line without newline", "1\n2\n3\n4", "1\n2\n3\n4\n5\n"},
		{"append to a one-line file", "only\n", "only\nmore\n"},
		{"change at the end", "1\n2\n3\n4\n5\n", "1\n2\n3\n4\nfive\n"},
		{"insert at the top", "1\n2\n3\n4\n", "0\n1\n2\n3\n4\n"},
		{"final newline removed", "1\n2\n3\n", "1\n2\n3"},
		{"final newline added", "1\n2\n3", "1\n2\n3\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := gitDiff(t, git, []byte(c.before), []byte(c.after))
			got, err := sameAsGit(t, git, []byte(c.before), d)
			if err != nil || string(got) != c.after {
				t.Fatalf("Apply gave %q, %v; want %q", got, err, c.after)
			}
			// Applied again to its own result: Apply and git apply agree.
			sameAsGit(t, git, got, d)
		})
	}
}

// TestApplyRefusesAppendTwice: an append at the end of a file, applied to
// its own result, is refused with a message that says why and what to do
// (git apply refuses the 14 real diffs of this shape that were accepted).
func TestApplyRefusesAppendTwice(t *testing.T) {
	before := "a\nb\nc\n"
	diff := "--- a/f\n+++ b/f\n@@ -1,3 +1,5 @@\n a\n b\n c\n+d\n+e\n"
	once, _, err := Apply([]byte(before), diff)
	if err != nil || string(once) != "a\nb\nc\nd\ne\n" {
		t.Fatalf("first apply: %q %v", once, err)
	}
	_, _, err = Apply(once, diff)
	if err == nil || !strings.Contains(err.Error(), "must end at the end of the file") || !strings.Contains(err.Error(), "already applied") {
		t.Fatalf("second apply: %v", err)
	}
	// The same hunk with context after it still applies in the middle.
	mid := "--- a/f\n+++ b/f\n@@ -1,3 +1,4 @@\n a\n b\n+x\n c\n"
	if got, _, err := Apply([]byte("a\nb\nc\nd\n"), mid); err != nil || string(got) != "a\nb\nx\nc\nd\n" {
		t.Fatalf("middle insert: %q %v", got, err)
	}
	// A hunk with no context at all (diff -U0) is positioned by its header
	// alone, as with git apply --unidiff-zero.
	if got, _, err := Apply([]byte("a\nb\nc\n"), "@@ -1,0 +2 @@\n+x\n"); err != nil || string(got) != "a\nx\nb\nc\n" {
		t.Fatalf("-U0 insert: %q %v", got, err)
	}
}

// TestApplyLFDiffOnCRLFFile: a diff with no CR at all on a file whose every
// line ends in CRLF is read as CRLF lines (what a model writes from read's
// output, which shows no CRs): the result is what git apply makes of the
// same diff with CRLF lines, and CRLFTranslated says so. A diff with any CR
// applies byte for byte.
func TestApplyLFDiffOnCRLFFile(t *testing.T) {
	git := needBinary(t, "git")
	before := []byte("a\r\nb\r\nc\r\nd\r\n")
	lf := "--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"
	crlf := "--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\r\n-b\r\n+B\r\n c\r\n"
	want, err := gitApply(t, git, before, crlf)
	if err != nil {
		t.Fatal(err)
	}
	if !CRLFTranslated(before, lf) || CRLFTranslated(before, crlf) || CRLFTranslated([]byte("a\nb\r\n"), lf) {
		t.Fatal("CRLFTranslated: only a CR-free diff on an all-CRLF file is translated")
	}
	got, _, err := Apply(before, lf)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("got %q %v, want %q", got, err, want)
	}
	// On a file that mixes endings there is no one ending to read the diff
	// in: the bytes must match, and the message names the line ending.
	_, _, err = Apply([]byte("a\r\nb\r\nc\n"), lf)
	if err == nil || !strings.Contains(err.Error(), "only in its line ending: the file's line ends in CRLF, the diff's in LF") {
		t.Fatalf("mixed file: %v", err)
	}
	_, _, err = Apply([]byte("a\nb\nc\n"), crlf)
	if err == nil || !strings.Contains(err.Error(), "the diff's line ends in CRLF, the file's in LF") {
		t.Fatalf("CRLF diff on an LF file: %v", err)
	}
}

// TestApplyRefusesTwoFiles: a diff of two files (git's shape, or two
// ---/+++ pairs) is refused naming the line where the second file starts
// and saying that patch takes one file per call.
func TestApplyRefusesTwoFiles(t *testing.T) {
	gitShape := "diff --git a/x b/x\nindex 1..2 100644\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+A\n" +
		"diff --git a/y b/y\nindex 3..4 100644\n--- a/y\n+++ b/y\n@@ -1 +1 @@\n-b\n+B\n"
	plain := "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+A\n--- a/y\n+++ b/y\n@@ -1 +1 @@\n-b\n+B\n"
	headersOnly := "diff --git a/x b/x\nold mode 100644\nnew mode 100755\ndiff --git a/y b/y\n--- a/y\n+++ b/y\n@@ -1 +1 @@\n-a\n+A\n"
	for name, d := range map[string]string{"git": gitShape, "plain": plain, "a first file without hunks": headersOnly} {
		_, _, err := Apply([]byte("a\n"), d)
		if err == nil || !regexp.MustCompile(`line \d+: .* starts the diff of a second file; patch changes one file per call`).MatchString(err.Error()) {
			t.Errorf("%s: %v", name, err)
		}
	}
	// A removed line that reads like a header is a body line.
	body := "--- a/x\n+++ b/x\n@@ -1,2 +1 @@\n--- a/y\n-+++ b/y\n+x\n"
	if got, _, err := Apply([]byte("-- a/y\n+++ b/y\n"), body); err != nil || string(got) != "x\n" {
		t.Fatalf("header-like body lines: %q %v", got, err)
	}
}

// TestApplyOracleGitApply: random pairs whose lines end in LF or CRLF at
// random (some with a stray CR inside a line, some without a final
// newline), diffed by git (-U3 and -U1): Apply and git apply agree on the
// diff. Applied again to its own result, Apply never succeeds with bytes
// git apply does not give; it may refuse where git finds the lines at an
// offset (patch has no offset search).
func TestApplyOracleGitApply(t *testing.T) {
	git := needBinary(t, "git")
	r := rand.New(rand.NewSource(20261201))
	words := []string{"alpha", "beta", "gamma", "", "  indented", "a\rb", "}", "return x"}
	text := func() string {
		var b strings.Builder
		n := r.Intn(12)
		for i := 0; i < n; i++ {
			b.WriteString(words[r.Intn(len(words))])
			if i < n-1 || r.Intn(4) != 0 {
				b.WriteString([]string{"\n", "\r\n"}[r.Intn(2)])
			}
		}
		return b.String()
	}
	const pairs = 80
	refusedAgain := 0
	for i := 0; i < pairs; i++ {
		a, b := text(), text()
		if a == b {
			continue
		}
		d := gitDiff(t, git, []byte(a), []byte(b))
		if i%2 == 1 {
			d = gitDiffU(t, git, []byte(a), []byte(b), "-U1")
		}
		got, err := sameAsGit(t, git, []byte(a), d)
		if err != nil || string(got) != b {
			t.Fatalf("pair %d: Apply gave %q, %v; want %q\ndiff:\n%s", i, got, err, b, d)
		}
		again, _, err := Apply(got, d)
		if err != nil {
			refusedAgain++
			continue
		}
		if want, gerr := gitApply(t, git, got, d); gerr != nil || !bytes.Equal(again, want) {
			t.Fatalf("pair %d applied again: Apply gave %q, git apply %q (%v)\ndiff:\n%s", i, again, want, gerr, d)
		}
	}
	t.Logf("%d pairs; applied again to its own result, Apply refused %d", pairs, refusedAgain)
}
