package tools

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/a3s-lab/code-wasm/kernel"
	"github.com/a3s-lab/code-wasm/workspace"
)

// Write is the `write` tool.
type Write struct{ ws *workspace.Workspace }

func (*Write) Name() string { return "write" }
func (*Write) Description() string {
	return "Write a file in the workspace, creating parent directories."
}
func (*Write) Parameters() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{"file_path":{"type":"string"},"content":{"type":"string"}},"required":["file_path","content"],"additionalProperties":false}`)
}
func (*Write) Capabilities(json.RawMessage) kernel.Capabilities {
	c := kernel.Conservative()
	c.Idempotent, c.OutputKind = true, kernel.OutputDiff
	return c
}

func (w *Write) Execute(ctx context.Context, call *kernel.Call) (*kernel.Result, error) {
	var a struct {
		FilePath string `json:"file_path"`
		Content  string `json:"content"`
	}
	if err := json.Unmarshal(call.Args, &a); err != nil {
		return nil, kernel.InvalidArgument("write: %v", err)
	}
	if _, err := w.ws.WriteFile(ctx, a.FilePath, []byte(a.Content)); err != nil {
		return nil, err
	}
	return kernel.OK(fmt.Sprintf("Wrote %d bytes to %s", len(a.Content), a.FilePath), map[string]any{"file_path": a.FilePath}), nil
}
