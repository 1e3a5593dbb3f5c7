package tools

import (
	"fmt"
	"strings"
	"testing"
)

// TestPageAfterTheLast (C23): a cursor equal to the total is a clean "no
// more" answer, not "0 of N shown, starting at item N+1".
func TestPageAfterTheLast(t *testing.T) {
	files := map[string]string{}
	for i := 0; i < 30; i++ {
		files[fmt.Sprintf("d/f%02d.txt", i)] = "hit\n"
	}
	tests := []struct {
		tool string
		args map[string]any
		want string
	}{
		{"glob", map[string]any{"pattern": "**/*.txt", "cursor": "30"}, "No more file(s) (30 total)"},
		{"ls", map[string]any{"path": "d", "cursor": "30"}, "No more entries (30 total)"},
		{"grep", map[string]any{"pattern": "hit", "output_mode": "files_with_matches", "cursor": "30"}, "No more"},
	}
	for _, tc := range tests {
		t.Run(tc.tool, func(t *testing.T) {
			res := run(t, newWS(t, files), tc.tool, tc.args)
			if res.ExitCode != 0 || !strings.Contains(res.Output, tc.want) || strings.Contains(res.Output, "starting at item") {
				t.Errorf("exit %d output %q; want %q", res.ExitCode, res.Output, tc.want)
			}
		})
	}
	t.Run("past the total is still an invalid cursor", func(t *testing.T) {
		res := run(t, newWS(t, files), "glob", map[string]any{"pattern": "**/*.txt", "cursor": "31"})
		if kindOf(res) != "invalid_argument" {
			t.Errorf("exit %d kind %q %q", res.ExitCode, kindOf(res), res.Output)
		}
	})
}

// TestGlobBackslashSeparator (C23): '\' in a glob pattern is a path
// separator, as in paths, so a Windows-style pattern finds what it means.
func TestGlobBackslashSeparator(t *testing.T) {
	ws := newWS(t, map[string]string{"src/a.ts": "", "src/sub/b.ts": "", "src*.ts": ""})
	tests := []struct {
		pattern string
		want    []string
	}{
		{`src\*.ts`, []string{"src/a.ts"}},
		{`src\**\*.ts`, []string{"src/a.ts", "src/sub/b.ts"}},
		{`src[*].ts`, []string{"src*.ts"}},
	}
	for _, tc := range tests {
		t.Run(tc.pattern, func(t *testing.T) {
			res := run(t, ws, "glob", map[string]any{"pattern": tc.pattern, "sort": "path"})
			got, _ := res.Metadata["paths"].([]string)
			if res.ExitCode != 0 || strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Errorf("glob %q = %v (%s); want %v", tc.pattern, got, res.Output, tc.want)
			}
		})
	}
}
