package ptc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/a3s-lab/code-wasm/internal/jsoncheck"
	"github.com/a3s-lab/code-wasm/internal/lazyre"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/a3s-lab/code-wasm/kernel"
)

// ToolCall is one entry of metadata.program.tool_calls.
type ToolCall struct {
	ToolName    string         `json:"tool_name"`
	Success     bool           `json:"success"`
	ExitCode    int            `json:"exit_code"`
	OutputBytes int            `json:"output_bytes"`
	Truncated   bool           `json:"truncated,omitempty"`
	Metadata    map[string]any `json:"metadata,omitempty"`

	// metaJSON: the call's metadata as JSON (up to maxRecordedMetadata
	// bytes), decoded into Metadata once, by records.
	metaJSON json.RawMessage
}

// maxRecordedMetadata caps each nested call's metadata as kept in
// tool_calls (batch keeps 4 KiB the same way).
const maxRecordedMetadata = 4 << 10

// helper describes a ctx method beyond ctx.tool: the tool it calls, how
// its JS arguments become tool arguments, and what it resolves to.
type helper struct {
	tool    string
	args    func(a []json.RawMessage) (map[string]any, error)
	returns string // "result", "output", "text", "paths"
}

// helpers is the ctx table of REFERENCE.md §2.13. A helper is defined only
// when its tool is allowed.
var helpers = map[string]helper{
	"read":      {"read", firstArg("file_path"), "result"},
	"readFile":  {"read", firstArg("file_path"), "text"},
	"grep":      {"grep", firstArg("pattern"), "output"},
	"glob":      {"glob", firstArg("pattern"), "paths"},
	"ls":        {"ls", firstArg("path"), "output"},
	"bash":      {"bash", firstArg("command"), "output"},
	"verify":    {"bash", firstArg("command"), "result"},
	"git":       {"git", firstArg("command"), "result"},
	"webSearch": {"web_search", firstArg("query"), "result"},
	"search":    {"search", firstArg("query"), "output"},
	"bm25":      {"search", withMode(firstArg("query"), "bm25"), "output"},
}

// firstArg maps (x, opts) to {key: x, ...opts}; an object first argument
// is taken as the whole argument object.
func firstArg(key string) func([]json.RawMessage) (map[string]any, error) {
	return func(a []json.RawMessage) (map[string]any, error) {
		out := map[string]any{}
		if len(a) > 0 && len(a[0]) > 0 && a[0][0] == '{' {
			if err := json.Unmarshal(a[0], &out); err != nil {
				return nil, err
			}
			return out, nil
		}
		if len(a) > 1 && string(a[1]) != "null" {
			if len(a[1]) == 0 || a[1][0] != '{' {
				return nil, fmt.Errorf("options must be an object")
			}
			if err := json.Unmarshal(a[1], &out); err != nil {
				return nil, err
			}
		}
		if len(a) > 0 && string(a[0]) != "null" {
			var v any
			if err := json.Unmarshal(a[0], &v); err != nil {
				return nil, err
			}
			out[key] = v
		}
		return out, nil
	}
}

func withMode(f func([]json.RawMessage) (map[string]any, error), mode string) func([]json.RawMessage) (map[string]any, error) {
	return func(a []json.RawMessage) (map[string]any, error) {
		m, err := f(a)
		if err == nil {
			m["mode"] = mode
		}
		return m, err
	}
}

// scriptLabel names a program in the refusals of its restriction: "tool
// 'x' is not allowed for this PTC script", "PTC script exceeded
// maxToolCalls=N" (REFERENCE.md §2.13).
const scriptLabel = "PTC script"

// bridge is the program's side of every ctx call. The allow-list and
// maxToolCalls are a kernel.Restriction on every invocation the script
// causes, at any depth (a batch's children count and are checked too);
// the bridge asks it before a ctx call crosses into the kernel, so a
// refused call never runs and is not recorded.
type bridge struct {
	inv kernel.Invoker // restricted by r
	r   *kernel.Restriction
	p   *plan

	inflight sync.WaitGroup
	// running counts the admitted calls still running (inflight's count,
	// which a WaitGroup does not tell): settle returns at once at zero.
	running atomic.Int64

	mu     sync.Mutex
	calls  []*ToolCall
	closed bool
}

func newBridge(call *kernel.Call, p *plan) *bridge {
	r := kernel.NewRestriction(scriptLabel, append([]string{}, p.allowed...), p.maxToolCalls)
	return &bridge{inv: call.Restrict(r), r: r, p: p}
}

func (b *bridge) methods() []string {
	ms := []string{"tool"}
	for m, h := range helpers {
		if slices.Contains(b.p.allowed, h.tool) {
			ms = append(ms, m)
		}
	}
	slices.Sort(ms)
	return ms
}

func (b *bridge) close() {
	b.mu.Lock()
	b.closed = true
	b.mu.Unlock()
}

// settle waits up to d for admitted calls still running (their context is
// already cancelled), so none outlives the program's result.
func (b *bridge) settle(d time.Duration) {
	// After close nothing is admitted, so none running means none will
	// be: no goroutine and no timer for a program whose calls all ended.
	if b.running.Load() == 0 {
		return
	}
	ch := make(chan struct{})
	go func() { b.inflight.Wait(); close(ch) }()
	select {
	case <-ch:
	case <-time.After(d):
	}
}

// violation is the first refusal of the script's restriction, by a ctx
// call or by any invocation it caused.
func (b *bridge) violation() error { return b.r.Violation() }

func (b *bridge) records() []ToolCall {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]ToolCall, 0, len(b.calls))
	for _, c := range b.calls {
		if c.metaJSON != nil {
			c.Metadata = decodeMetadata(c.metaJSON)
			c.metaJSON = nil
		}
		out = append(out, *c)
	}
	return out
}

// admit asks the restriction (without counting: the kernel counts the
// invocation) and reserves a record.
func (b *bridge) admit(name string) (*ToolCall, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, errors.New("the program has finished; ctx calls are closed")
	}
	if err := b.r.Check(name); err != nil {
		return nil, err
	}
	b.inflight.Add(1)
	b.running.Add(1)
	rec := &ToolCall{ToolName: name}
	b.calls = append(b.calls, rec)
	return rec, nil
}

// Call implements Bridge.
func (b *bridge) Call(ctx context.Context, method string, raw json.RawMessage) (json.RawMessage, error) {
	// The same check every JSON document from JS gets (hostapi): a lone
	// surrogate escape would decode to U+FFFD and alias another path.
	if err := jsoncheck.Check(raw); err != nil {
		return nil, fmt.Errorf("ctx.%s: %v", method, err)
	}
	a, err := splitArray(raw)
	if errors.Is(err, errNotArray) {
		return nil, fmt.Errorf("ctx.%s: %v", method, err)
	} else if err != nil {
		return nil, fmt.Errorf("ctx.%s: arguments are not JSON: %v", method, err)
	}
	var (
		name string
		args map[string]any
		h    helper
		// argJSON: the arguments the tool is invoked with; ctx.tool's
		// own object as the script wrote it (valid JSON, checked above),
		// unless the bridge reads them (task).
		argJSON json.RawMessage
	)
	if method == "tool" {
		if len(a) == 0 || !decodeString(a[0], &name) || name == "" {
			return nil, errors.New("ctx.tool(name, args): name must be a non-empty string")
		}
		argJSON = json.RawMessage(`{}`)
		if len(a) > 1 && string(a[1]) != "null" {
			if len(a[1]) == 0 || a[1][0] != '{' {
				return nil, fmt.Errorf("ctx.tool(%q, args): args must be an object", name)
			}
			argJSON = a[1]
		}
		if name == "task" {
			if json.Unmarshal(argJSON, &args) != nil {
				return nil, fmt.Errorf("ctx.tool(%q, args): args must be an object", name)
			}
			argJSON = nil
		}
		h = helper{tool: name, returns: "result"}
	} else {
		var ok bool
		if h, ok = helpers[method]; !ok || !slices.Contains(b.p.allowed, h.tool) {
			return nil, fmt.Errorf("ctx.%s is not available", method)
		}
		name = h.tool
		var err error
		if args, err = h.args(a); err != nil {
			return nil, fmt.Errorf("ctx.%s: %v", method, err)
		}
	}
	if name == "task" {
		if ts, ok := args["tasks"].([]any); ok && len(ts) > 1 {
			return nil, fmt.Errorf("ctx.tool('task'): a program may delegate one task per call, got %d (REFERENCE.md §2.13)", len(ts))
		}
	}
	// ctx.glob returns every match: unless the script pages itself
	// (cursor or limit given), it asks for stable 1000-path pages and
	// globAll fetches the rest under this one admitted call.
	autoPage := false
	if h.returns == "paths" {
		_, cur := args["cursor"]
		_, lim := args["limit"]
		if autoPage = !cur && !lim; autoPage {
			args["limit"] = 1000
			if _, ok := args["sort"]; !ok {
				args["sort"] = "path"
			}
		}
	}
	rec, err := b.admit(name)
	if err != nil {
		return nil, err
	}
	defer func() { b.running.Add(-1); b.inflight.Done() }()
	if argJSON == nil {
		if argJSON, err = json.Marshal(args); err != nil {
			return nil, fmt.Errorf("ctx.%s: %v", method, err)
		}
	}
	res := b.inv.Invoke(ctx, name, argJSON)
	if v := b.r.Violation(); v != nil {
		// This call, or one it caused (a batch child), was refused: the
		// script fails with it, caught or not.
		b.mu.Lock()
		rec.Success, rec.ExitCode, rec.OutputBytes = res.ExitCode == 0, res.ExitCode, len(res.Output)
		b.mu.Unlock()
		return nil, v
	}

	out, truncated := truncateUTF8(res.Output, b.p.maxOutputBytes)
	metaJSON := metadataJSON(res.Metadata)
	b.mu.Lock()
	rec.Success, rec.ExitCode, rec.OutputBytes, rec.Truncated = res.ExitCode == 0, res.ExitCode, len(res.Output), truncated
	if n := len(metaJSON); n > maxRecordedMetadata {
		rec.Metadata = map[string]any{"omitted": true, "bytes": n} // (not kept for the run)
	} else {
		rec.metaJSON = metaJSON
	}
	b.mu.Unlock()

	if h.returns == "result" {
		r := ctxResult{Name: name, Output: out, ExitCode: res.ExitCode, Metadata: metaJSON, Truncated: truncated, ErrorKind: res.ErrorKind}
		if metaJSON == nil {
			r.Metadata = json.RawMessage(`{}`)
		}
		if name == "read" && res.ExitCode == 0 {
			text := plainText(out, decodeMetadata(metaJSON))
			r.Text = &text
		}
		return json.Marshal(r)
	}
	meta := decodeMetadata(metaJSON)
	if res.ExitCode != 0 {
		return nil, fmt.Errorf("%s failed: %s", name, res.Output)
	}
	switch h.returns {
	case "text":
		return json.Marshal(plainText(out, meta))
	case "paths":
		if autoPage {
			paths, err := b.globAll(ctx, args, meta, rec)
			if err != nil {
				return nil, fmt.Errorf("ctx.%s: %v", method, err)
			}
			return json.Marshal(paths)
		}
		return json.Marshal(globPaths(out, meta))
	default:
		return json.Marshal(out)
	}
}

// MaxGlobPaths bounds what ctx.glob returns; more matches fail with a
// message saying how to narrow or page.
const MaxGlobPaths = 10000

// globAll collects every page of a glob whose first page's metadata is
// meta, invoking the tool again with each next_cursor. The extra pages are
// part of the one admitted call rec (their bytes are added to it).
func (b *bridge) globAll(ctx context.Context, args, meta map[string]any, rec *ToolCall) ([]string, error) {
	page := func(m map[string]any) (total int, next string) {
		pg, _ := m["page"].(map[string]any)
		t, _ := pg["total_items"].(float64)
		next, _ = pg["next_cursor"].(string)
		return int(t), next
	}
	total, next := page(meta)
	if total > MaxGlobPaths {
		return nil, fmt.Errorf("%d files match %v, more than the %d ctx.glob returns; narrow the pattern, or page with ctx.tool('glob', {pattern, cursor})", total, args["pattern"], MaxGlobPaths)
	}
	all := globPaths("", meta)
	for next != "" {
		args["cursor"] = next
		argJSON, err := json.Marshal(args)
		if err != nil {
			return nil, err
		}
		res := b.inv.Invoke(ctx, "glob", argJSON)
		b.mu.Lock()
		rec.OutputBytes += len(res.Output)
		b.mu.Unlock()
		if res.ExitCode != 0 {
			return nil, fmt.Errorf("glob failed at cursor %s: %s", next, res.Output)
		}
		m := decodeMetadata(metadataJSON(res.Metadata))
		ps := globPaths("", m)
		if len(all)+len(ps) > MaxGlobPaths {
			return nil, fmt.Errorf("more than %d files match %v; narrow the pattern, or page with ctx.tool('glob', {pattern, cursor})", MaxGlobPaths, args["pattern"])
		}
		all = append(all, ps...)
		prev := next
		if _, next = page(m); next == prev || len(ps) == 0 {
			break
		}
	}
	return all, nil
}

// ctxResult is what ctx.tool and ctx.tools.x resolve to: the fields in
// the order of their names, as json.Marshal writes a map's (the map it
// replaced cost a third of a ctx read's Go time).
type ctxResult struct {
	ErrorKind *kernel.ErrorKind `json:"errorKind,omitempty"`
	ExitCode  int               `json:"exitCode"`
	Metadata  json.RawMessage   `json:"metadata"`
	Name      string            `json:"name"`
	Output    string            `json:"output"`
	Text      *string           `json:"text,omitempty"`
	Truncated bool              `json:"truncated,omitempty"`
}

// metadataJSON is a result's metadata as a JS caller of the tool sees it
// (nil for none): marshalled once per call, and decoded only where the
// bridge reads it (decodeMetadata). Metadata of other values than JSON's
// own (a struct, json.RawMessage, json.Number: a Go tool's) goes through a
// decode and a second marshal, so the script sees it as plain JSON (keys
// in order, no duplicates), as it did when every call did that.
func metadataJSON(m map[string]any) json.RawMessage {
	if m == nil {
		return nil
	}
	b, err := json.Marshal(m)
	if err != nil {
		b, _ = json.Marshal(map[string]any{"unserialisable": err.Error()})
		return b
	}
	if !plainJSON(m, 0) {
		var v any
		if json.Unmarshal(b, &v) == nil {
			b, _ = json.Marshal(v)
		}
	}
	return b
}

// plainJSON reports whether v marshals as its own decoded form would:
// maps of strings to such values, slices of them, strings, booleans,
// null, numbers (depth-bounded: deeper is answered false).
func plainJSON(v any, depth int) bool {
	if depth > 32 {
		return false
	}
	switch x := v.(type) {
	case nil, string, bool, float64, float32, int, int64, int32, uint, uint64, uint32, []string, []int, []float64:
		return true
	case map[string]any:
		for _, e := range x {
			if !plainJSON(e, depth+1) {
				return false
			}
		}
		return true
	case []any:
		for _, e := range x {
			if !plainJSON(e, depth+1) {
				return false
			}
		}
		return true
	case map[string]string, map[string]int, map[string]bool:
		return true
	}
	return false
}

func decodeMetadata(b json.RawMessage) map[string]any {
	if b == nil {
		return nil
	}
	var out map[string]any
	_ = json.Unmarshal(b, &out)
	return out
}

// truncateUTF8 cuts s to at most n bytes without splitting a rune.
func truncateUTF8(s string, n int) (string, bool) {
	if len(s) <= n {
		return s, false
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n], true
}

var numberedLine = lazyre.New(`^ *\d+\t`)

// plainText strips read's "%6d\t" prefixes. range.returned_lines says how
// many lines are content; without it, the leading numbered lines are.
func plainText(out string, meta map[string]any) string {
	lines := strings.SplitAfter(out, "\n")
	n := -1
	if r, ok := meta["range"].(map[string]any); ok {
		if v, ok := r["returned_lines"].(float64); ok {
			n = int(v)
		}
	}
	var b strings.Builder
	for i, l := range lines {
		if n >= 0 && i >= n {
			break
		}
		loc := numberedLine().FindStringIndex(l)
		if loc == nil {
			if n < 0 {
				break
			}
			b.WriteString(l)
			continue
		}
		b.WriteString(l[loc[1]:])
	}
	return b.String()
}

// globPaths turns a glob result into paths: metadata.paths when the tool
// lists them, otherwise the output lines that are not its footer.
func globPaths(out string, meta map[string]any) []string {
	if ps, ok := meta["paths"].([]any); ok {
		res := make([]string, 0, len(ps))
		for _, p := range ps {
			if s, ok := p.(string); ok {
				res = append(res, s)
			}
		}
		return res
	}
	res := []string{}
	for _, l := range strings.Split(out, "\n") {
		l = strings.TrimRight(l, "\r")
		if l == "" || strings.HasPrefix(l, "No files found") || strings.Contains(l, " file(s) shown") ||
			strings.HasPrefix(l, "(") || strings.Contains(l, "cursor=") {
			continue
		}
		res = append(res, l)
	}
	return res
}

// splitArray returns the elements of the JSON array raw, each as its text:
// json.Unmarshal into []json.RawMessage without reflection (a ctx call's
// arguments cross once per call; Unmarshal was a third of the door's Go
// time in a V8 profile of a refused call).
func splitArray(raw []byte) ([]json.RawMessage, error) {
	if !json.Valid(raw) {
		var v any
		return nil, json.Unmarshal(raw, &v) // its syntax error, with its offset
	}
	raw = bytes.TrimLeft(raw, jsonSpace)
	if raw[0] == 'n' {
		return nil, nil // null: no arguments, as Unmarshal has it
	}
	if raw[0] != '[' {
		return nil, errNotArray
	}
	var out []json.RawMessage
	depth, start := 0, -1
	for i := 0; i < len(raw); i++ {
		switch c := raw[i]; c {
		case '"':
			if depth == 1 && start < 0 {
				start = i
			}
			for i++; raw[i] != '"'; i++ {
				if raw[i] == '\\' {
					i++
				}
			}
		case '[', '{':
			if depth++; depth == 1 {
				continue
			}
			if depth == 2 && start < 0 {
				start = i
			}
		case ']', '}', ',':
			if c != ',' {
				depth--
			}
			if depth == 0 || (depth == 1 && c == ',') {
				if start >= 0 {
					out = append(out, json.RawMessage(bytes.TrimRight(raw[start:i], jsonSpace)))
				}
				start = -1
			}
		case ' ', '\t', '\n', '\r':
		default:
			if depth == 1 && start < 0 {
				start = i
			}
		}
	}
	return out, nil
}

var errNotArray = errors.New("the arguments must be a JSON array")

// jsonSpace is JSON's whitespace.
const jsonSpace = " \t\n\r"

// decodeString sets *s to the JSON string raw: directly when it has no
// escape, else through encoding/json. False when raw is not a string.
func decodeString(raw json.RawMessage, s *string) bool {
	if len(raw) < 2 || raw[0] != '"' {
		return false
	}
	body := raw[1 : len(raw)-1]
	for _, c := range body {
		if c == '\\' || c < 0x20 {
			return json.Unmarshal(raw, s) == nil
		}
	}
	if !utf8.Valid(body) {
		return json.Unmarshal(raw, s) == nil
	}
	*s = string(body)
	return true
}
