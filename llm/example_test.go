//go:build !js

package llm_test

import (
	"context"
	"fmt"

	"github.com/a3s-lab/code-wasm/llm"
	"github.com/a3s-lab/code-wasm/llm/llmtest"
)

// A turn against the scripted server: the text as it streams, then the
// assembled tool call, stop reason and usage.
func Example() {
	srv, _ := llmtest.Start()
	defer srv.Close()
	script, _ := llmtest.Remote{URL: srv.URL}.Load(context.Background(), llmtest.Script{
		Provider: "anthropic",
		Replies: []llmtest.Reply{{Events: []llmtest.Event{
			llmtest.Text("Let me "), llmtest.Text("look."),
			llmtest.Tool(0, "toolu_1", "read"), llmtest.Args(0, `{"file_path":`), llmtest.Args(0, `"a.txt"}`),
			llmtest.Done(llm.ToolUse, 120, 25),
		}}},
	})

	client, err := llm.New(llm.Config{Provider: "anthropic", BaseURL: script.BaseURL, APIKey: "sk-…", Model: "claude-x"})
	if err != nil {
		fmt.Println(err)
		return
	}
	req := llm.Request{
		System:   "You are terse.",
		Messages: []llm.Message{{Role: llm.User, Text: "What is in a.txt?"}},
		Tools:    []llm.Tool{{Name: "read", Parameters: []byte(`{"type":"object","properties":{"file_path":{"type":"string"}}}`)}},
	}
	var turn llm.Turn
	for chunk, err := range client.Stream(context.Background(), req) {
		if err != nil {
			fmt.Println("failed:", err)
			return
		}
		if chunk.Type == llm.TextDelta {
			fmt.Printf("%q\n", chunk.Text)
		}
		turn.Add(chunk)
	}
	fmt.Println(turn.Message.ToolCalls[0].Name, turn.Message.ToolCalls[0].Arguments)
	fmt.Println(turn.StopReason, turn.Usage.TotalTokens)
	// Output:
	// "Let me "
	// "look."
	// read {"file_path":"a.txt"}
	// tool_use 145
}
