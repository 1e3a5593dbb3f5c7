package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/a3s-lab/code-wasm/kernel"
)

// FuzzEdit runs the edit tool on arbitrary content and arguments: a failure
// writes nothing and is invalid_argument; a dry run writes nothing; a
// success makes exactly the reported number of replacements.
func FuzzEdit(f *testing.F) {
	f.Add("a b a", "a", "c", false, false, 0, 0)
	f.Add("a b a", "a", "c", true, false, 2, 3)
	f.Add("x\r\ny\r\n", "x\ny", "1\n2", false, true, 1, 0)
	f.Add("same", "same", "same", false, false, 0, 0)
	f.Add("aaaa", "aa", "a", true, false, 0, 1)
	f.Fuzz(func(t *testing.T, content, old, repl string, all, dry bool, expected, maxR int) {
		if !utf8.ValidString(old) || !utf8.ValidString(repl) {
			t.Skip("arguments arrive as JSON, which cannot carry invalid UTF-8")
		}
		ws := newWS(t, map[string]string{"f": content})
		args := map[string]any{"file_path": "f", "old_string": old, "new_string": repl, "replace_all": all, "dry_run": dry}
		if expected != 0 {
			args["expected_replacements"] = expected
		}
		if maxR != 0 {
			args["max_replacements"] = maxR
		}
		res := run(t, ws, "edit", args)
		after, _ := fileContent(t, ws, "f")
		if res.ExitCode != 0 {
			if kindOf(res) != kernel.ErrInvalidArgument {
				t.Fatalf("failure kind %v: %s", res.ErrorKind, res.Output)
			}
			if after != content {
				t.Fatal("a rejected edit changed the file")
			}
			return
		}
		if dry && after != content {
			t.Fatal("dry run wrote")
		}
		count := res.Metadata["replacement_count"].(int)
		if count < 1 || (!all && count != 1) || (expected != 0 && count != expected) || (maxR != 0 && count > maxR) {
			t.Fatalf("count %d with all=%v expected=%d max=%d", count, all, expected, maxR)
		}
		newContent, _ := res.Metadata["after"].(string)
		if !dry && newContent != after {
			t.Fatal("metadata after differs from the file")
		}
		o, r := old, repl
		if !strings.Contains(content, old) { // the CRLF fallback matched
			o = strings.ReplaceAll(old, "\n", "\r\n")
			r = strings.ReplaceAll(strings.ReplaceAll(repl, "\r\n", "\n"), "\n", "\r\n")
		}
		if want := strings.Replace(content, o, r, count); newContent != want {
			t.Fatalf("after %q want %q", newContent, want)
		}
		if strings.Count(content, o) < count {
			t.Fatal("more replacements than occurrences")
		}
	})
}

// FuzzReadRange reads arbitrary ranges of arbitrary text: the numbered
// lines are exactly the requested slice, the footer's next offset is right,
// and a batch read of the same range under a small budget reassembles it
// through its continuation.
func FuzzReadRange(f *testing.F) {
	f.Add("a\nb\nc\n", 0, 0, 1024)
	f.Add("a\r\nb", 1, 1, 2000)
	f.Add("", 0, 5, 1024)
	f.Add(strings.Repeat("long line\n", 50), 7, 30, 1100)
	f.Fuzz(func(t *testing.T, content string, offset, limit, budget int) {
		if strings.ContainsRune(content, '\t') || strings.ContainsRune(content, '\x00') {
			content = strings.NewReplacer("\t", " ", "\x00", " ").Replace(content)
		}
		ws := newWS(t, map[string]string{"f": content})
		var all []string
		if content != "" {
			all = strings.Split(strings.TrimSuffix(content, "\n"), "\n")
			for i := range all {
				all[i] = strings.TrimSuffix(all[i], "\r")
			}
		}
		args := map[string]any{"file_path": "f", "offset": offset}
		if limit != 0 {
			args["limit"] = limit
		}
		res := run(t, ws, "read", args)
		lim := limit
		if lim == 0 {
			lim = 2000
		}
		if offset < 0 || lim < 1 || lim > 2000 || offset > len(all) {
			if res.ExitCode == 0 || kindOf(res) != kernel.ErrInvalidArgument {
				t.Fatalf("offset %d limit %d over %d lines accepted: %s", offset, limit, len(all), res.Output)
			}
			return
		}
		if res.ExitCode != 0 {
			t.Fatal(res.Output)
		}
		end := min(len(all), offset+lim)
		r := res.Metadata["range"].(map[string]any)
		n := r["returned_lines"].(int)
		if n > end-offset || (n < end-offset && r["output_truncated"] != true) {
			t.Fatalf("returned %d of %d lines", n, end-offset)
		}
		want := ""
		for i := offset; i < offset+n; i++ {
			l, _ := cutLine(all[i])
			want += fmt.Sprintf("%6d\t%s\n", i+1, l)
		}
		if !strings.HasPrefix(res.Output, want) {
			t.Fatalf("output %q does not start with %q", res.Output, want)
		}
		if (offset+n < len(all)) != (r["next_offset"] != nil) {
			t.Fatalf("next_offset %v at %d of %d", r["next_offset"], offset+n, len(all))
		}
		// Batch mode under a small budget, following the continuation.
		budget = 1024 + abs(budget)%4096
		req := []ReadFileSpec{{Path: "f", Offset: &offset}}
		if limit != 0 {
			req[0].Limit = &limit
		}
		var got []string
		for calls := 0; len(req) > 0; calls++ {
			if calls > 5000 {
				t.Fatal("no progress")
			}
			res := run(t, ws, "read", map[string]any{"files": req, "max_output_bytes": budget})
			if res.ExitCode != 0 {
				if strings.Contains(res.Output, "too small") {
					return // a line wider than the budget
				}
				t.Fatal(res.Output)
			}
			if len(res.Output) > budget {
				t.Fatalf("%d bytes over budget %d", len(res.Output), budget)
			}
			for _, l := range strings.Split(res.Output, "\n") {
				if num, text, ok := strings.Cut(l, "\t"); ok && len(num) >= 6 && strings.TrimSpace(num) != "" {
					got = append(got, text)
				}
			}
			b, _ := json.Marshal(res.Metadata["batch"].(map[string]any)["continuation"])
			req = nil
			json.Unmarshal(b, &req)
		}
		var wantAll []string
		for i := offset; i < len(all) && (limit == 0 || i < offset+limit); i++ {
			l, _ := cutLine(all[i])
			wantAll = append(wantAll, l)
		}
		if strings.Join(got, "\x00") != strings.Join(wantAll, "\x00") {
			t.Fatalf("batch reassembly:\n got %q\nwant %q", got, wantAll)
		}
	})
}

func abs(n int) int {
	if n < 0 {
		if n == -n { // MinInt
			return 0
		}
		return -n
	}
	return n
}

var _ = context.Background
