package mcp_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/a3s-lab/code-wasm/core"
	"github.com/a3s-lab/code-wasm/mcp"
)

// TestRemoteEverything runs against a server-everything someone else
// started (MCP_EVERYTHING_URL): the js/wasm build in Chromium
// (web/test/mcp.test.mjs), where a test cannot start processes.
func TestRemoteEverything(t *testing.T) {
	url := os.Getenv("MCP_EVERYTHING_URL")
	if url == "" {
		t.Skip("MCP_EVERYTHING_URL not set")
	}
	s, err := core.New(core.Options{McpServers: []mcp.Config{{Name: "everything", URL: url}}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if st := s.McpStatus(); len(st) != 1 || st[0].State != "connected" {
		t.Fatalf("status %+v", st)
	}
	ctx := context.Background()
	res, err := s.Tool(ctx, "mcp__everything__echo", map[string]any{"message": "from the browser"})
	if err != nil || res.Output != "Echo: from the browser" {
		t.Fatalf("echo: %+v %v", res, err)
	}
	res, _ = s.Tool(ctx, "mcp__everything__get-sum", map[string]any{"a": 40, "b": 2})
	if res.ExitCode != 0 || !strings.Contains(res.Output, "42") {
		t.Errorf("get-sum: %+v", res)
	}
	res, _ = s.Tool(ctx, "mcp__everything__get-structured-content", map[string]any{"location": "New York"})
	if st, ok := res.Metadata["structured"].(map[string]any); !ok || st["temperature"] == nil {
		t.Errorf("structuredContent: %+v", res)
	}
}
