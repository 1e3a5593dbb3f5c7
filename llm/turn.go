package llm

import (
	"fmt"
	"iter"
	"strings"

	"github.com/a3s-lab/code-wasm/errkind"
)

// Turn assembles a stream into the assistant's message, checking the
// stream's order as it goes (the order Chunk documents). The zero value is
// ready; feed it every chunk with Add.
type Turn struct {
	// Message is the assistant message, complete at Finish: the text and
	// the tool calls in index order, each call's Arguments the
	// concatenation of its fragments ("" becomes "{}").
	Message    Message
	Reasoning  string
	StopReason StopReason
	Usage      Usage
	// Finished is set by the Finish chunk.
	Finished bool
	text     []byte
	args     [][]byte
	open     []bool
}

// Add folds c into t. A chunk out of order (a delta or end of a call that
// did not start, a second start or end of one call, a chunk after Finish, a
// Finish with a call still open, an unknown type) is an *Error of kind
// transport, and leaves t as it was.
func (t *Turn) Add(c Chunk) error {
	bad := func(format string, a ...any) error {
		return &Error{kind: errkind.Transport, Message: "llm stream: " + fmt.Sprintf(format, a...)}
	}
	if t.Finished {
		return bad("%s chunk after finish", c.Type)
	}
	t.Message.Role = Assistant
	switch c.Type {
	case TextDelta:
		t.text = append(t.text, c.Text...)
	case ReasoningDelta:
		t.Reasoning += c.Text
	case ToolCallStart:
		if c.Index != len(t.Message.ToolCalls) {
			return bad("tool call %d starts after %d calls", c.Index, len(t.Message.ToolCalls))
		}
		if c.ID == "" || c.Name == "" {
			return bad("tool call %d starts without an id or name", c.Index)
		}
		t.Message.ToolCalls = append(t.Message.ToolCalls, ToolCall{ID: c.ID, Name: c.Name})
		t.args = append(t.args, nil)
		t.open = append(t.open, true)
	case ToolCallDelta, ToolCallEnd:
		if c.Index < 0 || c.Index >= len(t.open) || !t.open[c.Index] {
			return bad("%s for tool call %d, which is not open", c.Type, c.Index)
		}
		if c.Type == ToolCallEnd {
			t.open[c.Index] = false
			break
		}
		t.args[c.Index] = append(t.args[c.Index], c.Fragment...)
	case Finish:
		for i, o := range t.open {
			if o {
				return bad("finish with tool call %d still open", i)
			}
		}
		t.Message.Text = string(t.text)
		for i, a := range t.args {
			t.Message.ToolCalls[i].Arguments = string(a)
			if strings.TrimSpace(string(a)) == "" {
				t.Message.ToolCalls[i].Arguments = "{}"
			}
		}
		t.StopReason, t.Usage, t.Finished = c.StopReason, c.Usage, true
	default:
		return bad("unknown chunk type %q", c.Type)
	}
	return nil
}

// Collect ranges over a stream and returns its turn. A stream that ends
// without Finish is an *Error of kind transport.
func Collect(stream iter.Seq2[Chunk, error]) (Turn, error) {
	var t Turn
	for c, err := range stream {
		if err != nil {
			return t, err
		}
		if err := t.Add(c); err != nil {
			return t, err
		}
	}
	if !t.Finished {
		return t, &Error{kind: errkind.Transport, Message: "llm stream: ended without finish"}
	}
	return t, nil
}
