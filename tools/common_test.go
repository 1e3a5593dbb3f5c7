package tools

import (
	"strings"
	"testing"

	"github.com/a3s-lab/code-wasm/tools/internal/udiff"
	"github.com/a3s-lab/code-wasm/workspace"
)

// writeDisplay must write exactly what workspace.Display returns.
func TestWriteDisplayIsDisplay(t *testing.T) {
	cases := []string{"", "a", "a/b.go", "sp ace", "~!@#$%^&*()_+{}|:\"<>?`-=[]\\;',./", "tab\there", "nl\n", "del\x7f", "\x00", "é", "日本/語.go",
		"\u0085c1", "\xff", "a\xe2\x82", "\u200bzero-width", "\U0001F600"}
	for c := 0; c < 256; c++ {
		cases = append(cases, "x"+string(rune(c))+"y", "x"+string([]byte{byte(c)})+"y")
	}
	for _, p := range cases {
		var b strings.Builder
		writeDisplay(&b, p)
		if got, want := b.String(), workspace.Display(p); got != want {
			t.Errorf("writeDisplay(%q) = %q; Display gives %q", p, got, want)
		}
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
