package core_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/a3s-lab/code-wasm/core"
	"github.com/a3s-lab/code-wasm/kernel"
)

// goFiles reads every file under GOROOT/src/<dir>, binary test data
// included, keyed by its slash path under dir.
func goFiles(t testing.TB, dir string) map[string][]byte {
	t.Helper()
	root := filepath.Join(runtime.GOROOT(), "src", dir)
	files := map[string][]byte{}
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		files[dir+"/"+filepath.ToSlash(rel)] = b
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// roundTripFiles is GOROOT/src/net (all text), GOROOT/src/image/testdata
// (GIF, PNG, JPEG) and edge cases: every byte value, invalid UTF-8, a BOM,
// CRLF and lone CR, an empty file.
func roundTripFiles(t testing.TB) map[string][]byte {
	files := goFiles(t, "net")
	for p, b := range goFiles(t, "image/testdata") {
		files[p] = b
	}
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	files["edge/all-bytes.bin"] = all
	files["edge/latin1.txt"] = []byte("caf\xe9\n")
	files["edge/bom.txt"] = []byte("\xef\xbb\xbfhello\n")
	files["edge/crlf.txt"] = []byte("a\r\nb\rc\n")
	files["edge/empty.txt"] = []byte{}
	return files
}

// Every file of GOROOT/src/net (and binary files) goes in with ImportFiles and comes back
// byte for byte through ExportFiles, ReadBytes, ReadText and WriteBytes.
func TestContentRoundTrip(t *testing.T) {
	ctx := context.Background()
	files := roundTripFiles(t)
	binary := 0
	for _, b := range files {
		if bytes.IndexByte(b, 0) >= 0 {
			binary++
		}
	}
	if len(files) < 300 || binary == 0 {
		t.Fatalf("GOROOT/src/net: %d files, %d binary; want hundreds, some binary", len(files), binary)
	}
	s, err := core.New(core.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.ImportFiles(ctx, files); err != nil {
		t.Fatal(err)
	}
	out, err := s.ExportFiles(ctx, core.ExportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != len(files) {
		t.Fatalf("exported %d files, imported %d", len(out), len(files))
	}
	for p, want := range files {
		if !bytes.Equal(out[p], want) {
			t.Fatalf("%s: exported bytes differ", p)
		}
		got, err := s.ReadBytes(ctx, p)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("ReadBytes(%s): err %v, equal %v", p, err, bytes.Equal(got, want))
		}
	}
	for p, want := range files {
		if !utf8.Valid(want) {
			continue
		}
		if text, err := s.ReadText(ctx, p); err != nil || text != string(want) {
			t.Fatalf("ReadText(%s): %v", p, err)
		}
	}
	// A rewrite with WriteBytes of each file's reversed bytes, read back.
	for p, want := range files {
		rev := bytes.Clone(want)
		for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
			rev[i], rev[j] = rev[j], rev[i]
		}
		if res, err := s.WriteBytes(ctx, p, rev); err != nil || res.ExitCode != 0 {
			t.Fatalf("WriteBytes(%s): %v %+v", p, err, res)
		}
		if got, _ := s.ReadBytes(ctx, p); !bytes.Equal(got, rev) {
			t.Fatalf("%s: WriteBytes then ReadBytes differ", p)
		}
	}
}

func TestExportPagesAndFilters(t *testing.T) {
	ctx := context.Background()
	s, err := core.New(core.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	files := map[string][]byte{"a.txt": []byte("aa"), "a/x.go": []byte("x"), "a/b/y.go": []byte("yy"), "a-b/z.go": []byte("z"), "b.bin": {0, 1, 2}}
	if err := s.ImportFiles(ctx, files); err != nil {
		t.Fatal(err)
	}
	// One-byte pages: every file on its own page, in walk order.
	var order []string
	cursor := ""
	for {
		pg, err := s.ExportPage(ctx, core.ExportOptions{}, cursor, 1)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range pg.Files {
			order = append(order, f.Path)
			if f.Text == (f.Path == "b.bin") {
				t.Errorf("%s: text = %v", f.Path, f.Text)
			}
		}
		if pg.Next == "" {
			break
		}
		cursor = pg.Next
	}
	if got := strings.Join(order, " "); got != "a/b/y.go a/x.go a-b/z.go a.txt b.bin" {
		t.Fatalf("pages gave %s", got)
	}
	// ExportPageTo appends to the buffer it is given (kept when the page
	// fits, grown when a file does not) and gives the same bytes.
	buf := make([]byte, 3, 4)
	for _, c := range []struct {
		max   int
		want  string
		inBuf bool
	}{{1, "yy", true}, {100, "yyxzaa\x00\x01\x02", false}} {
		pg, err := s.ExportPageTo(ctx, core.ExportOptions{}, "", c.max, buf)
		if err != nil || string(pg.Data) != c.want {
			t.Fatalf("ExportPageTo(max %d): %q, %v; want %q", c.max, pg.Data, err, c.want)
		}
		if inBuf := &pg.Data[:1][0] == &buf[:1][0]; inBuf != c.inBuf {
			t.Errorf("ExportPageTo(max %d): in the given buffer = %v", c.max, inBuf)
		}
	}
	// A cursor that no page gave is refused, naming it.
	for _, c := range []struct{ under, cursor string }{{"", "../etc/passwd"}, {"", "/a.txt"}, {"", "a//x.go"}, {"a", "b.bin"}, {"", "a/./x.go"}} {
		_, err := s.ExportPage(ctx, core.ExportOptions{Under: c.under}, c.cursor, 1)
		if err == nil || !strings.Contains(err.Error(), "cursor") || !strings.Contains(err.Error(), c.cursor) {
			t.Errorf("under %q, cursor %q: %v", c.under, c.cursor, err)
		}
	}
	got, err := s.ExportFiles(ctx, core.ExportOptions{Under: "a", Include: "**/*.go"})
	if err != nil || len(got) != 2 || string(got["a/b/y.go"]) != "yy" {
		t.Fatalf("under a, include **/*.go: %v %v", got, err)
	}
	if _, err := s.ExportFiles(ctx, core.ExportOptions{Include: "[z"}); err == nil || !strings.Contains(err.Error(), "include") {
		t.Fatalf("a bad include: %v", err)
	}
}

// Bad input changes nothing and says what was wrong; hooks see the paths
// and may block; the calls are events like any other.
func TestContentThroughTheKernel(t *testing.T) {
	ctx := context.Background()
	blocked := kernel.Hook{ID: "lock", Event: kernel.HookPreToolUse, Matcher: kernel.HookMatcher{PathPattern: "locked/**"},
		Handler: func(context.Context, kernel.HookRequest) (kernel.HookResponse, error) {
			return kernel.HookResponse{Action: kernel.HookBlock, Reason: "locked"}, nil
		}}
	s, err := core.New(core.Options{Governance: kernel.Governance{Hooks: []kernel.Hook{blocked}}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sub := s.Events()
	defer sub.Close()
	err = s.ImportFiles(ctx, map[string][]byte{"ok.txt": []byte("x"), "../out.txt": []byte("y")})
	var te *core.ToolError
	if !errors.As(err, &te) || !strings.Contains(err.Error(), `files["../out.txt"]`) {
		t.Fatalf("an escaping path: %v", err)
	}
	if _, err := s.ReadBytes(ctx, "ok.txt"); err == nil {
		t.Fatal("a refused import wrote ok.txt")
	}
	if err := s.ImportFiles(ctx, map[string][]byte{"a.txt": []byte("1"), "./a.txt": []byte("2")}); err == nil || !strings.Contains(err.Error(), "same file") {
		t.Fatalf("two keys for one file: %v", err)
	}
	if res, err := s.WriteBytes(ctx, "locked/k.bin", []byte{0xff}); err != nil || res.ExitCode == 0 || !strings.Contains(res.Output, "locked") {
		t.Fatalf("a hook's block: %v %+v", err, res)
	}
	if err := s.ImportFiles(ctx, map[string][]byte{"locked/k.bin": {1}}); err == nil {
		t.Fatal("importFiles passed the hook")
	}
	if res, err := s.WriteBytes(ctx, "bad.txt", []byte{0xff, 0xfe}); err != nil || res.ExitCode != 0 {
		t.Fatalf("WriteBytes: %v %+v", err, res)
	}
	if _, err := s.ReadText(ctx, "bad.txt"); err == nil || !strings.Contains(err.Error(), "readBytes") {
		t.Fatalf("ReadText of non-UTF-8: %v", err)
	}
	if _, err := s.ReadText(ctx, "missing.txt"); !errors.As(err, &te) {
		t.Fatalf("ReadText of a missing file: %v", err)
	}
	for _, n := range s.ToolNames() {
		if strings.HasPrefix(n, "read") && n != "read" || strings.Contains(n, "Files") || n == "writeBytes" {
			t.Fatalf("a content call is listed as a tool: %v", s.ToolNames())
		}
	}
	s.Close()
	if _, err := s.ReadText(ctx, "bad.txt"); !errors.Is(err, core.ErrClosed) {
		t.Fatalf("ReadText after Close: %v", err)
	}
	var names []string
	for {
		evs, done, _ := sub.Next(ctx, 0)
		for _, e := range evs {
			if e.Type == kernel.EventToolEnd {
				names = append(names, e.Payload["name"].(string))
			}
		}
		if done {
			break
		}
	}
	if got := strings.Join(names, " "); got != "readBytes writeBytes importFiles writeBytes readText readText" {
		t.Fatalf("tool_end events: %s", got)
	}
}

// BenchmarkContentGOROOT imports and exports GOROOT/src (~150 MB, 11k
// files) natively; bench/content.bench.mjs measures the same through JS.
func BenchmarkContentGOROOT(b *testing.B) {
	ctx := context.Background()
	files := goFiles(b, ".")
	total := 0
	for _, d := range files {
		total += len(d)
	}
	b.SetBytes(int64(total))
	for b.Loop() {
		s, err := core.New(core.Options{})
		if err != nil {
			b.Fatal(err)
		}
		if err := s.ImportFiles(ctx, files); err != nil {
			b.Fatal(err)
		}
		out, err := s.ExportFiles(ctx, core.ExportOptions{})
		if err != nil || len(out) != len(files) {
			b.Fatal(err, len(out))
		}
		s.Close()
	}
}
