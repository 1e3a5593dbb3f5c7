package core_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a3s-lab/code-wasm/agent"
	"github.com/a3s-lab/code-wasm/core"
	"github.com/a3s-lab/code-wasm/errkind"
	"github.com/a3s-lab/code-wasm/kernel"
	"github.com/a3s-lab/code-wasm/llm"
	"github.com/a3s-lab/code-wasm/workspace"
	"github.com/a3s-lab/code-wasm/workspace/memfs"
)

// script is a host-supplied llm.Client (the Go form of JS's
// {stream(request, {signal})}): it answers the n-th request with the n-th
// turn (the last one again when the script runs out) and records the
// requests. A nil turn stalls until the request is cancelled.
type script struct {
	mu    sync.Mutex
	turns [][]llm.Chunk
	reqs  []llm.Request
}

func (s *script) Stream(ctx context.Context, req llm.Request) iter.Seq2[llm.Chunk, error] {
	return func(yield func(llm.Chunk, error) bool) {
		s.mu.Lock()
		n := len(s.reqs)
		s.reqs = append(s.reqs, req)
		turn := s.turns[min(n, len(s.turns)-1)]
		s.mu.Unlock()
		if turn == nil {
			<-ctx.Done()
			yield(llm.Chunk{}, ctx.Err())
			return
		}
		for _, c := range turn {
			if ctx.Err() != nil {
				yield(llm.Chunk{}, ctx.Err())
				return
			}
			if !yield(c, nil) {
				return
			}
		}
	}
}

func (s *script) requests() []llm.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]llm.Request(nil), s.reqs...)
}

var turnUsage = llm.Usage{PromptTokens: 10, CompletionTokens: 5, TotalTokens: 15}

func textTurn(s string) []llm.Chunk {
	return []llm.Chunk{{Type: llm.TextDelta, Text: s[:len(s)/2]}, {Type: llm.TextDelta, Text: s[len(s)/2:]},
		{Type: llm.Finish, StopReason: llm.Stop, Usage: turnUsage}}
}

// callTurn streams the calls with their argument fragments interleaved
// across indexes, as the OpenAI wire may.
func callTurn(calls ...llm.ToolCall) []llm.Chunk {
	var out []llm.Chunk
	for i, c := range calls {
		out = append(out, llm.Chunk{Type: llm.ToolCallStart, Index: i, ID: c.ID, Name: c.Name})
	}
	for half := range 2 {
		for i, c := range calls {
			a := c.Arguments
			frag := a[:len(a)/2]
			if half == 1 {
				frag = a[len(a)/2:]
			}
			out = append(out, llm.Chunk{Type: llm.ToolCallDelta, Index: i, Fragment: frag})
		}
	}
	for i := range calls {
		out = append(out, llm.Chunk{Type: llm.ToolCallEnd, Index: i})
	}
	return append(out, llm.Chunk{Type: llm.Finish, StopReason: llm.ToolUse, Usage: turnUsage})
}

func call(id, name string, args any) llm.ToolCall {
	b, _ := json.Marshal(args)
	return llm.ToolCall{ID: id, Name: name, Arguments: string(b)}
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
	return kernel.OK("read "+string(c.Args), nil), nil
}

type agentSession struct {
	*core.Session
	llm *script
	sub *core.Subscription
}

func newAgentSession(t *testing.T, opts core.Options, turns ...[]llm.Chunk) *agentSession {
	t.Helper()
	sc := &script{turns: turns}
	opts.LLM = sc
	if opts.Permission.DefaultDecision == "" {
		// The default asks, and with no confirmation manager a model's
		// call is denied (npm README "the defaults").
		opts.Permission.DefaultDecision = kernel.DecisionAllow
	}
	if opts.Workspace == nil {
		ws, err := workspace.New(memfs.New())
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{"a.txt", "b.txt", "c.txt"} {
			if _, err := ws.WriteFile(context.Background(), f, []byte("content of "+f+"\n")); err != nil {
				t.Fatal(err)
			}
		}
		opts.Workspace = ws
	}
	s, err := core.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return &agentSession{Session: s, llm: sc, sub: s.Events()}
}

// drain reads the events published so far.
func (a *agentSession) drain(t *testing.T) []kernel.Event {
	t.Helper()
	var out []kernel.Event
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		evs, done, err := a.sub.Next(ctx, 0)
		cancel()
		out = append(out, evs...)
		if done || err != nil {
			return out
		}
	}
}

func types(evs []kernel.Event) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.Type
	}
	return out
}

func TestSendText(t *testing.T) {
	a := newAgentSession(t, core.Options{SystemPrompt: "be brief"}, textTurn("Hello there"))
	res, err := a.Send(context.Background(), "hi", nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "Hello there" || res.ToolCallsCount != 0 || res.Usage != turnUsage {
		t.Fatalf("result %+v", res)
	}
	want := "agent_start turn_start text_delta text_delta turn_end agent_end"
	if got := strings.Join(types(a.drain(t)), " "); got != want {
		t.Fatalf("events %q, want %q", got, want)
	}
	if r := a.llm.requests()[0]; r.System != "be brief" || len(r.Tools) == 0 || r.Messages[0].Text != "hi" {
		t.Fatalf("request %+v", r)
	}
	// The session keeps the history; a given history overrides it.
	if h := a.History(); len(h) != 2 || h[1].Text != "Hello there" {
		t.Fatalf("history %+v", h)
	}
	if _, err := a.Send(context.Background(), "again", nil); err != nil {
		t.Fatal(err)
	}
	if r := a.llm.requests()[1]; len(r.Messages) != 3 || r.Messages[2].Text != "again" {
		t.Fatalf("second request continues the history: %+v", r.Messages)
	}
	if _, err := a.Send(context.Background(), "fresh", []llm.Message{}); err != nil {
		t.Fatal(err)
	}
	if r := a.llm.requests()[2]; len(r.Messages) != 1 {
		t.Fatalf("an empty history overrides the session's: %+v", r.Messages)
	}
	if len(a.History()) != 4 {
		t.Fatalf("an explicit history leaves the session's: %d messages", len(a.History()))
	}
}

func TestNoLLM(t *testing.T) {
	s, err := core.New(core.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Send(context.Background(), "hi", nil); !errors.Is(err, core.ErrNoLLM) {
		t.Fatalf("Send without LLM: %v", err)
	}
	if _, err := s.Stream(context.Background(), "hi", nil); !errors.Is(err, core.ErrNoLLM) {
		t.Fatalf("Stream without LLM: %v", err)
	}
	if s.HasLLM() {
		t.Fatal("HasLLM")
	}
	if slices.Contains(s.ToolNames(), "generate_object") {
		t.Error("generate_object listed without an LLM")
	}
	a := newAgentSession(t, core.Options{}, textTurn("x"))
	if !slices.Contains(a.ToolNames(), "generate_object") {
		t.Error("generate_object not listed with an LLM")
	}
}

// interval is one invocation's tool_execution_start … tool_end.
type interval struct{ start, end int }

// intervals indexes the execution intervals of the events by invocation.
func intervals(evs []kernel.Event) map[string]*interval {
	out := map[string]*interval{}
	for i, e := range evs {
		switch e.Type {
		case kernel.EventToolExecutionStart:
			out[e.InvocationID] = &interval{start: i, end: -1}
		case kernel.EventToolEnd:
			if iv := out[e.InvocationID]; iv != nil {
				iv.end = i
			}
		}
	}
	return out
}

func overlapping(ivs map[string]*interval) bool {
	for a, x := range ivs {
		for b, y := range ivs {
			if a != b && x.start < y.end && y.start < x.end {
				return true
			}
		}
	}
	return false
}

func TestReadOnlyCallsRunConcurrentlyWritesSerially(t *testing.T) {
	reads := callTurn(call("c1", "slow_read", map[string]any{"n": 1}), call("c2", "slow_read", map[string]any{"n": 2}), call("c3", "slow_read", map[string]any{"n": 3}))
	writes := callTurn(call("w1", "write", map[string]any{"file_path": "x.txt", "content": "1"}), call("w2", "slow_read", map[string]any{"n": 4}), call("w3", "write", map[string]any{"file_path": "y.txt", "content": "2"}))
	realReads := callTurn(call("r1", "read", map[string]any{"file_path": "a.txt"}), call("r2", "read", map[string]any{"file_path": "b.txt"}), call("r3", "read", map[string]any{"file_path": "c.txt"}))
	a := newAgentSession(t, core.Options{Tools: []kernel.Tool{slowRead{}}}, reads, writes, realReads, textTurn("done"))
	start := time.Now()
	res, err := a.Send(context.Background(), "go", nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.ToolCallsCount != 9 || res.Usage.TotalTokens != 4*turnUsage.TotalTokens {
		t.Fatalf("result %+v", res)
	}
	evs := a.drain(t)
	ivs := intervals(evs)
	byTurn := map[int]map[string]*interval{}
	turn := 0
	for _, e := range evs {
		if e.Type == agent.EventTurnStart {
			turn++
		}
		if e.Type == kernel.EventToolExecutionStart {
			if byTurn[turn] == nil {
				byTurn[turn] = map[string]*interval{}
			}
			byTurn[turn][e.InvocationID] = ivs[e.InvocationID]
			if e.ParentID != "run-1" || e.Origin != kernel.OriginAgent {
				t.Errorf("tool event without the run as parent: %+v", e)
			}
		}
	}
	if !overlapping(byTurn[1]) {
		t.Errorf("three read-only calls did not overlap: %v", evs)
	}
	if overlapping(byTurn[2]) {
		t.Errorf("a turn with writes overlapped its calls")
	}
	t.Logf("run took %v", time.Since(start))
	// Results reach the next request in call order.
	reqs := a.llm.requests()
	for i, want := range [][]string{{"c1", "c2", "c3"}, {"w1", "w2", "w3"}, {"r1", "r2", "r3"}} {
		last := reqs[i+1].Messages[len(reqs[i+1].Messages)-1]
		var got []string
		for _, r := range last.ToolResults {
			got = append(got, r.CallID)
			if r.IsError {
				t.Errorf("call %s failed: %s", r.CallID, r.Content)
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("turn %d results in order %v, want %v", i+1, got, want)
		}
	}
	if last := reqs[3].Messages[len(reqs[3].Messages)-1]; !strings.Contains(last.ToolResults[1].Content, "content of b.txt") {
		t.Errorf("read result: %+v", last.ToolResults[1])
	}
}

func TestPolicyDeniesModelWrite(t *testing.T) {
	a := newAgentSession(t, core.Options{Governance: kernel.Governance{Permission: kernel.PermissionPolicy{Deny: []string{"write"}, DefaultDecision: kernel.DecisionAllow}}},
		callTurn(call("w1", "write", map[string]any{"file_path": "evil.txt", "content": "x"})), textTurn("ok"))
	if _, err := a.Send(context.Background(), "write it", nil); err != nil {
		t.Fatal(err)
	}
	denied := false
	for _, e := range a.drain(t) {
		denied = denied || (e.Type == kernel.EventPermissionDenied && e.ParentID == "run-1")
	}
	if !denied {
		t.Error("no permission_denied event")
	}
	tr := a.llm.requests()[1].Messages[2].ToolResults[0]
	if !tr.IsError || tr.CallID != "w1" || !strings.Contains(tr.Content, "denied") {
		t.Errorf("tool result fed back: %+v", tr)
	}
	if _, _, err := a.Workspace().ReadFile(context.Background(), "evil.txt"); err == nil {
		t.Error("the denied write was written")
	}
}

func TestRefusedCallsAreFedBack(t *testing.T) {
	a := newAgentSession(t, core.Options{},
		callTurn(call("u1", "no_such_tool", map[string]any{}), llm.ToolCall{ID: "m1", Name: "read", Arguments: `{"file_path": "a.t`},
			call("d", "read", map[string]any{"file_path": "a.txt"}), call("d", "read", map[string]any{"file_path": "b.txt"}),
			llm.ToolCall{ID: "e1", Name: "ls", Arguments: ""}),
		textTurn("ok"))
	res, err := a.Send(context.Background(), "go", nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.ToolCallsCount != 5 {
		t.Errorf("toolCallsCount %d", res.ToolCallsCount)
	}
	req := a.llm.requests()[1]
	asst, results := req.Messages[1], req.Messages[2].ToolResults
	if len(asst.ToolCalls) != 4 || len(results) != 4 {
		t.Fatalf("the duplicate ids collapse to one call and one answer: %+v / %+v", asst.ToolCalls, results)
	}
	for i, want := range []string{"Available tools: batch, edit", "not a JSON object", "share the id", ""} {
		r := results[i]
		if r.CallID != asst.ToolCalls[i].ID {
			t.Errorf("result %d answers %s, not %s", i, r.CallID, asst.ToolCalls[i].ID)
		}
		if want == "" {
			if r.IsError {
				t.Errorf("ls with empty arguments failed: %s", r.Content)
			}
			continue
		}
		if !r.IsError || !strings.Contains(r.Content, want) {
			t.Errorf("result %d: %+v, want an error containing %q", i, r, want)
		}
	}
}

func TestDuplicateGuardStopsTheRun(t *testing.T) {
	a := newAgentSession(t, core.Options{}, callTurn(call("x", "ls", map[string]any{"path": "."})))
	_, err := a.Send(context.Background(), "loop", nil)
	var ae *agent.Error
	if !errors.As(err, &ae) || ae.Kind() != errkind.PartialFailure || !strings.Contains(ae.Message, "same blocked duplicate tool call twice") {
		t.Fatalf("err %v", err)
	}
	reqs := a.llm.requests()
	if len(reqs) != agent.DuplicateThreshold+2 {
		t.Errorf("%d requests, want %d", len(reqs), agent.DuplicateThreshold+2)
	}
	guard := reqs[agent.DuplicateThreshold+1].Messages
	if tr := guard[len(guard)-1].ToolResults[0]; !tr.IsError || !strings.Contains(tr.Content, "identical arguments") {
		t.Errorf("guard result %+v", tr)
	}
	evs := a.drain(t)
	if last := evs[len(evs)-1]; last.Type != kernel.EventError {
		t.Errorf("last event %s", last.Type)
	}
}

func TestMaxToolRounds(t *testing.T) {
	var turns [][]llm.Chunk
	for i := range 5 {
		turns = append(turns, callTurn(call(fmt.Sprint("c", i), "ls", map[string]any{"path": fmt.Sprint("d", i)})))
	}
	a := newAgentSession(t, core.Options{MaxToolRounds: 3}, turns...)
	_, err := a.Send(context.Background(), "loop", nil)
	if err == nil || !strings.Contains(err.Error(), "Max tool rounds (3) exceeded") {
		t.Fatalf("err %v", err)
	}
	if n := len(a.llm.requests()); n != 4 {
		t.Errorf("%d requests, want 4", n)
	}
}

func TestCancelMidStream(t *testing.T) {
	for _, how := range []string{"context", "close"} {
		t.Run(how, func(t *testing.T) {
			stall := []llm.Chunk(nil)
			a := newAgentSession(t, core.Options{}, stall)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			sub, err := a.Stream(ctx, "wait", nil)
			if err != nil {
				t.Fatal(err)
			}
			for len(a.llm.requests()) == 0 {
				time.Sleep(time.Millisecond)
			}
			start := time.Now()
			if how == "context" {
				cancel()
			} else {
				go a.Close()
			}
			var evs []kernel.Event
			for {
				e, done, err := sub.Next(context.Background(), 0)
				if err != nil {
					t.Fatal(err)
				}
				evs = append(evs, e...)
				if done {
					break
				}
			}
			// The stream stalls for ever: any settling is the cancel's
			// doing; the bound only tells settled from hung.
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("settled after %v", d)
			}
			last := evs[len(evs)-1]
			ek, _ := last.Payload["error_kind"].(map[string]any)
			if last.Type != kernel.EventError || ek["type"] != errkind.Cancelled {
				t.Fatalf("terminal event %+v", last)
			}
			if got := strings.Join(types(evs), " "); got != "agent_start turn_start error" {
				t.Errorf("events %q", got)
			}
		})
	}
}

func TestStreamIsTheRunsEvents(t *testing.T) {
	a := newAgentSession(t, core.Options{}, callTurn(call("b1", "batch", map[string]any{"invocations": []any{map[string]any{"tool": "read", "args": map[string]any{"file_path": "a.txt"}}}})), textTurn("done"))
	// Another caller's tool events are not the run's.
	var other atomic.Bool
	sub, err := a.Stream(context.Background(), "go", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Tool(context.Background(), "ls", nil); err == nil {
		other.Store(true)
	}
	var evs []kernel.Event
	for {
		e, done, err := sub.Next(context.Background(), 0)
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, e...)
		if done {
			break
		}
	}
	nested := 0
	for _, e := range evs {
		if e.Origin == kernel.OriginHostTrusted {
			t.Errorf("a host call's event in the run's stream: %+v", e)
		}
		if e.Origin == kernel.OriginNested && e.Type == kernel.EventToolEnd {
			nested++
		}
	}
	if nested != 1 || evs[len(evs)-1].Type != agent.EventAgentEnd || evs[len(evs)-1].Payload["text"] != "done" {
		t.Errorf("events %v (nested tool_end %d)", types(evs), nested)
	}
	if !other.Load() {
		t.Error("host call failed")
	}
}
