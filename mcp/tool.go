package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/a3s-lab/code-wasm/errkind"
	"github.com/a3s-lab/code-wasm/internal/lazyre"
	"github.com/a3s-lab/code-wasm/kernel"
)

// MaxToolName is the longest kernel tool name an MCP tool may get
// (OpenAI-style function names allow 64).
const MaxToolName = 64

var (
	serverName = lazyre.New(`^[A-Za-z0-9-]+$`)
	unsafeChar = lazyre.New(`[^A-Za-z0-9_-]`)
)

// ToolName is the kernel name of tool on server: mcp__<server>__<tool>
// with characters outside [A-Za-z0-9_-] mapped to "_".
func ToolName(server, tool string) string {
	return "mcp__" + server + "__" + unsafeChar().ReplaceAllString(tool, "_")
}

// tool adapts one MCP tool to a kernel tool.
type tool struct {
	name, server, remote string // kernel name, server name, the server's own name
	info                 ToolInfo
	client               func() *Client
}

func (t *tool) Name() string { return t.name }

func (t *tool) Description() string {
	if t.info.Description != "" {
		return t.info.Description
	}
	return t.info.Title
}

func (t *tool) Parameters() json.RawMessage {
	if len(t.info.InputSchema) == 0 {
		return json.RawMessage(`{"type":"object"}`)
	}
	return t.info.InputSchema
}

// Capabilities: readOnlyHint and idempotentHint together make a
// parallel-safe read; anything else runs alone.
func (t *tool) Capabilities(json.RawMessage) kernel.Capabilities {
	a := t.info.Annotations
	if a != nil && a.ReadOnlyHint != nil && *a.ReadOnlyHint && a.IdempotentHint != nil && *a.IdempotentHint {
		return kernel.ParallelSafeRead(8)
	}
	return kernel.Conservative()
}

func (t *tool) Execute(ctx context.Context, call *kernel.Call) (*kernel.Result, error) {
	c := t.client()
	if c == nil {
		return nil, &Error{kind: errkind.Transport, msg: fmt.Sprintf("mcp server %q is not connected", t.server)}
	}
	res, err := c.CallTool(ctx, t.remote, call.Args)
	if err != nil {
		r := kernel.Failure(t.name, err)
		if errkind.Is(err, errkind.Transport) {
			r.ErrorKind = &kernel.ErrorKind{Type: errkind.Transport, Op: t.name}
		}
		return r, nil
	}
	return resultOf(t, res), nil
}

// resultOf maps a tools/call result: text joined as output, images, audio
// and resources summarised, structuredContent into metadata, isError as
// exit 1; the content is external.
func resultOf(t *tool, res *CallResult) *kernel.Result {
	var parts []string
	for _, c := range res.Content {
		switch c.Type {
		case "text":
			parts = append(parts, c.Text)
		case "image", "audio":
			parts = append(parts, fmt.Sprintf("[%s %s, %d bytes base64]", c.Type, c.MimeType, len(c.Data)))
		case "resource_link":
			parts = append(parts, fmt.Sprintf("[resource link %s: %s]", c.Name, c.URI))
		case "resource":
			if c.Resource != nil && c.Resource.Text != "" {
				parts = append(parts, c.Resource.Text)
			} else if c.Resource != nil {
				parts = append(parts, fmt.Sprintf("[resource %s %s]", c.Resource.URI, c.Resource.MimeType))
			}
		default:
			parts = append(parts, fmt.Sprintf("[%s content]", c.Type))
		}
	}
	meta := map[string]any{"server": t.server, "tool": t.remote, "trust": "external"}
	if len(res.StructuredContent) > 0 {
		var v any
		if json.Unmarshal(res.StructuredContent, &v) == nil {
			meta["structured"] = v
		}
	}
	r := kernel.OK(strings.Join(parts, "\n"), meta)
	r.Name = t.name
	if res.IsError {
		r.ExitCode = 1
	}
	return r
}
