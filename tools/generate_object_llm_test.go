package tools

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/a3s-lab/code-wasm/kernel"
	"github.com/a3s-lab/code-wasm/llm"
	"github.com/a3s-lab/code-wasm/llm/llmtest"
)

// These tests run generate_object over the real provider clients against
// the scripted server on 127.0.0.1 (llm/llmtest), in both wire formats.
// Under js/wasm they need LLMTEST_URL (make test-wasm-genobj).

// scripted loads replies for provider and returns a kernel with
// generate_object over a client of that script, and the script.
func genScripted(t *testing.T, provider string, retries int, replies ...llmtest.Reply) (*genKernel, llmtest.Remote, llmtest.Loaded) {
	t.Helper()
	remote := llmtest.Remote{URL: llmtest.ServerURL(t)}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	l, err := remote.Load(ctx, llmtest.Script{Provider: provider, Replies: replies})
	if err != nil {
		t.Fatal(err)
	}
	c, err := llm.New(llm.Config{Provider: provider, BaseURL: l.BaseURL, APIKey: "sk-test", Model: "model-test", MaxRetries: &retries, TimeoutMs: 10000})
	if err != nil {
		t.Fatal(err)
	}
	return newGenKernel(t, c), remote, l
}

func genServerLog(t *testing.T, r llmtest.Remote, l llmtest.Loaded, disconnects int) llmtest.Log {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	lg, err := r.Log(ctx, l.ID, disconnects, 5000)
	if err != nil {
		t.Fatal(err)
	}
	return lg
}

// emit is a reply whose tool call emit_<name> streams fragments, each after
// gapMs.
func emitReply(name string, gapMs int, frags ...string) llmtest.Reply {
	ev := []llmtest.Event{llmtest.Tool(0, "call_"+name, "emit_"+name)}
	for _, f := range frags {
		e := llmtest.Args(0, f)
		e.DelayMs = gapMs
		ev = append(ev, e)
	}
	return llmtest.Reply{Events: append(ev, llmtest.Done(llm.ToolUse, 20, 10))}
}

func genEachProvider(t *testing.T, f func(t *testing.T, provider string)) {
	for _, p := range llmtest.Providers {
		t.Run(p, func(t *testing.T) {
			t.Parallel()
			f(t, p)
		})
	}
}

func TestGenerateObjectServerRepairs(t *testing.T) {
	genEachProvider(t, func(t *testing.T, provider string) {
		g, remote, l := genScripted(t, provider, 0,
			emitReply("person", 0, `{"name": "Ada", `, `"age": `),      // not JSON
			emitReply("person", 0, `{"name": "Ada", "age": "thirty"}`), // schema-invalid
			emitReply("person", 0, `{"name": "Ada", "age": 36}`))
		res := g.call(t, context.Background(), map[string]any{"schema": personSchema, "prompt": "Ada is 36.", "schema_name": "person"})
		if res.ExitCode != 0 || !strings.HasPrefix(res.Output, `{"object":{"name":"Ada","age":36},"repair_rounds":2,"mode_used":"tool"`) {
			t.Fatalf("exit %d: %s", res.ExitCode, res.Output)
		}
		var out struct{ Usage map[string]any }
		_ = json.Unmarshal([]byte(res.Output), &out)
		if out.Usage["prompt_tokens"] != float64(60) || out.Usage["total_tokens"] != float64(90) {
			t.Errorf("usage %v", out.Usage)
		}
		lg := genServerLog(t, remote, l, 0)
		if len(lg.Requests) != 3 || len(lg.Rejected) != 0 {
			t.Fatalf("%d requests, rejected %v", len(lg.Requests), lg.Rejected)
		}
		if !strings.Contains(string(lg.Requests[0].Body), `"emit_person"`) {
			t.Errorf("first request does not offer emit_person: %s", lg.Requests[0].Body)
		}
		// The 2nd and 3rd requests carry the errors, in the tool result
		// of the provider's own format.
		result := map[string]string{"openai": `"role":"tool"`, "anthropic": `"type":"tool_result"`}[provider]
		for i, want := range []string{"could not be parsed", "/age: got string, want integer"} {
			body := string(lg.Requests[i+1].Body)
			if !strings.Contains(body, want) || !strings.Contains(body, result) {
				t.Errorf("request %d lacks %q in a %s: %s", i+2, want, result, genClip(body, 1500))
			}
		}
	})
}

func TestGenerateObjectServerBadArguments(t *testing.T) {
	genEachProvider(t, func(t *testing.T, provider string) {
		g, remote, l := genScripted(t, provider, 0, emitReply("result", 0, `{}`))
		for _, args := range []map[string]any{
			{"schema": personSchema, "prompt": "  "},
			{"schema": personSchema, "prompt": "p", "max_repair_attempts": 9},
			{"schema": map[string]any{"type": "nonsense"}, "prompt": "p"},
		} {
			if res := g.call(t, context.Background(), args); res.ErrorKind == nil || res.ErrorKind.Type != kernel.ErrInvalidArgument {
				t.Errorf("%v: exit %d: %s", args, res.ExitCode, res.Output)
			}
		}
		if lg := genServerLog(t, remote, l, 0); len(lg.Requests) != 0 {
			t.Errorf("%d requests reached the server", len(lg.Requests))
		}
	})
}

func TestGenerateObjectServerStreamsPartials(t *testing.T) {
	genEachProvider(t, func(t *testing.T, provider string) {
		// A 1 s stream of 5 ms fragments.
		frags := []string{`{"items": [`}
		for i := range 198 {
			frags = append(frags, `"item `+strings.Repeat("x", i%7)+`",`)
		}
		frags = append(frags, `"last"]}`)
		whole := strings.Join(frags, "")
		g, _, _ := genScripted(t, provider, 0, emitReply("result", 5, frags...))
		start := time.Now()
		res := g.call(t, context.Background(), map[string]any{"schema": map[string]any{"type": "object", "required": []string{"items"}}, "prompt": "p"})
		elapsed := time.Since(start)
		if res.ExitCode != 0 {
			t.Fatalf("exit %d: %s", res.ExitCode, res.Output)
		}
		texts, stamps := g.deltas()
		n := len(texts) - 1 // partials, then the final delta
		// At most one per 100 ms: 11 in a 1 s stream, more only if the
		// machine stretched the stream.
		if n < 2 || n > int(elapsed/(100*time.Millisecond))+1 {
			t.Errorf("%d partials in %v", n, elapsed)
		}
		if elapsed < 1100*time.Millisecond && n > 11 {
			t.Errorf("%d partials in %v, want at most 11", n, elapsed)
		}
		for i := 1; i < n; i++ {
			if d := stamps[i] - stamps[i-1]; d < 100 {
				t.Errorf("partials %d and %d are %d ms apart", i-1, i, d)
			}
		}
		var final struct {
			Object json.RawMessage `json:"object_partial"`
			Final  bool            `json:"final"`
		}
		if err := json.Unmarshal([]byte(texts[n]), &final); err != nil || !final.Final {
			t.Fatalf("final delta %s: %v", texts[n], err)
		}
		var want any
		_ = json.Unmarshal([]byte(whole), &want)
		if string(final.Object) != genJSON(want) {
			t.Errorf("final delta object %s, want %s", genClip(string(final.Object), 200), genClip(genJSON(want), 200))
		}
		t.Logf("%s: %d partials over %v", provider, n, elapsed)
	})
}

func TestGenerateObjectServerCancel(t *testing.T) {
	genEachProvider(t, func(t *testing.T, provider string) {
		frags := make([]string, 100)
		for i := range frags {
			frags[i] = " "
		}
		frags[0] = `{"name": "A`
		g, remote, l := genScripted(t, provider, 0, emitReply("result", 50, frags...))
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		// The cancel lands mid-stream: once the server has the request (a
		// fixed delay cancelled a loaded machine's request before it was
		// sent, and the server then saw no disconnect), then 300 ms in.
		atc := make(chan time.Time, 1)
		go func() {
			for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
				if lg, err := remote.Log(ctx, l.ID, 0, 0); err == nil && len(lg.Requests) > 0 {
					break
				}
			}
			time.Sleep(300 * time.Millisecond)
			atc <- time.Now()
			cancel()
		}()
		res := g.call(t, ctx, map[string]any{"schema": personSchema, "prompt": "p"})
		var at time.Time
		select {
		case at = <-atc:
		case <-time.After(30 * time.Second):
			t.Fatal("the call ended without the cancel")
		}
		settled := time.Since(at)
		if res.ErrorKind == nil || res.ErrorKind.Type != kernel.ErrCancelled {
			t.Fatalf("exit %d kind %+v: %s", res.ExitCode, res.ErrorKind, res.Output)
		}
		// 500 ms is the goal; the stream lasts 5 s, and the bound leaves a
		// busy machine room short of that.
		if settled > 4*time.Second {
			t.Errorf("settled %v after the cancel", settled)
		}
		if lg := genServerLog(t, remote, l, 1); lg.Disconnects != 1 {
			t.Errorf("server saw %d disconnects", lg.Disconnects)
		}
		t.Logf("%s: settled %v after the cancel", provider, settled)
	})
}

func TestGenerateObjectServerFailureKinds(t *testing.T) {
	genEachProvider(t, func(t *testing.T, provider string) {
		for _, c := range []struct {
			status int
			want   kernel.ErrorType
		}{{429, kernel.ErrRateLimited}, {503, kernel.ErrTransport}} {
			g, remote, l := genScripted(t, provider, 1, llmtest.Reply{Status: c.status, Header: map[string]string{"retry-after": "0.05"}})
			res := g.call(t, context.Background(), map[string]any{"schema": personSchema, "prompt": "p"})
			if res.ErrorKind == nil || res.ErrorKind.Type != c.want || !strings.HasPrefix(res.Output, "generate_object failed: ") {
				t.Errorf("%d: exit %d kind %+v: %s", c.status, res.ExitCode, res.ErrorKind, res.Output)
			}
			if lg := genServerLog(t, remote, l, 0); len(lg.Requests) != 2 {
				t.Errorf("%d: %d requests, want 2 (one retry)", c.status, len(lg.Requests))
			}
		}
	})
}

func TestGenerateObjectServerThatNeverFinishes(t *testing.T) {
	genEachProvider(t, func(t *testing.T, provider string) {
		// The object completes, then the stream stays open and silent.
		g, remote, l := genScripted(t, provider, 0, llmtest.Reply{End: "stall", Events: []llmtest.Event{
			llmtest.Tool(0, "call_1", "emit_result"), llmtest.Args(0, `{"name": "Ada",`), llmtest.Args(0, ` "age": 36}`)}})
		start := time.Now()
		res := g.call(t, context.Background(), map[string]any{"schema": personSchema, "prompt": "p"})
		if res.ExitCode != 0 || !strings.HasPrefix(res.Output, `{"object":{"name":"Ada","age":36},"repair_rounds":0`) {
			t.Fatalf("exit %d: %s", res.ExitCode, res.Output)
		}
		// Accepted after the 250 ms grace, long before the client's 10 s
		// silence timeout.
		if d := time.Since(start); d < 250*time.Millisecond || d > 5*time.Second {
			t.Errorf("accepted after %v", d)
		}
		if lg := genServerLog(t, remote, l, 1); len(lg.Requests) != 1 || lg.Disconnects != 1 {
			t.Errorf("%d requests, %d disconnects", len(lg.Requests), lg.Disconnects)
		}
	})
}
