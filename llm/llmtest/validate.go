//go:build !js

package llmtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
)

// wireRequest is what validation needs of either provider's request.
type wireRequest struct {
	Model         string `json:"model"`
	MaxTokens     *int   `json:"max_tokens"`
	Stream        bool   `json:"stream"`
	StreamOptions struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	Messages   []json.RawMessage `json:"messages"`
	Tools      []json.RawMessage `json:"tools"`
	ToolChoice json.RawMessage   `json:"tool_choice"`
}

// verror is a refused request: the status, the provider's error type and
// its message (worded as the real API words it).
type verror struct {
	status   int
	typ, msg string
}

func invalid(format string, a ...any) *verror {
	return &verror{400, "invalid_request_error", fmt.Sprintf(format, a...)}
}

var toolName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// validate checks a request as the provider does.
func validate(provider, path string, h http.Header, body []byte, req *wireRequest) *verror {
	if !strings.HasPrefix(h.Get("Content-Type"), "application/json") {
		return invalid("Content-Type must be application/json")
	}
	if provider == "openai" {
		if path != "/v1/chat/completions" {
			return &verror{404, "invalid_request_error", "Invalid URL (POST /v1" + path + ")"}
		}
		if key, ok := strings.CutPrefix(h.Get("Authorization"), "Bearer "); !ok || key == "" {
			return &verror{401, "invalid_request_error", "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY)."}
		}
	} else {
		if path != "/v1/messages" {
			return &verror{404, "not_found_error", "Not Found"}
		}
		// API keys go in x-api-key; @anthropic-ai/sdk 1.x sends them as a
		// bearer token, which the API accepts too.
		if key, _ := strings.CutPrefix(h.Get("Authorization"), "Bearer "); h.Get("X-Api-Key") == "" && key == "" {
			return &verror{401, "authentication_error", "x-api-key header is required"}
		}
		if h.Get("Origin") != "" && h.Get("Anthropic-Dangerous-Direct-Browser-Access") != "true" {
			return &verror{401, "authentication_error", "CORS requests must set 'anthropic-dangerous-direct-browser-access' header"}
		}
		if h.Get("Anthropic-Version") == "" {
			return invalid("anthropic-version: header is required")
		}
	}
	if err := json.Unmarshal(body, req); err != nil {
		return invalid("We could not parse the JSON body of your request. (%v)", err)
	}
	if req.Model == "" {
		if provider == "openai" {
			return invalid("you must provide a model parameter")
		}
		return invalid("model: Field required")
	}
	if !req.Stream {
		return invalid("llmtest serves streams only: set stream: true")
	}
	if len(req.Messages) == 0 {
		if provider == "openai" {
			return invalid("[] is too short - 'messages'")
		}
		return invalid("messages: at least one message is required")
	}
	names, err := toolNames(provider, req.Tools)
	if err != nil {
		return err
	}
	if provider == "openai" {
		return validateOpenAI(req, names)
	}
	return validateAnthropic(req, names)
}

func toolNames(provider string, tools []json.RawMessage) (map[string]bool, *verror) {
	names := map[string]bool{}
	for i, raw := range tools {
		var t struct {
			Type     string `json:"type"`
			Name     string `json:"name"`
			Function struct {
				Name       string         `json:"name"`
				Parameters map[string]any `json:"parameters"`
			} `json:"function"`
			InputSchema map[string]any `json:"input_schema"`
		}
		if err := json.Unmarshal(raw, &t); err != nil {
			return nil, invalid("tools.%d: %v", i, err)
		}
		name := t.Name
		if provider == "openai" {
			if t.Type != "function" {
				return nil, invalid("Invalid value: '%s'. Supported values are: 'function'.", t.Type)
			}
			name = t.Function.Name
		} else if t.InputSchema == nil {
			return nil, invalid("tools.%d.custom.input_schema: Field required", i)
		}
		if !toolName.MatchString(name) {
			if provider == "openai" {
				return nil, invalid("Invalid 'tools[%d].function.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.", i)
			}
			return nil, invalid("tools.%d.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'", i)
		}
		if names[name] {
			return nil, invalid("tools: Tool names must be unique.")
		}
		names[name] = true
	}
	return names, nil
}

func validateOpenAI(req *wireRequest, names map[string]bool) *verror {
	var choice struct {
		Function struct{ Name string } `json:"function"`
	}
	if json.Unmarshal(req.ToolChoice, &choice) == nil && choice.Function.Name != "" && !names[choice.Function.Name] {
		return invalid("Invalid value for 'tool_choice': tool '%s' is not in 'tools'.", choice.Function.Name)
	}
	var pending []string // tool_call ids the next tool messages must answer
	for i, raw := range req.Messages {
		var m struct {
			Role       string `json:"role"`
			ToolCallID string `json:"tool_call_id"`
			ToolCalls  []struct {
				ID       string `json:"id"`
				Type     string `json:"type"`
				Function struct {
					Name      string          `json:"name"`
					Arguments json.RawMessage `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		}
		if err := json.Unmarshal(raw, &m); err != nil {
			return invalid("messages.[%d]: %v", i, err)
		}
		if m.Role != "tool" && len(pending) > 0 {
			return invalid("An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: %s", strings.Join(pending, ", "))
		}
		switch m.Role {
		case "system", "developer", "user":
		case "assistant":
			for _, c := range m.ToolCalls {
				var s string
				if c.ID == "" || c.Type != "function" || json.Unmarshal(c.Function.Arguments, &s) != nil {
					return invalid("Invalid 'messages[%d].tool_calls': each needs an id, type 'function' and arguments as a string.", i)
				}
				pending = append(pending, c.ID)
			}
		case "tool":
			j := indexOf(pending, m.ToolCallID)
			if j < 0 {
				return invalid("Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.")
			}
			pending = append(pending[:j], pending[j+1:]...)
		default:
			return invalid("Invalid value: '%s'. Supported values are: 'system', 'assistant', 'user', 'tool', and 'developer'.", m.Role)
		}
	}
	if len(pending) > 0 {
		return invalid("An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: %s", strings.Join(pending, ", "))
	}
	return nil
}

func indexOf(s []string, v string) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	return -1
}

type anBlock struct {
	Type      string          `json:"type"`
	Text      *string         `json:"text"`
	ID        string          `json:"id"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
}

func validateAnthropic(req *wireRequest, names map[string]bool) *verror {
	if req.MaxTokens == nil {
		return invalid("max_tokens: Field required")
	}
	if *req.MaxTokens < 1 {
		return invalid("max_tokens: Input should be greater than or equal to 1")
	}
	var choice struct{ Type, Name string }
	if json.Unmarshal(req.ToolChoice, &choice) == nil && choice.Type == "tool" && !names[choice.Name] {
		return invalid("tool_choice.tool.name: Tool '%s' not found in provided tools", choice.Name)
	}
	var uses []string // the tool_use ids of the previous assistant message
	prev := ""
	for i, raw := range req.Messages {
		var m struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		}
		if err := json.Unmarshal(raw, &m); err != nil {
			return invalid("messages.%d: %v", i, err)
		}
		if m.Role != "user" && m.Role != "assistant" {
			return invalid("messages.%d.role: Input should be 'user' or 'assistant'", i)
		}
		if i == 0 && m.Role != "user" {
			return invalid("messages: first message must use the \"user\" role")
		}
		if m.Role == prev {
			return invalid("messages: roles must alternate between \"user\" and \"assistant\", but found multiple %q roles in a row", m.Role)
		}
		prev = m.Role
		var blocks []anBlock
		var s string
		if json.Unmarshal(m.Content, &s) == nil {
			if s == "" {
				return invalid("messages.%d: all messages must have non-empty content", i)
			}
			blocks = []anBlock{{Type: "text", Text: &s}}
		} else if err := json.Unmarshal(m.Content, &blocks); err != nil || len(blocks) == 0 {
			return invalid("messages.%d: all messages must have non-empty content", i)
		}
		var results []string
		var next []string
		for j, b := range blocks {
			switch b.Type {
			case "text":
				if b.Text == nil || *b.Text == "" {
					return invalid("messages.%d.content.%d.text: text content blocks must be non-empty", i, j)
				}
			case "tool_use":
				var o map[string]any
				if m.Role != "assistant" || b.ID == "" || json.Unmarshal(b.Input, &o) != nil || o == nil {
					return invalid("messages.%d.content.%d.tool_use.input: Input should be a valid dictionary", i, j)
				}
				next = append(next, b.ID)
			case "tool_result":
				if m.Role != "user" || indexOf(uses, b.ToolUseID) < 0 {
					return invalid("messages.%d.content.%d: unexpected `tool_use_id` found in `tool_result` blocks: %s. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.", i, j, b.ToolUseID)
				}
				if j != len(results) {
					return invalid("messages.%d: `tool_result` blocks must come first in the message content", i)
				}
				results = append(results, b.ToolUseID)
			default:
				return invalid("messages.%d.content.%d.type: unexpected block type %q", i, j, b.Type)
			}
		}
		var missing []string
		for _, id := range uses {
			if indexOf(results, id) < 0 {
				missing = append(missing, id)
			}
		}
		if len(missing) > 0 {
			return invalid("messages.%d: `tool_use` ids were found without `tool_result` blocks immediately after: %s. Each `tool_use` block must have a corresponding `tool_result` block in the next message.", i-1, strings.Join(missing, ", "))
		}
		uses = next
	}
	if len(uses) > 0 {
		return invalid("messages.%d: `tool_use` ids were found without `tool_result` blocks immediately after: %s. Each `tool_use` block must have a corresponding `tool_result` block in the next message.", len(req.Messages)-1, strings.Join(uses, ", "))
	}
	return nil
}
