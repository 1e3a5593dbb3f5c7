package tools

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/a3s-lab/code-wasm/kernel"
	"github.com/a3s-lab/code-wasm/tools/internal/udiff"
	"github.com/a3s-lab/code-wasm/workspace"
)

func TestWrite(t *testing.T) {
	base := map[string]string{"a.txt": "hello\n", "log.txt": "one\n", "dir/x": "x"}
	cases := []struct {
		name    string
		args    any
		kind    kernel.ErrorType
		fail    bool
		file    string
		want    string // content of file afterwards ("" and fail: unchanged)
		meta    map[string]any
		outHas  string
		missing bool // meta key "before" must be absent
	}{
		{name: "create with parents", args: map[string]any{"file_path": "new/deep/f.txt", "content": "hi"}, file: "new/deep/f.txt", want: "hi",
			meta: map[string]any{"created": true, "after": "hi", "file_path": "new/deep/f.txt"}, missing: true, outHas: "Created"},
		{name: "overwrite", args: map[string]any{"file_path": "a.txt", "content": "bye\n"}, file: "a.txt", want: "bye\n",
			meta: map[string]any{"created": false, "before": "hello\n", "after": "bye\n"}},
		{name: "overwrite accepts provider-filled expected_offset 0", args: map[string]any{"file_path": "a.txt", "content": "z", "expected_offset": 0}, file: "a.txt", want: "z"},
		{name: "overwrite rejects nonzero expected_offset", args: map[string]any{"file_path": "a.txt", "content": "z", "expected_offset": 3}, fail: true, kind: kernel.ErrInvalidArgument},
		{name: "explicit overwrite mode", args: map[string]any{"file_path": "a.txt", "content": "m", "mode": "overwrite"}, file: "a.txt", want: "m"},
		{name: "append at the right offset", args: map[string]any{"file_path": "log.txt", "content": "two\n", "mode": "append", "expected_offset": 4}, file: "log.txt", want: "one\ntwo\n",
			meta: map[string]any{"mode": "append", "offset": 4, "appended_bytes": 4, "resulting_size": 8, "already_applied": false}},
		{name: "append mismatch rejected", args: map[string]any{"file_path": "log.txt", "content": "two\n", "mode": "append", "expected_offset": 2}, fail: true, kind: kernel.ErrInvalidArgument, outHas: "is 4 bytes"},
		{name: "append creates at offset 0", args: map[string]any{"file_path": "fresh/log", "content": "a", "mode": "append", "expected_offset": 0}, file: "fresh/log", want: "a"},
		{name: "append to missing file at offset 5 rejected", args: map[string]any{"file_path": "nolog", "content": "a", "mode": "append", "expected_offset": 5}, fail: true, kind: kernel.ErrInvalidArgument},
		{name: "append needs expected_offset", args: map[string]any{"file_path": "log.txt", "content": "x", "mode": "append"}, fail: true, kind: kernel.ErrInvalidArgument, outHas: "requires expected_offset"},
		{name: "unknown mode", args: map[string]any{"file_path": "a.txt", "content": "x", "mode": "prepend"}, fail: true, kind: kernel.ErrInvalidArgument, outHas: `"prepend"`},
		{name: "missing content", args: map[string]any{"file_path": "a.txt"}, fail: true, kind: kernel.ErrInvalidArgument},
		{name: "missing file_path", args: map[string]any{"content": "x"}, fail: true, kind: kernel.ErrInvalidArgument},
		{name: "negative expected_offset", args: map[string]any{"file_path": "log.txt", "content": "x", "mode": "append", "expected_offset": -1}, fail: true, kind: kernel.ErrInvalidArgument},
		{name: "directory target", args: map[string]any{"file_path": "dir", "content": "x"}, fail: true},
		{name: "root target", args: map[string]any{"file_path": ".", "content": "x"}, fail: true, kind: kernel.ErrInvalidArgument},
		{name: "escape", args: map[string]any{"file_path": "../../etc/x", "content": "x"}, fail: true, kind: kernel.ErrInvalidArgument},
		{name: "parent is a file", args: map[string]any{"file_path": "a.txt/inner", "content": "x"}, fail: true},
		{name: "unknown argument", args: map[string]any{"file_path": "a.txt", "content": "x", "append": true}, fail: true, kind: kernel.ErrInvalidArgument},
		{name: "content wrong type", args: `{"file_path":"a.txt","content":5}`, fail: true, kind: kernel.ErrInvalidArgument, outHas: `"content" must be a string`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ws := newWS(t, base)
			before := snapshot(t, ws)
			res := run(t, ws, "write", c.args)
			if c.fail != (res.ExitCode != 0) {
				t.Fatalf("exit %d: %s", res.ExitCode, res.Output)
			}
			if c.kind != "" && kindOf(res) != c.kind {
				t.Fatalf("kind %v want %s: %s", res.ErrorKind, c.kind, res.Output)
			}
			if c.fail {
				if fmt.Sprint(snapshot(t, ws)) != fmt.Sprint(before) {
					t.Fatal("a rejected write changed the workspace")
				}
			} else if got, _ := fileContent(t, ws, c.file); got != c.want {
				t.Fatalf("%s = %q, want %q", c.file, got, c.want)
			}
			if c.outHas != "" && !strings.Contains(res.Output, c.outHas) {
				t.Fatalf("output %q lacks %q", res.Output, c.outHas)
			}
			m := metaJSON(t, res)
			for k, v := range c.meta {
				if fmt.Sprint(m[k]) != fmt.Sprint(v) {
					t.Fatalf("meta.%s = %v, want %v", k, m[k], v)
				}
			}
			if _, has := m["before"]; c.missing && has {
				t.Fatal("created file has before")
			}
		})
	}
}

func TestWriteAppendIdempotentRetry(t *testing.T) {
	ws := newWS(t, map[string]string{"log": "one\n"})
	args := map[string]any{"file_path": "log", "content": "two\n", "mode": "append", "expected_offset": 4}
	for i, wantApplied := range []bool{false, true, true} {
		res := run(t, ws, "write", args)
		if res.ExitCode != 0 {
			t.Fatalf("attempt %d: %s", i, res.Output)
		}
		if res.Metadata["already_applied"] != wantApplied {
			t.Fatalf("attempt %d: already_applied=%v", i, res.Metadata["already_applied"])
		}
	}
	if got, _ := fileContent(t, ws, "log"); got != "one\ntwo\n" {
		t.Fatalf("log = %q", got)
	}
	// A different chunk at the stale offset is a mismatch, not a retry.
	res := run(t, ws, "write", map[string]any{"file_path": "log", "content": "six\n", "mode": "append", "expected_offset": 4})
	if res.ExitCode == 0 {
		t.Fatal("stale offset with a different chunk accepted")
	}
}

func TestWriteCapabilities(t *testing.T) {
	w := &Write{}
	c := w.Capabilities([]byte(`{"mode":"append"}`))
	if c.ReadOnly || !c.Idempotent || !c.Resumable || c.OutputKind != kernel.OutputDiff || c.MaxParallelism != 1 {
		t.Fatalf("append caps %+v", c)
	}
	if c := w.Capabilities([]byte(`{}`)); c.Resumable || !c.Idempotent {
		t.Fatalf("overwrite caps %+v", c)
	}
}

func TestChangeCompaction(t *testing.T) {
	big := strings.Repeat("0123456789abcdef\n", 2500) + "MARKER\n" + strings.Repeat("0123456789abcdef\n", 2500) // 85 KB
	ws := newWS(t, map[string]string{"big.txt": big})
	res := run(t, ws, "edit", map[string]any{"file_path": "big.txt", "old_string": "MARKER\n", "new_string": "CHANGED\nTWICE\n"})
	if res.ExitCode != 0 {
		t.Fatal(res.Output)
	}
	m := metaJSON(t, res)
	ch, ok := m["change"].(map[string]any)
	if !ok || ch["compacted"] != true || ch["diff_omitted"] != false {
		t.Fatalf("change %v", m["change"])
	}
	if len(m["before"].(string)) > previewBytes+100 || len(m["after"].(string)) > previewBytes+100 {
		t.Fatal("previews not bounded")
	}
	bm := ch["before"].(map[string]any)
	if int(bm["bytes"].(float64)) != len(big) || len(bm["sha256"].(string)) != 64 {
		t.Fatalf("before %v", bm)
	}
	d := ch["unified_diff"].(string)
	after, _ := fileContent(t, ws, "big.txt")
	if got, _, err := udiff.Apply([]byte(big), d); err != nil || string(got) != after {
		t.Fatalf("the compacted diff does not reproduce the change: %v", err)
	}
	// Above 1 MiB the diff is omitted.
	huge := strings.Repeat("z", 600<<10)
	ws2 := newWS(t, map[string]string{"h": huge})
	res = run(t, ws2, "write", map[string]any{"file_path": "h", "content": huge + "!"})
	ch = metaJSON(t, res)["change"].(map[string]any)
	if ch["diff_omitted"] != true || ch["unified_diff"] != nil {
		t.Fatalf("change %v", ch)
	}
	// Small changes are not compacted.
	res = run(t, ws, "write", map[string]any{"file_path": "s", "content": "x"})
	if _, ok := res.Metadata["change"]; ok {
		t.Fatal("small change compacted")
	}
}

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

// racingDriver changes the file between the edit's read and its write.
type racingDriver struct {
	workspace.Driver
	once bool
}

func (r *racingDriver) ReadFile(ctx context.Context, name string) ([]byte, workspace.Version, error) {
	b, v, err := r.Driver.ReadFile(ctx, name)
	if !r.once && err == nil {
		r.once = true
		r.Driver.WriteFile(ctx, name, []byte("someone else\n"), "")
	}
	return b, v, err
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
