package tools

import (
	"context"
	"encoding/json"
	"iter"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a3s-lab/code-wasm/errkind"
	"github.com/a3s-lab/code-wasm/kernel"
	"github.com/a3s-lab/code-wasm/llm"
)

// goClient is a host-supplied Go client (llm.Client) that answers each
// request with the next scripted turn: a tool call whose arguments arrive
// in fragments, one every gap.
type goClient struct {
	mu    sync.Mutex
	turns []goTurn
	reqs  []llm.Request
}

type goTurn struct {
	name  string // tool name; "" answers with text
	frags []string
	gap   time.Duration
	err   error // fail the request instead
}

func (c *goClient) Stream(ctx context.Context, req llm.Request) iter.Seq2[llm.Chunk, error] {
	return func(yield func(llm.Chunk, error) bool) {
		c.mu.Lock()
		c.reqs = append(c.reqs, req)
		if len(c.turns) == 0 {
			c.mu.Unlock()
			yield(llm.Chunk{}, errkind.New(errkind.Transport, "script exhausted"))
			return
		}
		t := c.turns[0]
		c.turns = c.turns[1:]
		c.mu.Unlock()
		if t.err != nil {
			yield(llm.Chunk{}, t.err)
			return
		}
		send := func(ch llm.Chunk) bool {
			if ctx.Err() != nil {
				yield(llm.Chunk{}, ctx.Err())
				return false
			}
			return yield(ch, nil)
		}
		if t.name != "" && !send(llm.Chunk{Type: llm.ToolCallStart, ID: "call_1", Name: t.name}) {
			return
		}
		for _, f := range t.frags {
			if t.gap > 0 {
				select {
				case <-time.After(t.gap):
				case <-ctx.Done():
				}
			}
			ch := llm.Chunk{Type: llm.TextDelta, Text: f}
			if t.name != "" {
				ch = llm.Chunk{Type: llm.ToolCallDelta, Fragment: f}
			}
			if !send(ch) {
				return
			}
		}
		stop := llm.Stop
		if t.name != "" {
			if !send(llm.Chunk{Type: llm.ToolCallEnd}) {
				return
			}
			stop = llm.ToolUse
		}
		send(llm.Chunk{Type: llm.Finish, StopReason: stop, Usage: llm.Usage{PromptTokens: 10, CompletionTokens: 5, TotalTokens: 15}})
	}
}

func (c *goClient) requests() []llm.Request {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]llm.Request(nil), c.reqs...)
}

// genKernel registers generate_object over client in a kernel and records
// its events.
type genKernel struct {
	k      *kernel.Kernel
	mu     sync.Mutex
	events []kernel.Event
}

func newGenKernel(t *testing.T, client llm.Client) *genKernel {
	t.Helper()
	g := &genKernel{}
	reg := kernel.NewRegistry()
	if err := reg.RegisterBuiltin(NewGenerateObject(client)); err != nil {
		t.Fatal(err)
	}
	k, err := kernel.New(kernel.Config{Registry: reg, OnEvent: func(e kernel.Event) {
		g.mu.Lock()
		g.events = append(g.events, e)
		g.mu.Unlock()
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.Close)
	g.k = k
	return g
}

func (g *genKernel) call(t *testing.T, ctx context.Context, args any) *kernel.Result {
	t.Helper()
	b, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	res, err := g.k.Invoke(ctx, kernel.Request{Tool: "generate_object", Args: b, Origin: kernel.OriginHostTrusted})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// deltas are the tool_output_delta texts with their emission stamps.
func (g *genKernel) deltas() (texts []string, stamps []int64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, e := range g.events {
		if e.Type == kernel.EventToolOutputDelta {
			texts = append(texts, e.Payload["delta"].(string))
			stamps = append(stamps, e.TimeMs)
		}
	}
	return texts, stamps
}

var personSchema = map[string]any{
	"type": "object", "required": []string{"name", "age"}, "additionalProperties": false,
	"properties": map[string]any{"name": map[string]any{"type": "string"}, "age": map[string]any{"type": "integer", "minimum": 0}},
}

func TestGenerateObjectBadArgumentsMakeNoRequest(t *testing.T) {
	deep := map[string]any{"type": "object"}
	for range 32 {
		deep = map[string]any{"type": "object", "properties": map[string]any{"x": deep}}
	}
	base := func(kv ...any) map[string]any {
		m := map[string]any{"schema": personSchema, "prompt": "Ada, 36"}
		for i := 0; i < len(kv); i += 2 {
			if kv[i+1] == nil {
				delete(m, kv[i].(string))
			} else {
				m[kv[i].(string)] = kv[i+1]
			}
		}
		return m
	}
	for _, c := range []struct {
		name string
		args map[string]any
		want string
	}{
		{"no prompt", base("prompt", nil), "prompt"},
		{"blank prompt", base("prompt", " \n\t"), "prompt"},
		{"prompt over 128 KiB", base("prompt", strings.Repeat("x", 128<<10+1)), "prompt"},
		{"no schema", base("schema", nil), "schema"},
		{"schema not an object", base("schema", []any{1}), "schema"},
		{"schema over 64 KiB", base("schema", map[string]any{"type": "object", "description": strings.Repeat("x", 64<<10)}), "64 KiB"},
		{"schema too deep", base("schema", deep), "levels"},
		{"schema does not compile", base("schema", map[string]any{"type": 5}), "compile"},
		{"remote $ref", base("schema", map[string]any{"$ref": "https://example.com/s.json"}), "compile"},
		{"schema_name pattern", base("schema_name", "a b"), "schema_name"},
		{"schema_name too long", base("schema_name", strings.Repeat("a", 60)), "schema_name"},
		{"description over 4 KiB", base("schema_description", strings.Repeat("x", 4<<10+1)), "schema_description"},
		{"system over 32 KiB", base("system", strings.Repeat("x", 32<<10+1)), "system"},
		{"mode", base("mode", "fast"), "mode"},
		{"repairs over 5", base("max_repair_attempts", 6), "max_repair_attempts"},
		{"repairs negative", base("max_repair_attempts", -1), "max_repair_attempts"},
		{"timeout under 1 s", base("timeout_ms", 999), "timeout_ms"},
		{"timeout over 600 s", base("timeout_ms", 600001), "timeout_ms"},
		{"unknown argument", base("temperature", 1), "temperature"},
	} {
		t.Run(c.name, func(t *testing.T) {
			client := &goClient{}
			res := newGenKernel(t, client).call(t, context.Background(), c.args)
			if res.ExitCode == 0 || res.ErrorKind == nil || res.ErrorKind.Type != kernel.ErrInvalidArgument || !strings.Contains(res.Output, c.want) {
				t.Errorf("got exit %d kind %+v: %s", res.ExitCode, res.ErrorKind, genClip(res.Output, 300))
			}
			if n := len(client.requests()); n != 0 {
				t.Errorf("%d requests made", n)
			}
		})
	}
}

func TestGenerateObjectRepairs(t *testing.T) {
	client := &goClient{turns: []goTurn{
		{name: "emit_person", frags: []string{`{"name": "Ada", "age": `}},      // not JSON
		{name: "emit_person", frags: []string{`{"name": "Ada", "age": "36"}`}}, // wrong type
		{name: "emit_person", frags: []string{`{"age": 36, "name": "Ada"}`}},
	}}
	g := newGenKernel(t, client)
	res := g.call(t, context.Background(), map[string]any{"schema": personSchema, "prompt": "Ada, 36", "schema_name": "person", "include_raw_text": true})
	if res.ExitCode != 0 {
		t.Fatalf("exit %d: %s", res.ExitCode, res.Output)
	}
	var out struct {
		Object       json.RawMessage `json:"object"`
		RepairRounds int             `json:"repair_rounds"`
		ModeUsed     string          `json:"mode_used"`
		Usage        map[string]any  `json:"usage"`
		RawText      string          `json:"raw_text"`
	}
	if err := json.Unmarshal([]byte(res.Output), &out); err != nil {
		t.Fatal(err)
	}
	if string(out.Object) != `{"age":36,"name":"Ada"}` || out.RepairRounds != 2 || out.ModeUsed != "tool" ||
		out.Usage["total_tokens"] != float64(45) || out.RawText != `{"age": 36, "name": "Ada"}` {
		t.Errorf("output %s", res.Output)
	}
	if res.Metadata["repair_rounds"] != 2 || res.Metadata["requested_mode"] != "auto" || res.Metadata["schema_name"] != "person" ||
		res.Metadata["mode_used"] != "tool" || res.Metadata["raw_text_included"] != true || res.Metadata["usage"] == nil {
		t.Errorf("metadata %v", res.Metadata)
	}
	adm, _ := res.Metadata["generation_admission"].(map[string]any)
	if adm["mode"] != "bounded" || adm["max_concurrency"] != 1 || adm["active_timeout_ms"] != int64(120000) || adm["queue_wait_ms"] == nil {
		t.Errorf("generation_admission %v", adm)
	}
	reqs := client.requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests", len(reqs))
	}
	first := reqs[0]
	if first.ToolChoice != (llm.ToolChoice{Type: llm.ToolChoiceTool, Name: "emit_person"}) || len(first.Tools) != 1 ||
		first.Tools[0].Name != "emit_person" || len(first.Messages) != 1 {
		t.Errorf("first request %+v", first)
	}
	// The 2nd request answers the broken call with the parse error, the
	// 3rd the schema-invalid call with the validator's error.
	for i, want := range []string{"could not be parsed", "/age: got string, want integer"} {
		m := reqs[i+1].Messages
		last := m[len(m)-1]
		if len(m) != 3+2*i || len(last.ToolResults) != 1 || last.ToolResults[0].CallID != "call_1" ||
			!last.ToolResults[0].IsError || !strings.Contains(last.ToolResults[0].Content, want) {
			t.Errorf("request %d: %d messages, last %+v", i+2, len(m), last)
		}
	}
}

func TestGenerateObjectGivesUp(t *testing.T) {
	client := &goClient{turns: []goTurn{
		{name: "emit_result", frags: []string{`{"name": 1}`}},
		{name: "emit_result", frags: []string{`{"name": 2}`}},
	}}
	res := newGenKernel(t, client).call(t, context.Background(), map[string]any{"schema": personSchema, "prompt": "p", "max_repair_attempts": 1})
	if res.ExitCode == 0 || !strings.Contains(res.Output, "failed schema validation after 1 repair attempts") ||
		!strings.Contains(res.Output, "/name: got number, want string") || res.Metadata["timeout_ms"] != int64(120000) {
		t.Errorf("exit %d: %s %v", res.ExitCode, res.Output, res.Metadata)
	}
	if n := len(client.requests()); n != 2 {
		t.Errorf("%d requests", n)
	}
}

func TestGenerateObjectPromptModeAndEnvelope(t *testing.T) {
	client := &goClient{turns: []goTurn{
		{frags: []string{"Here you go:\n```json\n", `{"elements": ["red", "blue"]}`, "\n```"}},
	}}
	res := newGenKernel(t, client).call(t, context.Background(), map[string]any{
		"schema": map[string]any{"type": "array", "items": map[string]any{"type": "string"}}, "prompt": "colours", "mode": "prompt"})
	if res.ExitCode != 0 || !strings.HasPrefix(res.Output, `{"object":["red","blue"],"repair_rounds":0,"mode_used":"prompt"`) {
		t.Fatalf("exit %d: %s", res.ExitCode, res.Output)
	}
	req := client.requests()[0]
	if len(req.Tools) != 0 || !strings.Contains(req.Messages[0].Text, `"elements"`) || !strings.Contains(req.System, "valid JSON only") {
		t.Errorf("request %+v", req)
	}
}

func TestGenerateObjectErrorKinds(t *testing.T) {
	for _, c := range []struct {
		name string
		err  error
		want kernel.ErrorType
	}{
		{"rate limited", errkind.New(errkind.RateLimited, "HTTP 429: slow down"), kernel.ErrRateLimited},
		{"transport", errkind.New(errkind.Transport, "HTTP 503: unavailable"), kernel.ErrTransport},
		{"stream timeout", errkind.New(errkind.Timeout, "no byte for 120 s"), kernel.ErrTransport},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := newGenKernel(t, &goClient{turns: []goTurn{{err: c.err}}}).call(t, context.Background(), map[string]any{"schema": personSchema, "prompt": "p"})
			if res.ExitCode == 0 || res.ErrorKind == nil || res.ErrorKind.Type != c.want || res.Metadata["generation_admission"] == nil {
				t.Errorf("exit %d kind %+v: %s", res.ExitCode, res.ErrorKind, res.Output)
			}
		})
	}
}

// streamingTurn is a 1 s stream of 5 ms fragments building an object with
// 200 array items.
func streamingTurn() (goTurn, string) {
	var frags []string
	frags = append(frags, `{"items": [`)
	for i := range 198 {
		sep := ","
		if i == 197 {
			sep = ""
		}
		frags = append(frags, `"item`+strings.Repeat("x", i%5)+`"`+sep)
	}
	frags = append(frags, `]}`)
	return goTurn{name: "emit_result", frags: frags, gap: 5 * time.Millisecond}, strings.Join(frags, "")
}

func TestGenerateObjectStreamsThrottledPartials(t *testing.T) {
	turn, whole := streamingTurn()
	g := newGenKernel(t, &goClient{turns: []goTurn{turn}})
	schema := map[string]any{"type": "object", "properties": map[string]any{"items": map[string]any{"type": "array"}}}
	start := time.Now()
	res := g.call(t, context.Background(), map[string]any{"schema": schema, "prompt": "p"})
	if res.ExitCode != 0 {
		t.Fatalf("exit %d: %s", res.ExitCode, res.Output)
	}
	texts, stamps := g.deltas()
	if len(texts) < 2 {
		t.Fatalf("%d deltas", len(texts))
	}
	partialN := len(texts) - 1
	// A stream of d ms allows at most d/100 + 1 partials; this one lasts
	// at least 1 s (longer on a busy machine).
	if limit := int(time.Since(start)/(100*time.Millisecond)) + 1; partialN > limit || partialN < 2 {
		t.Errorf("%d partials over %v", partialN, time.Since(start))
	}
	for i := 1; i < partialN; i++ {
		if d := stamps[i] - stamps[i-1]; d < 100 {
			t.Errorf("partials %d and %d are %d ms apart", i-1, i, d)
		}
	}
	for i, s := range texts {
		var d map[string]any
		if err := json.Unmarshal([]byte(s), &d); err != nil {
			t.Fatalf("delta %d: %v", i, err)
		}
		if final := i == len(texts)-1; d["final"] != final || (final && (d["mode_used"] != "tool" || d["repair_rounds"] != float64(0))) {
			t.Errorf("delta %d: %s", i, s)
		}
		if _, ok := d["object_partial"].(map[string]any); !ok {
			t.Errorf("delta %d has no object: %s", i, s)
		}
	}
	var want, got any
	_ = json.Unmarshal([]byte(whole), &want)
	var last map[string]any
	_ = json.Unmarshal([]byte(texts[len(texts)-1]), &last)
	got = last["object_partial"]
	if b1, _ := json.Marshal(got); string(b1) != genJSON(want) {
		t.Errorf("final delta object %s", b1)
	}
}

func genJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestGenerateObjectCancelMidStream(t *testing.T) {
	// A 20 s stream: settling long before its end is the cancel's doing,
	// whatever the machine's load (speed is make bench's).
	turn, _ := streamingTurn()
	turn.gap = 100 * time.Millisecond
	g := newGenKernel(t, &goClient{turns: []goTurn{turn}})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	start := time.Now()
	res := g.call(t, ctx, map[string]any{"schema": personSchema, "prompt": "p"})
	if res.ExitCode == 0 || res.ErrorKind == nil || res.ErrorKind.Type != kernel.ErrCancelled {
		t.Errorf("exit %d kind %+v: %s", res.ExitCode, res.ErrorKind, res.Output)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("settled after %v", d)
	}
}

func TestGenerateObjectTimeoutExcludesQueueWait(t *testing.T) {
	// Two calls on a single-flight gate: the second waits for the first
	// (about 1 s) and then has its own full timeout_ms.
	turn, _ := streamingTurn()
	turn2, _ := streamingTurn()
	turn2.gap = 0 // instant: only a queue wait counted against timeout_ms could time it out
	client := &goClient{turns: []goTurn{turn, turn2}}
	g := newGenKernel(t, client)
	schema := map[string]any{"type": "object"}
	var wg sync.WaitGroup
	results := make([]*kernel.Result, 2)
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = g.call(t, context.Background(), map[string]any{"schema": schema, "prompt": "p", "timeout_ms": 1000})
		}()
		time.Sleep(50 * time.Millisecond)
	}
	wg.Wait()
	// The first stream lasts about 1 s: on a busy machine it may pass
	// timeout_ms; the second must not time out for its queue wait.
	second := results[1]
	if second.ExitCode != 0 {
		t.Fatalf("second call: exit %d: %s", second.ExitCode, second.Output)
	}
	adm := second.Metadata["generation_admission"].(map[string]any)
	if adm["queue_wait_ms"].(int64) < 500 || adm["max_concurrency"] != 1 {
		t.Errorf("admission %v", adm)
	}
}

// FuzzGenerateObjectAnswer judges arbitrary model answers: no panic, and an
// accepted object is one JSON value the schema accepts.
func FuzzGenerateObjectAnswer(f *testing.F) {
	for _, s := range []string{`{"name":"a","age":1}`, "```json\n{\"name\":\"a\",\"age\":1}\n```", `x {"a": "}"} y [1]`,
		`{"value": 3}`, `[{"name":"a","age":1}]`, `{"name": "a", "age": `, `"\"{"`} {
		f.Add(s, false)
		f.Add(s, true)
	}
	g := NewGenerateObject(&goClient{})
	person, _ := json.Marshal(map[string]any{"schema": personSchema, "prompt": "p"})
	number, _ := json.Marshal(map[string]any{"schema": map[string]any{"type": "integer"}, "prompt": "p"})
	pp, err := g.plan(person)
	if err != nil {
		f.Fatal(err)
	}
	np, err := g.plan(number)
	if err != nil || np.wrapKey != "value" {
		f.Fatal(err, np.wrapKey)
	}
	f.Fuzz(func(t *testing.T, answer string, scalar bool) {
		p := pp
		if scalar {
			p = np
		}
		o := p.judgeSources(answer)
		if o.object == nil {
			return
		}
		var v any
		dec := json.NewDecoder(strings.NewReader(string(o.object)))
		dec.UseNumber()
		if err := dec.Decode(&v); err != nil || dec.More() {
			t.Fatalf("accepted %q: %v", o.object, err)
		}
		if errs := p.schema.Validate(v); errs != nil {
			t.Fatalf("accepted %s: %v", o.object, errs)
		}
	})
}

func TestGenerateObjectCancelledWaiterFreesItsPlace(t *testing.T) {
	long, _ := streamingTurn()
	client := &goClient{turns: []goTurn{long, {name: "emit_result", frags: []string{`{}`}}}}
	g := newGenKernel(t, client)
	args := map[string]any{"schema": map[string]any{"type": "object"}, "prompt": "p"}
	first := make(chan *kernel.Result)
	go func() { first <- g.call(t, context.Background(), args) }()
	for len(client.requests()) == 0 {
		time.Sleep(5 * time.Millisecond)
	}
	// A call queued behind the first is cancelled while it waits.
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	res := g.call(t, ctx, args)
	if res.ErrorKind == nil || res.ErrorKind.Type != kernel.ErrCancelled || len(client.requests()) != 1 {
		t.Fatalf("queued call: kind %+v, %d requests: %s", res.ErrorKind, len(client.requests()), res.Output)
	}
	if r := <-first; r.ExitCode != 0 {
		t.Fatalf("first call: %s", r.Output)
	}
	// Its place was not kept: the next call runs.
	done := make(chan *kernel.Result, 1)
	go func() { done <- g.call(t, context.Background(), args) }()
	select {
	case r := <-done:
		if r.ExitCode != 0 {
			t.Fatalf("next call: %s", r.Output)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the next call never got a place")
	}
}

func TestGenerateObjectDeltaSizeRule(t *testing.T) {
	small := json.RawMessage(`{"a":1}`)
	if got := genDelta(small, false, nil); got != `{"final":false,"object_partial":{"a":1}}` {
		t.Errorf("small partial: %s", got)
	}
	big := json.RawMessage(`"` + strings.Repeat("x", 64<<10) + `"`)
	var d map[string]any
	if err := json.Unmarshal([]byte(genDelta(big, true, map[string]any{"mode_used": "tool", "repair_rounds": 1})), &d); err != nil {
		t.Fatal(err)
	}
	if _, has := d["object_partial"]; has || d["object_partial_omitted"] != true || d["partial_bytes"] != float64(len(big)) ||
		d["final"] != true || d["mode_used"] != "tool" || d["repair_rounds"] != float64(1) {
		t.Errorf("over 64 KiB: %v", d)
	}
}

func TestGenerateObjectWrappedErrorsNameTheWrappedPath(t *testing.T) {
	g := NewGenerateObject(&goClient{})
	raw, _ := json.Marshal(map[string]any{"schema": map[string]any{"type": "array", "items": map[string]any{"type": "integer"}}, "prompt": "p"})
	p, err := g.plan(raw)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		answer string
		object string
		errs   []string
	}{
		{`[1, 2]`, `[1,2]`, nil},
		{`{"elements": [1, 2]}`, `[1,2]`, nil},
		{`{"elements": [1, "x"]}`, "", []string{"/elements/1: got string, want integer"}},
		{`{"elements": "x"}`, "", []string{"/elements: got string, want array"}},
	} {
		o := p.judgeSources(c.answer)
		if string(o.object) != c.object || strings.Join(o.errs, ";") != strings.Join(c.errs, ";") {
			t.Errorf("%s: object %s errors %q", c.answer, o.object, o.errs)
		}
	}
}
