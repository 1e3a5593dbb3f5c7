package tools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// needBinary skips under js/wasm (no exec there) and fails natively when a
// binary the oracle needs is missing: the oracles must run natively.
func needBinary(t *testing.T, name string) string {
	t.Helper()
	if runtime.GOOS == "js" || runtime.GOOS == "wasip1" {
		t.Skipf("%s oracle: exec is unavailable under %s", name, runtime.GOOS)
	}
	p, err := exec.LookPath(name)
	if err != nil {
		t.Fatalf("%s oracle needs the %s binary on PATH (make deps installs it): %v", name, name, err)
	}
	return p
}

// loadTree copies the Go files under dir into a new memory workspace.
func loadTree(t testing.TB, dir string, keep func(string) bool) (map[string]string, int) {
	t.Helper()
	files := map[string]string{}
	size := 0
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !keep(p) {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		files[filepath.ToSlash(rel)] = string(b)
		size += len(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files, size
}

func parseRgCounts(t *testing.T, out []byte) map[string]int {
	m := map[string]int{}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if l == "" {
			continue
		}
		i := strings.LastIndexByte(l, ':')
		n, err := strconv.Atoi(l[i+1:])
		if err != nil {
			t.Fatalf("rg -c line %q", l)
		}
		m[strings.TrimPrefix(l[:i], "./")] = n
	}
	return m
}

// TestGrepOracleRipgrep: files_with_matches, count and summary agree
// exactly with ripgrep over GOROOT/src/net's Go files.
func TestGrepOracleRipgrep(t *testing.T) {
	rg := needBinary(t, "rg")
	goroot := runtime.GOROOT()
	netDir := filepath.Join(goroot, "src", "net")
	files, _ := loadTree(t, netDir, func(p string) bool { return strings.HasSuffix(p, ".go") })
	if len(files) < 100 {
		t.Fatalf("only %d Go files under %s", len(files), netDir)
	}
	ws := newWS(t, files)
	patterns := []struct {
		pattern string
		icase   bool
	}{
		{"func", false}, {"func ", false}, {"^func \\(", false}, {"return nil, err", false},
		{"err != nil", false}, {"TODO", false}, {"todo", true}, {"http", true},
		{"[A-Z][a-z]+Error", false}, {"0x[0-9a-fA-F]+", false}, {"^\\s*//", false}, {"\\)$", false},
		{"^$", false}, {"^}$", false}, {"(?:tcp|udp)[46]?", false}, {"IPv[46]", false},
		{"syscall\\.[A-Z]", false}, {"\\bnil\\b", false}, {"a.b", false}, {"DNS", true},
		{"context\\.Context", false}, {"if .* == nil \\{", false}, {"\"net\"", false}, {"[[:digit:]]{4,}", false},
		{"^package [a-z_]+$", false}, {"zzzz_no_such_thing", false}, {"Conn", true}, {"\\t\\t\\t\\treturn", false},
		{"TODO|FIXME|XXX", false}, {"listen|dial", true}, {"Err[A-Z]\\w+|errors\\.New", false},
	}
	if len(patterns) < 20 {
		t.Fatal("need at least 20 patterns")
	}
	for pi, p := range patterns {
		t.Run(p.pattern, func(t *testing.T) {
			flags := []string{"--no-ignore", "--hidden", "--no-config", "-g", "*.go"}
			if p.icase {
				flags = append(flags, "-i")
			}
			cmd := exec.Command(rg, append(append(flags, "-c", "-e", p.pattern), ".")...)
			cmd.Dir = netDir
			out, err := cmd.Output()
			var ee *exec.ExitError
			if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 1) {
				t.Fatalf("rg: %v", err)
			}
			want := parseRgCounts(t, out)
			wantLines := 0
			var wantFiles []string
			for f, n := range want {
				wantLines += n
				wantFiles = append(wantFiles, f)
			}
			sort.Strings(wantFiles)

			args := map[string]any{"pattern": p.pattern, "glob": "*.go", "-i": p.icase}
			sum := run(t, ws, "grep", with(args, "output_mode", "summary"))
			if sum.ExitCode != 0 {
				t.Fatal(sum.Output)
			}
			s := sum.Metadata["search"].(map[string]any)
			if s["matching_lines"] != wantLines || s["matching_files"] != len(wantFiles) {
				t.Fatalf("summary %v, rg: %d line(s) in %d file(s)", s, wantLines, len(wantFiles))
			}
			if want := fmt.Sprintf("%d matching line(s) in %d file(s)", wantLines, len(wantFiles)); sum.Output != want {
				t.Fatalf("summary output %q, want %q", sum.Output, want)
			}
			// files_with_matches, paged with limit 150 for a few patterns to
			// exercise cursors (each page is a full scan: slow under -race).
			var got []string
			cursor := ""
			pageSize := 1000
			if pi < 4 {
				pageSize = 150
			}
			for {
				res := run(t, ws, "grep", with(with(with(args, "output_mode", "files_with_matches"), "limit", pageSize), "cursor", cursor))
				if res.ExitCode != 0 {
					t.Fatal(res.Output)
				}
				for _, l := range strings.Split(res.Output, "\n") {
					if l != "" && !strings.HasPrefix(l, "(") && !strings.HasPrefix(l, "No matches") {
						got = append(got, l)
					}
				}
				next := res.Metadata["page"].(map[string]any)["next_cursor"]
				if next == nil {
					break
				}
				cursor = next.(string)
			}
			if strings.Join(got, "\n") != strings.Join(wantFiles, "\n") {
				t.Fatalf("files_with_matches differ from rg -c files:\n got %d %v\nwant %d %v", len(got), head(got), len(wantFiles), head(wantFiles))
			}
			cnt := run(t, ws, "grep", with(with(args, "output_mode", "count"), "limit", 1000))
			gotCounts := map[string]int{}
			for _, l := range strings.Split(cnt.Output, "\n") {
				if f, n, ok := strings.Cut(l, ": "); ok && strings.HasSuffix(n, " matching line(s)") {
					gotCounts[f], _ = strconv.Atoi(strings.TrimSuffix(n, " matching line(s)"))
				}
			}
			if fmt.Sprint(gotCounts) != fmt.Sprint(want) {
				t.Fatalf("count differs from rg -c:\n got %v\nwant %v", gotCounts, want)
			}
		})
	}
	// Content mode prints what rg prints (path:line:text, path-line-text
	// for context, "--" between groups), in the same file order.
	for _, c := range []struct {
		pattern string
		context int
	}{{"Listen", 0}, {"func \\(ln \\*TCPListener\\)", 2}, {"DeadlineExceeded", 1}, {"^}$", 0}} {
		args := []string{"--no-ignore", "--hidden", "--no-config", "--sort", "path", "--no-heading", "-n", "-g", "*.go"}
		if c.context > 0 {
			args = append(args, "-C", strconv.Itoa(c.context))
		}
		cmd := exec.Command(rg, append(args, "-e", c.pattern)...)
		cmd.Dir = netDir
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("rg %q: %v", c.pattern, err)
		}
		res := run(t, ws, "grep", map[string]any{"pattern": c.pattern, "glob": "*.go", "context": c.context})
		if res.Metadata["output_truncated"] == true {
			if !strings.HasPrefix(string(out), res.Output[:strings.LastIndex(res.Output, "\n[output truncated")]) {
				t.Fatalf("content %q: truncated output is not a prefix of rg's", c.pattern)
			}
			continue
		}
		body := res.Output[:strings.LastIndex(res.Output, "\n\n")+1]
		if body != string(out) {
			t.Fatalf("content %q -C%d differs from rg:\n--- ours\n%s\n--- rg\n%s", c.pattern, c.context, clip(body), clip(string(out)))
		}
	}
	// rg -l agrees too (one pattern is enough: -c already gave the set).
	cmd := exec.Command(rg, "--no-ignore", "--hidden", "--no-config", "-l", "-g", "*.go", "-e", "Listen", ".")
	cmd.Dir = netDir
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	var wantL []string
	for _, l := range strings.Fields(string(out)) {
		wantL = append(wantL, strings.TrimPrefix(l, "./"))
	}
	sort.Strings(wantL)
	res := run(t, ws, "grep", map[string]any{"pattern": "Listen", "glob": "*.go", "output_mode": "files_with_matches", "limit": 1000})
	if got := strings.Join(res.Metadata["source_anchors"].([]string), "\n"); len(wantL) <= 64 && got != strings.Join(wantL, "\n") {
		t.Fatalf("rg -l differs:\n%s\nvs\n%s", got, strings.Join(wantL, "\n"))
	}
	if res.Metadata["search"].(map[string]any)["matching_files"] != len(wantL) {
		t.Fatalf("rg -l: %d files, grep: %v", len(wantL), res.Metadata["search"])
	}
}

func with(m map[string]any, k string, v any) map[string]any {
	out := map[string]any{}
	for a, b := range m {
		out[a] = b
	}
	out[k] = v
	return out
}

func head(s []string) []string {
	if len(s) > 10 {
		return s[:10]
	}
	return s
}

var _ = context.Background
