package tools

import (
	"fmt"
	"strings"
	"testing"

	"github.com/a3s-lab/code-wasm/kernel"
	"github.com/a3s-lab/code-wasm/workspace"
)

func TestEdit(t *testing.T) {
	base := map[string]string{
		"a.go":   "x := 1\ny := 1\nz := 2\n",
		"crlf":   "one\r\ntwo\r\nthree\r\n",
		"single": "alpha beta\n",
	}
	cases := []struct {
		name   string
		args   map[string]any
		fail   bool
		kind   kernel.ErrorType
		file   string
		want   string
		count  int
		outHas string
	}{
		{name: "unique replacement", args: map[string]any{"file_path": "single", "old_string": "beta", "new_string": "gamma"}, file: "single", want: "alpha gamma\n", count: 1},
		{name: "ambiguous without replace_all", args: map[string]any{"file_path": "a.go", "old_string": ":= 1", "new_string": ":= 3"}, fail: true, kind: kernel.ErrInvalidArgument, outHas: "replace_all"},
		{name: "replace_all", args: map[string]any{"file_path": "a.go", "old_string": ":= 1", "new_string": ":= 3", "replace_all": true}, file: "a.go", want: "x := 3\ny := 3\nz := 2\n", count: 2},
		{name: "expected_replacements matches", args: map[string]any{"file_path": "a.go", "old_string": ":= 1", "new_string": ":= 3", "replace_all": true, "expected_replacements": 2}, file: "a.go", want: "x := 3\ny := 3\nz := 2\n", count: 2},
		{name: "expected_replacements mismatch", args: map[string]any{"file_path": "a.go", "old_string": ":= 1", "new_string": ":= 3", "replace_all": true, "expected_replacements": 3}, fail: true, kind: kernel.ErrInvalidArgument, outHas: "expected_replacements=3"},
		{name: "max_replacements exceeded", args: map[string]any{"file_path": "a.go", "old_string": ":= 1", "new_string": ":= 3", "replace_all": true, "max_replacements": 1}, fail: true, kind: kernel.ErrInvalidArgument, outHas: "max_replacements=1"},
		{name: "max_replacements respected", args: map[string]any{"file_path": "a.go", "old_string": ":= 1", "new_string": ":= 3", "replace_all": true, "max_replacements": 2}, file: "a.go", want: "x := 3\ny := 3\nz := 2\n", count: 2},
		{name: "not found", args: map[string]any{"file_path": "a.go", "old_string": "nope", "new_string": "x"}, fail: true, kind: kernel.ErrInvalidArgument, outHas: "not found"},
		{name: "empty old_string", args: map[string]any{"file_path": "a.go", "old_string": "", "new_string": "x"}, fail: true, kind: kernel.ErrInvalidArgument},
		{name: "identical strings", args: map[string]any{"file_path": "a.go", "old_string": "z", "new_string": "z"}, fail: true, kind: kernel.ErrInvalidArgument},
		{name: "missing new_string", args: map[string]any{"file_path": "a.go", "old_string": "z"}, fail: true, kind: kernel.ErrInvalidArgument},
		{name: "expected_replacements 0", args: map[string]any{"file_path": "a.go", "old_string": "z", "new_string": "w", "expected_replacements": 0}, fail: true, kind: kernel.ErrInvalidArgument},
		{name: "max_replacements 0", args: map[string]any{"file_path": "a.go", "old_string": "z", "new_string": "w", "max_replacements": 0}, fail: true, kind: kernel.ErrInvalidArgument},
		{name: "missing file", args: map[string]any{"file_path": "nope", "old_string": "z", "new_string": "w"}, fail: true, kind: kernel.ErrNotFound},
		{name: "delete text", args: map[string]any{"file_path": "single", "old_string": " beta", "new_string": ""}, file: "single", want: "alpha\n", count: 1},
		{name: "LF edit of a CRLF file keeps CRLF", args: map[string]any{"file_path": "crlf", "old_string": "one\ntwo", "new_string": "1\n2\n2b"}, file: "crlf", want: "1\r\n2\r\n2b\r\nthree\r\n", count: 1},
		{name: "dry run writes nothing", args: map[string]any{"file_path": "a.go", "old_string": ":= 1", "new_string": ":= 3", "replace_all": true, "dry_run": true}, file: "a.go", want: base["a.go"], count: 2, outHas: "Dry run"},
		{name: "unknown argument", args: map[string]any{"file_path": "a.go", "old_string": "z", "new_string": "w", "all": true}, fail: true, kind: kernel.ErrInvalidArgument},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ws := newWS(t, base)
			before := snapshot(t, ws)
			res := run(t, ws, "edit", c.args)
			if c.fail != (res.ExitCode != 0) {
				t.Fatalf("exit %d: %s", res.ExitCode, res.Output)
			}
			if c.kind != "" && kindOf(res) != c.kind {
				t.Fatalf("kind %v want %s", res.ErrorKind, c.kind)
			}
			if c.outHas != "" && !strings.Contains(res.Output, c.outHas) {
				t.Fatalf("output %q lacks %q", res.Output, c.outHas)
			}
			if c.fail {
				if fmt.Sprint(snapshot(t, ws)) != fmt.Sprint(before) {
					t.Fatal("a rejected edit changed the workspace")
				}
				return
			}
			if got, _ := fileContent(t, ws, c.file); got != c.want {
				t.Fatalf("%s = %q, want %q", c.file, got, c.want)
			}
			m := metaJSON(t, res)
			if int(m["replacement_count"].(float64)) != c.count || m["dry_run"] != (c.args["dry_run"] == true) {
				t.Fatalf("meta %v", m)
			}
			if m["before"] != base[c.file] {
				t.Fatalf("before %q", m["before"])
			}
			for _, k := range []string{"file_path", "after", "expected_replacements", "max_replacements"} {
				if _, ok := m[k]; !ok {
					t.Fatalf("meta lacks %s", k)
				}
			}
		})
	}
}

func TestEditDryRunMatchesRealEdit(t *testing.T) {
	ws := newWS(t, map[string]string{"f": "a b a b a\n"})
	args := map[string]any{"file_path": "f", "old_string": "a", "new_string": "A", "replace_all": true}
	dry := run(t, ws, "edit", with(args, "dry_run", true))
	real := run(t, ws, "edit", with(args, "expected_replacements", dry.Metadata["replacement_count"]))
	if real.ExitCode != 0 || dry.Metadata["after"] != real.Metadata["after"] || dry.Metadata["before"] != real.Metadata["before"] {
		t.Fatalf("dry %v real %v (%s)", dry.Metadata, real.Metadata, real.Output)
	}
	e := &Edit{}
	if c := e.Capabilities([]byte(`{"dry_run":true}`)); !c.ParallelSafe() || c.MaxParallelism != 16 || c.OutputKind != kernel.OutputDiff {
		t.Fatalf("dry-run caps %+v", c)
	}
	if c := e.Capabilities([]byte(`{}`)); c.ReadOnly || c.MaxParallelism != 1 || c.OutputKind != kernel.OutputDiff {
		t.Fatalf("edit caps %+v", c)
	}
}

func TestEditAndPatchVersionConflict(t *testing.T) {
	for _, tool := range []string{"edit", "patch"} {
		t.Run(tool, func(t *testing.T) {
			inner := newWS(t, map[string]string{"f": "old\n"})
			ws, _ := workspace.New(&racingDriver{Driver: inner.Driver()})
			args := map[string]any{"file_path": "f", "old_string": "old", "new_string": "new"}
			if tool == "patch" {
				args = map[string]any{"file_path": "f", "diff": "@@ -1 +1 @@\n-old\n+new\n"}
			}
			res := run(t, ws, tool, args)
			if kindOf(res) != kernel.ErrVersionConflict {
				t.Fatalf("kind %v: %s", res.ErrorKind, res.Output)
			}
			if got, _ := fileContent(t, ws, "f"); got != "someone else\n" {
				t.Fatalf("the concurrent write was overwritten: %q", got)
			}
		})
	}
}
