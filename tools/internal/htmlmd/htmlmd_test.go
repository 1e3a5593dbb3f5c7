package htmlmd

import "testing"

func TestConvert(t *testing.T) {
	page := `<html><head><title>The  title</title><style>x{}</style></head><body>
<h2>Head</h2><p>a  <i>b</i>
c &amp; d_e</p><ol><li>one<ul><li>inner</li></ul></li><li>two</li></ol>
<blockquote><p>quoted</p></blockquote><pre>  keep
   this</pre><script>gone()</script></body></html>`
	md := "# The title\n\n## Head\n\na *b* c & d\\_e\n\n1. one\n  - inner\n2. two\n\n> quoted\n\n```\n  keep\n   this\n```\n"
	if got := Convert([]byte(page), true, false); got != md {
		t.Errorf("markdown:\n%q\nwant\n%q", got, md)
	}
	text := "Head\n\na b c & d_e\n\n1. one\n  - inner\n2. two\n\n> quoted\n\n  keep\n   this\n"
	if got := Convert([]byte(page), false, true); got != text {
		t.Errorf("text:\n%q\nwant\n%q", got, text)
	}
}

func TestRefreshAndBody(t *testing.T) {
	if got := Refresh([]byte(`<head><meta http-equiv="Refresh" content="0; URL='/next?a=1'"></head>`)); got != "/next?a=1" {
		t.Errorf("refresh %q", got)
	}
	if got := Refresh([]byte(`<body><meta http-equiv="refresh" content="0; url=/late"></body>`)); got != "" {
		t.Errorf("a meta in the body is not a refresh: %q", got)
	}
	if got := string(Body([]byte(`<html><body class="x"><p>in</p></body></html>`))); got != "<p>in</p>" {
		t.Errorf("body %q", got)
	}
}
