package tools

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/a3s-lab/code-wasm/kernel"
)

func numbered(from int, lines ...string) string {
	var b strings.Builder
	for i, l := range lines {
		fmt.Fprintf(&b, "%6d\t%s\n", from+i, l)
	}
	return b.String()
}

func TestReadSingle(t *testing.T) {
	long := strings.Repeat("é", 2500)
	var many strings.Builder
	for i := 1; i <= 2500; i++ {
		fmt.Fprintf(&many, "line %d\n", i)
	}
	ws := newWS(t, map[string]string{
		"a.txt":     "one\ntwo\nthree\n",
		"crlf.txt":  "x\r\ny\r\n",
		"nonl.txt":  "last",
		"empty.txt": "",
		"long.txt":  long + "\n",
		"many.txt":  many.String(),
		"dir/f.txt": "f\n",
	})
	cases := []struct {
		name     string
		args     any
		kind     kernel.ErrorType
		contains []string
		exact    string
		rng      map[string]any
	}{
		{name: "whole file", args: map[string]any{"file_path": "a.txt"}, exact: numbered(1, "one", "two", "three"),
			rng: map[string]any{"offset": 0, "returned_lines": 3, "eof": true, "total_lines": 3, "next_offset": nil, "requested_limit": 2000, "applied_limit": 2000}},
		{name: "offset and limit", args: map[string]any{"file_path": "a.txt", "offset": 1, "limit": 1},
			contains: []string{numbered(2, "two"), "continue with offset=2"}, rng: map[string]any{"offset": 1, "returned_lines": 1, "eof": false, "next_offset": 2.0, "requested_limit": 1, "applied_limit": 1}},
		{name: "offset at end is the end-of-file note", args: map[string]any{"file_path": "a.txt", "offset": 3}, contains: []string{"(end of file"}, rng: map[string]any{"returned_lines": 0, "eof": true}},
		{name: "offset past end", args: map[string]any{"file_path": "a.txt", "offset": 4}, kind: kernel.ErrInvalidArgument, contains: []string{"past the end", "3 line(s)"}},
		{name: "crlf lines shown without CR", args: map[string]any{"file_path": "crlf.txt"}, exact: numbered(1, "x", "y")},
		{name: "no final newline", args: map[string]any{"file_path": "nonl.txt"}, exact: numbered(1, "last")},
		{name: "empty file", args: map[string]any{"file_path": "empty.txt"}, contains: []string{"file is empty"}, rng: map[string]any{"total_lines": 0, "eof": true}},
		{name: "long line cut at 2000 characters", args: map[string]any{"file_path": "long.txt"}, contains: []string{numbered(1, strings.Repeat("é", 2000)), "cut at 2000 characters"}},
		{name: "default limit 2000 with footer", args: map[string]any{"file_path": "many.txt"}, contains: []string{"  2000\tline 2000\n", "continue with offset=2000"}, rng: map[string]any{"returned_lines": 2000, "next_offset": 2000.0, "total_lines": 2500}},
		{name: "wide line numbers", args: map[string]any{"file_path": "many.txt", "offset": 2499}, exact: numbered(2500, "line 2500")},
		{name: "missing file", args: map[string]any{"file_path": "nope.txt"}, kind: kernel.ErrNotFound},
		{name: "directory", args: map[string]any{"file_path": "dir"}, contains: []string{"is a directory"}},
		{name: "escape", args: map[string]any{"file_path": "../x"}, kind: kernel.ErrInvalidArgument, contains: []string{"escapes workspace"}},
		{name: "absolute", args: map[string]any{"file_path": "/etc/passwd"}, kind: kernel.ErrInvalidArgument},
		{name: "limit 0", args: map[string]any{"file_path": "a.txt", "limit": 0}, kind: kernel.ErrInvalidArgument, contains: []string{"limit must be between 1 and 2000"}},
		{name: "limit 2001", args: map[string]any{"file_path": "a.txt", "limit": 2001}, kind: kernel.ErrInvalidArgument},
		{name: "negative offset", args: map[string]any{"file_path": "a.txt", "offset": -1}, kind: kernel.ErrInvalidArgument},
		{name: "offset not an integer", args: `{"file_path":"a.txt","offset":1.5}`, kind: kernel.ErrInvalidArgument, contains: []string{`"offset" must be an integer`}},
		{name: "unknown argument", args: map[string]any{"file_path": "a.txt", "path": "x"}, kind: kernel.ErrInvalidArgument, contains: []string{`unknown argument "path"`}},
		{name: "neither mode", args: map[string]any{}, kind: kernel.ErrInvalidArgument, contains: []string{"give exactly one of file_path or files", "(got neither)"}},
		{name: "both modes", args: map[string]any{"file_path": "a.txt", "files": []any{map[string]any{"path": "a.txt"}}}, kind: kernel.ErrInvalidArgument, contains: []string{"give exactly one of file_path or files", "(got both)"}},
		{name: "max_output_bytes without files", args: map[string]any{"file_path": "a.txt", "max_output_bytes": 2048}, kind: kernel.ErrInvalidArgument},
		{name: "empty file_path", args: map[string]any{"file_path": ""}, kind: kernel.ErrInvalidArgument},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := run(t, ws, "read", c.args)
			if c.kind != "" || (c.exact == "" && c.rng == nil && len(c.contains) > 0 && strings.Contains(c.contains[0], "directory")) {
				if res.ExitCode == 0 {
					t.Fatalf("want failure, got %q", res.Output)
				}
				if c.kind != "" && kindOf(res) != c.kind {
					t.Fatalf("kind %v, want %s: %s", res.ErrorKind, c.kind, res.Output)
				}
			} else if res.ExitCode != 0 {
				t.Fatalf("failed: %s", res.Output)
			}
			if c.exact != "" && res.Output != c.exact {
				t.Fatalf("output %q, want %q", res.Output, c.exact)
			}
			for _, s := range c.contains {
				if !strings.Contains(res.Output, s) {
					t.Fatalf("output %q lacks %q", clip(res.Output), s)
				}
			}
			if c.rng != nil {
				r := metaJSON(t, res)["range"].(map[string]any)
				for k, v := range c.rng {
					if fmt.Sprint(r[k]) != fmt.Sprint(v) {
						t.Fatalf("range.%s = %v, want %v (range %v)", k, r[k], v, r)
					}
				}
				if int(r["output_bytes"].(float64)) != len(res.Output) {
					t.Fatalf("output_bytes %v != %d", r["output_bytes"], len(res.Output))
				}
			}
		})
	}
}

func TestReadSingleOutputBound(t *testing.T) {
	// 2000 lines of 1000 bytes is ~2 MB: the output stops under 100 KiB and
	// the footer continues exactly where it stopped.
	line := strings.Repeat("x", 1000)
	ws := newWS(t, map[string]string{"big.txt": strings.Repeat(line+"\n", 2000)})
	res := run(t, ws, "read", map[string]any{"file_path": "big.txt"})
	if len(res.Output) > maxOutputSize {
		t.Fatalf("output %d bytes > %d", len(res.Output), maxOutputSize)
	}
	r := metaJSON(t, res)["range"].(map[string]any)
	n := int(r["returned_lines"].(float64))
	if r["output_truncated"] != true || int(r["next_offset"].(float64)) != n || n < 90 {
		t.Fatalf("range %v", r)
	}
	if !strings.Contains(res.Output, fmt.Sprintf("continue with offset=%d", n)) {
		t.Fatal("footer lacks the continuation offset")
	}
}

func TestReadBatch(t *testing.T) {
	ws := newWS(t, map[string]string{
		"a.txt": "a1\na2\na3\n",
		"b.txt": "b1\nb2\n",
		"c.txt": "",
	})
	type batchMeta = map[string]any
	cases := []struct {
		name     string
		args     any
		fail     bool
		kind     kernel.ErrorType
		contains []string
		order    []string
		batch    map[string]any
	}{
		{name: "request order and headers", args: map[string]any{"files": []any{map[string]any{"path": "b.txt"}, map[string]any{"path": "a.txt", "offset": 1, "limit": 1}}},
			order: []string{"=== b.txt ===", numbered(1, "b1", "b2"), "=== a.txt ===", numbered(2, "a2"), "(Complete: all 2 file(s) processed.)"},
			batch: map[string]any{"status": "complete", "requested_files": 2, "successful_files": 2, "failed_files": 0, "completed_files": 2, "returned_lines": 3, "truncated": false, "max_output_bytes": 65536}},
		{name: "one missing member does not discard the others", args: map[string]any{"files": []any{map[string]any{"path": "nope.txt"}, map[string]any{"path": "a.txt"}}},
			order: []string{"=== nope.txt ===", "Error:", "=== a.txt ===", numbered(1, "a1", "a2", "a3")},
			batch: map[string]any{"status": "partial_failure", "successful_files": 1, "failed_files": 1}},
		{name: "all members fail", args: map[string]any{"files": []any{map[string]any{"path": "x"}, map[string]any{"path": "y"}}}, fail: true, kind: kernel.ErrPartialFailure},
		{name: "single failing member keeps its kind", args: map[string]any{"files": []any{map[string]any{"path": "x"}}}, fail: true, kind: kernel.ErrNotFound},
		{name: "offset past end is a member error", args: map[string]any{"files": []any{map[string]any{"path": "a.txt", "offset": 9}, map[string]any{"path": "b.txt"}}},
			contains: []string{"past the end"}, batch: map[string]any{"status": "partial_failure"}},
		{name: "empty file", args: map[string]any{"files": []any{map[string]any{"path": "c.txt"}}}, contains: []string{"=== c.txt ===\n(empty file)"}, batch: map[string]any{"status": "complete"}},
		{name: "duplicate normalised paths", args: map[string]any{"files": []any{map[string]any{"path": "a.txt"}, map[string]any{"path": "./x/../a.txt"}}}, fail: true, kind: kernel.ErrInvalidArgument, contains: []string{"same file"}},
		{name: "no files", args: map[string]any{"files": []any{}}, fail: true, kind: kernel.ErrInvalidArgument, contains: []string{"1 to 32"}},
		{name: "33 files", args: map[string]any{"files": func() []any {
			var fs []any
			for i := 0; i < 33; i++ {
				fs = append(fs, map[string]any{"path": fmt.Sprintf("f%d", i)})
			}
			return fs
		}()}, fail: true, kind: kernel.ErrInvalidArgument},
		{name: "unknown key in entry", args: map[string]any{"files": []any{map[string]any{"path": "a.txt", "lines": 3}}}, fail: true, kind: kernel.ErrInvalidArgument, contains: []string{`unknown argument "lines"`}},
		{name: "empty path", args: map[string]any{"files": []any{map[string]any{"path": ""}}}, fail: true, kind: kernel.ErrInvalidArgument},
		{name: "path too long", args: map[string]any{"files": []any{map[string]any{"path": strings.Repeat("a", 4097)}}}, fail: true, kind: kernel.ErrInvalidArgument},
		{name: "entry limit out of range", args: map[string]any{"files": []any{map[string]any{"path": "a.txt", "limit": 2001}}}, fail: true, kind: kernel.ErrInvalidArgument},
		{name: "top-level offset with files", args: map[string]any{"files": []any{map[string]any{"path": "a.txt"}}, "offset": 1}, fail: true, kind: kernel.ErrInvalidArgument, contains: []string{"put offset/limit inside each files[] entry"}},
		{name: "budget below 1024", args: map[string]any{"files": []any{map[string]any{"path": "a.txt"}}, "max_output_bytes": 1023}, fail: true, kind: kernel.ErrInvalidArgument},
		{name: "budget above 98304", args: map[string]any{"files": []any{map[string]any{"path": "a.txt"}}, "max_output_bytes": 98305}, fail: true, kind: kernel.ErrInvalidArgument},
		{name: "escaping member path", args: map[string]any{"files": []any{map[string]any{"path": "../a"}}}, fail: true, kind: kernel.ErrInvalidArgument},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := run(t, ws, "read", c.args)
			if c.fail != (res.ExitCode != 0) {
				t.Fatalf("exit %d: %s", res.ExitCode, res.Output)
			}
			if c.kind != "" && kindOf(res) != c.kind {
				t.Fatalf("kind %v, want %s: %s", res.ErrorKind, c.kind, res.Output)
			}
			for _, s := range c.contains {
				if !strings.Contains(res.Output, s) {
					t.Fatalf("output %q lacks %q", res.Output, s)
				}
			}
			at := 0
			for _, s := range c.order {
				i := strings.Index(res.Output[at:], s)
				if i < 0 {
					t.Fatalf("output %q lacks %q after byte %d", res.Output, s, at)
				}
				at += i + len(s)
			}
			if c.batch != nil {
				b := metaJSON(t, res)["batch"].(map[string]any)
				for k, v := range c.batch {
					if fmt.Sprint(b[k]) != fmt.Sprint(v) {
						t.Fatalf("batch.%s = %v, want %v", k, b[k], v)
					}
				}
				if int(b["output_bytes"].(float64)) != len(res.Output) {
					t.Fatalf("output_bytes %v, output %d", b["output_bytes"], len(res.Output))
				}
			}
		})
	}
}

func TestReadBatchTooSmall(t *testing.T) {
	ws := newWS(t, map[string]string{"wide.txt": strings.Repeat("w", 1500) + "\n"})
	res := run(t, ws, "read", map[string]any{"files": []any{map[string]any{"path": "wide.txt"}}, "max_output_bytes": 1024})
	if res.ExitCode == 0 || !strings.Contains(res.Output, "max_output_bytes=1024 is too small") {
		t.Fatalf("got %d %q", res.ExitCode, res.Output)
	}
}

// TestReadBatchContinuation300: 300 files read under a 2 KiB budget by
// following metadata.batch.continuation reassemble every file exactly, each
// line exactly once, within the budget on every call.
func TestReadBatchContinuation300(t *testing.T) {
	files := map[string]string{}
	var order []string
	for i := 0; i < 300; i++ {
		p := fmt.Sprintf("pkg%02d/file%03d.txt", i%17, i)
		var b strings.Builder
		n := (i * 7) % 23 // 0..22 lines, some empty files
		for j := 0; j < n; j++ {
			fmt.Fprintf(&b, "%s line %d %s\n", p, j, strings.Repeat("·", (i+j)%40))
		}
		if i%5 == 0 && n > 0 { // no final newline sometimes
			s := strings.TrimSuffix(b.String(), "\n")
			b.Reset()
			b.WriteString(s)
		}
		files[p] = b.String()
		order = append(order, p)
	}
	ws := newWS(t, files)
	got := map[string][]string{}
	seen := map[string]map[int]bool{}
	calls := 0
	for start := 0; start < len(order); start += 32 {
		var req []ReadFileSpec
		for _, p := range order[start:min(start+32, len(order))] {
			req = append(req, ReadFileSpec{Path: p})
		}
		for len(req) > 0 {
			calls++
			if calls > 2000 {
				t.Fatal("no progress")
			}
			res := run(t, ws, "read", map[string]any{"files": req, "max_output_bytes": 2048})
			if res.ExitCode != 0 {
				t.Fatalf("call %d: %s", calls, res.Output)
			}
			if len(res.Output) > 2048 {
				t.Fatalf("output %d bytes over the 2048 budget", len(res.Output))
			}
			// Parse the segments back into lines.
			cur := ""
			for _, l := range strings.Split(res.Output, "\n") {
				if strings.HasPrefix(l, "=== ") && strings.HasSuffix(l, " ===") {
					cur = strings.TrimSuffix(strings.TrimPrefix(l, "=== "), " ===")
					if seen[cur] == nil {
						seen[cur] = map[int]bool{}
					}
					continue
				}
				num, text, ok := strings.Cut(l, "\t")
				if !ok || cur == "" {
					continue
				}
				var n int
				if _, err := fmt.Sscan(strings.TrimSpace(num), &n); err != nil {
					continue
				}
				if seen[cur][n] {
					t.Fatalf("%s line %d returned twice", cur, n)
				}
				if n != len(got[cur])+1 {
					t.Fatalf("%s: line %d after %d lines", cur, n, len(got[cur]))
				}
				seen[cur][n] = true
				got[cur] = append(got[cur], text)
			}
			b := metaJSON(t, res)["batch"].(map[string]any)
			cont, _ := json.Marshal(b["continuation"])
			req = nil
			if err := json.Unmarshal(cont, &req); err != nil {
				t.Fatal(err)
			}
			if (b["truncated"] == true) != (len(req) > 0) {
				t.Fatalf("truncated=%v with %d continuation entries", b["truncated"], len(req))
			}
		}
	}
	for _, p := range order {
		want := files[p]
		lines := got[p]
		rebuilt := strings.Join(lines, "\n")
		if len(lines) > 0 && strings.HasSuffix(want, "\n") {
			rebuilt += "\n"
		}
		if rebuilt != want {
			t.Fatalf("%s reassembled wrong:\n got %q\nwant %q", p, rebuilt, want)
		}
		if seen[p] == nil {
			t.Fatalf("%s never appeared", p)
		}
	}
	t.Logf("%d calls for 300 files", calls)
}

func TestReadBatchDefaultLimitContinues(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 2100; i++ {
		b.WriteString("x\n")
	}
	ws := newWS(t, map[string]string{"big.txt": b.String(), "s.txt": "s\n"})
	res := run(t, ws, "read", map[string]any{"files": []any{map[string]any{"path": "big.txt"}, map[string]any{"path": "s.txt"}}, "max_output_bytes": 98304})
	bm := metaJSON(t, res)["batch"].(map[string]any)
	cont := bm["continuation"].([]any)
	if bm["truncated"] != true || len(cont) != 1 || fmt.Sprint(cont[0]) != "map[offset:2000 path:big.txt]" {
		t.Fatalf("batch %v", bm)
	}
	if !strings.Contains(res.Output, "=== s.txt ===") {
		t.Fatal("the second file was not read")
	}
}

func TestReadSchemas(t *testing.T) {
	r := &Read{}
	for _, s := range []json.RawMessage{r.Parameters(), r.ValidationSchema()} {
		var m map[string]any
		if err := json.Unmarshal(s, &m); err != nil {
			t.Fatal(err)
		}
	}
	var p map[string]any
	_ = json.Unmarshal(r.Parameters(), &p)
	if _, ok := p["oneOf"]; ok {
		t.Fatal("model-visible schema has a top-level oneOf")
	}
	if c := r.Capabilities(nil); c != kernel.ReadOnlyPaginated(16) {
		t.Fatalf("capabilities %+v", c)
	}
}
