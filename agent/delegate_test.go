package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/a3s-lab/code-wasm/agent"
	"github.com/a3s-lab/code-wasm/core"
	"github.com/a3s-lab/code-wasm/kernel"
	"github.com/a3s-lab/code-wasm/llm/llmtest"
	"github.com/a3s-lab/code-wasm/workspace"
	"github.com/a3s-lab/code-wasm/workspace/memfs"
)

// Delegation against the scripted provider server: the children's
// requests are real HTTP requests the server records, so concurrency,
// the tools each child is offered and the connections a timeout closes
// are read from the server's log.

func explore(prompt string) agent.TaskSpec {
	return agent.TaskSpec{Agent: "explore", Description: "look " + prompt, Prompt: prompt}
}

// requestTools is the names in a recorded request's tools array, sorted.
func requestTools(t *testing.T, body json.RawMessage) []string {
	var req struct {
		Tools []struct {
			Name     string `json:"name"`
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, x := range req.Tools {
		out = append(out, x.Name+x.Function.Name)
	}
	sort.Strings(out)
	return out
}

func count(evs []kernel.Event, typ string) int {
	n := 0
	for _, e := range evs {
		if e.Type == typ {
			n++
		}
	}
	return n
}

// checkSubagents: one subagent_end per subagent_start (by task id), all
// before the tool_end of the call that started them.
func checkSubagents(t *testing.T, evs []kernel.Event, tool string) {
	t.Helper()
	open := map[string]int{}
	ended := false
	for _, e := range evs {
		switch {
		case e.Type == agent.EventSubagentStart:
			open[e.InvocationID]++
		case e.Type == agent.EventSubagentEnd:
			if open[e.InvocationID] != 1 {
				t.Errorf("subagent_end of %s without one open start", e.InvocationID)
			}
			open[e.InvocationID]--
			if ended {
				t.Errorf("subagent_end of %s after the %s tool_end", e.InvocationID, tool)
			}
		case e.Type == kernel.EventToolEnd && e.Payload["name"] == tool:
			ended = true
		}
	}
	for id, n := range open {
		if n != 0 {
			t.Errorf("subagent %s started without its end", id)
		}
	}
	if !ended {
		t.Errorf("no tool_end of %s", tool)
	}
}

func TestTasksRunConcurrentlyWithTheirPolicyTools(t *testing.T) {
	for _, p := range []string{"openai", "anthropic"} {
		t.Run(p, func(t *testing.T) {
			slow := text("found it")
			slow.DelayMs = 600
			w := newWire(t, p, core.Options{}, slow)
			res, err := w.s.Tasks(context.Background(), []agent.TaskSpec{explore("one"), explore("two"), explore("three")}, core.TaskOptions{})
			if err != nil || res.ExitCode != 0 {
				t.Fatalf("tasks: %v %+v", err, res)
			}
			l := w.log(0)
			if len(l.Requests) != 3 {
				t.Fatalf("want 3 child requests, got %d", len(l.Requests))
			}
			var at []float64
			want := []string{}
			for _, n := range w.s.ToolNames() {
				if slices.Contains([]string{"read", "grep", "glob", "ls", "bash", "web_fetch", "web_search", "update_plan"}, n) {
					want = append(want, n)
				}
			}
			for _, r := range l.Requests {
				at = append(at, r.AtMs)
				if got := requestTools(t, r.Body); !slices.Equal(got, want) {
					t.Errorf("explore child offered %v, want %v", got, want)
				}
			}
			// Each reply is held 600 ms: a later request arriving before
			// the first one is answered means they overlapped.
			if spread := slices.Max(at) - slices.Min(at); spread >= 600 {
				t.Errorf("child requests did not overlap: arrivals %v", at)
			}
			results, _ := res.Metadata["results"].([]any)
			if len(results) != 3 || res.Metadata["success_count"] != 3 || res.Metadata["all_success"] != true {
				t.Fatalf("metadata %v", res.Metadata)
			}
			for i, r := range results {
				m := r.(map[string]any)
				if m["agent"] != "explore" || m["success"] != true || m["task_id"] == "" {
					t.Errorf("result %d: %v", i, m)
				}
			}
			if !strings.Contains(res.Output, "## Task 3 (explore: look three): succeeded\nfound it") {
				t.Errorf("output %q", res.Output)
			}
			checkSubagents(t, w.events(), agent.TaskTool)
		})
	}
}

func TestParallelTaskTimeoutMarksHungChildFailed(t *testing.T) {
	w := newWire(t, "openai", core.Options{}, text("a"), text("b"), llmtest.Reply{End: "stall"})
	start := time.Now()
	res, err := w.s.Tool(context.Background(), agent.ParallelTaskTool, map[string]any{
		"tasks": []agent.TaskSpec{explore("1"), explore("2"), explore("3")}, "timeout_ms": 3000, "allow_partial_failure": true})
	took := time.Since(start)
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("parallel_task: %v %+v", err, res)
	}
	// The third child stalls for ever: returning at all is the timeout's
	// doing; the bound only tells that from a hang. 3 s gives the two
	// answering children room on a busy machine (at 300 ms, under -race or
	// js/wasm at load 20, they could time out too).
	if took >= 15*time.Second {
		t.Errorf("took %v with timeout_ms 3000", took)
	}
	m := res.Metadata
	if m["success_count"] != 2 || m["failed_count"] != 1 || m["timed_out"] != true || m["partial_failure"] != true {
		t.Errorf("metadata %v", m)
	}
	failed := 0
	for _, r := range m["results"].([]any) {
		if r := r.(map[string]any); r["success"] == false {
			failed++
			if !strings.Contains(r["error"].(string), "timed out after 3000 ms") {
				t.Errorf("hung child's error %v", r["error"])
			}
		}
	}
	if failed != 1 {
		t.Errorf("%d failed results", failed)
	}
	if l := w.log(1); l.Disconnects != 1 {
		t.Errorf("the hung child's connection was not closed: %d disconnects", l.Disconnects)
	}
	checkSubagents(t, w.events(), agent.ParallelTaskTool)
}

func TestTaskRefusesBadInputWithoutRunningChildren(t *testing.T) {
	w := newWire(t, "openai", core.Options{}, text("never"))
	many := make([]agent.TaskSpec, 33)
	for i := range many {
		many[i] = explore("x")
	}
	bg := explore("x")
	bg.Background = true
	for _, c := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{agent.TaskTool, map[string]any{"tasks": many}, "32"},
		{agent.TaskTool, map[string]any{"tasks": []agent.TaskSpec{{Agent: "wizard", Description: "d", Prompt: "p"}}}, "explore, general, plan, verification, review"},
		{agent.ParallelTaskTool, map[string]any{"tasks": []agent.TaskSpec{explore("a"), explore("b")}, "min_success_count": 1}, "allow_partial_failure"},
		{agent.ParallelTaskTool, map[string]any{"tasks": []agent.TaskSpec{explore("a"), bg}}, "background"},
		{agent.ParallelTaskTool, map[string]any{"tasks": []agent.TaskSpec{explore("a")}}, "2"},
	} {
		res, err := w.s.Tool(context.Background(), c.tool, c.args)
		if err != nil || res.ExitCode == 0 || res.ErrorKind.Type != kernel.ErrInvalidArgument || !strings.Contains(res.Output, c.want) {
			t.Errorf("%s %v: %v %+v", c.tool, c.args, err, res)
		}
	}
	if l := w.log(0); len(l.Requests) != 0 {
		t.Errorf("bad input ran %d children", len(l.Requests))
	}
	if n := count(w.events(), agent.EventSubagentStart); n != 0 {
		t.Errorf("%d subagent_start", n)
	}
}

func TestParentDenyHoldsInChildren(t *testing.T) {
	writeCall := calls(call{callID("openai", "w1"), "write", `{"file_path":"out.txt","content":"x"}`})
	t.Run("general child under a parent deny", func(t *testing.T) {
		opts := core.Options{}
		opts.Permission.Deny = []string{"write"}
		w := newWire(t, "openai", opts, writeCall, text("done"))
		res, err := w.s.Task(context.Background(), agent.TaskSpec{Agent: "general", Description: "write", Prompt: "write out.txt"})
		if err != nil || res.ExitCode != 0 {
			t.Fatalf("task: %v %+v", err, res)
		}
		evs := w.events()
		if n := count(evs, kernel.EventPermissionDenied); n != 1 {
			t.Errorf("%d permission_denied", n)
		}
		if _, err := w.s.Workspace().Stat(context.Background(), "out.txt"); err == nil {
			t.Error("out.txt was written")
		}
		checkSubagents(t, evs, agent.TaskTool)
	})
	t.Run("plan child when the parent allows all", func(t *testing.T) {
		batchWrite := calls(call{callID("openai", "b1"), "bash", `{"command":"echo x > out.txt"}`})
		w := newWire(t, "openai", core.Options{}, writeCall, batchWrite, text("done"))
		res, err := w.s.Task(context.Background(), agent.TaskSpec{Agent: "plan", Description: "plan", Prompt: "try to write"})
		if err != nil || res.ExitCode != 0 {
			t.Fatalf("task: %v %+v", err, res)
		}
		l := w.log(0)
		if got := requestTools(t, l.Requests[0].Body); slices.Contains(got, "write") || slices.Contains(got, "bash") {
			t.Errorf("plan child offered %v", got)
		}
		if _, err := w.s.Workspace().Stat(context.Background(), "out.txt"); err == nil {
			t.Error("out.txt was written")
		}
		for _, want := range []string{`there is no tool named \"write\"`, `there is no tool named \"bash\"`} {
			if !strings.Contains(string(l.Requests[len(l.Requests)-1].Body), want) {
				t.Errorf("the plan child was not told %s", want)
			}
		}
	})
}

func TestNarrowingHoldsForNestedCalls(t *testing.T) {
	// A general child may call batch; the write inside it is judged by the
	// session's deny like the child's own calls.
	opts := core.Options{}
	opts.Permission.Deny = []string{"write"}
	w := newWire(t, "openai", opts, calls(call{callID("openai", "b1"), "batch",
		`{"calls":[{"tool":"write","args":{"file_path":"out.txt","content":"x"}}]}`}), text("done"))
	if _, err := w.s.Task(context.Background(), agent.TaskSpec{Agent: "general", Description: "b", Prompt: "batch"}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.s.Workspace().Stat(context.Background(), "out.txt"); err == nil {
		t.Error("out.txt was written through batch")
	}
}

func TestCloseDuringFanOutSettles(t *testing.T) {
	w := newWire(t, "openai", core.Options{}, llmtest.Reply{End: "stall"})
	tasks := make([]agent.TaskSpec, 8)
	for i := range tasks {
		tasks[i] = explore("x")
	}
	done := make(chan *kernel.Result, 1)
	go func() {
		res, _ := w.s.Tasks(context.Background(), tasks, core.TaskOptions{})
		done <- res
	}()
	deadline := time.Now().Add(10 * time.Second)
	for len(w.log(0).Requests) < 8 {
		if time.Now().After(deadline) {
			t.Fatal("the 8 children never reached the server")
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The children stall for ever: the bounds only tell settled from hung.
	start := time.Now()
	w.s.Close()
	if took := time.Since(start); took >= 10*time.Second {
		t.Errorf("close took %v", took)
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Tasks did not return after close")
	}
	if l := w.log(8); l.Disconnects != 8 || len(l.Requests) != 8 {
		t.Errorf("after close: %d requests, %d disconnects", len(l.Requests), l.Disconnects)
	}
	evs := w.events()
	checkSubagents(t, evs, agent.TaskTool)
	if n := count(evs, agent.EventSubagentEnd); n != 8 {
		t.Errorf("%d subagent_end", n)
	}
}

func TestBackgroundTaskResultLaterAndCloseCancels(t *testing.T) {
	// The call returns before its child's reply: a 2 s delay leaves a busy
	// machine room to start the child.
	slow := text("later")
	slow.DelayMs = 2000
	w := newWire(t, "openai", core.Options{}, slow)
	bg := explore("bg")
	bg.Background = true
	start := time.Now()
	res, err := w.s.Task(context.Background(), bg)
	if err != nil || res.ExitCode != 0 || !strings.HasPrefix(res.Output, "Task started in background. Task ID: task-") {
		t.Fatalf("%v %+v", err, res)
	}
	if time.Since(start) >= time.Duration(slow.DelayMs)*time.Millisecond {
		t.Errorf("the background call waited for its child (%v)", time.Since(start))
	}
	id := res.Metadata["task_ids"].([]string)[0]
	b, ok := w.s.BackgroundTask(context.Background(), id, true)
	if !ok || !b.Done || b.Result.Output != "later" || b.Result.Metadata["task_id"] != id {
		t.Fatalf("%v %+v", ok, b)
	}

	w2 := newWire(t, "openai", core.Options{}, llmtest.Reply{End: "stall"})
	res, _ = w2.s.Task(context.Background(), bg)
	id = res.Metadata["task_ids"].([]string)[0]
	for len(w2.log(0).Requests) < 1 {
		time.Sleep(10 * time.Millisecond)
	}
	if b, _ := w2.s.BackgroundTask(context.Background(), id, false); b.Done {
		t.Fatal("a stalled background task is done")
	}
	start = time.Now()
	w2.s.Close()
	if took := time.Since(start); took >= 10*time.Second {
		t.Errorf("close took %v", took)
	}
	b, _ = w2.s.BackgroundTask(context.Background(), id, false)
	if !b.Done || b.Result.ExitCode == 0 {
		t.Errorf("after close: %+v", b)
	}
	if l := w2.log(1); l.Disconnects != 1 {
		t.Errorf("%d disconnects", l.Disconnects)
	}
	// A background child ends after its task call did: one end per start.
	evs := w2.events()
	if s, e := count(evs, agent.EventSubagentStart), count(evs, agent.EventSubagentEnd); s != 1 || e != 1 {
		t.Errorf("%d subagent_start, %d subagent_end", s, e)
	}
}

func TestCustomAgents(t *testing.T) {
	ctx := context.Background()
	ws, _ := workspace.New(memfs.New())
	ws.WriteFile(ctx, ".a3s/agents/lister.md", []byte("---\ndescription: Lists files\nmax_steps: 3\npermissions:\n  allow: [ls]\n---\nYou list files."))
	ws.WriteFile(ctx, ".a3s/agents/broken.yaml", []byte("permissions: [oops"))
	opts := core.Options{Workspace: ws, Agents: []agent.Def{{Name: "echo", Description: "Echoes", Prompt: "You echo."}}}
	w := newWire(t, "openai", opts, text("ok"))
	if !strings.Contains(strings.Join(w.s.Warnings(), "\n"), ".a3s/agents/broken.yaml skipped") {
		t.Errorf("warnings %v", w.s.Warnings())
	}
	var desc string
	for _, d := range w.s.ToolDefinitions() {
		if d.Name == agent.TaskTool {
			desc = d.Description
		}
	}
	if !strings.Contains(desc, "- lister: Lists files") || !strings.Contains(desc, "- echo: Echoes") {
		t.Errorf("task's description lacks the custom agents: %s", desc)
	}
	res, err := w.s.Tasks(ctx, []agent.TaskSpec{{Agent: "lister", Description: "l", Prompt: "list"}, {Agent: "general-purpose", Description: "g", Prompt: "go"}}, core.TaskOptions{})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("%v %+v", err, res)
	}
	for _, r := range w.log(0).Requests {
		var req struct {
			Messages []struct {
				Role    string `json:"role"`
				Content string `json:"content"`
			} `json:"messages"`
		}
		json.Unmarshal(r.Body, &req)
		tools := requestTools(t, r.Body)
		switch req.Messages[0].Content {
		case "You list files.":
			if !slices.Equal(tools, []string{"ls"}) {
				t.Errorf("lister offered %v", tools)
			}
		default:
			if !strings.HasPrefix(req.Messages[0].Content, "You carry out one self-contained piece of work") {
				t.Errorf("the general-purpose alias ran %q", req.Messages[0].Content)
			}
		}
	}
}

func TestSkillHintInSystemPromptOnly(t *testing.T) {
	w := newWire(t, "openai", core.Options{SystemPrompt: "Be brief.", Skills: []agent.Skill{{Name: "secret-skill", Content: "BODY-NEVER-IN-PROMPT"}}}, text("hi"))
	if _, err := w.s.Send(context.Background(), "hello", nil); err != nil {
		t.Fatal(err)
	}
	body := string(w.log(0).Requests[0].Body)
	if !strings.Contains(body, "Be brief.\\n\\nSkills are available: find one with search_skills") || strings.Contains(body, "BODY-NEVER-IN-PROMPT") {
		t.Errorf("request %s", body[:min(len(body), 600)])
	}
}

// TestSubagentProgress: a child's milestones reach the parent as
// subagent_progress (upstream's synthesize_subagent_progress): one
// tool_completed per tool call, refused ones included, and one
// turn_completed per turn with its usage, between the child's
// subagent_start and subagent_end.
func TestSubagentProgress(t *testing.T) {
	w := newWire(t, "openai", core.Options{},
		calls(call{callID("openai", "r1"), "read", `{"file_path":"a.txt"}`}, call{callID("openai", "w1"), "write", `{"file_path":"x.txt","content":"x"}`}),
		text("done"))
	res, err := w.s.Task(context.Background(), explore("read a.txt"))
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("task: %v %+v", err, res)
	}
	evs := w.events()
	checkSubagents(t, evs, agent.TaskTool)
	id := res.Metadata["task_id"].(string)
	var got []string
	state := "before"
	for _, e := range evs {
		switch {
		case e.Type == agent.EventSubagentStart:
			state = "open"
		case e.Type == agent.EventSubagentEnd:
			state = "ended"
		case e.Type == agent.EventSubagentProgress:
			if state != "open" {
				t.Errorf("subagent_progress %s the child's start/end: %v", state, e.Payload)
			}
			if e.InvocationID != id || e.Payload["task_id"] != id || e.Payload["session_id"] != id || e.ParentID == "" {
				t.Errorf("progress ids: invocation %q parent %q payload %v (task %s)", e.InvocationID, e.ParentID, e.Payload, id)
			}
			m := e.Payload["metadata"].(map[string]any)
			switch e.Payload["status"] {
			case "tool_completed":
				_, hasKind := m["error_kind"]
				got = append(got, fmt.Sprintf("tool %v exit %v bytes>0 %v kind %v", m["tool"], m["exit_code"], m["output_bytes"].(int) > 0, hasKind))
			case "turn_completed":
				got = append(got, fmt.Sprintf("turn %v tokens %v/%v/%v", m["turn"], m["prompt_tokens"], m["completion_tokens"], m["total_tokens"]))
			default:
				t.Errorf("status %v", e.Payload["status"])
			}
		}
	}
	want := []string{
		"tool write exit 1 bytes>0 true kind true", // not offered to explore: refused by the loop
		"tool read exit 0 bytes>0 true kind false",
		"turn 1 tokens 100/20/120",
		"turn 2 tokens 50/5/55",
	}
	if !slices.Equal(got, want) {
		t.Errorf("progress\n got %q\nwant %q", got, want)
	}
}
