package tools

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestGrepCRLF (B14): in a CRLF file a line is matched as shown, without
// its '\r', so `$` matches before "\r\n" — ripgrep --crlf's answer, which
// the test checks against rg itself when it is installed.
func TestGrepCRLF(t *testing.T) {
	files := map[string]string{
		"crlf.txt":  "foo\r\nbar\r\nfoo bar\r\n\r\nend",
		"lf.txt":    "foo\nbar\n\nend\n",
		"mixed.txt": "foo\r\nfoo\nbar\r\n",
	}
	tests := []struct {
		pattern string
		want    map[string]int // file -> matching lines
	}{
		{"foo$", map[string]int{"crlf.txt": 1, "lf.txt": 1, "mixed.txt": 2}},
		{"^bar$", map[string]int{"crlf.txt": 1, "lf.txt": 1, "mixed.txt": 1}},
		{"bar$", map[string]int{"crlf.txt": 2, "lf.txt": 1, "mixed.txt": 1}},
		{"^$", map[string]int{"crlf.txt": 1, "lf.txt": 1}},
		{"r$", map[string]int{"crlf.txt": 2, "lf.txt": 1, "mixed.txt": 1}},
		{"end$", map[string]int{"crlf.txt": 1, "lf.txt": 1}},
	}
	ws := newWS(t, files)
	rg, _ := exec.LookPath("rg")
	dir := t.TempDir()
	for p, c := range files {
		if err := os.WriteFile(filepath.Join(dir, p), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range tests {
		t.Run(tc.pattern, func(t *testing.T) {
			res := run(t, ws, "grep", map[string]any{"pattern": tc.pattern, "output_mode": "count"})
			got := map[string]int{}
			for _, l := range strings.Split(res.Output, "\n") {
				if f, n, ok := strings.Cut(l, ": "); ok {
					if c, err := strconv.Atoi(strings.TrimSuffix(n, " matching line(s)")); err == nil {
						got[f] = c
					}
				}
			}
			if len(got) != len(tc.want) {
				t.Fatalf("grep %q counts %v; want %v (%s)", tc.pattern, got, tc.want, res.Output)
			}
			for f, n := range tc.want {
				if got[f] != n {
					t.Errorf("grep %q in %s: %d; want %d", tc.pattern, f, got[f], n)
				}
			}
			if rg == "" {
				return
			}
			cmd := exec.Command(rg, "--crlf", "--no-config", "--no-ignore", "-c", "-e", tc.pattern, ".")
			cmd.Dir = dir
			out, _ := cmd.Output()
			for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
				f, n, ok := strings.Cut(strings.TrimPrefix(strings.TrimSuffix(l, "\r"), "./"), ":") // --crlf ends its own lines in CRLF
				if !ok {
					continue
				}
				if c, _ := strconv.Atoi(n); got[f] != c {
					t.Errorf("grep %q in %s: %d; rg --crlf says %d (line %q)", tc.pattern, f, got[f], c, l)
				}
			}
		})
	}
	t.Run("content mode shows the line without CR", func(t *testing.T) {
		res := run(t, ws, "grep", map[string]any{"pattern": "^bar$", "path": "crlf.txt"})
		if res.ExitCode != 0 || !strings.Contains(res.Output, ":2:bar\n") || strings.Contains(res.Output, "\r") {
			t.Errorf("output %q", res.Output)
		}
	})
}
