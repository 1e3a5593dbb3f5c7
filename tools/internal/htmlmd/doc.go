// Package htmlmd turns an HTML page into Markdown or plain text for
// web_fetch: headings, paragraphs, lists, links, emphasis, code, quotes and
// tables are kept; scripts, styles, navigation, forms and other chrome are
// dropped. It is a single pass over golang.org/x/net/html's tokenizer.
package htmlmd
