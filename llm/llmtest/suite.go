package llmtest

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/a3s-lab/code-wasm/errkind"
	"github.com/a3s-lab/code-wasm/llm"
)

// NewClient makes the client under test from a config whose Provider and
// BaseURL point at a loaded script (llm.New for the built-in clients).
type NewClient func(llm.Config) (llm.Client, error)

// Providers are the wire formats the suite covers.
var Providers = []string{"openai", "anthropic"}

// Run runs the conformance suite against the server at url, for each
// provider: t.Run(provider, ...) with a subtest per behaviour.
func Run(t *testing.T, url string, newClient NewClient) {
	for _, p := range Providers {
		t.Run(p, func(t *testing.T) {
			h := &harness{remote: Remote{URL: url}, provider: p, newClient: newClient}
			t.Run("ConnectionReused", func(t *testing.T) { connectionReused(t, h) })
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					t.Parallel()
					c.run(t, h)
				})
			}
		})
	}
}

type harness struct {
	remote    Remote
	provider  string
	newClient NewClient
}

// Text, Reasoning, Tool, Args, Done and Ping build events.
func Text(s string) Event               { return Event{Text: s} }
func Reasoning(s string) Event          { return Event{Reasoning: s} }
func Tool(i int, id, name string) Event { return Event{Tool: &ToolStart{i, id, name}} }
func Args(i int, fragment string) Event { return Event{Args: &ToolArgs{i, fragment}} }
func Ping() Event                       { return Event{Ping: true} }
func Done(stop llm.StopReason, prompt, completion int) Event {
	return Event{Finish: &Finish{Stop: stop, Usage: llm.Usage{PromptTokens: prompt, CompletionTokens: completion, TotalTokens: prompt + completion}}}
}

// load puts replies on the server and returns the loaded script and a
// client for it (MaxRetries 2, TimeoutMs 10 s unless tune changes them).
func (h *harness) load(t *testing.T, tune func(*llm.Config), replies ...Reply) (llm.Client, Loaded) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	l, err := h.remote.Load(ctx, Script{Provider: h.provider, Replies: replies})
	if err != nil {
		t.Fatal(err)
	}
	two := 2
	cfg := llm.Config{Provider: h.provider, BaseURL: l.BaseURL, APIKey: "sk-test", Model: "model-test", MaxRetries: &two, TimeoutMs: 10000}
	if tune != nil {
		tune(&cfg)
	}
	c, err := h.newClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c, l
}

func (h *harness) log(t *testing.T, l Loaded, disconnects int) Log {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	// Up to 10 s for the disconnects a case expects: Chromium's network
	// service may drain an aborted response (HttpResponseBodyDrainer: up to
	// 16 KiB or 5 s) before it closes the socket; a CI run saw none in 3 s.
	lg, err := h.remote.Log(ctx, l.ID, disconnects, 10000)
	if err != nil {
		t.Fatal(err)
	}
	return lg
}

var readTool = llm.Tool{Name: "read", Description: "Read a file", Parameters: json.RawMessage(`{"type":"object","properties":{"file_path":{"type":"string"}},"required":["file_path"]}`)}

func hello() llm.Request {
	return llm.Request{System: "You are terse.", Messages: []llm.Message{{Role: llm.User, Text: "hi"}}, Tools: []llm.Tool{readTool}}
}

// turn plays replies for one request and collects the turn.
func (h *harness) turn(t *testing.T, req llm.Request, tune func(*llm.Config), replies ...Reply) (llm.Turn, error, Log) {
	t.Helper()
	c, l := h.load(t, tune, replies...)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	turn, err := llm.Collect(c.Stream(ctx, req))
	return turn, err, h.log(t, l, 0)
}

// ok plays a stream reply for hello() and checks it succeeded in one
// request.
func (h *harness) ok(t *testing.T, r Reply) llm.Turn {
	t.Helper()
	turn, err, lg := h.turn(t, hello(), nil, r)
	if err != nil {
		t.Fatalf("stream failed: %v (server rejected: %q)", err, lg.Rejected)
	}
	if len(lg.Requests) != 1 {
		t.Fatalf("%d requests, want 1", len(lg.Requests))
	}
	return turn
}

func wantKind(t *testing.T, err error, k errkind.Kind) *llm.Error {
	t.Helper()
	var e *llm.Error
	if !errors.As(err, &e) || !errkind.Is(err, k) {
		t.Fatalf("error %v (%T), want kind %s", err, err, k)
	}
	return e
}

func eq(t *testing.T, what string, got, want any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: got %#v, want %#v", what, got, want)
	}
}

type suiteCase struct {
	name string
	run  func(t *testing.T, h *harness)
}

// connectionReused: the client's requests go over the connections it has
// (keep-alive), also now that a stream read to its last event is drained
// to its end instead of aborted (the abort of a JS fetch cost more than
// the rest of a response's handling; natively an early close can drop
// the connection). What the client controls is that it never gives a
// connection up: no disconnect. Which idle connection a request then
// takes is the host's pool's choice: a JS fetch pool may open another
// while the last one is still being released, which on a loaded machine
// happened twice in four requests (undici under js/wasm in Node, three
// connections, no disconnect). So four requests in a row use at most
// three connections, at least one of them twice. It runs alone: a
// parallel case could take an idle connection.
func connectionReused(t *testing.T, h *harness) {
	r := Reply{Events: []Event{Text("a"), Done(llm.Stop, 1, 1)}}
	c, l := h.load(t, nil, r, r, r, r)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for range 4 {
		if _, err := llm.Collect(c.Stream(ctx, hello())); err != nil {
			t.Fatal(err)
		}
	}
	lg := h.log(t, l, 0)
	remotes := map[string]bool{}
	for _, r := range lg.Requests {
		remotes[r.Remote] = true
	}
	if len(lg.Requests) != 4 || lg.Disconnects != 0 || len(remotes) > 3 || remotes[""] {
		t.Fatalf("%d requests from %v, %d disconnects: the connections were not reused", len(lg.Requests), remotes, lg.Disconnects)
	}
}

var cases = []suiteCase{
	// A server that holds the stream open after its last event: the turn
	// still completes (the drain after the last event is bounded, 1 s).
	{"HeldOpenAfterLastEvent", func(t *testing.T, h *harness) {
		c, _ := h.load(t, nil, Reply{End: "hold", Events: []Event{Text("held"), Done(llm.Stop, 1, 1)}})
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		turn, err := llm.Collect(c.Stream(ctx, hello()))
		if err != nil {
			t.Fatal(err)
		}
		eq(t, "text", turn.Message.Text, "held")
	}},
	{"Text", func(t *testing.T, h *harness) {
		turn := h.ok(t, Reply{Events: []Event{Text("Hel"), Text("lo, "), Text("world"), Done(llm.Stop, 11, 3)}})
		eq(t, "text", turn.Message.Text, "Hello, world")
		eq(t, "stop", turn.StopReason, llm.Stop)
		eq(t, "usage", turn.Usage, llm.Usage{PromptTokens: 11, CompletionTokens: 3, TotalTokens: 14})
		eq(t, "calls", len(turn.Message.ToolCalls), 0)
	}},
	{"CachedPromptTokens", func(t *testing.T, h *harness) {
		u := llm.Usage{PromptTokens: 120, CompletionTokens: 4, TotalTokens: 124, CacheReadTokens: 100}
		turn := h.ok(t, Reply{Events: []Event{Text("ok"), {Finish: &Finish{Stop: llm.Stop, Usage: u}}}})
		eq(t, "usage", turn.Usage, u)
	}},
	{"OneToolCall", func(t *testing.T, h *harness) {
		turn := h.ok(t, Reply{Events: []Event{Text("Reading."), Tool(0, "call_a1", "read"),
			Args(0, `{"file_`), Args(0, `path": "a`), Args(0, `.txt"}`), Done(llm.ToolUse, 40, 17)}})
		eq(t, "text", turn.Message.Text, "Reading.")
		eq(t, "calls", turn.Message.ToolCalls, []llm.ToolCall{{ID: "call_a1", Name: "read", Arguments: `{"file_path": "a.txt"}`}})
		eq(t, "stop", turn.StopReason, llm.ToolUse)
		eq(t, "usage", turn.Usage, llm.Usage{PromptTokens: 40, CompletionTokens: 17, TotalTokens: 57})
	}},
	{"TwoToolCallsInterleaved", func(t *testing.T, h *harness) {
		turn := h.ok(t, Reply{Events: []Event{Tool(0, "call_a", "read"), Tool(1, "call_b", "read"),
			Args(0, `{"file_path":`), Args(1, `{"file_pa`), Args(0, ` "a.txt"}`), Args(1, `th": "b.txt"}`), Done(llm.ToolUse, 50, 30)}})
		eq(t, "calls", turn.Message.ToolCalls, []llm.ToolCall{
			{ID: "call_a", Name: "read", Arguments: `{"file_path": "a.txt"}`},
			{ID: "call_b", Name: "read", Arguments: `{"file_path": "b.txt"}`}})
		eq(t, "usage", turn.Usage, llm.Usage{PromptTokens: 50, CompletionTokens: 30, TotalTokens: 80})
	}},
	{"EmptyArguments", func(t *testing.T, h *harness) {
		turn := h.ok(t, Reply{Events: []Event{Tool(0, "call_e", "read"), Done(llm.ToolUse, 5, 5)}})
		eq(t, "arguments", turn.Message.ToolCalls[0].Arguments, "{}")
	}},
	{"ReasoningApartFromText", func(t *testing.T, h *harness) {
		c, l := h.load(t, nil, Reply{Events: []Event{Reasoning("The user "), Reasoning("greets."), Text("Hi"), Text("!"), Done(llm.Stop, 9, 8)}})
		var types []llm.ChunkType
		var turn llm.Turn
		for ch, err := range c.Stream(context.Background(), hello()) {
			if err != nil {
				t.Fatal(err)
			}
			types = append(types, ch.Type)
			if err := turn.Add(ch); err != nil {
				t.Fatal(err)
			}
		}
		eq(t, "reasoning", turn.Reasoning, "The user greets.")
		eq(t, "text", turn.Message.Text, "Hi!")
		eq(t, "chunk types", types, []llm.ChunkType{llm.ReasoningDelta, llm.ReasoningDelta, llm.TextDelta, llm.TextDelta, llm.Finish})
		eq(t, "requests", len(h.log(t, l, 0).Requests), 1)
	}},
	{"StopReasons", func(t *testing.T, h *harness) {
		wire := map[string][][2]string{
			"openai":    {{"stop", "stop"}, {"tool_calls", "tool_use"}, {"length", "max_tokens"}, {"content_filter", "content_filter"}, {"function_call", "tool_use"}, {"insufficient_system_resource", "other"}},
			"anthropic": {{"end_turn", "stop"}, {"stop_sequence", "stop"}, {"tool_use", "tool_use"}, {"max_tokens", "max_tokens"}, {"refusal", "content_filter"}, {"pause_turn", "other"}},
		}[h.provider]
		for _, w := range wire {
			evs := []Event{Text("x"), {Finish: &Finish{Wire: w[0], Usage: llm.Usage{PromptTokens: 1, CompletionTokens: 1, TotalTokens: 2}}}}
			if w[1] == "tool_use" {
				evs = []Event{Tool(0, "call_s", "read"), Args(0, "{}"), evs[1]}
			}
			turn := h.ok(t, Reply{Events: evs})
			eq(t, "stop reason of "+w[0], turn.StopReason, llm.StopReason(w[1]))
		}
	}},
	{"ByteSplitAndPings", func(t *testing.T, h *harness) {
		turn := h.ok(t, Reply{Split: 3, CRLF: true, Events: []Event{Ping(), Text("a"), Ping(), Tool(0, "call_p", "read"), Ping(),
			Args(0, `{"file_path":"é.txt"}`), Ping(), Done(llm.ToolUse, 3, 4), Ping()}})
		eq(t, "text", turn.Message.Text, "a")
		eq(t, "arguments", turn.Message.ToolCalls[0].Arguments, `{"file_path":"é.txt"}`)
		eq(t, "usage", turn.Usage, llm.Usage{PromptTokens: 3, CompletionTokens: 4, TotalTokens: 7})
	}},
	{"Quirks", func(t *testing.T, h *harness) {
		if h.provider == "openai" {
			// Resent accumulated content, reasoning_content, a missing [DONE].
			turn := h.ok(t, Reply{Cumulative: true, End: "no_done", Events: []Event{Reasoning("r"), Text("Hel"), Text("lo"), Done(llm.Stop, 2, 2)}})
			eq(t, "text", turn.Message.Text, "Hello")
			eq(t, "reasoning", turn.Reasoning, "r")
			// A server that omits the tool call index, and a raw empty first chunk.
			turn = h.ok(t, Reply{Events: []Event{
				{Raw: "data: {\"choices\":[]}\n\n"},
				{Raw: `data: {"choices":[{"index":0,"delta":{"tool_calls":[{"id":"c1","type":"function","function":{"name":"read","arguments":"{\"file_path\":"}}]}}]}` + "\n\n"},
				{Raw: `data: {"choices":[{"index":0,"delta":{"tool_calls":[{"function":{"arguments":"\"x\"}"}}]}}]}` + "\n\n"},
				Done(llm.ToolUse, 1, 1)}})
			eq(t, "calls", turn.Message.ToolCalls, []llm.ToolCall{{ID: "c1", Name: "read", Arguments: `{"file_path":"x"}`}})
			return
		}
		// A gateway that drops message_stop after message_delta.
		turn := h.ok(t, Reply{End: "no_done", Events: []Event{Text("ok"), Done(llm.Stop, 2, 2)}})
		eq(t, "text", turn.Message.Text, "ok")
	}},
	{"ErrorAfter200", func(t *testing.T, h *harness) {
		_, err, lg := h.turn(t, hello(), nil, Reply{Events: []Event{Text("par"), {Error: &ErrorBody{"overloaded_error", "Overloaded"}}}})
		e := wantKind(t, err, errkind.Transport)
		if !strings.Contains(e.Message, "Overloaded") {
			t.Fatalf("message %q does not carry the server's", e.Message)
		}
		eq(t, "requests (never retried after stream bytes)", len(lg.Requests), 1)
	}},
	{"TruncatedStream", func(t *testing.T, h *harness) {
		_, err, lg := h.turn(t, hello(), nil, Reply{End: "truncate", Events: []Event{Text("half"), Tool(0, "call_t", "read"), Args(0, `{"fi`)}})
		wantKind(t, err, errkind.Transport)
		eq(t, "requests", len(lg.Requests), 1)
	}},
	{"MalformedEvent", func(t *testing.T, h *harness) {
		_, err, _ := h.turn(t, hello(), nil, Reply{Events: []Event{Text("a"), {Raw: "event: content_block_delta\ndata: {not json\n\n"}, Done(llm.Stop, 1, 1)}})
		wantKind(t, err, errkind.Transport)
	}},
	{"Conversation", func(t *testing.T, h *harness) {
		req := hello()
		req.Messages = append(req.Messages,
			llm.Message{Role: llm.Assistant, Text: "Reading both.", ToolCalls: []llm.ToolCall{
				{ID: "call_1", Name: "read", Arguments: `{"file_path":"a"}`}, {ID: "call_2", Name: "read", Arguments: `{"file_path":"b"}`}}},
			llm.Message{Role: llm.User, ToolResults: []llm.ToolResult{{CallID: "call_1", Content: "A"}, {CallID: "call_2", Content: "no such file", IsError: true}}})
		temp := 0.5
		req.Temperature = &temp
		req.ToolChoice = llm.ToolChoice{Type: llm.ToolChoiceTool, Name: "read"}
		turn, err, lg := h.turn(t, req, nil, Reply{Events: []Event{Text("done"), Done(llm.Stop, 100, 2)}})
		if err != nil {
			t.Fatalf("%v (rejected: %q)", err, lg.Rejected)
		}
		eq(t, "text", turn.Message.Text, "done")
		var body struct {
			Model       string
			Temperature float64
			Messages    []map[string]any
			ToolChoice  map[string]any `json:"tool_choice"`
		}
		if err := json.Unmarshal(lg.Requests[0].Body, &body); err != nil {
			t.Fatal(err)
		}
		eq(t, "model", body.Model, "model-test")
		eq(t, "temperature", body.Temperature, 0.5)
		var roles []string
		for _, m := range body.Messages {
			roles = append(roles, m["role"].(string))
		}
		if h.provider == "openai" {
			eq(t, "roles", roles, []string{"system", "user", "assistant", "tool", "tool"})
			eq(t, "tool_choice", body.ToolChoice["function"], map[string]any{"name": "read"})
		} else {
			eq(t, "roles", roles, []string{"user", "assistant", "user"})
			eq(t, "tool_choice", body.ToolChoice, map[string]any{"type": "tool", "name": "read"})
		}
	}},
	{"ConsecutiveMessages", func(t *testing.T, h *harness) {
		req := hello()
		req.MaxTokens = 64
		req.Messages = append(req.Messages,
			llm.Message{Role: llm.Assistant, Text: "Reading."},
			llm.Message{Role: llm.Assistant, ToolCalls: []llm.ToolCall{{ID: "call_1", Name: "read", Arguments: `not json`}}},
			llm.Message{Role: llm.User, Text: "Also, hurry."},
			llm.Message{Role: llm.User, ToolResults: []llm.ToolResult{{CallID: "call_1", Content: "bad arguments", IsError: true}}})
		_, err, lg := h.turn(t, req, nil, Reply{Events: []Event{Text("ok"), Done(llm.Stop, 1, 1)}})
		if err != nil {
			t.Fatalf("%v (rejected: %q)", err, lg.Rejected)
		}
		var body map[string]any
		json.Unmarshal(lg.Requests[0].Body, &body)
		eq(t, "max_tokens", body["max_tokens"], 64.0)
		want := map[string]int{"openai": 5, "anthropic": 3}[h.provider] // system, user, assistant, tool, user
		eq(t, "messages (merged by role)", len(body["messages"].([]any)), want)
	}},
	{"Headers", func(t *testing.T, h *harness) {
		_, err, lg := h.turn(t, hello(), func(c *llm.Config) { c.Headers = map[string]string{"X-Extra": "yes"} }, Reply{Events: []Event{Text("a"), Done(llm.Stop, 1, 1)}})
		if err != nil {
			t.Fatal(err)
		}
		hd := lg.Requests[0].Header
		eq(t, "x-extra", hd["x-extra"], "yes")
		if h.provider == "openai" {
			eq(t, "authorization", hd["authorization"], "Bearer sk-test")
			eq(t, "path", lg.Requests[0].Path, "/v1/chat/completions")
			return
		}
		eq(t, "x-api-key", hd["x-api-key"], "sk-test")
		eq(t, "anthropic-version", hd["anthropic-version"], "2023-06-01")
		eq(t, "path", lg.Requests[0].Path, "/v1/messages")
		browser := ""
		if runtime.GOOS == "js" {
			browser = "true"
		}
		eq(t, "anthropic-dangerous-direct-browser-access", hd["anthropic-dangerous-direct-browser-access"], browser)
	}},
	{"RejectedConversation", func(t *testing.T, h *harness) {
		req := hello()
		req.Messages = append(req.Messages,
			llm.Message{Role: llm.Assistant, ToolCalls: []llm.ToolCall{{ID: "call_9", Name: "read", Arguments: "{}"}}},
			llm.Message{Role: llm.User, Text: "never mind"})
		_, err, lg := h.turn(t, req, nil, Reply{Events: []Event{Text("x"), Done(llm.Stop, 1, 1)}})
		e := wantKind(t, err, errkind.Transport)
		eq(t, "status", e.Status, 400)
		eq(t, "type", e.Type, "invalid_request_error")
		eq(t, "message is the server's", e.Message, lg.Rejected[0])
		if !strings.Contains(e.Message, "call_9") {
			t.Fatalf("message %q does not name the unanswered call", e.Message)
		}
		eq(t, "requests (a 400 is sent once)", len(lg.Requests), 1)
	}},
	{"BadRequestSentOnce", func(t *testing.T, h *harness) {
		_, err, lg := h.turn(t, hello(), nil, Reply{Status: 400, Error: &ErrorBody{"invalid_request_error", "prompt is too long"}})
		e := wantKind(t, err, errkind.Transport)
		eq(t, "message", e.Message, "prompt is too long")
		eq(t, "requests", len(lg.Requests), 1)
		eq(t, "attempts", e.Attempts, 1)
	}},
	{"RetryAfter", func(t *testing.T, h *harness) {
		turn, err, lg := h.turn(t, hello(), nil,
			Reply{Status: 429, Header: map[string]string{"retry-after": "0.2"}},
			Reply{Events: []Event{Text("after"), Done(llm.Stop, 1, 1)}})
		if err != nil {
			t.Fatal(err)
		}
		eq(t, "text", turn.Message.Text, "after")
		eq(t, "requests", len(lg.Requests), 2)
		gap := lg.Requests[1].At() - lg.Requests[0].At()
		if gap < 200*time.Millisecond || gap >= time.Second {
			t.Fatalf("retried %v after the 429, want >= 200ms and < 1s", gap)
		}
	}},
	{"ConstantRateLimit", func(t *testing.T, h *harness) {
		_, err, lg := h.turn(t, hello(), nil, Reply{Status: 429, Header: map[string]string{"retry-after-ms": "30"}})
		e := wantKind(t, err, errkind.RateLimited)
		eq(t, "requests (maxRetries+1)", len(lg.Requests), 3)
		eq(t, "attempts", e.Attempts, 3)
		eq(t, "status", e.Status, 429)
		eq(t, "retry hint", e.RetryAfter, 30*time.Millisecond)
	}},
	{"OverloadedThenTransport", func(t *testing.T, h *harness) {
		one := 1
		_, err, lg := h.turn(t, hello(), func(c *llm.Config) { c.MaxRetries = &one }, Reply{Status: 529, Header: map[string]string{"retry-after": "0.05"}})
		e := wantKind(t, err, errkind.Transport)
		eq(t, "status", e.Status, 529)
		eq(t, "requests", len(lg.Requests), 2)
	}},
	{"ServerErrorRetriedThenSucceeds", func(t *testing.T, h *harness) {
		turn, err, lg := h.turn(t, hello(), nil,
			Reply{Status: 503, Header: map[string]string{"retry-after-ms": "10"}},
			Reply{Status: 500, Header: map[string]string{"retry-after-ms": "10"}},
			Reply{Events: []Event{Text("third"), Done(llm.Stop, 1, 1)}})
		if err != nil {
			t.Fatal(err)
		}
		eq(t, "text", turn.Message.Text, "third")
		eq(t, "requests", len(lg.Requests), 3)
	}},
	{"EmptyBodyRetried", func(t *testing.T, h *harness) {
		turn, err, lg := h.turn(t, hello(), nil, Reply{End: "truncate"}, Reply{Events: []Event{Text("second"), Done(llm.Stop, 1, 1)}})
		if err != nil {
			t.Fatal(err)
		}
		eq(t, "text", turn.Message.Text, "second")
		eq(t, "requests (a 200 that ends before its first byte consumed nothing)", len(lg.Requests), 2)
	}},
	{"TimeoutBeforeHeaders", func(t *testing.T, h *harness) {
		zero := 0
		start := time.Now()
		_, err, _ := h.turn(t, hello(), func(c *llm.Config) { c.TimeoutMs, c.MaxRetries = 300, &zero }, Reply{DelayMs: 5000, Events: []Event{Done(llm.Stop, 1, 1)}})
		wantKind(t, err, errkind.Timeout)
		if d := time.Since(start); d > 4*time.Second {
			t.Fatalf("timed out after %v, want about 300ms", d)
		}
	}},
	{"StallMidStream", func(t *testing.T, h *harness) {
		// 1.5 s: room for the head to come first on a busy machine (a page
		// pays a CORS preflight), so the silence is the stream's.
		_, err, lg := h.turn(t, hello(), func(c *llm.Config) { c.TimeoutMs = 1500 }, Reply{End: "stall", Events: []Event{Text("then silence")}})
		wantKind(t, err, errkind.Timeout)
		eq(t, "requests (no retry after stream bytes)", len(lg.Requests), 1)
	}},
	{"CancelMidStream", func(t *testing.T, h *harness) {
		c, l := h.load(t, nil, Reply{End: "stall", Events: []Event{Text("first")}})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var cancelled time.Time
		var last error
		n := 0
		for ch, err := range c.Stream(ctx, hello()) {
			n++
			if err != nil {
				last = err
				continue
			}
			if ch.Type == llm.TextDelta && cancelled.IsZero() {
				cancelled = time.Now()
				cancel()
			}
		}
		if d := time.Since(cancelled); d > 500*time.Millisecond {
			t.Fatalf("settled %v after cancel, want < 500ms", d)
		}
		wantKind(t, last, errkind.Cancelled)
		if !errors.Is(last, context.Canceled) {
			t.Fatalf("%v does not wrap context.Canceled", last)
		}
		eq(t, "chunks (text, then the error)", n, 2)
		eq(t, "disconnects", h.log(t, l, 1).Disconnects, 1)
	}},
	{"CancelDuringRetryWait", func(t *testing.T, h *harness) {
		c, l := h.load(t, nil, Reply{Status: 429, Header: map[string]string{"retry-after": "5"}})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var cancelled time.Time
		go func() {
			// Cancel once the server answered the first request (a page
			// pays a CORS preflight first), while the client waits 5 s.
			for {
				lg, err := h.remote.Log(ctx, l.ID, 0, 0)
				if err != nil || len(lg.Requests) > 0 {
					break
				}
				time.Sleep(20 * time.Millisecond)
			}
			time.Sleep(100 * time.Millisecond)
			cancelled = time.Now()
			cancel()
		}()
		_, err := llm.Collect(c.Stream(ctx, hello()))
		wantKind(t, err, errkind.Cancelled)
		if d := time.Since(cancelled); d > time.Second {
			t.Fatalf("settled %v after the cancel, want at once (the retry wait is 5 s)", d)
		}
		eq(t, "requests", len(h.log(t, l, 0).Requests), 1)
	}},
	{"BreakClosesTheStream", func(t *testing.T, h *harness) {
		c, l := h.load(t, nil, Reply{End: "stall", Events: []Event{Text("one"), Text("two")}})
		for range c.Stream(context.Background(), hello()) {
			break
		}
		eq(t, "disconnects", h.log(t, l, 1).Disconnects, 1)
	}},
	{"CancelledBeforeSending", func(t *testing.T, h *harness) {
		c, l := h.load(t, nil, Reply{Events: []Event{Text("x"), Done(llm.Stop, 1, 1)}})
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := llm.Collect(c.Stream(ctx, hello()))
		wantKind(t, err, errkind.Cancelled)
		eq(t, "requests", len(h.log(t, l, 0).Requests), 0)
	}},
}
