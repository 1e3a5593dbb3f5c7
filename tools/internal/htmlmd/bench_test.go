package htmlmd

import (
	"fmt"
	"strings"
	"testing"
)

// BenchmarkConvert300KB: one 300 KB page with tables, links and chrome to
// Markdown (web_fetch's goal: ≤ 30 ms native, ≤ 150 ms wasm).
func BenchmarkConvert300KB(b *testing.B) {
	var p strings.Builder
	p.WriteString(`<html><head><title>t</title><script>x()</script></head><body><nav><a href="/">home</a></nav>`)
	for i := 0; p.Len() < 300<<10; i++ {
		fmt.Fprintf(&p, "<h2>Section %d</h2><p>Text with <a href=\"/x/%d\">a link</a>, <em>stress</em> and <code>code</code>.</p>"+
			"<table><tr><th>a</th><th>b</th></tr><tr><td>%d</td><td>x|y</td></tr></table><ul><li>one</li><li>two</li></ul>\n", i, i, i)
	}
	page := []byte(p.String())
	b.SetBytes(int64(len(page)))
	for b.Loop() {
		Convert(page, true, true)
	}
}
