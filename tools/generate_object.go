package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/a3s-lab/code-wasm/errkind"
	"github.com/a3s-lab/code-wasm/internal/lazyre"
	"github.com/a3s-lab/code-wasm/kernel"
	"github.com/a3s-lab/code-wasm/llm"
)

// generate_object limits and defaults (REFERENCE.md §2.14).
const (
	genMaxSchemaBytes      = 64 << 10
	genMaxSchemaDepth      = 32
	genMaxPromptBytes      = 128 << 10
	genMaxSchemaNameBytes  = 59 // + "emit_" = 64, OpenAI's tool-name limit
	genMaxDescriptionBytes = 4 << 10
	genMaxSystemBytes      = 32 << 10
	genDefaultRepairs      = 2
	genMaxRepairs          = 5
	genDefaultTimeoutMs    = 120_000
	genMinTimeoutMs        = 1_000
	genMaxTimeoutMs        = 600_000
	// genPartialInterval: at most one partial object per interval (a
	// leading-edge throttle: a partial inside it is dropped, not delayed).
	genPartialInterval = 100 * time.Millisecond
	// genMaxPartialBytes: a larger object is reported by its size only.
	genMaxPartialBytes = 64 << 10
	// genRawEchoBytes: how much of a failed answer a repair request quotes.
	genRawEchoBytes = 2000
	// GenerateObjectMaxConcurrency is the admission gate's size: how many
	// generations of one session run at once (single-flight, as upstream's
	// default); the rest queue, and their queue wait does not count toward
	// timeout_ms.
	GenerateObjectMaxConcurrency = 1
)

var genSchemaName = lazyre.New(`^[A-Za-z0-9_-]+$`)

// GenerateObject is the `generate_object` tool: it asks the session's model
// for a JSON object, validates it against the caller's JSON Schema with the
// kernel's validator, and feeds the validator's errors back for up to
// max_repair_attempts more rounds. Modes auto, strict, json and tool all
// use a forced synthetic tool emit_<schema_name>; prompt puts the schema in
// the prompt. While the first round streams, partial objects go out as
// tool_output_delta events, at most one per 100 ms, and one final delta
// follows.
type GenerateObject struct {
	client llm.Client
	gate   chan struct{}
}

// NewGenerateObject returns the tool over client. A session registers it
// only when it has a model.
func NewGenerateObject(client llm.Client) *GenerateObject {
	return &GenerateObject{client: client, gate: make(chan struct{}, GenerateObjectMaxConcurrency)}
}

func (*GenerateObject) Name() string { return "generate_object" }

func (*GenerateObject) Description() string {
	return "Ask the configured LLM for a JSON object that conforms to a JSON Schema. The object is validated against the " +
		"schema and, when invalid, the validation errors are fed back to the model for up to max_repair_attempts more " +
		"rounds. The output is JSON {object, repair_rounds, mode_used, usage}."
}

func (*GenerateObject) Parameters() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{` +
		`"schema":{"type":"object","description":"JSON Schema (draft 2020-12) the object must satisfy; at most 64 KiB and 32 levels deep."},` +
		`"prompt":{"type":"string","minLength":1,"description":"What to generate or extract (at most 128 KiB)."},` +
		`"schema_name":{"type":"string","pattern":"^[A-Za-z0-9_-]+$","maxLength":59,"description":"Name of the object, default result; the model answers through the tool emit_<schema_name>."},` +
		`"schema_description":{"type":"string","description":"What the object is, for the model (at most 4 KiB)."},` +
		`"system":{"type":"string","description":"System prompt for the generation (at most 32 KiB)."},` +
		`"mode":{"type":"string","enum":["auto","strict","json","tool","prompt"],"description":"auto (default), strict, json and tool force the synthetic tool; prompt puts the schema in the prompt."},` +
		`"max_repair_attempts":{"type":"integer","minimum":0,"maximum":5,"description":"Extra rounds that feed validation errors back, default 2."},` +
		`"include_raw_text":{"type":"boolean","description":"Add the model's raw answer as raw_text, default false."},` +
		`"timeout_ms":{"type":"integer","minimum":1000,"maximum":600000,"description":"Time for the whole generation, default 120000; waiting for admission does not count."}},` +
		`"required":["schema","prompt"],"additionalProperties":false}`)
}

// Capabilities: the call changes nothing, but asking a model twice may not
// answer the same, and each call costs tokens: it runs alone.
func (*GenerateObject) Capabilities(json.RawMessage) kernel.Capabilities {
	return kernel.Capabilities{ReadOnly: true, CancellationSafe: true, MaxParallelism: 1, OutputKind: kernel.OutputStructured}
}

// Effects: nothing in the workspace or outside the session changes.
func (*GenerateObject) Effects(json.RawMessage) kernel.Effects { return kernel.Effects{} }

// Touches: the call names no path, command or URL.
func (*GenerateObject) Touches(json.RawMessage) kernel.Touched { return kernel.Touched{} }

type genArgs struct {
	Schema            json.RawMessage `json:"schema"`
	Prompt            *string         `json:"prompt"`
	SchemaName        *string         `json:"schema_name"`
	SchemaDescription *string         `json:"schema_description"`
	System            *string         `json:"system"`
	Mode              *string         `json:"mode"`
	MaxRepairAttempts *int            `json:"max_repair_attempts"`
	IncludeRawText    *bool           `json:"include_raw_text"`
	TimeoutMs         *int64          `json:"timeout_ms"`
}

// genPlan is a checked call: what to ask and how.
type genPlan struct {
	schema      *kernel.Schema
	sent        json.RawMessage // the schema the model sees (maybe wrapped)
	wrapKey     string          // "value" or "elements" when wrapped, else ""
	prompt      string
	name        string
	description string
	system      string
	requested   string
	mode        string // "tool" or "prompt"
	repairs     int
	rawText     bool
	timeoutMs   int64
}

// plan checks every argument before any request is made.
func (g *GenerateObject) plan(raw json.RawMessage) (*genPlan, error) {
	const tool = "generate_object"
	var a genArgs
	if err := decodeArgs(tool, raw, &a); err != nil {
		return nil, err
	}
	p := &genPlan{name: "result", requested: "auto", repairs: genDefaultRepairs, timeoutMs: genDefaultTimeoutMs}
	schema := bytes.TrimSpace(a.Schema)
	switch {
	case len(schema) == 0 || schema[0] != '{':
		return nil, kernel.InvalidArgument("%s: schema must be a JSON object", tool)
	case len(schema) > genMaxSchemaBytes:
		return nil, kernel.InvalidArgument("%s: schema is %d bytes, over the 64 KiB limit", tool, len(schema))
	}
	var tree any
	if err := json.Unmarshal(schema, &tree); err != nil {
		return nil, kernel.InvalidArgument("%s: schema is not JSON: %v", tool, err)
	}
	if d := genDepth(tree); d > genMaxSchemaDepth {
		return nil, kernel.InvalidArgument("%s: schema nests %d levels, over the limit of %d", tool, d, genMaxSchemaDepth)
	}
	sch, err := kernel.CompileSchema(schema)
	if err != nil {
		return nil, kernel.InvalidArgument("%s: schema does not compile as JSON Schema 2020-12: %s", tool, genClip(err.Error(), 1<<10))
	}
	p.schema = sch
	p.sent, p.wrapKey = genEnvelope(schema, tree.(map[string]any))
	if a.Prompt == nil || strings.TrimSpace(*a.Prompt) == "" {
		return nil, kernel.InvalidArgument("%s: prompt is required and must not be blank", tool)
	}
	p.prompt = *a.Prompt
	if err := genCap(tool, "prompt", p.prompt, genMaxPromptBytes); err != nil {
		return nil, err
	}
	if a.SchemaName != nil {
		p.name = *a.SchemaName
		if !genSchemaName().MatchString(p.name) || len(p.name) > genMaxSchemaNameBytes {
			return nil, kernel.InvalidArgument("%s: schema_name %q must match ^[A-Za-z0-9_-]+$ and be at most %d bytes", tool, genClip(p.name, 80), genMaxSchemaNameBytes)
		}
	}
	if a.SchemaDescription != nil {
		p.description = *a.SchemaDescription
		if err := genCap(tool, "schema_description", p.description, genMaxDescriptionBytes); err != nil {
			return nil, err
		}
	}
	if a.System != nil {
		p.system = *a.System
		if err := genCap(tool, "system", p.system, genMaxSystemBytes); err != nil {
			return nil, err
		}
	}
	if a.Mode != nil {
		p.requested = *a.Mode
	}
	switch p.requested {
	case "auto", "strict", "json", "tool":
		// The spec: auto, strict and json resolve to tool.
		p.mode = "tool"
	case "prompt":
		p.mode = "prompt"
	default:
		return nil, kernel.InvalidArgument("%s: mode %q is not one of auto, strict, json, tool, prompt", tool, genClip(p.requested, 80))
	}
	if a.MaxRepairAttempts != nil {
		p.repairs = *a.MaxRepairAttempts
		if p.repairs < 0 || p.repairs > genMaxRepairs {
			return nil, kernel.InvalidArgument("%s: max_repair_attempts must be 0 to %d, got %d", tool, genMaxRepairs, p.repairs)
		}
	}
	if a.IncludeRawText != nil {
		p.rawText = *a.IncludeRawText
	}
	if a.TimeoutMs != nil {
		p.timeoutMs = *a.TimeoutMs
		if p.timeoutMs < genMinTimeoutMs || p.timeoutMs > genMaxTimeoutMs {
			return nil, kernel.InvalidArgument("%s: timeout_ms must be %d to %d, got %d", tool, genMinTimeoutMs, genMaxTimeoutMs, p.timeoutMs)
		}
	}
	return p, nil
}

func genCap(tool, key, s string, limit int) error {
	if len(s) > limit {
		return kernel.InvalidArgument("%s: %s is %d bytes, over the %d KiB limit", tool, key, len(s), limit>>10)
	}
	return nil
}

// genDepth counts nesting as upstream does: a scalar is 1, a container 1
// more than its deepest member.
func genDepth(v any) int {
	d := 0
	switch v := v.(type) {
	case map[string]any:
		for _, c := range v {
			d = max(d, genDepth(c))
		}
	case []any:
		for _, c := range v {
			d = max(d, genDepth(c))
		}
	default:
		return 1
	}
	return d + 1
}

// genEnvelope returns the schema the model sees. Tool parameters must
// describe an object, so an array root is wrapped as {elements: …} and any
// other non-object root as {value: …}, with the root's $defs and
// definitions hoisted so local $refs still resolve. Both the wrapped and
// the bare answer are accepted.
func genEnvelope(schema json.RawMessage, tree map[string]any) (json.RawMessage, string) {
	key := ""
	switch t := tree["type"].(type) {
	case string:
		switch t {
		case "object":
		case "array":
			key = "elements"
		default:
			key = "value"
		}
	case []any:
		if len(t) != 1 || t[0] != "object" {
			key = "value"
		}
	case nil:
		_, items := tree["items"]
		_, prefix := tree["prefixItems"]
		_, enum := tree["enum"]
		_, cnst := tree["const"]
		switch {
		case items || prefix:
			key = "elements"
		case enum || cnst:
			key = "value"
		}
	}
	if key == "" {
		return schema, ""
	}
	w := map[string]any{"type": "object", "properties": map[string]json.RawMessage{key: schema},
		"required": []string{key}, "additionalProperties": false}
	for _, d := range []string{"$defs", "definitions"} {
		if v, ok := tree[d]; ok {
			w[d] = v
		}
	}
	b, _ := json.Marshal(w)
	return b, key
}

func (p *genPlan) toolName() string { return "emit_" + p.name }

// request is the first request of a generation.
func (p *genPlan) request() llm.Request {
	note := ""
	if p.wrapKey != "" {
		note = fmt.Sprintf(" Put the value under the key %q.", p.wrapKey)
	}
	if p.mode == "tool" {
		desc := p.description
		if desc == "" {
			desc = "Emit a structured " + p.name + " object"
		}
		sys := fmt.Sprintf("You MUST answer by calling the tool %s exactly once, with arguments that are valid against its "+
			"parameters schema. Do not write any text outside the tool call.%s", p.toolName(), note)
		return llm.Request{System: joinSystem(p.system, sys),
			Messages:   []llm.Message{{Role: llm.User, Text: p.prompt}},
			Tools:      []llm.Tool{{Name: p.toolName(), Description: desc, Parameters: p.sent}},
			ToolChoice: llm.ToolChoice{Type: llm.ToolChoiceTool, Name: p.toolName()}}
	}
	var pretty bytes.Buffer
	_ = json.Indent(&pretty, p.sent, "", "  ")
	user := p.prompt + "\n\n" + strings.TrimSpace(note+" You MUST respond with ONLY a valid JSON object (no markdown, no "+
		"explanation) that conforms to this JSON Schema:") + "\n```json\n" + pretty.String() + "\n```"
	if p.description != "" {
		user += "\n\nThe object: " + p.description
	}
	sys := "You are a structured data extraction assistant. Respond with valid JSON only, no markdown fences, no explanation text."
	return llm.Request{System: joinSystem(p.system, sys), Messages: []llm.Message{{Role: llm.User, Text: user}}}
}

func joinSystem(caller, ours string) string {
	if strings.TrimSpace(caller) == "" {
		return ours
	}
	return caller + "\n\n" + ours
}

// genOutcome is what one round's answer came to.
type genOutcome struct {
	object json.RawMessage // accepted: the object, compact, in the model's key order
	raw    string          // the answer text the object (or the failure) came from
	errs   []string        // schema errors of the first parseable candidate
	parse  string          // why nothing parsed ("" when something did)
}

// judge extracts the object from a turn: candidates in order are the
// first tool call's arguments (tool mode), the text, then the reasoning;
// for each, the whole text, a fenced block, then every balanced {…} and
// […]. The first schema-valid value wins; otherwise the first parseable
// one and its errors drive the repair; otherwise the parse failure does.
func (p *genPlan) judge(t *llm.Turn) genOutcome {
	var sources []string
	if p.mode == "tool" && len(t.Message.ToolCalls) > 0 {
		sources = append(sources, t.Message.ToolCalls[0].Arguments)
	}
	return p.judgeSources(append(sources, t.Message.Text, t.Reasoning)...)
}

func (p *genPlan) judgeSources(sources ...string) genOutcome {
	var first *genOutcome
	var failed genOutcome // the first non-empty source, and why it did not parse
	for _, src := range sources {
		if strings.TrimSpace(src) == "" {
			continue
		}
		firstSource := failed.raw == ""
		if firstSource {
			failed = genOutcome{raw: src, parse: "no JSON object found in tool call, text content, or reasoning channel"}
		}
		for i, c := range genCandidates(src) {
			var v any
			dec := json.NewDecoder(strings.NewReader(c))
			dec.UseNumber()
			if err := dec.Decode(&v); err != nil || dec.More() {
				if err != nil && firstSource && i == 0 { // the whole text
					failed.parse = "not valid JSON: " + err.Error()
				}
				continue
			}
			errs := p.schema.Validate(v)
			if errs == nil {
				return genOutcome{object: genCompact(c), raw: src}
			}
			// A wrapped answer ({value: …} or {elements: …}) is judged by
			// what it wraps.
			if m, ok := v.(map[string]any); ok && p.wrapKey != "" && len(m) == 1 {
				if inner, ok := m[p.wrapKey]; ok {
					if errs = p.schema.Validate(inner); errs == nil {
						var w map[string]json.RawMessage
						_ = json.Unmarshal([]byte(c), &w)
						return genOutcome{object: genCompact(string(w[p.wrapKey])), raw: src}
					}
					for j, e := range errs {
						errs[j] = "/" + p.wrapKey + strings.TrimPrefix(e, "$")
					}
				}
			}
			if first == nil {
				first = &genOutcome{raw: src, errs: errs}
			}
		}
	}
	if first != nil {
		return *first
	}
	if failed.raw == "" {
		failed.parse = "the response contained no JSON"
	}
	return failed
}

func genCompact(s string) json.RawMessage {
	var b bytes.Buffer
	if json.Compact(&b, []byte(s)) != nil {
		return json.RawMessage(s)
	}
	return b.Bytes()
}

// genCandidates lists the texts of s that may hold the object.
func genCandidates(s string) []string {
	s = strings.TrimSpace(s)
	out := []string{s}
	if i := strings.Index(s, "```"); i >= 0 {
		rest := s[i+3:]
		if nl := strings.IndexByte(rest, '\n'); nl >= 0 {
			rest = rest[nl+1:]
		}
		if j := strings.Index(rest, "```"); j >= 0 {
			out = append(out, strings.TrimSpace(rest[:j]))
		}
	}
	for _, open := range []byte{'{', '['} {
		for i := 0; i < len(s); {
			k := strings.IndexByte(s[i:], open)
			if k < 0 {
				break
			}
			start := i + k
			end := genBalanced(s, start)
			if end < 0 {
				break
			}
			if start > 0 || end < len(s) {
				out = append(out, s[start:end])
			}
			i = end
		}
	}
	return out
}

// genBalanced returns the end of the bracketed span that starts at s[i],
// skipping brackets inside strings, or -1.
func genBalanced(s string, i int) int {
	depth, inStr, esc := 0, false, false
	for j := i; j < len(s); j++ {
		c := s[j]
		switch {
		case inStr && esc:
			esc = false
		case inStr && c == '\\':
			esc = true
		case inStr && c == '"':
			inStr = false
		case inStr:
		case c == '"':
			inStr = true
		case c == '{' || c == '[':
			depth++
		case c == '}' || c == ']':
			if depth--; depth == 0 {
				return j + 1
			}
		}
	}
	return -1
}

// repair appends the failed answer and the request to fix it to msgs: in
// tool mode as the error result of the model's tool call (every call of
// the turn is answered, as the APIs require), otherwise as a user message.
func (p *genPlan) repair(msgs []llm.Message, t *llm.Turn, o genOutcome) []llm.Message {
	var sb strings.Builder
	switch {
	case o.errs != nil:
		fmt.Fprintf(&sb, "Your previous output failed schema validation:\n%s\n\nValidation errors:\n", genEcho(o.raw))
		for _, e := range o.errs {
			fmt.Fprintf(&sb, "- %s\n", e)
		}
	case o.raw != "":
		fmt.Fprintf(&sb, "Your previous output could not be parsed as a JSON object (%s):\n%s\n", o.parse, genEcho(o.raw))
	default:
		sb.WriteString("Your previous response contained no JSON. The object must be in your answer itself, not in a reasoning aside.\n")
	}
	if p.mode == "tool" {
		fmt.Fprintf(&sb, "\nCall %s again with a corrected JSON object as its arguments, and nothing else.", p.toolName())
	} else {
		sb.WriteString("\nReturn ONLY a corrected, single valid JSON object matching the schema: no explanation, no markdown.")
	}
	asst := t.Message
	asst.Role = llm.Assistant
	if len(asst.ToolCalls) == 0 {
		if strings.TrimSpace(asst.Text) == "" {
			asst.Text = "(no output)"
		}
		return append(msgs, asst, llm.Message{Role: llm.User, Text: sb.String()})
	}
	res := make([]llm.ToolResult, len(asst.ToolCalls))
	for i, c := range asst.ToolCalls {
		res[i] = llm.ToolResult{CallID: c.ID, Content: "Ignored: call " + p.toolName() + " exactly once.", IsError: true}
	}
	res[0].Content = sb.String()
	return append(msgs, asst, llm.Message{Role: llm.User, ToolResults: res})
}

// genEcho quotes at most genRawEchoBytes of a failed answer.
func genEcho(s string) string {
	if len(s) <= genRawEchoBytes {
		return s
	}
	return fmt.Sprintf("%s...[truncated, %d bytes total]", genPrefix(s, genRawEchoBytes), len(s))
}

// genClip cuts s to about n bytes for an error message.
func genClip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return genPrefix(s, n) + "…"
}

// genPrefix is s cut to at most n bytes on a rune boundary.
func genPrefix(s string, n int) string {
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// genPartials streams the first round's partial objects through emit: the
// tool call's argument fragments (tool mode) or the text from its first
// { or [ (prompt mode), parsed incrementally, at most one snapshot per
// genPartialInterval, none that repeats the last.
type genPartials struct {
	tool    bool // tool mode: the first call's arguments; else the text
	p       llm.PartialJSON
	buf     []byte       // what p was fed
	judged  bool         // the complete value was checked for the grace
	emit    func(string) // nil: no partial deltas (repair rounds)
	wrapKey string
	started bool
	last    time.Time
	sent    []byte
}

func (s *genPartials) feed(frag string) {
	if !s.started {
		i := strings.IndexAny(frag, "{[")
		if i < 0 {
			return
		}
		frag, s.started = frag[i:], true
	}
	s.buf = append(s.buf, frag...)
	if s.p.Feed(frag) != nil || s.emit == nil {
		return
	}
	if !s.last.IsZero() && time.Since(s.last) < genPartialInterval {
		return
	}
	v, ok := s.p.Value()
	if !ok {
		return
	}
	if m, isMap := v.(map[string]any); isMap && s.wrapKey != "" {
		if v, ok = m[s.wrapKey]; !ok {
			return
		}
	}
	enc, err := json.Marshal(v)
	if err != nil || bytes.Equal(enc, s.sent) {
		return
	}
	s.sent = enc
	s.emit(genDelta(enc, false, nil))
	// The interval runs from when the delta went out (its event's stamp
	// was taken inside emit), so stamps too are at least an interval apart.
	s.last = time.Now()
}

// genDelta is a tool_output_delta's text: {object_partial, final} or,
// over genMaxPartialBytes, {object_partial_omitted, partial_bytes, final};
// extra fields (mode_used, repair_rounds) go with the final one.
func genDelta(obj json.RawMessage, final bool, extra map[string]any) string {
	d := map[string]any{"final": final}
	if len(obj) > genMaxPartialBytes {
		d["object_partial_omitted"], d["partial_bytes"] = true, len(obj)
	} else {
		d["object_partial"] = obj
	}
	for k, v := range extra {
		d[k] = v
	}
	b, _ := json.Marshal(d)
	return string(b)
}

// genFailure is how a generation stopped short.
type genFailure struct {
	msg  string
	kind *kernel.ErrorKind
}

// genDoneGrace: once the streamed object is complete and schema-valid,
// how long the stream may take to finish before it is cut and the object
// accepted (some compatible servers never end their stream).
const genDoneGrace = 250 * time.Millisecond

// round streams one request and assembles the turn, feeding s. When the
// stream does not finish within genDoneGrace of completing a valid
// object, it is cut and that object is the round's outcome (graced).
func (g *GenerateObject) round(ctx context.Context, p *genPlan, req llm.Request, s *genPartials) (t llm.Turn, graced *genOutcome, err error) {
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var timer *time.Timer
	var cut atomic.Bool
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for c, err := range g.client.Stream(rctx, req) {
		if err != nil {
			if cut.Load() {
				break
			}
			return t, nil, err
		}
		if err := t.Add(c); err != nil {
			return t, nil, err
		}
		switch {
		case s.tool && c.Type == llm.ToolCallDelta && c.Index == 0:
			s.feed(c.Fragment)
		case !s.tool && c.Type == llm.TextDelta:
			s.feed(c.Text)
		default:
			continue
		}
		if !s.judged && s.p.Complete() {
			s.judged = true // once: what follows a complete value cannot make it valid
			if o := p.judgeSources(string(s.buf)); o.object != nil {
				timer = time.AfterFunc(genDoneGrace, func() { cut.Store(true); cancel() })
			}
		}
	}
	if cut.Load() && ctx.Err() == nil {
		o := p.judgeSources(string(s.buf))
		return t, &o, nil
	}
	if !t.Finished {
		return t, nil, kernel.Errorf(kernel.ErrTransport, "the model's stream ended without finishing")
	}
	return t, nil, nil
}

func (g *GenerateObject) Execute(ctx context.Context, call *kernel.Call) (*kernel.Result, error) {
	p, err := g.plan(call.Args)
	if err != nil {
		return nil, err
	}
	queued := time.Now()
	admission := func() map[string]any {
		return map[string]any{"mode": "bounded", "max_concurrency": cap(g.gate),
			"queue_wait_ms": time.Since(queued).Milliseconds(), "active_timeout_ms": p.timeoutMs}
	}
	select {
	case g.gate <- struct{}{}:
	case <-ctx.Done():
		return p.failed(genFailure{"generate_object cancelled by caller", &kernel.ErrorKind{Type: kernel.ErrCancelled, Op: "generate_object"}}, admission()), nil
	}
	adm := admission()
	defer func() { <-g.gate }()

	tctx, cancel := context.WithTimeout(ctx, time.Duration(p.timeoutMs)*time.Millisecond)
	defer cancel()
	var usage llm.Usage
	req := p.request()
	msgs := req.Messages
	for round := 0; ; round++ {
		req.Messages = msgs
		s := &genPartials{tool: p.mode == "tool", wrapKey: p.wrapKey}
		if round == 0 { // only the first round streams partials, as upstream
			s.emit = call.Emit
		}
		t, graced, err := g.round(tctx, p, req, s)
		usage = usage.Add(t.Usage)
		if err != nil {
			return p.failed(p.stopped(ctx, tctx, err), adm), nil
		}
		var o genOutcome
		if graced != nil {
			o = *graced
		} else {
			o = p.judge(&t)
		}
		if o.object != nil {
			call.Emit(genDelta(o.object, true, map[string]any{"mode_used": p.mode, "repair_rounds": round}))
			return p.succeeded(o, round, usage, adm), nil
		}
		if round == p.repairs {
			if o.errs != nil {
				return p.failed(genFailure{msg: fmt.Sprintf("generate_object failed: Structured output failed schema validation after %d repair attempts. Errors: %s",
					round, strings.Join(o.errs, "; "))}, adm), nil
			}
			return p.failed(genFailure{msg: fmt.Sprintf("generate_object failed: Structured output parsing failed after %d repair attempts: %s", round, o.parse)}, adm), nil
		}
		msgs = p.repair(msgs, &t, o)
	}
}

// stopped names why a round failed: the caller cancelled, timeout_ms ran
// out, or the provider failed (429 → rate_limited, other statuses and
// network failures → transport, by the error's kind, never its text).
func (p *genPlan) stopped(ctx, tctx context.Context, err error) genFailure {
	const op = "generate_object"
	switch {
	case ctx.Err() != nil:
		return genFailure{"generate_object cancelled by caller", &kernel.ErrorKind{Type: kernel.ErrCancelled, Op: op}}
	case tctx.Err() != nil:
		return genFailure{fmt.Sprintf("generate_object timed out after %dms", p.timeoutMs), &kernel.ErrorKind{Type: kernel.ErrTimeout, Op: op, DurationMs: p.timeoutMs}}
	}
	msg := "generate_object failed: " + err.Error()
	switch {
	case errkind.Is(err, errkind.RateLimited):
		k := &kernel.ErrorKind{Type: kernel.ErrRateLimited}
		var le *llm.Error
		if errors.As(err, &le) {
			k.RetryAfterMs = le.RetryAfter.Milliseconds()
		}
		return genFailure{msg, k}
	case errkind.Is(err, errkind.Transport), errkind.Is(err, errkind.Timeout):
		return genFailure{msg, &kernel.ErrorKind{Type: kernel.ErrTransport, Op: op}}
	case errkind.Is(err, errkind.Cancelled):
		return genFailure{"generate_object cancelled by caller", &kernel.ErrorKind{Type: kernel.ErrCancelled, Op: op}}
	}
	return genFailure{msg: msg}
}

func (p *genPlan) succeeded(o genOutcome, rounds int, u llm.Usage, adm map[string]any) *kernel.Result {
	usage := struct {
		Prompt     int `json:"prompt_tokens"`
		Completion int `json:"completion_tokens"`
		Total      int `json:"total_tokens"`
		CacheRead  int `json:"cache_read_tokens"`
		CacheWrite int `json:"cache_write_tokens"`
	}{u.PromptTokens, u.CompletionTokens, u.TotalTokens, u.CacheReadTokens, u.CacheWriteTokens}
	out := struct {
		Object       json.RawMessage `json:"object"`
		RepairRounds int             `json:"repair_rounds"`
		ModeUsed     string          `json:"mode_used"`
		Usage        any             `json:"usage"`
		RawText      *string         `json:"raw_text,omitempty"`
	}{o.object, rounds, p.mode, usage, nil}
	if p.rawText {
		out.RawText = &o.raw
	}
	b, _ := json.Marshal(out)
	return kernel.OK(string(b), map[string]any{"schema_name": p.name, "requested_mode": p.requested, "mode_used": p.mode,
		"repair_rounds": rounds, "usage": map[string]any{"prompt_tokens": u.PromptTokens, "completion_tokens": u.CompletionTokens,
			"total_tokens": u.TotalTokens, "cache_read_tokens": u.CacheReadTokens, "cache_write_tokens": u.CacheWriteTokens}, "raw_text_included": p.rawText, "generation_admission": adm})
}

func (p *genPlan) failed(f genFailure, adm map[string]any) *kernel.Result {
	return &kernel.Result{Name: "generate_object", Output: f.msg, ExitCode: 1, ErrorKind: f.kind,
		Metadata: map[string]any{"schema_name": p.name, "requested_mode": p.requested, "mode_requested": p.mode,
			"timeout_ms": p.timeoutMs, "generation_admission": adm}}
}
