//go:build !js

package llmtest_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/a3s-lab/code-wasm/llm/llmtest"
)

// TestValidation: the server refuses what the real APIs refuse, with the
// provider's error body, and records the request.
func TestValidation(t *testing.T) {
	url := llmtest.ServerURL(t)
	r := llmtest.Remote{URL: url}
	oaHeaders := map[string]string{"Content-Type": "application/json", "Authorization": "Bearer k"}
	anHeaders := map[string]string{"Content-Type": "application/json", "X-Api-Key": "k", "Anthropic-Version": "2023-06-01"}
	user := `{"role":"user","content":"hi"}`
	for _, c := range []struct {
		name, provider string
		header         map[string]string
		body           string
		status         int
		msg            string
	}{
		{"openai ok", "openai", oaHeaders, `{"model":"m","stream":true,"messages":[` + user + `]}`, 200, ""},
		{"openai no key", "openai", map[string]string{"Content-Type": "application/json"}, `{}`, 401, "You didn't provide an API key"},
		{"openai no model", "openai", oaHeaders, `{"stream":true,"messages":[` + user + `]}`, 400, "you must provide a model parameter"},
		{"openai tool without call", "openai", oaHeaders, `{"model":"m","stream":true,"messages":[` + user + `,{"role":"tool","tool_call_id":"x","content":"r"}]}`, 400, "must be a response to a preceeding message with 'tool_calls'"},
		{"openai arguments not a string", "openai", oaHeaders, `{"model":"m","stream":true,"messages":[` + user + `,{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":{}}}]},{"role":"tool","tool_call_id":"c","content":"r"}]}`, 400, "arguments as a string"},
		{"openai bad tool name", "openai", oaHeaders, `{"model":"m","stream":true,"messages":[` + user + `],"tools":[{"type":"function","function":{"name":"a b","parameters":{}}}]}`, 400, "does not match pattern"},
		{"anthropic ok", "anthropic", anHeaders, `{"model":"m","max_tokens":5,"stream":true,"messages":[` + user + `]}`, 200, ""},
		{"anthropic no key", "anthropic", map[string]string{"Content-Type": "application/json", "Anthropic-Version": "2023-06-01"}, `{}`, 401, "x-api-key header is required"},
		{"anthropic no version", "anthropic", map[string]string{"Content-Type": "application/json", "X-Api-Key": "k"}, `{}`, 400, "anthropic-version: header is required"},
		{"anthropic CORS without the browser header", "anthropic", map[string]string{"Content-Type": "application/json", "X-Api-Key": "k", "Anthropic-Version": "2023-06-01", "Origin": "http://x"}, `{}`, 401, "anthropic-dangerous-direct-browser-access"},
		{"anthropic no max_tokens", "anthropic", anHeaders, `{"model":"m","stream":true,"messages":[` + user + `]}`, 400, "max_tokens: Field required"},
		{"anthropic roles do not alternate", "anthropic", anHeaders, `{"model":"m","max_tokens":5,"stream":true,"messages":[` + user + `,` + user + `]}`, 400, "roles must alternate"},
		{"anthropic first message not user", "anthropic", anHeaders, `{"model":"m","max_tokens":5,"stream":true,"messages":[{"role":"assistant","content":"x"}]}`, 400, "first message must use the \"user\" role"},
		{"anthropic empty text block", "anthropic", anHeaders, `{"model":"m","max_tokens":5,"stream":true,"messages":[{"role":"user","content":[{"type":"text","text":""}]}]}`, 400, "text content blocks must be non-empty"},
		{"anthropic tool_result not first", "anthropic", anHeaders, `{"model":"m","max_tokens":5,"stream":true,"messages":[` + user + `,{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"f","input":{}}]},{"role":"user","content":[{"type":"text","text":"a"},{"type":"tool_result","tool_use_id":"t1","content":"r"}]}]}`, 400, "must come first"},
		{"anthropic unknown tool_use_id", "anthropic", anHeaders, `{"model":"m","max_tokens":5,"stream":true,"messages":[` + user + `,{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"f","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t2","content":"r"}]}]}`, 400, "unexpected `tool_use_id` found in `tool_result` blocks: t2"},
	} {
		t.Run(c.name, func(t *testing.T) {
			l, err := r.Load(context.Background(), llmtest.Script{Provider: c.provider, Replies: []llmtest.Reply{{Events: []llmtest.Event{llmtest.Text("x"), llmtest.Done("stop", 1, 1)}}}})
			if err != nil {
				t.Fatal(err)
			}
			path := "/chat/completions"
			if c.provider == "anthropic" {
				path = "/v1/messages"
			}
			req, _ := http.NewRequest("POST", l.BaseURL+path, strings.NewReader(c.body))
			for k, v := range c.header {
				req.Header.Set(k, v)
			}
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != c.status {
				t.Fatalf("status %d, want %d: %s", res.StatusCode, c.status, b)
			}
			if c.status == 200 {
				return
			}
			var body struct {
				Type  string
				Error struct{ Type, Message string }
			}
			if err := json.Unmarshal(b, &body); err != nil || !strings.Contains(body.Error.Message, c.msg) || body.Error.Type == "" {
				t.Fatalf("body %s, want a message with %q", b, c.msg)
			}
			if c.provider == "anthropic" && body.Type != "error" {
				t.Fatalf("anthropic body %s lacks type: error", b)
			}
			lg, err := r.Log(context.Background(), l.ID, 0, 0)
			if err != nil || len(lg.Requests) != 1 {
				t.Fatalf("log %+v %v", lg, err)
			}
		})
	}
}

func TestCORSPreflight(t *testing.T) {
	req, _ := http.NewRequest("OPTIONS", llmtest.ServerURL(t)+"/s/x/v1/messages", nil)
	req.Header.Set("Origin", "http://127.0.0.1:9")
	req.Header.Set("Access-Control-Request-Method", "POST")
	req.Header.Set("Access-Control-Request-Headers", "x-api-key,anthropic-version,content-type")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 204 || res.Header.Get("Access-Control-Allow-Origin") != "*" ||
		!strings.Contains(res.Header.Get("Access-Control-Allow-Headers"), "x-api-key") || !strings.Contains(res.Header.Get("Access-Control-Expose-Headers"), "retry-after") {
		t.Fatalf("preflight %d %v", res.StatusCode, res.Header)
	}
}
