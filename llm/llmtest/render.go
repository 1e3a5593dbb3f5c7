//go:build !js

package llmtest

import (
	"time"

	"github.com/a3s-lab/code-wasm/llm"
)

// renderer writes a script's provider-neutral events in one wire format.
type renderer interface {
	event(out *streamWriter, i int, ev Event)
	end(out *streamWriter)
}

// wireStop is a Finish's stop reason in the provider's words.
func wireStop(provider string, f *Finish) string {
	if f.Wire != "" {
		return f.Wire
	}
	words := map[llm.StopReason][2]string{
		llm.Stop:          {"stop", "end_turn"},
		llm.ToolUse:       {"tool_calls", "tool_use"},
		llm.MaxTokens:     {"length", "max_tokens"},
		llm.ContentFilter: {"content_filter", "refusal"},
		llm.OtherStop:     {"insufficient_system_resource", "pause_turn"},
		"":                {"stop", "end_turn"},
	}[f.Stop]
	if provider == "openai" {
		return words[0]
	}
	return words[1]
}

// openAIRenderer writes chat.completion.chunk events as OpenAI does: a
// first chunk with the role and empty content, usage: null on every chunk
// but the usage chunk (choices: []) that follows finish_reason when the
// request asked for it, then data: [DONE].
type openAIRenderer struct {
	model      string
	usage      bool
	cumulative bool
	started    bool
	text       string
}

type obj = map[string]any

func (r *openAIRenderer) chunk(out *streamWriter, choices []any, usage any) {
	out.json("", obj{"id": "chatcmpl-llmtest", "object": "chat.completion.chunk", "created": time.Now().Unix(),
		"model": r.model, "system_fingerprint": nil, "choices": choices, "usage": usage})
}

func (r *openAIRenderer) delta(out *streamWriter, delta obj, finish any) {
	r.chunk(out, []any{obj{"index": 0, "delta": delta, "logprobs": nil, "finish_reason": finish}}, nil)
}

func (r *openAIRenderer) event(out *streamWriter, _ int, ev Event) {
	if ev.Raw != "" {
		out.raw([]byte(ev.Raw))
		return
	}
	if !r.started {
		r.started = true
		r.delta(out, obj{"role": "assistant", "content": "", "refusal": nil}, nil)
	}
	switch {
	case ev.Text != "":
		r.text += ev.Text
		t := ev.Text
		if r.cumulative {
			t = r.text
		}
		r.delta(out, obj{"content": t}, nil)
	case ev.Reasoning != "":
		r.delta(out, obj{"content": nil, "reasoning_content": ev.Reasoning}, nil)
	case ev.Tool != nil:
		r.delta(out, obj{"tool_calls": []any{obj{"index": ev.Tool.Index, "id": ev.Tool.ID, "type": "function",
			"function": obj{"name": ev.Tool.Name, "arguments": ""}}}}, nil)
	case ev.Args != nil:
		r.delta(out, obj{"tool_calls": []any{obj{"index": ev.Args.Index, "function": obj{"arguments": ev.Args.Fragment}}}}, nil)
	case ev.Finish != nil:
		r.delta(out, obj{}, wireStop("openai", ev.Finish))
		if r.usage {
			u := ev.Finish.Usage
			r.chunk(out, []any{}, obj{"prompt_tokens": u.PromptTokens, "completion_tokens": u.CompletionTokens,
				"total_tokens": u.TotalTokens, "prompt_tokens_details": obj{"cached_tokens": u.CacheReadTokens},
				"completion_tokens_details": obj{"reasoning_tokens": 0}})
		}
	case ev.Ping:
		out.comment("keep-alive")
	case ev.Error != nil:
		out.json("", obj{"error": obj{"message": ev.Error.Message, "type": ev.Error.Type, "param": nil, "code": nil}})
	}
}

func (r *openAIRenderer) end(out *streamWriter) { out.sse("", []byte("[DONE]")) }

// anthropicRenderer writes a Messages stream: message_start, content
// blocks (a block starts at its first event and stops after its last, so
// interleaved tool fragments keep their blocks open together; text and
// reasoning events in a row share a block), message_delta with the
// cumulative usage, message_stop.
type anthropicRenderer struct {
	model                 string
	block                 []int          // event → content block, -1 for none
	last                  map[int]int    // block → its last event
	kind                  map[int]string // block → text, thinking, tool_use
	open                  map[int]bool
	input                 int
	cacheRead, cacheWrite int
	started               bool
}

func newAnthropicRenderer(model string, evs []Event) *anthropicRenderer {
	r := &anthropicRenderer{model: model, block: make([]int, len(evs)), last: map[int]int{}, kind: map[int]string{}, open: map[int]bool{}}
	tools := map[int]int{}
	cur, curKind, n := -1, "", 0
	next := func(kind string) {
		if curKind != kind {
			cur, curKind = n, kind
			r.kind[n] = kind
			n++
		}
	}
	for i, ev := range evs {
		r.block[i] = -1
		switch {
		case ev.Raw != "":
		case ev.Text != "":
			next("text")
			r.block[i] = cur
		case ev.Reasoning != "":
			next("thinking")
			r.block[i] = cur
		case ev.Tool != nil:
			curKind = ""
			next("tool_use")
			tools[ev.Tool.Index] = cur
			r.block[i] = cur
		case ev.Args != nil:
			if b, ok := tools[ev.Args.Index]; ok {
				r.block[i] = b
			}
		case ev.Finish != nil:
			u := ev.Finish.Usage
			r.input, r.cacheRead, r.cacheWrite = u.PromptTokens-u.CacheReadTokens-u.CacheWriteTokens, u.CacheReadTokens, u.CacheWriteTokens
		}
		if r.block[i] >= 0 {
			r.last[r.block[i]] = i
		}
	}
	return r
}

func (r *anthropicRenderer) event(out *streamWriter, i int, ev Event) {
	if ev.Raw != "" {
		out.raw([]byte(ev.Raw))
		return
	}
	if !r.started {
		r.started = true
		out.json("message_start", obj{"type": "message_start", "message": obj{"id": "msg_llmtest", "type": "message",
			"role": "assistant", "model": r.model, "content": []any{}, "stop_reason": nil, "stop_sequence": nil,
			"usage": obj{"input_tokens": r.input, "cache_creation_input_tokens": r.cacheWrite, "cache_read_input_tokens": r.cacheRead, "output_tokens": 1}}})
	}
	b := r.block[i]
	if b >= 0 && !r.open[b] {
		r.open[b] = true
		var cb obj
		switch r.kind[b] {
		case "text":
			cb = obj{"type": "text", "text": ""}
		case "thinking":
			cb = obj{"type": "thinking", "thinking": "", "signature": ""}
		default:
			cb = obj{"type": "tool_use", "id": ev.Tool.ID, "name": ev.Tool.Name, "input": obj{}}
		}
		out.json("content_block_start", obj{"type": "content_block_start", "index": b, "content_block": cb})
	}
	delta := func(d obj) {
		out.json("content_block_delta", obj{"type": "content_block_delta", "index": b, "delta": d})
	}
	switch {
	case ev.Text != "":
		delta(obj{"type": "text_delta", "text": ev.Text})
	case ev.Reasoning != "":
		delta(obj{"type": "thinking_delta", "thinking": ev.Reasoning})
	case ev.Tool != nil:
		delta(obj{"type": "input_json_delta", "partial_json": ""})
	case ev.Args != nil && b >= 0:
		delta(obj{"type": "input_json_delta", "partial_json": ev.Args.Fragment})
	case ev.Finish != nil:
		out.json("message_delta", obj{"type": "message_delta", "delta": obj{"stop_reason": wireStop("anthropic", ev.Finish), "stop_sequence": nil},
			"usage": obj{"output_tokens": ev.Finish.Usage.CompletionTokens}})
	case ev.Ping:
		out.json("ping", obj{"type": "ping"})
	case ev.Error != nil:
		out.json("error", obj{"type": "error", "error": obj{"type": ev.Error.Type, "message": ev.Error.Message}})
	}
	if b >= 0 && r.last[b] == i {
		if r.kind[b] == "thinking" {
			delta(obj{"type": "signature_delta", "signature": "EqQBCgIYAhIMllmtest"})
		}
		out.json("content_block_stop", obj{"type": "content_block_stop", "index": b})
	}
}

func (r *anthropicRenderer) end(out *streamWriter) {
	out.json("message_stop", obj{"type": "message_stop"})
}
