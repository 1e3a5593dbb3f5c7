package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/a3s-lab/code-wasm/errkind"
)

func TestConfigNamesTheBadKey(t *testing.T) {
	neg, big := -1, 11
	for _, c := range []struct {
		cfg      Config
		key, msg string
	}{
		{Config{Model: "m"}, "provider", "is required"},
		{Config{Provider: "gemini", Model: "m"}, "provider", `unknown provider "gemini"`},
		{Config{Provider: "openai"}, "model", "is required"},
		{Config{Provider: "anthropic", Model: " "}, "model", "is required"},
		{Config{Provider: "openai", Model: "m", BaseURL: "ftp://x"}, "baseURL", "not an http(s) URL"},
		{Config{Provider: "openai", Model: "m", BaseURL: "api.openai.com"}, "baseURL", "not an http(s) URL"},
		{Config{Provider: "openai", Model: "m", Headers: map[string]string{"a b": "x"}}, "headers", `"a b"`},
		{Config{Provider: "openai", Model: "m", Headers: map[string]string{"x": "a\nb"}}, "headers", `"x"`},
		{Config{Provider: "openai", Model: "m", MaxRetries: &neg}, "maxRetries", "outside 0..10"},
		{Config{Provider: "openai", Model: "m", MaxRetries: &big}, "maxRetries", "outside 0..10"},
		{Config{Provider: "openai", Model: "m", TimeoutMs: -5}, "timeoutMs", "negative"},
		{Config{Provider: "anthropic", Model: "m", MaxTokens: -1}, "maxTokens", "negative"},
	} {
		_, err := New(c.cfg)
		var e *Error
		if !errors.As(err, &e) || e.Key != c.key || !errkind.Is(err, errkind.InvalidArgument) || !strings.Contains(e.Error(), c.msg) || !strings.HasPrefix(e.Error(), "llm."+c.key+": ") {
			t.Errorf("%+v: got %v, want key %s and %q", c.cfg, err, c.key, c.msg)
		}
	}
	cfg, err := Config{Provider: "anthropic", Model: "m", BaseURL: "/api/llm/"}.normalize()
	if err != nil || cfg.BaseURL != "/api/llm" || *cfg.MaxRetries != DefaultMaxRetries || cfg.TimeoutMs != 120000 || cfg.MaxTokens != DefaultMaxTokens {
		t.Fatalf("defaults: %+v %v", cfg, err)
	}
	cfg, _ = Config{Provider: "openai", Model: "m"}.normalize()
	if cfg.BaseURL != "https://api.openai.com/v1" || cfg.MaxTokens != 0 {
		t.Fatalf("openai defaults: %+v", cfg)
	}
}

func TestRequestCheck(t *testing.T) {
	user := Message{Role: User, Text: "hi"}
	for _, c := range []struct {
		req Request
		msg string
	}{
		{Request{}, "messages is empty"},
		{Request{Messages: []Message{{Role: "system", Text: "x"}}}, "messages[0].role"},
		{Request{Messages: []Message{{Role: User}}}, "messages[0] is empty"},
		{Request{Messages: []Message{{Role: User, ToolCalls: []ToolCall{{ID: "a", Name: "b"}}}}}, "user message holds tool calls"},
		{Request{Messages: []Message{{Role: Assistant, ToolResults: []ToolResult{{CallID: "a"}}}}}, "assistant message holds tool results"},
		{Request{Messages: []Message{{Role: Assistant, ToolCalls: []ToolCall{{Name: "b"}}}}}, "toolCalls[0] has no id"},
		{Request{Messages: []Message{{Role: User, ToolResults: []ToolResult{{Content: "x"}}}}}, "has no callId"},
		{Request{Messages: []Message{user}, Tools: []Tool{{}}}, "tools[0] has no name"},
		{Request{Messages: []Message{user}, Tools: []Tool{{Name: "a"}, {Name: "a"}}}, "listed twice"},
		{Request{Messages: []Message{user}, Tools: []Tool{{Name: "a", Parameters: json.RawMessage(`[1]`)}}}, "not a JSON object"},
		{Request{Messages: []Message{user}, ToolChoice: ToolChoice{Type: ToolChoiceTool, Name: "x"}}, `names "x"`},
		{Request{Messages: []Message{user}, ToolChoice: ToolChoice{Type: "any"}}, "toolChoice.type"},
		{Request{Messages: []Message{user}, ToolChoice: ToolChoice{Type: ToolChoiceRequired}}, "tools is empty"},
	} {
		err := c.req.check(false)
		if !errkind.Is(err, errkind.InvalidArgument) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%+v: got %v, want %q", c.req, err, c.msg)
		}
	}
}

func TestTurnOrder(t *testing.T) {
	start := Chunk{Type: ToolCallStart, Index: 0, ID: "a", Name: "read"}
	for _, c := range []struct {
		chunks []Chunk
		msg    string
	}{
		{[]Chunk{{Type: ToolCallDelta, Index: 0}}, "not open"},
		{[]Chunk{{Type: ToolCallStart, Index: 1, ID: "a", Name: "b"}}, "starts after 0 calls"},
		{[]Chunk{{Type: ToolCallStart, Index: 0, Name: "b"}}, "without an id"},
		{[]Chunk{start, {Type: ToolCallEnd}, {Type: ToolCallEnd}}, "not open"},
		{[]Chunk{start, {Type: Finish}}, "still open"},
		{[]Chunk{{Type: Finish}, {Type: TextDelta}}, "after finish"},
		{[]Chunk{{Type: "image"}}, "unknown chunk type"},
	} {
		var tr Turn
		var err error
		for _, ch := range c.chunks {
			if err = tr.Add(ch); err != nil {
				break
			}
		}
		if !errkind.Is(err, errkind.Transport) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%v: got %v, want %q", c.chunks, err, c.msg)
		}
	}
	// A stream without finish.
	_, err := Collect(func(yield func(Chunk, error) bool) { yield(Chunk{Type: TextDelta, Text: "a"}, nil) })
	if !errkind.Is(err, errkind.Transport) {
		t.Fatalf("no finish: %v", err)
	}
}

func TestChunkJSON(t *testing.T) {
	for _, c := range []struct {
		chunk Chunk
		json  string
	}{
		{Chunk{Type: TextDelta, Text: "Hel"}, `{"type":"text_delta","text":"Hel","index":0}`},
		{Chunk{Type: ToolCallStart, Index: 1, ID: "c", Name: "read"}, `{"type":"tool_call_start","index":1,"id":"c","name":"read"}`},
		{Chunk{Type: ToolCallDelta, Index: 1, Fragment: "{"}, `{"type":"tool_call_delta","index":1,"fragment":"{"}`},
		{Chunk{Type: Finish, StopReason: ToolUse, Usage: Usage{PromptTokens: 1, CompletionTokens: 2, TotalTokens: 3}}, `{"type":"finish","index":0,"stopReason":"tool_use","usage":{"promptTokens":1,"completionTokens":2,"totalTokens":3}}`},
	} {
		b, err := json.Marshal(c.chunk)
		if err != nil || string(b) != c.json {
			t.Errorf("got %s, want %s", b, c.json)
		}
		var back Chunk
		if err := json.Unmarshal([]byte(c.json), &back); err != nil || back != c.chunk {
			t.Errorf("%s decoded to %+v", c.json, back)
		}
	}
}

func TestBackoffAndRetryAfter(t *testing.T) {
	for _, c := range []struct {
		attempt  int
		r        float64
		min, max time.Duration
	}{
		{1, 0, 750 * time.Millisecond, 750 * time.Millisecond},
		{1, 0.999, time.Second, 1250 * time.Millisecond},
		{2, 0.5, 2 * time.Second, 2 * time.Second},
		{10, 0.5, 30 * time.Second, 30 * time.Second},
	} {
		if d := backoff(c.attempt, c.r); d < c.min || d > c.max {
			t.Errorf("backoff(%d, %v) = %v, want %v..%v", c.attempt, c.r, d, c.min, c.max)
		}
	}
	soon := time.Now().Add(3 * time.Second).UTC().Format(time.RFC1123)
	soon = strings.Replace(soon, "UTC", "GMT", 1)
	for _, c := range []struct {
		h    map[string]string
		want time.Duration
	}{
		{map[string]string{"retry-after": "0.2"}, 200 * time.Millisecond},
		{map[string]string{"retry-after": "2"}, 2 * time.Second},
		{map[string]string{"retry-after-ms": "150", "retry-after": "9"}, 150 * time.Millisecond},
		{map[string]string{"retry-after": "0"}, 0},
		{map[string]string{"retry-after": "3600"}, -1},
		{map[string]string{"retry-after": "soon"}, -1},
		{map[string]string{}, -1},
	} {
		if d := retryAfter(c.h); d != c.want {
			t.Errorf("retryAfter(%v) = %v, want %v", c.h, d, c.want)
		}
	}
	if d := retryAfter(map[string]string{"retry-after": soon}); d < time.Second || d > 3*time.Second {
		t.Errorf("retry-after %s gave %v", soon, d)
	}
}

// TestOpenAIToolCallOrder: a call whose name arrives after a later call's
// is announced first all the same; ids are filled when the server omits
// them.
func TestOpenAIToolCallOrder(t *testing.T) {
	d := &openAIDecoder{}
	var out []Chunk
	for _, ev := range []string{
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"a\""}}]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"c1","function":{"name":"two","arguments":"{}"}}]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"name":"one","arguments":":1}"}}]}}]}`,
		`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
		`{"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":4}}`,
	} {
		if _, err := d.event("", []byte(ev), &out); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := d.event("", []byte("[DONE]"), &out); err != nil {
		t.Fatal(err)
	}
	var tr Turn
	for _, c := range out {
		if err := tr.Add(c); err != nil {
			t.Fatal(err)
		}
	}
	want := []ToolCall{{ID: "call_0", Name: "one", Arguments: `{"a":1}`}, {ID: "c1", Name: "two", Arguments: "{}"}}
	if len(tr.Message.ToolCalls) != 2 || tr.Message.ToolCalls[0] != want[0] || tr.Message.ToolCalls[1] != want[1] {
		t.Fatalf("calls %+v, want %+v", tr.Message.ToolCalls, want)
	}
	if tr.Usage != (Usage{PromptTokens: 3, CompletionTokens: 4, TotalTokens: 7}) {
		t.Fatalf("usage %+v", tr.Usage)
	}
}

func TestOpenAIReasoningFields(t *testing.T) {
	d := &openAIDecoder{}
	var out []Chunk
	for _, ev := range []string{
		`{"choices":[{"index":0,"delta":{"reasoning_content":"a","reasoning":"a"}}]}`,
		`{"choices":[{"index":0,"delta":{"reasoning":"b"}}]}`,
	} {
		if _, err := d.event("", []byte(ev), &out); err != nil {
			t.Fatal(err)
		}
	}
	if len(out) != 2 || out[0].Text != "a" || out[1].Text != "b" {
		t.Fatalf("reasoning chunks %+v, want a then b", out)
	}
}

// TestOpenAISameIndexNewID: servers that send every call whole at index 0
// still give one call per id.
func TestOpenAISameIndexNewID(t *testing.T) {
	d := &openAIDecoder{}
	var out []Chunk
	for _, ev := range []string{
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"read","arguments":"{\"x\":1}"}}]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"b","function":{"name":"read","arguments":"{\"x\":2}"}}]}}]}`,
		`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
	} {
		if _, err := d.event("", []byte(ev), &out); err != nil {
			t.Fatal(err)
		}
	}
	d.eof(&out)
	var tr Turn
	for _, c := range out {
		if err := tr.Add(c); err != nil {
			t.Fatal(err)
		}
	}
	if len(tr.Message.ToolCalls) != 2 || tr.Message.ToolCalls[1].ID != "b" || tr.Message.ToolCalls[1].Arguments != `{"x":2}` {
		t.Fatalf("calls %+v", tr.Message.ToolCalls)
	}
}

// appendJSONString writes what encoding/json writes for a string, but
// for <, > and & (left as they are), on every byte sequence.
func FuzzAppendJSONString(f *testing.F) {
	for _, s := range []string{"", "read", "a \"quoted\" \\ path\n\ttab\r", "\x00\x1f\x7f", "ü日本\u2028\u2029", "\xff\xfe bad", "<a & b>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := string(appendJSONString(nil, s))
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(s); err != nil {
			t.Fatal(err)
		}
		if want := strings.TrimSuffix(buf.String(), "\n"); got != want {
			t.Fatalf("appendJSONString(%q) = %s, encoding/json writes %s", s, got, want)
		}
	})
}

// Anthropic counts cached input apart from input_tokens: the prompt is
// their sum, and the cache parts are kept.
func TestAnthropicCacheUsage(t *testing.T) {
	var a anUsage
	for _, ev := range []string{
		`{"input_tokens":10,"cache_creation_input_tokens":200,"cache_read_input_tokens":30,"output_tokens":1}`,
		`{"output_tokens":7}`, // message_delta: cumulative output only
	} {
		var u anUsage
		if err := json.Unmarshal([]byte(ev), &u); err != nil {
			t.Fatal(err)
		}
		a.merge(&u)
	}
	want := Usage{PromptTokens: 240, CompletionTokens: 7, TotalTokens: 247, CacheReadTokens: 30, CacheWriteTokens: 200}
	if got := a.usage(); got != want {
		t.Fatalf("usage %+v, want %+v", got, want)
	}
}

// The tools array is written once while the tools stay the same, and
// written anew when any changes, also in place in the caller's buffer; a
// schema changed in place is checked again.
func TestToolsCache(t *testing.T) {
	c := &openAI{transport{cfg: Config{Model: "m"}, tools: &toolsCache{}}}
	params := []byte(`{"type":"object","properties":{"a":{"type":"string"}}}`)
	req := Request{Messages: []Message{{Role: User, Text: "hi"}}, Tools: []Tool{{Name: "x", Description: "d", Parameters: params}}}
	body := func() []byte {
		return c.toolsArray(&req, c.t.tools.lookup(req.Tools))
	}
	first := body()
	again := body()
	if &first[0] != &again[0] {
		t.Fatal("the same tools were written twice")
	}
	copy(params[len(`{"type":"object","properties":{"`):], "b") // the caller reuses its buffer
	changed := body()
	if !strings.Contains(string(changed), `"properties":{"b"`) {
		t.Fatalf("a schema changed in place was not written anew: %s", changed)
	}
	params[len(params)-1] = ']'
	if err := req.check(c.t.tools.lookup(req.Tools) != nil); err == nil || !strings.Contains(err.Error(), "not a JSON object") {
		t.Fatalf("a schema broken in place passed the check: %v", err)
	}
	params[len(params)-1] = '}'
	req.Tools = append(req.Tools, Tool{Name: "y"})
	more := body()
	if !strings.Contains(string(more), `"name":"y"`) || !json.Valid(more) {
		t.Fatalf("an added tool is missing: %s", more)
	}
}

// equalBytes answers as bytes.Equal for every length, alignment and place
// of a difference (under js/wasm it compares a word at a time).
func TestEqualBytes(t *testing.T) {
	base := make([]byte, 70)
	for i := range base {
		base[i] = byte(i*7 + 3)
	}
	for off := 0; off < 8; off++ {
		for n := 0; off+n <= len(base)-1; n++ {
			a := base[off : off+n]
			b := bytes.Clone(a)
			if !equalBytes(a, b) || !equalBytes(a, a) {
				t.Fatalf("off %d len %d: equal slices differ", off, n)
			}
			if n > 0 && equalBytes(a, base[off+1:off+1+n]) != bytes.Equal(a, base[off+1:off+1+n]) {
				t.Fatalf("off %d len %d: shifted slice", off, n)
			}
			for i := range n {
				b[i] ^= 0x80
				if equalBytes(a, b) {
					t.Fatalf("off %d len %d: a difference at %d is missed", off, n, i)
				}
				b[i] ^= 0x80
			}
			if equalBytes(a, append(bytes.Clone(a), 0)) || equalBytes(append(bytes.Clone(a), 0), a) {
				t.Fatalf("off %d len %d: lengths differ", off, n)
			}
		}
	}
	if !equalBytes(nil, []byte{}) {
		t.Fatal("nil and empty differ")
	}
}
