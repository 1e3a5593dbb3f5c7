package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/a3s-lab/code-wasm/kernel"
	"github.com/a3s-lab/code-wasm/workspace"
)

// Read is the `read` tool.
type Read struct{ ws *workspace.Workspace }

func (*Read) Name() string { return "read" }
func (*Read) Description() string {
	return "Read a text file from the workspace with line numbers."
}
func (*Read) Parameters() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{"file_path":{"type":"string"},"offset":{"type":"integer","minimum":0},"limit":{"type":"integer","minimum":1,"maximum":2000}},"required":["file_path"],"additionalProperties":false}`)
}
func (*Read) Capabilities(json.RawMessage) kernel.Capabilities { return kernel.ReadOnlyPaginated(16) }

func (r *Read) Execute(ctx context.Context, call *kernel.Call) (*kernel.Result, error) {
	var a struct {
		FilePath string `json:"file_path"`
		Offset   int    `json:"offset"`
		Limit    int    `json:"limit"`
	}
	if err := json.Unmarshal(call.Args, &a); err != nil {
		return nil, kernel.InvalidArgument("read: %v", err)
	}
	if a.Limit == 0 {
		a.Limit = 2000
	}
	lr, err := r.ws.ReadLines(ctx, a.FilePath, a.Offset, a.Limit)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	for i, l := range lr.Lines {
		fmt.Fprintf(&b, "%6d\t%s\n", lr.Offset+i+1, l)
	}
	return kernel.OK(b.String(), map[string]any{"source_anchors": []string{a.FilePath}}), nil
}
