package llm

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// oaBodyMarshal is what the OpenAI client sent before its body was
// written by hand: the members in a map, through json.Marshal, the tools
// array appended (encodeBody). body must write the same bytes.
func oaBodyMarshal(c *openAI, r *Request) ([]byte, error) {
	type oaToolCall struct {
		ID       string `json:"id"`
		Type     string `json:"type"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	}
	type oaMessage struct {
		Role       string       `json:"role"`
		Content    *string      `json:"content"`
		ToolCalls  []oaToolCall `json:"tool_calls,omitempty"`
		ToolCallID string       `json:"tool_call_id,omitempty"`
	}
	var msgs []oaMessage
	if r.System != "" {
		msgs = append(msgs, oaMessage{Role: "system", Content: &r.System})
	}
	for _, m := range r.merged() {
		for _, res := range m.ToolResults {
			msgs = append(msgs, oaMessage{Role: "tool", Content: &res.Content, ToolCallID: res.CallID})
		}
		if m.Role == Assistant {
			am := oaMessage{Role: "assistant"}
			if m.Text != "" {
				am.Content = &m.Text
			}
			for _, tc := range m.ToolCalls {
				w := oaToolCall{ID: tc.ID, Type: "function"}
				w.Function.Name, w.Function.Arguments = tc.Name, tc.arguments()
				am.ToolCalls = append(am.ToolCalls, w)
			}
			msgs = append(msgs, am)
		} else if m.Text != "" {
			msgs = append(msgs, oaMessage{Role: "user", Content: &m.Text})
		}
	}
	b := map[string]any{
		"model":          cmp(r.Model, c.t.cfg.Model),
		"messages":       msgs,
		"stream":         true,
		"stream_options": map[string]bool{"include_usage": true},
	}
	if n := cmpInt(r.MaxTokens, c.t.cfg.MaxTokens); n > 0 {
		if strings.HasPrefix(c.t.cfg.BaseURL, "https://api.openai.com/") {
			b["max_completion_tokens"] = n
		} else {
			b["max_tokens"] = n
		}
	}
	if r.Temperature != nil {
		b["temperature"] = *r.Temperature
	}
	var tools []byte
	if len(r.Tools) > 0 {
		tools = writeTools(r.Tools, func(buf []byte, t Tool) []byte {
			buf = appendJSONString(append(buf, `{"type":"function","function":{"name":`...), t.Name)
			if t.Description != "" {
				buf = appendJSONString(append(buf, `,"description":`...), t.Description)
			}
			return append(append(append(buf, `,"parameters":`...), t.parameters()...), "}}"...)
		})
		switch r.ToolChoice.Type {
		case ToolChoiceNone, ToolChoiceRequired:
			b["tool_choice"] = string(r.ToolChoice.Type)
		case ToolChoiceTool:
			b["tool_choice"] = map[string]any{"type": "function", "function": map[string]string{"name": r.ToolChoice.Name}}
		}
	}
	return encodeBody(b, tools)
}

// checkOABody holds body to json.Marshal's bytes (and error) for r, with
// a cached tools array and without.
func checkOABody(t *testing.T, c *openAI, r Request) {
	t.Helper()
	want, werr := oaBodyMarshal(c, &r)
	for range 2 {
		got, err := c.body(&r, c.t.tools.lookup(r.Tools))
		if (err == nil) != (werr == nil) || err != nil && err.Error() != werr.Error() {
			t.Fatalf("body error %v, json.Marshal's %v", err, werr)
		}
		if string(got) != string(want) {
			t.Fatalf("body wrote\n%s\njson.Marshal wrote\n%s", got, want)
		}
	}
}

func TestOpenAIBodyMatchesMarshal(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	odd := "<a & b> \"q\" \\ \n\t\r\b\f \x00\x1f\x7f ü日本 \u2028\u2029 \xff\xfe"
	tools := []Tool{{Name: "read", Description: "Reads <a> & b", Parameters: json.RawMessage(`{"type":"object","properties":{"p":{"type":"string"}}}`)}, {Name: "bare"}}
	conv := []Message{
		{Role: User, Text: "read k.txt"},
		{Role: Assistant, ToolCalls: []ToolCall{{ID: "call_1", Name: "read", Arguments: `{"file_path":"k.txt"}`}, {ID: "c<2>", Name: "bare", Arguments: " \n"}}},
		{Role: User, ToolResults: []ToolResult{{CallID: "call_1", Content: odd}, {CallID: "c<2>", Content: "", IsError: true}}},
		{Role: Assistant, Text: odd},
		{Role: Assistant, Text: "two in a row", ToolCalls: []ToolCall{{ID: "x", Name: "read", Arguments: "not json"}}},
		{Role: User, ToolResults: []ToolResult{{CallID: "x", Content: "done"}}, Text: "and text"},
		{Role: User, Text: "more"},
	}
	for _, cfg := range []Config{{Model: "m"}, {Model: "m<&>", MaxTokens: 100, BaseURL: "https://api.openai.com/v1"}, {Model: "m", MaxTokens: 5, BaseURL: "http://127.0.0.1:1/v1"}} {
		c := &openAI{transport{cfg: cfg, tools: &toolsCache{}}}
		for _, r := range []Request{
			{Messages: conv[:1]},
			{Messages: conv, System: odd, Tools: tools},
			{Messages: conv, Model: "over\"ride", MaxTokens: 7, Temperature: f(0.7), Tools: tools, ToolChoice: ToolChoice{Type: ToolChoiceRequired}},
			{Messages: conv[:3], Temperature: f(1e-7), Tools: tools, ToolChoice: ToolChoice{Type: ToolChoiceTool, Name: "read"}},
			{Messages: conv[:2], Temperature: f(1e21), Tools: tools[:1], ToolChoice: ToolChoice{Type: ToolChoiceNone}},
			{Messages: conv[2:3], ToolChoice: ToolChoice{Type: ToolChoiceTool, Name: "<none>"}},
			{Messages: []Message{{Role: User, ToolResults: []ToolResult{{Content: "no id"}}}}},
			{Messages: []Message{{Role: User}}},
			{Messages: conv[:1], Temperature: f(math.NaN())},
			{Messages: conv[:1], Temperature: f(math.Inf(1))},
			{Messages: conv[:1], Temperature: f(-0.0)},
		} {
			checkOABody(t, c, r)
		}
	}
}

// FuzzOpenAIBody: whatever the strings and numbers, body writes what
// json.Marshal wrote.
func FuzzOpenAIBody(f *testing.F) {
	f.Add("sys", "read k.txt", "call_1", "read", `{"file_path":"k.txt"}`, "result <&>", "m", 0, 0.5, uint8(0))
	f.Add("", "\xff\u2028", "", "", "", "", "", 3, math.Inf(-1), uint8(7))
	f.Fuzz(func(t *testing.T, system, text, id, name, args, content, model string, maxTokens int, temp float64, shape uint8) {
		c := &openAI{transport{cfg: Config{Model: "cfg"}, tools: &toolsCache{}}}
		msgs := []Message{{Role: User, Text: text}, {Role: Assistant, ToolCalls: []ToolCall{{ID: id, Name: name, Arguments: args}}},
			{Role: User, ToolResults: []ToolResult{{CallID: id, Content: content}}}, {Role: Assistant, Text: content}}
		r := Request{System: system, Messages: msgs[:1+int(shape%4)], Model: model, MaxTokens: maxTokens}
		if shape&4 != 0 {
			r.Temperature = &temp
		}
		if shape&8 != 0 {
			r.Tools = []Tool{{Name: name, Description: text}}
			r.ToolChoice = ToolChoice{Type: []ToolChoiceType{"", ToolChoiceNone, ToolChoiceRequired, ToolChoiceTool}[shape>>4%4], Name: name}
		}
		checkOABody(t, c, r)
	})
}
