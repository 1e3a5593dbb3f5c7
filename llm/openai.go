package llm

import (
	"context"
	"encoding/json"
	"iter"
	"strconv"
	"strings"

	"github.com/a3s-lab/code-wasm/errkind"
)

// openAI is the client of OpenAI-compatible chat completions.
type openAI struct{ t transport }

func (c *openAI) Stream(ctx context.Context, req Request) iter.Seq2[Chunk, error] {
	h := map[string]string{"content-type": "application/json", "accept": "text/event-stream"}
	if c.t.cfg.APIKey != "" {
		h["authorization"] = "Bearer " + c.t.cfg.APIKey
	}
	return c.t.request(ctx, req, "/chat/completions", h, c.body, func() decoder { return &openAIDecoder{} })
}

// body is the wire request: the system prompt first, tool results as one
// "tool" message per call before the user's text. It is written by hand,
// byte for byte what json.Marshal wrote of the map of these members
// (keys sorted, strings HTML-escaped; TestOpenAIBodyMatchesMarshal, and
// FuzzOpenAIBody): the reflection walk of the conversation was a twentieth
// of a turn's Go time in wasm.
func (c *openAI) body(r *Request, wire []byte) ([]byte, error) {
	var temp []byte
	if r.Temperature != nil {
		t, err := json.Marshal(*r.Temperature)
		if err != nil {
			return nil, err
		}
		temp = t
	}
	msgs := r.merged()
	tools := c.toolsArray(r, wire)
	n := len(tools) + len(r.System) + 256
	for _, m := range msgs {
		n += len(m.Text) + 64
		for _, tc := range m.ToolCalls {
			n += len(tc.ID) + len(tc.Name) + len(tc.Arguments) + 96
		}
		for _, res := range m.ToolResults {
			n += len(res.CallID) + len(res.Content) + 64
		}
	}
	b := append(make([]byte, 0, n), '{')
	if n := cmpInt(r.MaxTokens, c.t.cfg.MaxTokens); n > 0 {
		// OpenAI's newer models refuse max_tokens; compatible servers
		// mostly know only max_tokens.
		if strings.HasPrefix(c.t.cfg.BaseURL, "https://api.openai.com/") {
			b = append(b, `"max_completion_tokens":`...)
		} else {
			b = append(b, `"max_tokens":`...)
		}
		b = append(strconv.AppendInt(b, int64(n), 10), ',')
	}
	b = append(b, `"messages":`...)
	b = appendOAMessages(b, r.System, msgs)
	b = appendJSONStringHTML(append(b, `,"model":`...), cmp(r.Model, c.t.cfg.Model))
	b = append(b, `,"stream":true,"stream_options":{"include_usage":true}`...)
	if temp != nil {
		b = append(append(b, `,"temperature":`...), temp...)
	}
	if len(r.Tools) > 0 {
		switch r.ToolChoice.Type {
		case ToolChoiceNone, ToolChoiceRequired:
			b = appendJSONStringHTML(append(b, `,"tool_choice":`...), string(r.ToolChoice.Type))
		case ToolChoiceTool:
			b = appendJSONStringHTML(append(b, `,"tool_choice":{"function":{"name":`...), r.ToolChoice.Name)
			b = append(b, `},"type":"function"}`...)
		}
	}
	if tools != nil {
		b = append(append(b, `,"tools":`...), tools...)
	}
	return append(b, '}'), nil
}

// appendOAMessages writes the messages array: each message's members in
// the order role, content (null when absent), tool_calls, tool_call_id,
// the last two left out when empty; null for no message.
func appendOAMessages(b []byte, system string, msgs []Message) []byte {
	start := len(b)
	sep := func(b []byte) []byte {
		if len(b) == start {
			return append(b, '[')
		}
		return append(b, ',')
	}
	if system != "" {
		b = appendJSONStringHTML(append(sep(b), `{"role":"system","content":`...), system)
		b = append(b, '}')
	}
	for _, m := range msgs {
		for _, res := range m.ToolResults {
			b = appendJSONStringHTML(append(sep(b), `{"role":"tool","content":`...), res.Content)
			if res.CallID != "" {
				b = appendJSONStringHTML(append(b, `,"tool_call_id":`...), res.CallID)
			}
			b = append(b, '}')
		}
		switch {
		case m.Role == Assistant:
			b = append(sep(b), `{"role":"assistant","content":`...)
			if m.Text != "" {
				b = appendJSONStringHTML(b, m.Text)
			} else {
				b = append(b, "null"...)
			}
			if len(m.ToolCalls) > 0 {
				b = append(b, `,"tool_calls":[`...)
				for i, tc := range m.ToolCalls {
					if i > 0 {
						b = append(b, ',')
					}
					b = appendJSONStringHTML(append(b, `{"id":`...), tc.ID)
					b = appendJSONStringHTML(append(b, `,"type":"function","function":{"name":`...), tc.Name)
					b = appendJSONStringHTML(append(b, `,"arguments":`...), tc.arguments())
					b = append(b, "}}"...)
				}
				b = append(b, ']')
			}
			b = append(b, '}')
		case m.Text != "":
			b = appendJSONStringHTML(append(sep(b), `{"role":"user","content":`...), m.Text)
			b = append(b, '}')
		}
	}
	if len(b) == start {
		return append(b, "null"...)
	}
	return append(b, ']')
}

// toolsArray is the tools member's JSON array (nil without tools), from
// the cache when wire is the array lookup found.
func (c *openAI) toolsArray(r *Request, wire []byte) []byte {
	if len(r.Tools) == 0 {
		return nil
	}
	return c.t.tools.write(wire, r.Tools, func(buf []byte, t Tool) []byte {
		buf = appendJSONString(append(buf, `{"type":"function","function":{"name":`...), t.Name)
		if t.Description != "" {
			buf = appendJSONString(append(buf, `,"description":`...), t.Description)
		}
		return append(append(append(buf, `,"parameters":`...), t.parameters()...), "}}"...)
	})
}

// cmp is a if not empty, else b.
func cmp(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// cmpInt is a if positive, else b.
func cmpInt(a, b int) int {
	if a > 0 {
		return a
	}
	return b
}

// openAIDecoder reads chat.completion.chunk events. Tool calls are keyed by
// the wire's index (not id); a call is announced once its name is known.
type openAIDecoder struct {
	text   []byte      // the content so far, to undo servers that resend it whole
	calls  []*oaCall   // by first appearance
	byWire map[int]int // wire index → calls index
	finish string      // finish_reason, once sent
	usage  Usage
	ended  bool // the calls were closed at finish_reason
}

type oaCall struct {
	id, name string
	started  bool
	pending  string // arguments before the name arrived
}

func (d *openAIDecoder) event(_ string, data []byte, out *[]Chunk) (bool, error) {
	if string(data) == "[DONE]" {
		return true, d.eof(out)
	}
	ch, err := decodeOAChunk(data)
	if err != nil {
		return false, malformed("unreadable chunk %.200q: %v", data, err)
	}
	if len(ch.Error) > 0 && string(ch.Error) != "null" {
		typ, msg := errorBody(data)
		kind := errkind.Transport
		if strings.Contains(typ, "rate_limit") {
			kind = errkind.RateLimited
		}
		return false, &Error{kind: kind, Type: typ, Message: "llm stream: the server reported an error: " + msg}
	}
	if ch.Usage != nil {
		d.usage = Usage{PromptTokens: ch.Usage.PromptTokens, CompletionTokens: ch.Usage.CompletionTokens, TotalTokens: ch.Usage.TotalTokens}
		if ch.Usage.PromptDetails != nil {
			d.usage.CacheReadTokens = ch.Usage.PromptDetails.CachedTokens
		}
		if d.usage.TotalTokens == 0 {
			d.usage.TotalTokens = d.usage.PromptTokens + d.usage.CompletionTokens
		}
	}
	for _, choice := range ch.Choices {
		if choice.Index != 0 {
			continue
		}
		dl := &choice.Delta
		// DeepSeek-style servers send reasoning_content, OpenRouter-style
		// ones reasoning; some send both with the same text.
		r := dl.ReasoningContent
		if r == nil || *r == "" {
			r = dl.Reasoning
		}
		if r != nil && *r != "" {
			*out = append(*out, Chunk{Type: ReasoningDelta, Text: *r})
		}
		if dl.Content != nil && *dl.Content != "" {
			t := *dl.Content
			if len(d.text) > 0 && len(t) >= len(d.text) && t[:len(d.text)] == string(d.text) {
				t = t[len(d.text):]
			}
			if t != "" {
				d.text = append(d.text, t...)
				*out = append(*out, Chunk{Type: TextDelta, Text: t})
			}
		}
		for _, tc := range dl.ToolCalls {
			if err := d.toolCall(tc.Index, tc.ID, tc.Function.Name, tc.Function.Arguments, out); err != nil {
				return false, err
			}
		}
		if choice.FinishReason != nil && *choice.FinishReason != "" {
			d.finish = *choice.FinishReason
			if err := d.closeCalls(out); err != nil {
				return false, err
			}
		}
	}
	return false, nil
}

func (d *openAIDecoder) toolCall(wire *int, id, name, args string, out *[]Chunk) error {
	if d.ended {
		return malformed("a tool call fragment after finish_reason")
	}
	if d.byWire == nil {
		d.byWire = map[int]int{}
	}
	var i int
	switch {
	case wire != nil:
		j, ok := d.byWire[*wire]
		// A new id at a known index is a new call: servers that number
		// every call 0 send each whole, with its own id.
		if !ok || (id != "" && d.calls[j].id != "" && id != d.calls[j].id) {
			j = len(d.calls)
			d.byWire[*wire] = j
			d.calls = append(d.calls, &oaCall{})
		}
		i = j
	case len(d.calls) == 0 || (id != "" && id != d.calls[len(d.calls)-1].id):
		// A server that omits index: a new id starts a new call.
		i = len(d.calls)
		d.calls = append(d.calls, &oaCall{})
	default:
		i = len(d.calls) - 1
	}
	c := d.calls[i]
	if c.id == "" {
		c.id = id
	}
	if c.name == "" {
		c.name = name
	}
	if !c.started {
		c.pending += args
		if c.name == "" {
			return nil
		}
		if c.id == "" {
			c.id = "call_" + strconv.Itoa(i)
		}
		// Calls announce in order: one whose name came first waits.
		for j := 0; j < i; j++ {
			if !d.calls[j].started {
				return nil
			}
		}
		return d.start(i, out)
	}
	if args != "" {
		*out = append(*out, Chunk{Type: ToolCallDelta, Index: i, Fragment: args})
	}
	return nil
}

// start announces call i and every later call that waited on it.
func (d *openAIDecoder) start(i int, out *[]Chunk) error {
	for ; i < len(d.calls); i++ {
		c := d.calls[i]
		if c.started || c.name == "" {
			return nil
		}
		c.started = true
		*out = append(*out, Chunk{Type: ToolCallStart, Index: i, ID: c.id, Name: c.name})
		if c.pending != "" {
			*out = append(*out, Chunk{Type: ToolCallDelta, Index: i, Fragment: c.pending})
			c.pending = ""
		}
	}
	return nil
}

func (d *openAIDecoder) closeCalls(out *[]Chunk) error {
	if d.ended {
		return nil
	}
	d.ended = true
	for i, c := range d.calls {
		if !c.started {
			return malformed("tool call %d never named its function", i)
		}
		*out = append(*out, Chunk{Type: ToolCallEnd, Index: i})
	}
	return nil
}

// eof ends the stream: a finish_reason must have come ([DONE] and the
// usage chunk may be missing).
func (d *openAIDecoder) eof(out *[]Chunk) error {
	if d.finish == "" {
		return malformed("the stream ended before a finish_reason")
	}
	*out = append(*out, Chunk{Type: Finish, StopReason: d.stopReason(), Usage: d.usage})
	return nil
}

func (d *openAIDecoder) stopReason() StopReason {
	switch d.finish {
	case "stop":
		if len(d.calls) > 0 {
			// Some compatible servers finish a tool-calling turn with "stop".
			return ToolUse
		}
		return Stop
	case "tool_calls", "function_call":
		return ToolUse
	case "length":
		return MaxTokens
	case "content_filter":
		return ContentFilter
	}
	return OtherStop
}
