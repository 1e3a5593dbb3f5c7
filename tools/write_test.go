package tools

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/a3s-lab/code-wasm/kernel"
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
