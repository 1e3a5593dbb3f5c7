//go:build !codewasm_core

package hostapi

import (
	"os"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/a3s-lab/code-wasm/kernel"
	"github.com/a3s-lab/code-wasm/llm"
	"github.com/a3s-lab/code-wasm/mcp"
)

// llmProviderFields is LLMOptions without the host-client switch, which
// index.d.ts declares apart (LlmClientOptions).
type llmProviderFields struct {
	Provider   string            `json:"provider"`
	BaseURL    string            `json:"baseURL"`
	APIKey     string            `json:"apiKey"`
	Model      string            `json:"model"`
	Headers    map[string]string `json:"headers"`
	MaxRetries *int              `json:"maxRetries"`
	TimeoutMs  int64             `json:"timeoutMs"`
	MaxTokens  int               `json:"maxTokens"`
}

// dtsInterfaces parses npm/index.d.ts: interface name → field name →
// optional.
func dtsInterfaces(t *testing.T) map[string]map[string]bool {
	t.Helper()
	b, err := os.ReadFile("../../npm/index.d.ts")
	noErr(t, err)
	out := map[string]map[string]bool{}
	head := regexp.MustCompile(`^export interface (\w+)(?: extends [^{]+)? \{$`)
	field := regexp.MustCompile(`^  (\w+)(\??):`)
	var cur map[string]bool
	for _, l := range strings.Split(string(b), "\n") {
		if m := head.FindStringSubmatch(l); m != nil {
			cur = map[string]bool{}
			out[m[1]] = cur
			continue
		}
		if l == "}" {
			cur = nil
			continue
		}
		if m := field.FindStringSubmatch(l); m != nil && cur != nil {
			cur[m[1]] = m[2] == "?"
		}
	}
	return out
}

// jsonFields lists a struct's JSON field names → omitted when empty.
func jsonFields(v any) map[string]bool {
	out := map[string]bool{}
	rt := reflect.TypeOf(v)
	for i := 0; i < rt.NumField(); i++ {
		f := rt.Field(i)
		tag := f.Tag.Get("json")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = strings.Contains(opts, "omitempty") || strings.Contains(opts, "omitzero")
	}
	return out
}

func keys(m map[string]bool) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// TestTypeScriptDeclarationsMirrorGo keeps npm/index.d.ts in step with the
// Go structs each interface cites: the same field names, and for what Go
// emits, `?` exactly where the JSON omits an empty field.
func TestTypeScriptDeclarationsMirrorGo(t *testing.T) {
	dts := dtsInterfaces(t)
	cases := []struct {
		iface string
		goVal any
		// emitted: Go writes it (optionality must match omitempty);
		// otherwise Go reads it (every field optional in JS is fine).
		emitted bool
	}{
		{"ToolResult", ToolResult{}, true},
		{"AgentEvent", WireEvent{}, true},
		{"ActiveTool", kernel.ActiveTool{}, true},
		{"PendingConfirmation", kernel.PendingConfirmation{}, true},
		{"Artifact", kernel.Artifact{}, true},
		{"ToolDefinition", kernel.Definition{}, true},
		{"HookEvent", hookPayload{}, true},
		{"HookResponse", hookAnswer{}, false},
		{"SessionOptions", Options{}, false},
		{"WorkspaceOptions", WorkspaceOptions{}, false},
		{"PermissionPolicy", PermissionPolicy{}, false},
		{"ConfirmationPolicy", ConfirmationPolicy{}, false},
		{"HookMatcher", HookMatcher{}, false},
		{"HookConfig", HookConfig{}, false},
		{"Hook", HookSpec{}, false},
		{"BudgetGuard", BudgetSpec{}, false},
		{"SecurityProvider", SecuritySpec{}, false},
		// The agent loop (llm.go).
		{"AgentResult", AgentResult{}, true},
		{"Usage", llm.Usage{}, true},
		{"LlmProviderOptions", llmProviderFields{}, false},
		{"LlmMessage", llm.Message{}, true},
		{"LlmRequest", llm.Request{}, true},
		{"McpServer", mcp.Config{}, false},
		{"McpStatus", mcp.Status{}, true},
		{"WebFetchOptions", WebFetchSpec{}, false},
	}
	for _, c := range cases {
		t.Run(c.iface, func(t *testing.T) {
			ts, ok := dts[c.iface]
			if !ok {
				t.Fatalf("npm/index.d.ts has no interface %s", c.iface)
			}
			goFields := jsonFields(c.goVal)
			equal(t, keys(goFields), keys(ts), "field names of %s vs %T", c.iface, c.goVal)
			if !c.emitted {
				return
			}
			for name, omit := range goFields {
				if opt, ok := ts[name]; ok && opt != omit {
					t.Errorf("%s.%s: optional in TypeScript = %v, omitempty in Go = %v", c.iface, name, opt, omit)
				}
			}
		})
	}
}
