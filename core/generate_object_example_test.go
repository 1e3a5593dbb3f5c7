//go:build !js

package core_test

import (
	"context"
	"fmt"

	"github.com/a3s-lab/code-wasm/core"
	"github.com/a3s-lab/code-wasm/llm"
	"github.com/a3s-lab/code-wasm/llm/llmtest"
)

// generate_object against the scripted server: the model's first answer
// breaks the schema, the validator's errors go back, the second answer
// passes.
func Example_generateObject() {
	srv, _ := llmtest.Start()
	defer srv.Close()
	answer := func(args string) llmtest.Reply {
		return llmtest.Reply{Events: []llmtest.Event{
			llmtest.Tool(0, "call_1", "emit_person"), llmtest.Args(0, args), llmtest.Done(llm.ToolUse, 40, 12)}}
	}
	script, _ := llmtest.Remote{URL: srv.URL}.Load(context.Background(), llmtest.Script{Provider: "openai",
		Replies: []llmtest.Reply{answer(`{"name":"Ada","born":"1815"}`), answer(`{"name":"Ada","born":1815}`)}})
	client, _ := llm.New(llm.Config{Provider: "openai", BaseURL: script.BaseURL, APIKey: "sk-…", Model: "gpt-x"})

	s, _ := core.New(core.Options{LLM: client})
	defer s.Close()
	res, _ := s.Tool(context.Background(), "generate_object", map[string]any{
		"prompt":      "Ada Lovelace was born in 1815.",
		"schema_name": "person",
		"schema": map[string]any{"type": "object", "required": []string{"name", "born"},
			"properties": map[string]any{"name": map[string]any{"type": "string"}, "born": map[string]any{"type": "integer"}}},
	})
	fmt.Println(res.ExitCode, res.Output)
	// Output:
	// 0 {"object":{"name":"Ada","born":1815},"repair_rounds":1,"mode_used":"tool","usage":{"prompt_tokens":80,"completion_tokens":24,"total_tokens":104,"cache_read_tokens":0,"cache_write_tokens":0}}
}
