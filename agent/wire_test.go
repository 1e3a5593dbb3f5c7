package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/a3s-lab/code-wasm/agent"
	"github.com/a3s-lab/code-wasm/core"
	"github.com/a3s-lab/code-wasm/errkind"
	"github.com/a3s-lab/code-wasm/kernel"
	"github.com/a3s-lab/code-wasm/llm"
	"github.com/a3s-lab/code-wasm/llm/llmtest"
	"github.com/a3s-lab/code-wasm/workspace"
	"github.com/a3s-lab/code-wasm/workspace/memfs"
)

// The agent loop against the scripted provider server over real HTTP, in
// both wire formats: the server validates every request as the real APIs
// do (each tool call answered, in the next message), so a transcript the
// loop gets wrong fails with the provider's 400.

type wire struct {
	t        testing.TB
	provider string
	remote   llmtest.Remote
	loaded   llmtest.Loaded
	s        *core.Session
	sub      *core.Subscription
}

func newWire(t testing.TB, provider string, opts core.Options, replies ...llmtest.Reply) *wire {
	t.Helper()
	w := &wire{t: t, provider: provider, remote: llmtest.Remote{URL: llmtest.ServerURL(t)}}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var err error
	if w.loaded, err = w.remote.Load(ctx, llmtest.Script{Provider: provider, Replies: replies}); err != nil {
		t.Fatal(err)
	}
	zero := 0
	if opts.LLM, err = llm.New(llm.Config{Provider: provider, BaseURL: w.loaded.BaseURL, APIKey: "sk-test", Model: "model-test", MaxRetries: &zero, TimeoutMs: 20000}); err != nil {
		t.Fatal(err)
	}
	if opts.Permission.DefaultDecision == "" {
		opts.Permission.DefaultDecision = kernel.DecisionAllow
	}
	if opts.Workspace == nil {
		ws, err := workspace.New(memfs.New())
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{"a.txt", "b.txt", "c.txt"} {
			if _, err := ws.WriteFile(ctx, f, []byte("content of "+f+"\n")); err != nil {
				t.Fatal(err)
			}
		}
		opts.Workspace = ws
	}
	if w.s, err = core.New(opts); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.s.Close)
	w.sub = w.s.Events()
	return w
}

func (w *wire) log(disconnects int) llmtest.Log {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	l, err := w.remote.Log(ctx, w.loaded.ID, disconnects, 5000)
	if err != nil {
		w.t.Fatal(err)
	}
	return l
}

func (w *wire) events() []kernel.Event {
	var out []kernel.Event
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		evs, done, err := w.sub.Next(ctx, 0)
		cancel()
		out = append(out, evs...)
		if done || err != nil {
			return out
		}
	}
}

// callID is a provider-looking call id.
func callID(provider string, s string) string {
	if provider == "anthropic" {
		return "toolu_" + s
	}
	return "call_" + s
}

type call struct{ id, name, args string }

// calls is a turn that streams the calls with their argument fragments
// interleaved across indexes.
func calls(cs ...call) llmtest.Reply {
	var ev []llmtest.Event
	for i, c := range cs {
		ev = append(ev, llmtest.Tool(i, c.id, c.name))
	}
	for half := range 2 {
		for i, c := range cs {
			frag := c.args[:len(c.args)/2]
			if half == 1 {
				frag = c.args[len(c.args)/2:]
			}
			ev = append(ev, llmtest.Args(i, frag))
		}
	}
	return llmtest.Reply{Events: append(ev, llmtest.Done(llm.ToolUse, 100, 20))}
}

func text(s string) llmtest.Reply {
	return llmtest.Reply{Events: []llmtest.Event{llmtest.Text(s[:1]), llmtest.Text(s[1:]), llmtest.Done(llm.Stop, 50, 5)}}
}

// toolResults reads the tool results of a recorded request's last
// message, in order: [call id, content, is error].
func toolResults(t *testing.T, provider string, body json.RawMessage) [][3]string {
	var req struct {
		Messages []struct {
			Role       string          `json:"role"`
			ToolCallID string          `json:"tool_call_id"`
			Content    json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatal(err)
	}
	var out [][3]string
	if provider == "openai" {
		for i := len(req.Messages) - 1; i >= 0 && req.Messages[i].Role == "tool"; i-- {
			var c string
			json.Unmarshal(req.Messages[i].Content, &c)
			out = append([][3]string{{req.Messages[i].ToolCallID, c, ""}}, out...)
		}
		return out
	}
	var blocks []struct {
		Type      string `json:"type"`
		ToolUseID string `json:"tool_use_id"`
		Content   any    `json:"content"`
		IsError   bool   `json:"is_error"`
	}
	json.Unmarshal(req.Messages[len(req.Messages)-1].Content, &blocks)
	for _, b := range blocks {
		if b.Type == "tool_result" {
			out = append(out, [3]string{b.ToolUseID, fmt.Sprint(b.Content), fmt.Sprint(b.IsError)})
		}
	}
	return out
}

// slowRead is a read-only, parallel-safe host tool that takes a while, so
// concurrent calls overlap.
type slowRead struct{}

func (slowRead) Name() string                { return "slow_read" }
func (slowRead) Description() string         { return "Reads slowly." }
func (slowRead) Parameters() json.RawMessage { return json.RawMessage(`{"type":"object"}`) }
func (slowRead) Capabilities(json.RawMessage) kernel.Capabilities {
	return kernel.ParallelSafeRead(8)
}
func (slowRead) Execute(ctx context.Context, c *kernel.Call) (*kernel.Result, error) {
	select {
	case <-time.After(150 * time.Millisecond):
	case <-ctx.Done():
	}
	return kernel.OK("slow "+string(c.Args), nil), nil
}

func overlapping(evs []kernel.Event, ids map[string]bool) bool {
	open := map[string]bool{}
	for _, e := range evs {
		if !ids[e.InvocationID] {
			continue
		}
		switch e.Type {
		case kernel.EventToolExecutionStart:
			if len(open) > 0 {
				return true
			}
			open[e.InvocationID] = true
		case kernel.EventToolEnd:
			delete(open, e.InvocationID)
		}
	}
	return false
}

// turnCalls groups the invocation ids of the run's calls by turn.
func turnCalls(evs []kernel.Event) map[int]map[string]bool {
	out := map[int]map[string]bool{}
	turn := 0
	for _, e := range evs {
		if e.Type == agent.EventTurnStart {
			turn++
			out[turn] = map[string]bool{}
		}
		if e.Type == kernel.EventToolExecutionStart && e.ParentID != "" && strings.HasPrefix(e.ParentID, "run-") {
			out[turn][e.InvocationID] = true
		}
	}
	return out
}

func eachProvider(t *testing.T, f func(t *testing.T, p string)) {
	for _, p := range llmtest.Providers {
		t.Run(p, func(t *testing.T) {
			t.Parallel()
			f(t, p)
		})
	}
}

func TestWireConcurrencyAndOrder(t *testing.T) {
	eachProvider(t, func(t *testing.T, p string) {
		id := func(s string) string { return callID(p, s) }
		w := newWire(t, p, core.Options{Tools: []kernel.Tool{slowRead{}}},
			calls(call{id("r1"), "slow_read", `{"n":1}`}, call{id("r2"), "slow_read", `{"n":2}`}, call{id("r3"), "read", `{"file_path":"b.txt"}`}),
			calls(call{id("w1"), "write", `{"file_path":"x.txt","content":"1"}`}, call{id("w2"), "slow_read", `{"n":4}`}),
			text("done"))
		res, err := w.s.Send(context.Background(), "go", nil)
		if err != nil {
			t.Fatalf("%v (server rejected: %v)", err, w.log(0).Rejected)
		}
		if res.Text != "done" || res.ToolCallsCount != 5 || res.Usage.TotalTokens != 2*120+55 {
			t.Errorf("result %+v", res)
		}
		evs := w.events()
		tc := turnCalls(evs)
		if len(tc[1]) != 3 || !overlapping(evs, tc[1]) {
			t.Errorf("three read-only calls did not run concurrently (%d calls)", len(tc[1]))
		}
		if overlapping(evs, tc[2]) {
			t.Error("a turn with a write ran its calls concurrently")
		}
		l := w.log(0)
		if len(l.Requests) != 3 || len(l.Rejected) != 0 {
			t.Fatalf("%d requests, rejected %v", len(l.Requests), l.Rejected)
		}
		got := toolResults(t, p, l.Requests[1].Body)
		if len(got) != 3 || got[0][0] != id("r1") || got[1][0] != id("r2") || got[2][0] != id("r3") || !strings.Contains(got[2][1], "content of b.txt") {
			t.Errorf("results of turn 1: %v", got)
		}
		if got := toolResults(t, p, l.Requests[2].Body); len(got) != 2 || got[0][0] != id("w1") || got[1][0] != id("w2") {
			t.Errorf("results of turn 2: %v", got)
		}
	})
}

func TestWirePolicyDeny(t *testing.T) {
	eachProvider(t, func(t *testing.T, p string) {
		w := newWire(t, p, core.Options{Governance: kernel.Governance{Permission: kernel.PermissionPolicy{Deny: []string{"write"}, DefaultDecision: kernel.DecisionAllow}}},
			calls(call{callID(p, "w"), "write", `{"file_path":"evil.txt","content":"x"}`}), text("ok"))
		if _, err := w.s.Send(context.Background(), "write", nil); err != nil {
			t.Fatal(err)
		}
		denied := false
		for _, e := range w.events() {
			denied = denied || e.Type == kernel.EventPermissionDenied
		}
		if !denied {
			t.Error("no permission_denied event")
		}
		got := toolResults(t, p, w.log(0).Requests[1].Body)
		if len(got) != 1 || !strings.Contains(got[0][1], "denied") || (p == "anthropic" && got[0][2] != "true") {
			t.Errorf("fed back %v", got)
		}
		if _, _, err := w.s.Workspace().ReadFile(context.Background(), "evil.txt"); err == nil {
			t.Error("written")
		}
	})
}

func TestWireDuplicateGuardAndMaxRounds(t *testing.T) {
	eachProvider(t, func(t *testing.T, p string) {
		w := newWire(t, p, core.Options{}, calls(call{callID(p, "x"), "ls", `{}`}))
		_, err := w.s.Send(context.Background(), "loop", nil)
		var ae *agent.Error
		if !errors.As(err, &ae) || !strings.Contains(ae.Message, "duplicate") {
			t.Fatalf("duplicate: %v", err)
		}
		// The script repeats the same id: the server still pairs each
		// request's results with the previous turn's calls.
		if l := w.log(0); len(l.Requests) != agent.DuplicateThreshold+2 || len(l.Rejected) != 0 {
			t.Errorf("duplicate: %d requests, rejected %v", len(l.Requests), l.Rejected)
		}

		var replies []llmtest.Reply
		for i := range 4 {
			replies = append(replies, calls(call{callID(p, fmt.Sprint(i)), "ls", fmt.Sprintf(`{"path":"d%d"}`, i)}))
		}
		w = newWire(t, p, core.Options{MaxToolRounds: 3}, replies...)
		_, err = w.s.Send(context.Background(), "loop", nil)
		if err == nil || !strings.Contains(err.Error(), "Max tool rounds (3) exceeded") {
			t.Fatalf("max rounds: %v", err)
		}
		if l := w.log(0); len(l.Requests) != 4 {
			t.Errorf("max rounds: %d requests", len(l.Requests))
		}
	})
}

func TestWireCancelMidStream(t *testing.T) {
	eachProvider(t, func(t *testing.T, p string) {
		for _, how := range []string{"context", "close"} {
			stall := llmtest.Reply{Events: []llmtest.Event{llmtest.Text("thinking")}, End: "stall"}
			w := newWire(t, p, core.Options{}, stall)
			ctx, cancel := context.WithCancel(context.Background())
			sub, err := w.s.Stream(ctx, "wait", nil)
			if err != nil {
				t.Fatal(err)
			}
			var evs []kernel.Event
			for len(evs) == 0 || evs[len(evs)-1].Type != agent.EventTextDelta {
				e, _, err := sub.Next(context.Background(), 0)
				if err != nil {
					t.Fatal(err)
				}
				evs = append(evs, e...)
			}
			start := time.Now()
			if how == "context" {
				cancel()
			} else {
				go w.s.Close()
			}
			for {
				e, done, _ := sub.Next(context.Background(), 0)
				evs = append(evs, e...)
				if done {
					break
				}
			}
			// The stream stalls for ever: any settling is the cancel's
			// doing; the bound only tells settled from hung.
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("%s: settled after %v", how, d)
			}
			last := evs[len(evs)-1]
			if ek, _ := last.Payload["error_kind"].(map[string]any); last.Type != kernel.EventError || ek["type"] != errkind.Cancelled {
				t.Errorf("%s: terminal %+v", how, last)
			}
			if l := w.log(1); l.Disconnects != 1 {
				t.Errorf("%s: the server saw %d disconnects", how, l.Disconnects)
			}
			cancel()
		}
	})
}

func TestWireRunToolCall(t *testing.T) {
	// The recorded tool calls of a scripted turn, fed to RunToolCall as an
	// app running its own loop would.
	eachProvider(t, func(t *testing.T, p string) {
		w := newWire(t, p, core.Options{Governance: kernel.Governance{Permission: kernel.PermissionPolicy{Allow: []string{"read"}, Deny: []string{"write"}}}},
			calls(call{callID(p, "r"), "read", `{"file_path":"a.txt"}`}, call{callID(p, "w"), "write", `{"file_path":"x.txt","content":"x"}`}), text("done"))
		if _, err := w.s.Send(context.Background(), "go", nil); err != nil {
			t.Fatal(err)
		}
		// The second request carries the model's calls exactly as the
		// provider's wire has them (the assistant message).
		var req struct {
			Messages []struct {
				Role      string            `json:"role"`
				ToolCalls []json.RawMessage `json:"tool_calls"`
				Content   json.RawMessage   `json:"content"`
			} `json:"messages"`
		}
		json.Unmarshal(w.log(0).Requests[1].Body, &req)
		var sent []json.RawMessage
		for _, m := range req.Messages {
			if m.Role != "assistant" {
				continue
			}
			if p == "openai" {
				sent = m.ToolCalls
				continue
			}
			var blocks []json.RawMessage
			json.Unmarshal(m.Content, &blocks)
			for _, b := range blocks {
				if strings.Contains(string(b), `"tool_use"`) {
					sent = append(sent, b)
				}
			}
		}
		if len(sent) != 2 {
			t.Fatalf("recorded calls %s", sent)
		}
		for i, c := range sent {
			msg, res, err := w.s.RunToolCall(context.Background(), c)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := json.Marshal(msg)
			if (i == 0) != (res.ExitCode == 0) {
				t.Errorf("call %d: %s", i, b)
			}
			want := `"role":"tool","tool_call_id":"` + callID(p, "r")
			if p == "anthropic" {
				want = `"tool_use_id":"` + callID(p, "r")
			}
			if i == 0 && !strings.Contains(string(b), want) {
				t.Errorf("result message %s, want %s", b, want)
			}
		}
		if _, _, err := w.s.Workspace().ReadFile(context.Background(), "x.txt"); err == nil {
			t.Error("the denied write was written")
		}
	})
}

// registerLate registers late_tool when it runs: the run's next turn
// offers it (the tool list of a turn is reused only while the same tools
// stay registered).
type registerLate struct{ s **core.Session }

func (registerLate) Name() string                { return "register_late" }
func (registerLate) Description() string         { return "Registers late_tool." }
func (registerLate) Parameters() json.RawMessage { return json.RawMessage(`{"type":"object"}`) }
func (registerLate) Capabilities(json.RawMessage) kernel.Capabilities {
	return kernel.Conservative()
}
func (r registerLate) Execute(context.Context, *kernel.Call) (*kernel.Result, error) {
	return kernel.OK("registered", nil), (*r.s).RegisterTool(&lateTool{})
}

type lateTool struct{ slowRead }

func (*lateTool) Name() string { return "late_tool" }

func TestWireToolsChangeBetweenTurns(t *testing.T) {
	var s *core.Session
	w := newWire(t, "openai", core.Options{Tools: []kernel.Tool{registerLate{&s}}},
		calls(call{"c1", "read", `{"file_path":"b.txt"}`}), calls(call{"c2", "register_late", `{}`}), text("done"),
		text("again"), text("without"), text("back"))
	s = w.s
	if _, err := w.s.Send(context.Background(), "go", nil); err != nil {
		t.Fatalf("%v (server rejected: %v)", err, w.log(0).Rejected)
	}
	// The session's runs share the list of tools offered (agent.ToolList):
	// the next run offers the tool from its first request; after the tool
	// is removed, and registered again as a new value, the lists follow.
	ctx := context.Background()
	if _, err := w.s.Send(ctx, "again", nil); err != nil {
		t.Fatal(err)
	}
	if !w.s.UnregisterTool("late_tool") {
		t.Fatal("late_tool was not registered")
	}
	if _, err := w.s.Send(ctx, "without", nil); err != nil {
		t.Fatal(err)
	}
	if err := w.s.RegisterTool(&lateTool{}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.s.Send(ctx, "back", nil); err != nil {
		t.Fatal(err)
	}
	reqs := w.log(0).Requests
	if len(reqs) != 6 {
		t.Fatalf("%d requests", len(reqs))
	}
	for i, want := range []bool{false, false, true, true, false, true} {
		if got := strings.Contains(string(reqs[i].Body), `"name":"late_tool"`); got != want {
			t.Errorf("request %d offers late_tool: %v, want %v", i, got, want)
		}
	}
}
