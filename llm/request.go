package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"unicode/utf8"
	"unsafe"

	"github.com/a3s-lab/code-wasm/errkind"
)

// check refuses a request no provider would accept, before anything is
// sent: an *Error of kind invalid_argument naming the field.
func (r *Request) check(schemasChecked bool) error {
	bad := func(format string, a ...any) error {
		return &Error{kind: errkind.InvalidArgument, Message: "llm request: " + fmt.Sprintf(format, a...)}
	}
	if len(r.Messages) == 0 {
		return bad("messages is empty")
	}
	for i, m := range r.Messages {
		switch m.Role {
		case User:
			if len(m.ToolCalls) > 0 {
				return bad("messages[%d]: a user message holds tool calls", i)
			}
			if m.Text == "" && len(m.ToolResults) == 0 {
				return bad("messages[%d] is empty", i)
			}
		case Assistant:
			if len(m.ToolResults) > 0 {
				return bad("messages[%d]: an assistant message holds tool results", i)
			}
			if m.Text == "" && len(m.ToolCalls) == 0 {
				return bad("messages[%d] is empty", i)
			}
		default:
			return bad("messages[%d].role is %q (want user or assistant)", i, m.Role)
		}
		for j, c := range m.ToolCalls {
			if c.ID == "" || c.Name == "" {
				return bad("messages[%d].toolCalls[%d] has no id or name", i, j)
			}
		}
		for j, res := range m.ToolResults {
			if res.CallID == "" {
				return bad("messages[%d].toolResults[%d] has no callId", i, j)
			}
		}
	}
	names := map[string]bool{}
	for i, t := range r.Tools {
		if t.Name == "" {
			return bad("tools[%d] has no name", i)
		}
		if names[t.Name] {
			return bad("tools[%d]: %q is listed twice", i, t.Name)
		}
		names[t.Name] = true
		if !schemasChecked && t.Parameters != nil && !isJSONObject(t.Parameters) {
			return bad("tools[%d].parameters is not a JSON object", i)
		}
	}
	switch r.ToolChoice.Type {
	case "", ToolChoiceAuto, ToolChoiceNone:
	case ToolChoiceRequired:
		if len(r.Tools) == 0 {
			return bad("toolChoice requires a tool call, but tools is empty")
		}
	case ToolChoiceTool:
		if !names[r.ToolChoice.Name] {
			return bad("toolChoice names %q, which is not in tools", r.ToolChoice.Name)
		}
	default:
		return bad("toolChoice.type is %q (want auto, none, required or tool)", r.ToolChoice.Type)
	}
	if r.MaxTokens < 0 {
		return bad("maxTokens is negative")
	}
	return nil
}

// merged is the conversation with messages of one role in a row merged
// into one (texts joined by a blank line), so every tool call's results
// directly follow it and roles alternate, as both APIs require.
func (r *Request) merged() []Message {
	out := make([]Message, 0, len(r.Messages))
	for _, m := range r.Messages {
		n := len(out)
		if n == 0 || out[n-1].Role != m.Role {
			out = append(out, m)
			continue
		}
		p := &out[n-1]
		switch {
		case p.Text == "":
			p.Text = m.Text
		case m.Text != "":
			p.Text += "\n\n" + m.Text
		}
		p.ToolCalls = append(p.ToolCalls[:len(p.ToolCalls):len(p.ToolCalls)], m.ToolCalls...)
		p.ToolResults = append(p.ToolResults[:len(p.ToolResults):len(p.ToolResults)], m.ToolResults...)
	}
	return out
}

// parameters is a tool's schema, {"type":"object"} when it has none.
func (t Tool) parameters() json.RawMessage {
	if t.Parameters == nil {
		return json.RawMessage(`{"type":"object","properties":{}}`)
	}
	return t.Parameters
}

// arguments is a call's JSON text, "{}" when empty.
func (c ToolCall) arguments() string {
	for _, b := range []byte(c.Arguments) {
		if b != ' ' && b != '\t' && b != '\n' && b != '\r' {
			return c.Arguments
		}
	}
	return "{}"
}

// isJSONObject reports whether b is one valid JSON value that is an object.
// It checks without decoding, and remembers the schemas it passed: an agent
// sends the same tool schemas in every request, and checking them each time
// was a fifth of the loop's own CPU per turn (a map lookup hashes the bytes
// far faster than a scan validates them).
func isJSONObject(b []byte) bool {
	objects.Lock()
	_, ok := objects.seen[string(b)]
	objects.Unlock()
	if ok {
		return true
	}
	t := bytes.TrimLeft(b, " \t\r\n")
	if len(t) == 0 || t[0] != '{' || !json.Valid(t) {
		return false
	}
	objects.Lock()
	if len(objects.seen) >= 1024 {
		clear(objects.seen)
	}
	objects.seen[string(b)] = struct{}{}
	objects.Unlock()
	return true
}

// objects holds the schemas isJSONObject passed (at most 1024).
var objects = struct {
	sync.Mutex
	seen map[string]struct{}
}{seen: map[string]struct{}{}}

// encodeBody marshals b and adds tools, the JSON array written by
// writeTools, as its last member. encoding/json re-validates and compacts
// every RawMessage it writes: for the tool schemas every request carries,
// that was a quarter of the agent loop's own CPU per turn. check has
// already made sure each schema is one JSON object.
func encodeBody(b map[string]any, tools []byte) ([]byte, error) {
	out, err := json.Marshal(b)
	if err != nil || tools == nil {
		return out, err
	}
	whole := make([]byte, 0, len(out)+len(`,"tools":`)+len(tools))
	whole = append(append(whole, out[:len(out)-1]...), `,"tools":`...)
	whole = append(whole, tools...)
	return append(whole, '}'), nil
}

// writeTools writes ts as a JSON array, each element made by one(buf, t),
// the schema verbatim.
func writeTools(ts []Tool, one func(buf []byte, t Tool) []byte) []byte {
	n := 2
	for _, t := range ts {
		n += len(t.Name) + len(t.Description) + len(t.Parameters) + 96
	}
	buf := append(make([]byte, 0, n), '[')
	for i, t := range ts {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = one(buf, t)
	}
	return append(buf, ']')
}

// toolsCache keeps the last tools array a client wrote: an agent sends
// the same tools with every request, and writing them again (escaping
// every description, copying every schema: ~23 KB for the built-in tools)
// was a quarter of a turn's allocation. The copy compared against is deep,
// so a caller reusing its buffers cannot make it stale.
type toolsCache struct {
	mu    sync.Mutex
	tools []Tool
	wire  []byte
}

// lookup is the tools array last written when ts equals the tools it was
// written from (their schemas were checked then), else nil. One compare of
// every schema, a word at a time (equalBytes), so a request that finds
// its tools here checks nothing more.
func (c *toolsCache) lookup(ts []Tool) []byte {
	if c == nil || len(ts) == 0 {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.wire != nil && slices.EqualFunc(c.tools, ts, func(a, b Tool) bool {
		return a.Name == b.Name && a.Description == b.Description && equalBytes(a.Parameters, b.Parameters) && (a.Parameters == nil) == (b.Parameters == nil)
	}) {
		return c.wire
	}
	return nil
}

// equalBytes is bytes.Equal. Under js/wasm it compares eight bytes at a
// time: the runtime's memequal compares a byte per loop turn there, and
// the tools' schemas (~15 KB for the built-in tools, twice per agent
// turn) made lookup ~35 µs of a turn.
func equalBytes(a, b []byte) bool {
	if runtime.GOARCH != "wasm" {
		return bytes.Equal(a, b)
	}
	n := len(a)
	if n != len(b) {
		return false
	}
	if n == 0 || &a[0] == &b[0] {
		return true
	}
	i := 0
	for ; i+8 <= n; i += 8 {
		if *(*uint64)(unsafe.Pointer(&a[i])) != *(*uint64)(unsafe.Pointer(&b[i])) {
			return false
		}
	}
	for ; i < n; i++ {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// write is wire when lookup found it, else writeTools(ts, one), kept as
// the last tools array. A nil cache writes every time.
func (c *toolsCache) write(wire []byte, ts []Tool, one func(buf []byte, t Tool) []byte) []byte {
	if wire != nil {
		return wire
	}
	wire = writeTools(ts, one)
	if c == nil {
		return wire
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.wire = wire
	c.tools = make([]Tool, len(ts))
	for i, t := range ts {
		c.tools[i] = Tool{Name: t.Name, Description: t.Description, Parameters: bytes.Clone(t.Parameters)}
	}
	return wire
}

// appendJSONString appends s as a JSON string, escaped as encoding/json
// does but for <, > and &: quotes, backslashes, control characters,
// U+2028 and U+2029; invalid UTF-8 becomes U+FFFD.
func appendJSONString(buf []byte, s string) []byte { return appendQuoted(buf, s, false) }

// appendJSONStringHTML appends s exactly as json.Marshal writes it: also
// <, > and & escaped (\u003c, \u003e, \u0026).
func appendJSONStringHTML(buf []byte, s string) []byte { return appendQuoted(buf, s, true) }

func appendQuoted(buf []byte, s string, html bool) []byte {
	const hex = "0123456789abcdef"
	buf = append(buf, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf && (!html || c != '<' && c != '>' && c != '&') {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			buf = append(buf, s[start:i]...)
			switch c {
			case '"', '\\':
				buf = append(buf, '\\', c)
			case '\n':
				buf = append(buf, '\\', 'n')
			case '\r':
				buf = append(buf, '\\', 'r')
			case '\t':
				buf = append(buf, '\\', 't')
			case '\b':
				buf = append(buf, '\\', 'b')
			case '\f':
				buf = append(buf, '\\', 'f')
			default:
				buf = append(buf, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || r == '\u2028' || r == '\u2029' {
			buf = append(buf, s[start:i]...)
			switch r {
			case utf8.RuneError:
				buf = append(buf, `\ufffd`...)
			default:
				buf = append(buf, '\\', 'u', '2', '0', '2', hex[r&0xf])
			}
			i += size
			start = i
			continue
		}
		i += size
	}
	return append(append(buf, s[start:]...), '"')
}
