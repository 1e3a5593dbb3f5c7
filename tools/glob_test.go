package tools

import (
	"strings"
	"testing"
)

// TestGlobLiteralPrefixIsAFile: when the directory part of a pattern names
// a file, nothing is under it: no match, not an error, and `src/**`
// matches src itself as doublestar does.
func TestGlobLiteralPrefixIsAFile(t *testing.T) {
	ws := newWS(t, map[string]string{"src": "a file\n", "lib/a.go": "package a\n"})
	for _, tc := range []struct {
		pattern, want string
	}{
		{"src/*.go", "No files found matching pattern: src/*.go"},
		{"lib/a.go/*", "No files found matching pattern: lib/a.go/*"},
		{"src/**", "src\n"},
		{"nosuch/*.go", "No files found matching pattern: nosuch/*.go"},
	} {
		res := run(t, ws, "glob", map[string]any{"pattern": tc.pattern})
		if res.ExitCode != 0 || !strings.Contains(res.Output, tc.want) {
			t.Errorf("glob %s: exit %d, %q; want %q", tc.pattern, res.ExitCode, res.Output, tc.want)
		}
	}
}
