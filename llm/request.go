package llm

import (
	"encoding/json"
	"fmt"

	"github.com/a3s-lab/code-wasm/errkind"
)

// check refuses a request no provider would accept, before anything is
// sent: an *Error of kind invalid_argument naming the field.
func (r *Request) check() error {
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
		if t.Parameters != nil {
			var o map[string]any
			if json.Unmarshal(t.Parameters, &o) != nil {
				return bad("tools[%d].parameters is not a JSON object", i)
			}
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
