package tools_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/tools/txtar"

	"github.com/a3s-lab/code-wasm/core"
	"github.com/a3s-lab/code-wasm/workspace"
	"github.com/a3s-lab/code-wasm/workspace/memfs"
)

var update = flag.Bool("update", false, "rewrite the golden transcripts in testdata/golden from the tools' current output")

// TestGolden replays every testdata/golden/*.txtar: it seeds a memory
// workspace with the files/ sections, makes the call in call.json through a
// session (the kernel's trusted host path, as session.tool does) and
// compares the tool's output, its result JSON (exit code, error kind,
// metadata; keys sorted) and every file the call changed (after/ sections)
// with the transcript. `go test -run TestGolden ./tools/ -update` rewrites
// the expected sections; the comment, call.json and files/ stay as written.
func TestGolden(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("testdata", "golden", "*.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Fatal("no golden transcripts in testdata/golden")
	}
	for _, p := range paths {
		t.Run(strings.TrimSuffix(filepath.Base(p), ".txtar"), func(t *testing.T) { runGolden(t, p) })
	}
}

// goldenCall is call.json: the tool and its arguments exactly as a host
// sends them.
type goldenCall struct {
	Tool string          `json:"tool"`
	Args json.RawMessage `json:"args"`
}

func runGolden(t *testing.T, path string) {
	ar, err := txtar.ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var call goldenCall
	seed := map[string]string{}
	var kept []txtar.File
	for _, f := range ar.Files {
		name, data, err := decodeSection(f)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		switch {
		case name == "call.json":
			dec := json.NewDecoder(bytes.NewReader(data))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&call); err != nil || call.Tool == "" || len(call.Args) == 0 {
				t.Fatalf("%s: call.json must be {\"tool\":…,\"args\":{…}}: %v", path, err)
			}
		case strings.HasPrefix(name, "files/"):
			seed[strings.TrimPrefix(name, "files/")] = string(data)
		case name == "output", name == "result.json", strings.HasPrefix(name, "after/"):
			continue // expected sections: compared below, rewritten by -update
		default:
			t.Fatalf("%s: unknown section %q (want call.json, files/…, output, result.json, after/…)", path, f.Name)
		}
		kept = append(kept, f)
	}
	if call.Tool == "" {
		t.Fatalf("%s: no call.json section", path)
	}
	if call.Tool == "program" && runtime.GOOS == "js" {
		t.Skip("program has no default engine under js/wasm (the JS host supplies it)")
	}

	ws, err := workspace.New(memfs.New())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := workspace.Seed(ctx, ws, seed); err != nil {
		t.Fatal(err)
	}
	s, err := core.New(core.Options{Workspace: ws})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	res, err := s.Tool(ctx, call.Tool, call.Args)
	if err != nil {
		t.Fatalf("%s: no result: %v", call.Tool, err)
	}

	got := []txtar.File{encodeSection("output", []byte(res.Output))}
	rj, err := json.MarshalIndent(map[string]any{
		"exitCode": res.ExitCode, "errorKind": res.ErrorKind, "metadata": asHostSees(res.Metadata),
	}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, encodeSection("result.json", append(rj, '\n')))
	final := filesOf(t, ws)
	for _, p := range sortedKeys(final) {
		after := final[p]
		if before, ok := seed[p]; ok && before == after {
			continue
		}
		got = append(got, encodeSection("after/"+p, []byte(after)))
	}
	for _, p := range sortedKeys(seed) {
		if _, ok := final[p]; !ok {
			got = append(got, txtar.File{Name: "after/" + p + " (deleted)"})
		}
	}

	if *update {
		ar.Files = append(kept, got...)
		if err := os.WriteFile(path, txtar.Format(ar), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want := map[string][]byte{}
	var wantOrder []string
	for _, f := range ar.Files {
		if f.Name == "output" || f.Name == "result.json" || strings.HasPrefix(f.Name, "output ") || strings.HasPrefix(f.Name, "after/") {
			want[f.Name] = f.Data
			wantOrder = append(wantOrder, f.Name)
		}
	}
	seen := map[string]bool{}
	for _, f := range got {
		seen[f.Name] = true
		w, ok := want[f.Name]
		switch {
		case !ok:
			t.Errorf("%s: section %q is new (regenerate with -update if intended):\n%s", path, f.Name, f.Data)
		case !bytes.Equal(w, f.Data):
			t.Errorf("%s: section %q differs (regenerate with -update if intended)\n%s", path, f.Name, lineDiff(string(w), string(f.Data)))
		}
	}
	for _, n := range wantOrder {
		if !seen[n] {
			t.Errorf("%s: expected section %q is missing from the call's result", path, n)
		}
	}
}

// filesOf reads every file of ws.
func filesOf(t *testing.T, ws *workspace.Workspace) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := ws.Walk(context.Background(), ".", func(p string, e workspace.Entry) error {
		if e.Kind != workspace.KindDir {
			b, _, err := ws.ReadFile(context.Background(), p)
			if err != nil {
				return err
			}
			out[p] = string(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// asHostSees round-trips metadata through JSON: the transcript shows what
// hosts see. Nothing is scrubbed: no field of these results varies from run
// to run (`go test -count=3 -run TestGolden ./tools/` passes).
func asHostSees(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("<unmarshalable: %v>", err)
	}
	var x any
	if err := json.Unmarshal(b, &x); err != nil {
		return fmt.Sprintf("<unmarshalable: %v>", err)
	}
	return x
}

// Section encodings. txtar holds text lines, so a section whose bytes it
// could not keep exactly is written in another form, named by a suffix:
//
//	NAME                      the bytes as they are (valid UTF-8, no CR, ends with "\n", or empty)
//	NAME (no final newline)   the bytes plus one "\n" that is not part of them
//	NAME (quoted)             one Go string literal per line of the bytes, concatenated
//	NAME (generated)          seeded files only: lines "COUNT x TEXT", TEXT repeated COUNT
//	                          times, {n} in it the 1-based line number, {c*K} K copies of c
var sectionForm = regexp.MustCompile(`^(.*) \((no final newline|quoted|generated)\)$`)

func decodeSection(f txtar.File) (string, []byte, error) {
	m := sectionForm.FindStringSubmatch(f.Name)
	if m == nil {
		return f.Name, f.Data, nil
	}
	switch m[2] {
	case "no final newline":
		return m[1], bytes.TrimSuffix(f.Data, []byte("\n")), nil
	case "quoted":
		var b []byte
		for _, l := range strings.Split(strings.TrimSuffix(string(f.Data), "\n"), "\n") {
			s, err := strconv.Unquote(l)
			if err != nil {
				return "", nil, fmt.Errorf("section %q: line %q is not a Go string literal", f.Name, l)
			}
			b = append(b, s...)
		}
		return m[1], b, nil
	default:
		b, err := generate(string(f.Data))
		if err != nil {
			return "", nil, fmt.Errorf("section %q: %v", f.Name, err)
		}
		return m[1], b, nil
	}
}

var genLine = regexp.MustCompile(`^(\d+) x (.*)$`)
var genRepeat = regexp.MustCompile(`\{(.)\*(\d+)\}`)

func generate(spec string) ([]byte, error) {
	var b bytes.Buffer
	n := 0
	for _, l := range strings.Split(strings.TrimSuffix(spec, "\n"), "\n") {
		m := genLine.FindStringSubmatch(l)
		if m == nil {
			return nil, fmt.Errorf("line %q is not \"COUNT x TEXT\"", l)
		}
		count, _ := strconv.Atoi(m[1])
		text := genRepeat.ReplaceAllStringFunc(m[2], func(r string) string {
			k := genRepeat.FindStringSubmatch(r)
			times, _ := strconv.Atoi(k[2])
			return strings.Repeat(k[1], times)
		})
		for range count {
			n++
			b.WriteString(strings.ReplaceAll(text, "{n}", strconv.Itoa(n)))
			b.WriteByte('\n')
		}
	}
	return b.Bytes(), nil
}

func encodeSection(name string, data []byte) txtar.File {
	plain := utf8.Valid(data) && !bytes.ContainsRune(data, '\r') && !bytes.Contains(data, []byte("\n-- ")) && !bytes.HasPrefix(data, []byte("-- "))
	switch {
	case plain && (len(data) == 0 || data[len(data)-1] == '\n'):
		return txtar.File{Name: name, Data: data}
	case plain:
		return txtar.File{Name: name + " (no final newline)", Data: append(data, '\n')}
	}
	var b strings.Builder
	for _, l := range strings.SplitAfter(string(data), "\n") {
		if l != "" {
			b.WriteString(strconv.Quote(l))
			b.WriteByte('\n')
		}
	}
	if len(data) == 0 {
		b.WriteString(`""` + "\n")
	}
	return txtar.File{Name: name + " (quoted)", Data: []byte(b.String())}
}

// lineDiff shows the first differing line of want and got with a little
// context, enough to see what changed.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	i := 0
	for i < len(w) && i < len(g) && w[i] == g[i] {
		i++
	}
	col := 0
	if i < len(w) && i < len(g) {
		for col < len(w[i]) && col < len(g[i]) && w[i][col] == g[i][col] {
			col++
		}
	}
	line := func(ls []string, i int) string {
		if i < len(ls) {
			l := ls[i]
			from, to := max(0, col-60), min(len(l), col+60)
			return fmt.Sprintf("(from byte %d) %s", from, strconv.Quote(l[from:to]))
		}
		return "(end)"
	}
	return fmt.Sprintf("first difference at line %d:\n  want %s\n  got  %s", i+1, line(w, i), line(g, i))
}
