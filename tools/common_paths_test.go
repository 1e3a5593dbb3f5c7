package tools

import (
	"strings"
	"testing"

	"github.com/a3s-lab/code-wasm/kernel"
)

// TestDirectoryShapedFilePaths (B15): a path ending in '/' names a
// directory. Tools that write refuse it as invalid_argument and change
// nothing; read says the file is not a directory; ls, glob and grep take a
// directory written that way.
func TestDirectoryShapedFilePaths(t *testing.T) {
	files := map[string]string{"a.txt": "alpha\n", "src/x.go": "package x\n"}
	diff := "@@ -1,1 +1,1 @@\n-alpha\n+beta\n"
	tests := []struct {
		name string
		tool string
		args map[string]any
		kind kernel.ErrorType
		want string // in the output
	}{
		{"write new dir", "write", map[string]any{"file_path": "newdir/", "content": "x"}, kernel.ErrInvalidArgument, "write newdir/: the path ends with '/' so it names a directory"},
		{"write file as dir", "write", map[string]any{"file_path": "a.txt/", "content": "x"}, kernel.ErrInvalidArgument, "write a.txt/: the path ends with '/' so it names a directory"},
		{"write dot suffix", "write", map[string]any{"file_path": "a.txt/.", "content": "x"}, kernel.ErrInvalidArgument, "ends with '/.' so it names a directory"},
		{"append", "write", map[string]any{"file_path": "a.txt/", "content": "x", "mode": "append", "expected_offset": 6}, kernel.ErrInvalidArgument, "so it names a directory"},
		{"edit", "edit", map[string]any{"file_path": "a.txt/", "old_string": "alpha", "new_string": "beta"}, kernel.ErrInvalidArgument, "edit a.txt/: the path ends with '/'"},
		{"patch", "patch", map[string]any{"file_path": "a.txt/", "diff": diff}, kernel.ErrInvalidArgument, "patch a.txt/: the path ends with '/'"},
		{"patch root", "patch", map[string]any{"file_path": ".", "diff": diff}, kernel.ErrInvalidArgument, "patch .: is a directory"},
		{"write root", "write", map[string]any{"file_path": "./", "content": "x"}, kernel.ErrInvalidArgument, "write ./: is a directory"},
		{"read file as dir", "read", map[string]any{"file_path": "a.txt/"}, "*", "read a.txt/: not a directory"},
		{"read missing as dir", "read", map[string]any{"file_path": "nope/"}, kernel.ErrNotFound, "nope/"},
		{"write under a file", "write", map[string]any{"file_path": "a.txt/b", "content": "x"}, "*", "write a.txt/b: not a directory: a parent directory in the path is a file"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ws := newWS(t, files)
			before := snapshot(t, ws)
			res := run(t, ws, tc.tool, tc.args)
			if res.ExitCode == 0 {
				t.Fatalf("succeeded: %s", res.Output)
			}
			if tc.kind != "*" && kindOf(res) != tc.kind { // "*": the kernel's mapping of ErrNotDir decides
				t.Errorf("kind = %q, want %q (%s)", kindOf(res), tc.kind, res.Output)
			}
			if !strings.Contains(res.Output, tc.want) {
				t.Errorf("output %q does not contain %q", res.Output, tc.want)
			}
			if after := snapshot(t, ws); len(after) != len(before) || after["a.txt"] != "alpha\n" {
				t.Errorf("workspace changed: %v", after)
			}
		})
	}
	t.Run("batch read reports the entry", func(t *testing.T) {
		res := run(t, newWS(t, files), "read", map[string]any{"files": []map[string]any{{"path": "a.txt/"}, {"path": "src/x.go"}}})
		if !strings.Contains(res.Output, "read a.txt/: not a directory") || !strings.Contains(res.Output, "package x") {
			t.Errorf("output %q", res.Output)
		}
	})
	for _, tc := range []struct{ tool, want string }{{"ls", "x.go"}, {"glob", "src/x.go"}, {"grep", "src/x.go"}} {
		t.Run(tc.tool+" takes src/", func(t *testing.T) {
			args := map[string]any{"path": "src/"}
			switch tc.tool {
			case "glob":
				args["pattern"] = "*.go"
			case "grep":
				args["pattern"] = "package"
			}
			res := run(t, newWS(t, files), tc.tool, args)
			if res.ExitCode != 0 || !strings.Contains(res.Output, tc.want) {
				t.Errorf("%s: exit %d %q", tc.tool, res.ExitCode, res.Output)
			}
		})
	}
}

// TestErrorsNameTheUsersOperation (C18): a failure says what the user asked
// for, once, in their words.
func TestErrorsNameTheUsersOperation(t *testing.T) {
	files := map[string]string{"a.txt": "alpha\n"}
	tests := []struct {
		name string
		tool string
		args map[string]any
		kind kernel.ErrorType
		want string // the whole output
	}{
		{"grep missing path", "grep", map[string]any{"pattern": "x", "path": "nope"}, kernel.ErrNotFound, "grep: path not found: nope"},
		{"glob missing path", "glob", map[string]any{"pattern": "*", "path": "nope"}, kernel.ErrNotFound, "glob: path not found: nope"},
		{"ls missing", "ls", map[string]any{"path": "nope"}, kernel.ErrNotFound, "ls: directory not found: nope"},
		{"patch root", "patch", map[string]any{"file_path": ".", "diff": "@@ -1 +1 @@\n-a\n+b\n"}, kernel.ErrInvalidArgument, "patch .: is a directory (the workspace root), not a file"},
		{"edit missing", "edit", map[string]any{"file_path": "nope.txt", "old_string": "a", "new_string": "b"}, kernel.ErrNotFound, "edit nope.txt: file does not exist"},
		{"patch missing", "patch", map[string]any{"file_path": "nope.txt", "diff": "@@ -1 +1 @@\n-a\n+b\n"}, kernel.ErrNotFound, "patch nope.txt: file does not exist"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := run(t, newWS(t, files), tc.tool, tc.args)
			if res.ExitCode == 0 || kindOf(res) != tc.kind || res.Output != tc.want {
				t.Errorf("got exit %d kind %q output %q; want kind %q output %q", res.ExitCode, kindOf(res), res.Output, tc.kind, tc.want)
			}
			if res.ErrorKind != nil && tc.kind == kernel.ErrNotFound && res.ErrorKind.Path == "" {
				t.Errorf("not_found without a path")
			}
		})
	}
}
