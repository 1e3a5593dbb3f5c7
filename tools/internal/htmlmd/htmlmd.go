package htmlmd

import (
	"bytes"
	"strings"

	"github.com/a3s-lab/code-wasm/internal/lazyre"

	"golang.org/x/net/html"
)

// skipped elements lose their whole content.
var skipped = map[string]bool{
	"script": true, "style": true, "noscript": true, "nav": true, "template": true, "svg": true,
	"iframe": true, "form": true, "button": true, "select": true, "canvas": true, "object": true,
	"head": true, "footer": true, "aside": true,
}

// blocks start and end on their own line.
var blocks = map[string]bool{
	"p": true, "div": true, "section": true, "article": true, "main": true, "header": true,
	"figure": true, "figcaption": true, "dl": true, "dt": true, "dd": true, "details": true,
	"summary": true, "address": true, "center": true, "body": true, "html": true, "caption": true,
}

// voids have no end tag.
var voids = map[string]bool{
	"area": true, "base": true, "br": true, "col": true, "embed": true, "hr": true, "img": true,
	"input": true, "link": true, "meta": true, "source": true, "track": true, "wbr": true,
}

type list struct {
	ordered bool
	n       int
}

type conv struct {
	md     bool
	out    []*strings.Builder // the innermost open capture last (cells, quotes)
	lists  []list
	links  []string
	pre    int
	row    []string
	rows   int // rows emitted in the current table
	tables int
	title  string
}

func (c *conv) w() *strings.Builder { return c.out[len(c.out)-1] }

// write appends s, collapsing whitespace outside pre.
func (c *conv) text(s string) {
	b := c.w()
	if c.pre > 0 {
		b.WriteString(s)
		return
	}
	s = collapse(s)
	if s == " " || strings.HasPrefix(s, " ") {
		cur := b.String()
		if cur == "" || strings.HasSuffix(cur, " ") || strings.HasSuffix(cur, "\n") {
			s = strings.TrimLeft(s, " ")
		}
	}
	if c.md && c.pre == 0 {
		s = mdEscape.Replace(s)
	}
	b.WriteString(s)
}

var (
	mdEscape = strings.NewReplacer("*", `\*`, "_", `\_`, "`", "\\`", "[", `\[`, "]", `\]`)
)

// collapse turns each run of HTML whitespace into one space.
func collapse(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ' ', '\t', '\r', '\n', '\f':
			if !space {
				b.WriteByte(' ')
			}
			space = true
		default:
			b.WriteByte(s[i])
			space = false
		}
	}
	return b.String()
}

// tidy drops trailing blanks of lines, keeps at most one empty line in a
// row, and ends the text with one newline.
func tidy(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	empty := 0
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		l = strings.TrimRight(l, " \t")
		if l == "" {
			if empty++; empty > 1 {
				continue
			}
		} else {
			empty = 0
		}
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return b.String()
}

// block ends the current line with a blank line.
func (c *conv) block() { c.w().WriteString("\n\n") }

func (c *conv) line() { c.w().WriteString("\n") }

func attr(t html.Token, name string) string {
	for _, a := range t.Attr {
		if a.Key == name {
			return strings.TrimSpace(a.Val)
		}
	}
	return ""
}

// Convert renders page as Markdown (md) or plain text. With bodyOnly only
// the body's content is kept; otherwise the title leads as a heading.
func Convert(page []byte, md, bodyOnly bool) string {
	c := &conv{md: md, out: []*strings.Builder{{}}}
	z := html.NewTokenizer(bytes.NewReader(page))
	skip, inTitle := 0, false
	var skipTag string
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			break
		}
		t := z.Token()
		name := t.Data
		if skip > 0 {
			switch {
			case tt == html.StartTagToken && name == skipTag:
				skip++
			case tt == html.EndTagToken && name == skipTag:
				skip--
			}
			if name == "title" && tt == html.StartTagToken {
				inTitle = true
			}
			if tt == html.TextToken && inTitle {
				c.title += t.Data
			}
			if name == "title" && tt == html.EndTagToken {
				inTitle = false
			}
			continue
		}
		switch tt {
		case html.TextToken:
			c.text(t.Data)
		case html.StartTagToken, html.SelfClosingTagToken:
			if skipped[name] && !voids[name] && tt == html.StartTagToken {
				skip, skipTag = 1, name
				continue
			}
			c.open(t)
		case html.EndTagToken:
			c.close(name)
		}
	}
	for len(c.out) > 1 { // unclosed captures
		c.close(c.popName())
	}
	s := c.out[0].String()
	if !bodyOnly && strings.TrimSpace(c.title) != "" {
		h := strings.TrimSpace(collapse(c.title))
		if md {
			h = "# " + h
		}
		s = h + "\n\n" + s
	}
	return tidy(s)
}

// captures: what each pushed builder is for.
func (c *conv) popName() string {
	if c.pre > 0 {
		return "pre"
	}
	return "td"
}

func (c *conv) open(t html.Token) {
	name := t.Data
	switch {
	case len(name) == 2 && name[0] == 'h' && name[1] >= '1' && name[1] <= '6':
		c.block()
		if c.md {
			c.w().WriteString(strings.Repeat("#", int(name[1]-'0')) + " ")
		}
	case blocks[name]:
		c.block()
	case name == "br":
		c.line()
	case name == "hr":
		c.block()
		if c.md {
			c.w().WriteString("---\n\n")
		}
	case name == "ul" || name == "ol":
		if len(c.lists) == 0 {
			c.block()
		}
		c.lists = append(c.lists, list{ordered: name == "ol"})
	case name == "li":
		c.line()
		depth := len(c.lists)
		if depth > 0 {
			c.w().WriteString(strings.Repeat("  ", depth-1))
			l := &c.lists[depth-1]
			l.n++
			if l.ordered {
				c.w().WriteString(itoa(l.n) + ". ")
			} else {
				c.w().WriteString("- ")
			}
		} else {
			c.w().WriteString("- ")
		}
	case name == "pre":
		c.block()
		c.pre++
		if c.md {
			c.w().WriteString("```\n")
		}
	case name == "code" && c.pre == 0 && c.md:
		c.w().WriteString("`")
	case (name == "strong" || name == "b") && c.md:
		c.w().WriteString("**")
	case (name == "em" || name == "i") && c.md:
		c.w().WriteString("*")
	case name == "blockquote":
		c.block()
		c.out = append(c.out, &strings.Builder{})
	case name == "a":
		href := attr(t, "href")
		if strings.HasPrefix(strings.ToLower(href), "javascript:") || strings.HasPrefix(href, "#") {
			href = ""
		}
		c.links = append(c.links, href)
		if c.md && href != "" {
			c.w().WriteString("[")
		}
	case name == "img" && c.md:
		if alt := attr(t, "alt"); alt != "" {
			c.w().WriteString("![" + mdEscape.Replace(alt) + "](" + attr(t, "src") + ")")
		}
	case name == "table":
		c.block()
		c.tables++
		c.rows = 0
	case name == "tr":
		c.row = c.row[:0]
	case name == "td" || name == "th":
		c.out = append(c.out, &strings.Builder{})
	}
}

func (c *conv) close(name string) {
	switch {
	case len(name) == 2 && name[0] == 'h' && name[1] >= '1' && name[1] <= '6', blocks[name]:
		c.block()
	case name == "ul" || name == "ol":
		if len(c.lists) > 0 {
			c.lists = c.lists[:len(c.lists)-1]
		}
		if len(c.lists) == 0 {
			c.block()
		}
	case name == "pre":
		if c.pre > 0 {
			c.pre--
			if c.md {
				if !strings.HasSuffix(c.w().String(), "\n") {
					c.line()
				}
				c.w().WriteString("```")
			}
			c.block()
		}
	case name == "code" && c.pre == 0 && c.md:
		c.w().WriteString("`")
	case (name == "strong" || name == "b") && c.md:
		c.w().WriteString("**")
	case (name == "em" || name == "i") && c.md:
		c.w().WriteString("*")
	case name == "blockquote":
		if len(c.out) > 1 {
			inner := strings.TrimSpace(c.pop())
			for _, l := range strings.Split(inner, "\n") {
				c.w().WriteString(strings.TrimRight("> "+l, " ") + "\n")
			}
			c.block()
		}
	case name == "a":
		if n := len(c.links); n > 0 {
			href := c.links[n-1]
			c.links = c.links[:n-1]
			if c.md && href != "" {
				c.w().WriteString("](" + href + ")")
			}
		}
	case name == "td" || name == "th":
		if len(c.out) > 1 {
			cell := strings.TrimSpace(collapse(c.pop()))
			if c.md {
				cell = strings.ReplaceAll(cell, "|", `\|`)
			}
			c.row = append(c.row, cell)
		}
	case name == "tr":
		if len(c.row) == 0 {
			return
		}
		b := c.w()
		if c.md {
			b.WriteString("| " + strings.Join(c.row, " | ") + " |\n")
			if c.rows == 0 {
				b.WriteString("|" + strings.Repeat(" --- |", len(c.row)) + "\n")
			}
		} else {
			b.WriteString(strings.Join(c.row, "\t") + "\n")
		}
		c.rows++
		c.row = c.row[:0]
	case name == "table":
		c.block()
	}
}

func (c *conv) pop() string {
	b := c.out[len(c.out)-1]
	c.out = c.out[:len(c.out)-1]
	return b.String()
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

// metaRefresh matches the URL of <meta http-equiv="refresh" content="N; url=...">.
// Compiled on first use: at package init it cost every wasm start 10-90 ms
// (its case folding), web_fetch or not.
var metaRefresh = lazyre.New(`(?i)^\s*\d*\.?\d*\s*[;,]\s*url\s*=\s*['"]?([^'"]+)['"]?\s*$`)

// Refresh returns the target of the page's meta refresh, or "".
func Refresh(page []byte) string {
	z := html.NewTokenizer(bytes.NewReader(page))
	for {
		switch z.Next() {
		case html.ErrorToken:
			return ""
		case html.StartTagToken, html.SelfClosingTagToken:
			t := z.Token()
			if t.Data == "body" {
				return ""
			}
			if t.Data == "meta" && strings.EqualFold(attr(t, "http-equiv"), "refresh") {
				if m := metaRefresh().FindStringSubmatch(attr(t, "content")); m != nil {
					return strings.TrimSpace(m[1])
				}
			}
		}
	}
}

// Body returns the raw HTML between <body> and </body>, or the page when it
// has no body tag.
func Body(page []byte) []byte {
	z := html.NewTokenizer(bytes.NewReader(page))
	start, pos := -1, 0
	for {
		tt := z.Next()
		raw := len(z.Raw())
		if tt == html.ErrorToken {
			break
		}
		if tt == html.StartTagToken && start < 0 {
			if name, _ := z.TagName(); string(name) == "body" {
				start = pos + raw
			}
		}
		if tt == html.EndTagToken && start >= 0 {
			if name, _ := z.TagName(); string(name) == "body" {
				return page[start:pos]
			}
		}
		pos += raw
	}
	if start >= 0 {
		return page[start:]
	}
	return page
}
