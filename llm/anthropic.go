package llm

import (
	"context"
	"encoding/json"
	"iter"
	"runtime"

	"github.com/a3s-lab/code-wasm/errkind"
)

// anthropic is the client of the Anthropic Messages API.
type anthropic struct{ t transport }

func (c *anthropic) Stream(ctx context.Context, req Request) iter.Seq2[Chunk, error] {
	h := map[string]string{
		"content-type":      "application/json",
		"accept":            "text/event-stream",
		"anthropic-version": "2023-06-01",
	}
	if c.t.cfg.APIKey != "" {
		h["x-api-key"] = c.t.cfg.APIKey
	}
	if runtime.GOOS == "js" {
		// The API refuses a CORS request without it; harmless elsewhere.
		h["anthropic-dangerous-direct-browser-access"] = "true"
	}
	return c.t.request(ctx, req, "/v1/messages", h, c.body, func() decoder { return &anthropicDecoder{} })
}

type anBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   *string         `json:"content,omitempty"`
	IsError   bool            `json:"is_error,omitempty"`
}

type anMessage struct {
	Role    string    `json:"role"`
	Content []anBlock `json:"content"`
}

// body is the wire request: tool results first in their user message, a
// call's arguments as an object ({} if they do not parse).
func (c *anthropic) body(r *Request, wire []byte) ([]byte, error) {
	return encodeBody(c.members(r, wire))
}

// members are body's members but tools, and the tools array.
func (c *anthropic) members(r *Request, wire []byte) (b map[string]any, tools []byte) {
	msgs := make([]anMessage, 0, len(r.Messages))
	for _, m := range r.merged() {
		am := anMessage{Role: string(m.Role)}
		for _, res := range m.ToolResults {
			am.Content = append(am.Content, anBlock{Type: "tool_result", ToolUseID: res.CallID, Content: &res.Content, IsError: res.IsError})
		}
		if m.Text != "" {
			am.Content = append(am.Content, anBlock{Type: "text", Text: m.Text})
		}
		for _, tc := range m.ToolCalls {
			in := json.RawMessage(tc.arguments())
			var o map[string]any
			if json.Unmarshal(in, &o) != nil {
				in = json.RawMessage("{}")
			}
			am.Content = append(am.Content, anBlock{Type: "tool_use", ID: tc.ID, Name: tc.Name, Input: in})
		}
		msgs = append(msgs, am)
	}
	b = map[string]any{
		"model":      cmp(r.Model, c.t.cfg.Model),
		"max_tokens": cmpInt(r.MaxTokens, c.t.cfg.MaxTokens),
		"messages":   msgs,
		"stream":     true,
	}
	if r.System != "" {
		b["system"] = r.System
	}
	if r.Temperature != nil {
		b["temperature"] = *r.Temperature
	}
	if len(r.Tools) > 0 {
		tools = c.t.tools.write(wire, r.Tools, func(buf []byte, t Tool) []byte {
			if t.Description != "" {
				buf = appendJSONString(append(buf, `{"description":`...), t.Description)
				buf = append(buf, ',')
			} else {
				buf = append(buf, '{')
			}
			buf = append(append(append(buf, `"input_schema":`...), t.parameters()...), `,"name":`...)
			return append(appendJSONString(buf, t.Name), '}')
		})
		switch r.ToolChoice.Type {
		case ToolChoiceNone:
			b["tool_choice"] = map[string]string{"type": "none"}
		case ToolChoiceRequired:
			b["tool_choice"] = map[string]string{"type": "any"}
		case ToolChoiceTool:
			b["tool_choice"] = map[string]string{"type": "tool", "name": r.ToolChoice.Name}
		}
	}
	return b, tools
}

// anthropicDecoder reads the named events of a Messages stream. Blocks are
// keyed by their index; tool calls are numbered in the order they start.
type anthropicDecoder struct {
	blocks map[int]anOpen
	calls  int
	stop   string
	usage  anUsage
}

type anOpen struct {
	kind string // text, tool_use, thinking; others are ignored
	call int
}

type anUsage struct {
	InputTokens              *int `json:"input_tokens"`
	OutputTokens             *int `json:"output_tokens"`
	CacheCreationInputTokens *int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     *int `json:"cache_read_input_tokens"`
}

// merge takes the counts u carries (message_delta's are cumulative).
func (a *anUsage) merge(u *anUsage) {
	if u == nil {
		return
	}
	for _, p := range [][2]**int{{&a.InputTokens, &u.InputTokens}, {&a.OutputTokens, &u.OutputTokens},
		{&a.CacheCreationInputTokens, &u.CacheCreationInputTokens}, {&a.CacheReadInputTokens, &u.CacheReadInputTokens}} {
		if *p[1] != nil {
			*p[0] = *p[1]
		}
	}
}

func (a *anUsage) usage() Usage {
	n := func(p *int) int {
		if p == nil {
			return 0
		}
		return *p
	}
	in := n(a.InputTokens) + n(a.CacheCreationInputTokens) + n(a.CacheReadInputTokens)
	return Usage{PromptTokens: in, CompletionTokens: n(a.OutputTokens), TotalTokens: in + n(a.OutputTokens),
		CacheReadTokens: n(a.CacheReadInputTokens), CacheWriteTokens: n(a.CacheCreationInputTokens)}
}

type anEvent struct {
	Type    string `json:"type"`
	Message *struct {
		Usage *anUsage `json:"usage"`
	} `json:"message"`
	Index        *int `json:"index"`
	ContentBlock *struct {
		Type string `json:"type"`
		ID   string `json:"id"`
		Name string `json:"name"`
	} `json:"content_block"`
	Delta *struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		PartialJSON string `json:"partial_json"`
		Thinking    string `json:"thinking"`
		StopReason  string `json:"stop_reason"`
	} `json:"delta"`
	Usage *anUsage `json:"usage"`
}

func (d *anthropicDecoder) event(name string, data []byte, out *[]Chunk) (bool, error) {
	var ev anEvent
	if err := json.Unmarshal(data, &ev); err != nil {
		return false, malformed("unreadable %s event %.200q: %v", name, data, err)
	}
	if name == "" {
		name = ev.Type
	}
	if d.blocks == nil {
		d.blocks = map[int]anOpen{}
	}
	switch name {
	case "message_start":
		if ev.Message != nil {
			d.usage.merge(ev.Message.Usage)
		}
	case "content_block_start":
		if ev.Index == nil || ev.ContentBlock == nil {
			return false, malformed("content_block_start without index or block")
		}
		if _, dup := d.blocks[*ev.Index]; dup {
			return false, malformed("content block %d started twice", *ev.Index)
		}
		b := anOpen{kind: ev.ContentBlock.Type}
		if b.kind == "tool_use" {
			if ev.ContentBlock.ID == "" || ev.ContentBlock.Name == "" {
				return false, malformed("tool_use block %d without id or name", *ev.Index)
			}
			b.call = d.calls
			d.calls++
			*out = append(*out, Chunk{Type: ToolCallStart, Index: b.call, ID: ev.ContentBlock.ID, Name: ev.ContentBlock.Name})
		}
		d.blocks[*ev.Index] = b
	case "content_block_delta":
		if ev.Index == nil || ev.Delta == nil {
			return false, malformed("content_block_delta without index or delta")
		}
		b, ok := d.blocks[*ev.Index]
		if !ok {
			return false, malformed("a delta for content block %d, which did not start", *ev.Index)
		}
		switch {
		case ev.Delta.Type == "text_delta" && ev.Delta.Text != "":
			*out = append(*out, Chunk{Type: TextDelta, Text: ev.Delta.Text})
		case ev.Delta.Type == "thinking_delta" && ev.Delta.Thinking != "":
			*out = append(*out, Chunk{Type: ReasoningDelta, Text: ev.Delta.Thinking})
		case ev.Delta.Type == "input_json_delta" && b.kind == "tool_use" && ev.Delta.PartialJSON != "":
			*out = append(*out, Chunk{Type: ToolCallDelta, Index: b.call, Fragment: ev.Delta.PartialJSON})
		}
	case "content_block_stop":
		if ev.Index == nil {
			return false, malformed("content_block_stop without index")
		}
		b, ok := d.blocks[*ev.Index]
		if !ok {
			return false, malformed("content block %d stopped but did not start", *ev.Index)
		}
		if b.kind == "tool_use" {
			*out = append(*out, Chunk{Type: ToolCallEnd, Index: b.call})
		}
		b.kind = "stopped"
		d.blocks[*ev.Index] = b
	case "message_delta":
		if ev.Delta != nil && ev.Delta.StopReason != "" {
			d.stop = ev.Delta.StopReason
		}
		d.usage.merge(ev.Usage)
	case "message_stop":
		return true, d.eof(out)
	case "error":
		typ, msg := errorBody(data)
		kind := errkind.Transport
		if typ == "rate_limit_error" {
			kind = errkind.RateLimited
		}
		return false, &Error{kind: kind, Type: typ, Message: "llm stream: the server reported " + typ + ": " + msg}
	}
	// ping and event types added later are ignored, as the API asks.
	return false, nil
}

// eof ends the stream: message_stop, or (from a gateway that drops it) the
// end of the body after message_delta named the stop reason.
func (d *anthropicDecoder) eof(out *[]Chunk) error {
	if d.stop == "" {
		return malformed("the stream ended before the message's stop reason")
	}
	for i, b := range d.blocks {
		if b.kind == "tool_use" {
			return malformed("the message ended with content block %d open", i)
		}
	}
	*out = append(*out, Chunk{Type: Finish, StopReason: d.stopReason(), Usage: d.usage.usage()})
	return nil
}

func (d *anthropicDecoder) stopReason() StopReason {
	switch d.stop {
	case "end_turn", "stop_sequence":
		return Stop
	case "tool_use":
		return ToolUse
	case "max_tokens", "model_context_window_exceeded":
		return MaxTokens
	case "refusal":
		return ContentFilter
	}
	return OtherStop
}
