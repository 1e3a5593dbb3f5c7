package tools

import (
	"fmt"
	"strings"
	"testing"

	"github.com/a3s-lab/code-wasm/kernel"
)

func TestPatch(t *testing.T) {
	base := map[string]string{
		"f.txt":  "a\nb\nc\nd\ne\n",
		"crlf":   "a\r\nb\r\nc\r\n",
		"nonl":   "a\nb",
		"empty":  "",
		"mixed":  "a\nb\r\nc\n",
		"cronly": "a\rb\r",
	}
	cases := []struct {
		name   string
		file   string
		diff   string
		want   string
		errHas string
		hunks  int
	}{
		{name: "with headers", file: "f.txt", diff: "--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n", want: "a\nB\nc\nd\ne\n", hunks: 1},
		{name: "two hunks", file: "f.txt", diff: "@@ -1,2 +1,2 @@\n-a\n+A\n b\n@@ -4,2 +4,3 @@\n d\n-e\n+E\n+F\n", want: "A\nb\nc\nd\nE\nF\n", hunks: 2},
		{name: "pure insertion count 0", file: "f.txt", diff: "@@ -2,0 +3,1 @@\n+x\n", want: "a\nb\nx\nc\nd\ne\n", hunks: 1},
		{name: "insert at top", file: "f.txt", diff: "@@ -0,0 +1 @@\n+top\n", want: "top\na\nb\nc\nd\ne\n", hunks: 1},
		{name: "crlf kept", file: "crlf", diff: "@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n", want: "a\r\nB\r\nc\r\n", hunks: 1},
		{name: "crlf diff text", file: "crlf", diff: "@@ -1,3 +1,3 @@\r\n a\r\n-b\r\n+B\r\n c\r\n", want: "a\r\nB\r\nc\r\n", hunks: 1},
		{name: "no newline kept", file: "nonl", diff: "@@ -1,2 +1,2 @@\n-a\n+A\n b\n\\ No newline at end of file\n", want: "A\nb", hunks: 1},
		{name: "add final newline", file: "nonl", diff: "@@ -2 +2 @@\n-b\n\\ No newline at end of file\n+b\n", want: "a\nb\n", hunks: 1},
		{name: "remove final newline", file: "f.txt", diff: "@@ -5 +5 @@\n-e\n+e\n\\ No newline at end of file\n", want: "a\nb\nc\nd\ne", hunks: 1},
		{name: "fill empty file", file: "empty", diff: "@@ -0,0 +1,2 @@\n+x\n+y\n", want: "x\ny\n", hunks: 1},
		{name: "delete everything", file: "f.txt", diff: "@@ -1,5 +0,0 @@\n-a\n-b\n-c\n-d\n-e\n", want: "", hunks: 1},
		{name: "empty context line with stripped space", file: "f.txt", diff: "@@ -1,2 +1,2 @@\n-a\n+A\n b\n", want: "A\nb\nc\nd\ne\n", hunks: 1},
		{name: "context mismatch", file: "f.txt", diff: "@@ -1,2 +1,2 @@\n a\n-x\n+y\n", errHas: "does not match the file at line 2"},
		{name: "count mismatch short body", file: "f.txt", diff: "@@ -1,3 +1,3 @@\n a\n-b\n+B\n", errHas: "declares 3 old and 3 new"},
		{name: "count mismatch long body", file: "f.txt", diff: "@@ -1,1 +1,1 @@\n-a\n+A\n b\n", errHas: "already has"},
		{name: "no hunks", file: "f.txt", diff: "--- a\n+++ b\n", errHas: "no hunks"},
		{name: "garbage after hunk", file: "f.txt", diff: "@@ -1 +1 @@\n-a\n+A\nhello\n", errHas: "unexpected"},
		{name: "bad body prefix", file: "f.txt", diff: "@@ -1,2 +1,2 @@\n-a\n*A\n b\n", errHas: "must start with"},
		{name: "malformed header", file: "f.txt", diff: "@@ -x +1 @@\n-a\n", errHas: "bad start"},
		{name: "out of order hunks", file: "f.txt", diff: "@@ -3 +3 @@\n-c\n+C\n@@ -1 +1 @@\n-a\n+A\n", errHas: "in order"},
		{name: "hunk past end", file: "f.txt", diff: "@@ -9 +9 @@\n-z\n+Z\n", errHas: "only 5 line"},
		{name: "missing no-newline marker", file: "nonl", diff: "@@ -2 +2 @@\n-b\n+B\n", errHas: "no final newline"},
		{name: "spurious no-newline marker", file: "f.txt", diff: "@@ -5 +5 @@\n-e\n\\ No newline at end of file\n+E\n", errHas: "ends with a newline"},
		{name: "marker in the middle of the result", file: "f.txt", diff: "@@ -1 +1 @@\n-a\n+A\n\\ No newline at end of file\n", errHas: "would not be the last line"},
		{name: "mixed endings kept", file: "mixed", diff: "@@ -1,2 +1,2 @@\n-a\n+A\n b\r\n", want: "A\nb\r\nc\n", hunks: 1},
		{name: "LF diff on a mixed file names the ending", file: "mixed", diff: "@@ -1,2 +1,2 @@\n-a\n+A\n b\n", errHas: "only in its line ending"},
		{name: "CR-only file is one line", file: "cronly", diff: "@@ -1 +1 @@\n-a\n+A\n", errHas: "does not match the file at line 1"},
		{name: "append at the end", file: "f.txt", diff: "@@ -3,3 +3,4 @@\n c\n d\n e\n+f\n", want: "a\nb\nc\nd\ne\nf\n", hunks: 1},
		{name: "append not at the end", file: "f.txt", diff: "@@ -2,2 +2,3 @@\n b\n c\n+x\n", errHas: "must end at the end of the file"},
		{name: "two files", file: "f.txt", diff: "--- a/f.txt\n+++ b/f.txt\n@@ -1 +1 @@\n-a\n+A\n--- a/g.txt\n+++ b/g.txt\n@@ -1 +1 @@\n-x\n+X\n", errHas: "patch changes one file per call"},
		{name: "zero start with count", file: "f.txt", diff: "@@ -0,1 +0,1 @@\n-a\n+A\n", errHas: "start 0"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ws := newWS(t, base)
			before := snapshot(t, ws)
			res := run(t, ws, "patch", map[string]any{"file_path": c.file, "diff": c.diff})
			if c.errHas != "" {
				if res.ExitCode == 0 || kindOf(res) != kernel.ErrInvalidArgument || !strings.Contains(res.Output, c.errHas) {
					t.Fatalf("want invalid_argument with %q, got %d %v %q", c.errHas, res.ExitCode, res.ErrorKind, res.Output)
				}
				if fmt.Sprint(snapshot(t, ws)) != fmt.Sprint(before) {
					t.Fatal("a rejected patch changed the workspace")
				}
				return
			}
			if res.ExitCode != 0 {
				t.Fatal(res.Output)
			}
			if got, _ := fileContent(t, ws, c.file); got != c.want {
				t.Fatalf("got %q want %q", got, c.want)
			}
			if !strings.HasPrefix(res.Output, fmt.Sprintf("Applied %d hunk(s) to %s", c.hunks, c.file)) {
				t.Fatalf("output %q", res.Output)
			}
			if res.Metadata["before"] != base[c.file] || res.Metadata["after"] != c.want {
				t.Fatalf("meta %v", res.Metadata)
			}
		})
	}
	ws := newWS(t, base)
	for _, c := range []struct {
		args any
		kind kernel.ErrorType
	}{
		{map[string]any{"file_path": "missing", "diff": "@@ -0,0 +1 @@\n+x\n"}, kernel.ErrNotFound},
		{map[string]any{"file_path": "f.txt"}, kernel.ErrInvalidArgument},
		{map[string]any{"diff": "@@ -0,0 +1 @@\n+x\n"}, kernel.ErrInvalidArgument},
		{map[string]any{"file_path": "../f", "diff": "x"}, kernel.ErrInvalidArgument},
		{map[string]any{"file_path": "f.txt", "diff": "x", "strip": 1}, kernel.ErrInvalidArgument},
	} {
		if res := run(t, ws, "patch", c.args); kindOf(res) != c.kind {
			t.Fatalf("%v: kind %v want %s (%s)", c.args, res.ErrorKind, c.kind, res.Output)
		}
	}
	if c := (&Patch{}).Capabilities(nil); c.ReadOnly || c.MaxParallelism != 1 || c.OutputKind != kernel.OutputDiff {
		t.Fatalf("caps %+v", c)
	}
}
