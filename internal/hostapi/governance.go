package hostapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/a3s-lab/code-wasm/core"
	"github.com/a3s-lab/code-wasm/internal/jsoncheck"
	"github.com/a3s-lab/code-wasm/kernel"
	"github.com/a3s-lab/code-wasm/workspace"
)

// governance turns the JSON governance options and the host dispatcher
// into the kernel's policy: each JS function the options name becomes a
// kernel callback that asks the host (PROTOCOL.md §2). Everything a JS
// function answers is decoded strictly; a throw, a bad answer or silence
// denies, within the kernel's timeouts.
type governance struct {
	opts *Options
	host Host
	// ctx ends when the session closes; it bounds sanitiser calls, which
	// the kernel makes without a context.
	ctx    context.Context
	cancel context.CancelFunc

	mu sync.Mutex
	s  *core.Session
}

func (o *Options) needsHost() bool {
	if o.ConfirmationHandler || (o.BudgetGuard != nil && o.BudgetGuard.CheckBeforeTool) ||
		(o.SecurityProvider != nil && o.SecurityProvider.SanitizeOutput) {
		return true
	}
	for _, h := range o.Hooks {
		if h.Handler {
			return true
		}
	}
	return false
}

func newGovernance(o *Options, host Host) *governance {
	ctx, cancel := context.WithCancel(context.Background())
	return &governance{opts: o, host: host, ctx: ctx, cancel: cancel}
}

// kernel builds the kernel policy the session starts with.
func (g *governance) kernel() kernel.Governance {
	var k kernel.Governance
	o := g.opts
	if o.ToolTimeoutMs != nil {
		k.ToolTimeout = msDuration(*o.ToolTimeoutMs)
	}
	if p := o.PermissionPolicy; p != nil {
		// enabled: false (upstream's switch) turns the checker off; the
		// kernel's zero value is on, with default decision ask.
		// Rules in NFC, the form the resolver gives paths in, so a rule
		// covers both spellings of a name whichever one it was written in.
		k.Permission = kernel.PermissionPolicy{Disabled: p.Enabled != nil && !*p.Enabled, Deny: nfcAll(p.Deny),
			Allow: nfcAll(p.Allow), Ask: nfcAll(p.Ask), DefaultDecision: kernel.Decision(p.DefaultDecision)}
	}
	if c := o.ConfirmationPolicy; c != nil {
		k.Confirmation = kernel.ConfirmationPolicy{Enabled: c.Enabled == nil || *c.Enabled,
			TimeoutAction: kernel.TimeoutAction(c.TimeoutAction)}
		if c.DefaultTimeoutMs != nil {
			k.Confirmation.DefaultTimeout = msDuration(*c.DefaultTimeoutMs)
		}
	}
	if o.ConfirmationHandler {
		k.Confirmer = confirmer{g}
		// A handler is a confirmation manager: asking it is the point.
		k.Confirmation.Enabled = true
	}
	for _, h := range o.Hooks {
		k.Hooks = append(k.Hooks, g.hook(h))
	}
	if b := o.BudgetGuard; b != nil && b.CheckBeforeTool {
		k.BudgetGuard = kernel.BudgetGuardFunc(g.checkBudget)
		if b.TimeoutMs != nil {
			k.BudgetTimeout = msDuration(*b.TimeoutMs)
		}
	}
	if sp := o.SecurityProvider; sp != nil && sp.SanitizeOutput {
		k.Security = jsSanitizer{g}
	}
	return k
}

// attach binds the built session.
func (g *governance) attach(s *core.Session) {
	g.mu.Lock()
	g.s = s
	g.mu.Unlock()
}

func (g *governance) close() { g.cancel() }

// nfcAll returns rules in Unicode NFC (workspace.NFC).
func nfcAll(rules []string) []string {
	if rules == nil {
		return nil
	}
	out := make([]string, len(rules))
	for i, r := range rules {
		out[i] = workspace.NFC(r)
	}
	return out
}

// ask calls the host and decodes its JSON answer into v.
func (g *governance) ask(ctx context.Context, kind string, payload any, v any) error {
	if g.host == nil {
		return fmt.Errorf("no host dispatcher for %q", kind)
	}
	b, err := json.Marshal(payload)
	if err != nil {
		return err
	}
	out, err := g.host(ctx, kind, b)
	if err != nil {
		return err
	}
	if len(out) > MaxCallBytes {
		return fmt.Errorf("the %s handler's answer is %d bytes of JSON; the limit is %d bytes", kind, len(out), MaxCallBytes)
	}
	if err := jsoncheck.Check(out); err != nil {
		return fmt.Errorf("the %s handler's answer cannot cross into Go intact: %v", kind, err)
	}
	if err := json.Unmarshal(out, v); err != nil {
		return fmt.Errorf("the %s handler answered with something that is not the expected shape: %v", kind, err)
	}
	return nil
}

func (g *governance) hook(h HookSpec) kernel.Hook {
	kh := kernel.Hook{ID: h.ID, Event: kernel.HookEvent(h.Event)}
	if h.Matcher != nil {
		kh.Matcher = kernel.HookMatcher{Tool: h.Matcher.Tool, PathPattern: workspace.NFC(h.Matcher.PathPattern), CommandPattern: h.Matcher.CommandPattern}
	}
	if h.Config != nil {
		kh.Timeout = msDuration(h.Config.TimeoutMs)
	}
	if !h.Handler {
		// A hook without a handler continues: it exists for its events.
		kh.Handler = func(context.Context, kernel.HookRequest) (kernel.HookResponse, error) {
			return kernel.HookResponse{Action: kernel.HookContinue}, nil
		}
		return kh
	}
	id := h.ID
	kh.Handler = func(ctx context.Context, req kernel.HookRequest) (kernel.HookResponse, error) {
		p := hookPayload{HookID: id, Event: string(req.Event), ToolID: req.ToolID, ToolName: req.ToolName,
			Args: req.Args, Origin: req.Origin, ParentID: req.ParentID}
		if r := req.Result; r != nil {
			w := Wire(r)
			p.Output, p.ExitCode, p.MetadataJSON, p.ErrorKindJSON = &w.Output, &w.ExitCode, w.MetadataJSON, w.ErrorKindJSON
		}
		var a *hookAnswer
		if err := g.ask(ctx, "hook", p, &a); err != nil {
			return kernel.HookResponse{}, err
		}
		return a.response()
	}
	return kh
}

// hookPayload is what a JS hook handler receives (PROTOCOL.md §2).
type hookPayload struct {
	HookID        string          `json:"hookId"`
	Event         string          `json:"event"`
	ToolID        string          `json:"toolId"`
	ToolName      string          `json:"toolName"`
	Args          json.RawMessage `json:"args"`
	Origin        kernel.Origin   `json:"origin"`
	ParentID      string          `json:"parentId,omitempty"`
	Output        *string         `json:"output,omitempty"`
	ExitCode      *int            `json:"exitCode,omitempty"`
	MetadataJSON  string          `json:"metadataJson,omitempty"`
	ErrorKindJSON string          `json:"errorKindJson,omitempty"`
}

// hookAnswer is what a JS hook handler returns; null or undefined
// continues.
type hookAnswer struct {
	Action    string          `json:"action"`
	Reason    string          `json:"reason"`
	DelayMs   int64           `json:"delayMs"`
	Retryable bool            `json:"retryable"`
	Modified  json.RawMessage `json:"modified"`
}

func (a *hookAnswer) response() (kernel.HookResponse, error) {
	if a == nil {
		return kernel.HookResponse{Action: kernel.HookContinue}, nil
	}
	r := kernel.HookResponse{Reason: a.Reason, Retryable: a.Retryable, Delay: msDuration(a.DelayMs)}
	switch a.Action {
	case "", "continue":
		r.Action = kernel.HookContinue
	case "block":
		r.Action = kernel.HookBlock
	case "skip":
		r.Action = kernel.HookSkip
	case "retry":
		r.Action = kernel.HookRetry
	default:
		return kernel.HookResponse{}, fmt.Errorf("hook answered action %q (want continue, block, skip or retry)", a.Action)
	}
	if a.DelayMs < 0 {
		return kernel.HookResponse{}, fmt.Errorf("hook answered delayMs %d (want >= 0)", a.DelayMs)
	}
	if len(a.Modified) > 0 && string(a.Modified) != "null" {
		if a.Modified[0] != '{' {
			return kernel.HookResponse{}, errors.New("hook answered modified that is not an object")
		}
		r.Modified = a.Modified
	}
	return r, nil
}

// budgetAnswer is what a JS budget guard returns: a boolean, or an object
// with action (allow|soft|hard|deny) and the threshold facts, or an
// object with allow and reason.
type budgetAnswer struct {
	Allow    *bool   `json:"allow"`
	Reason   string  `json:"reason"`
	Action   string  `json:"action"`
	Resource string  `json:"resource"`
	Consumed float64 `json:"consumed"`
	Limit    float64 `json:"limit"`
	Message  string  `json:"message"`
}

func (g *governance) checkBudget(ctx context.Context, req kernel.BudgetRequest) (kernel.BudgetDecision, error) {
	var raw json.RawMessage
	p := map[string]any{"check": "checkBeforeTool", "toolId": req.ToolID, "toolName": req.ToolName, "args": req.Args, "origin": req.Origin}
	if err := g.ask(ctx, "budget", p, &raw); err != nil {
		return kernel.BudgetDecision{}, err
	}
	return decodeBudget(raw)
}

func decodeBudget(raw json.RawMessage) (kernel.BudgetDecision, error) {
	var ok bool
	if json.Unmarshal(raw, &ok) == nil {
		if ok {
			return kernel.BudgetDecision{Action: kernel.BudgetAllow}, nil
		}
		return kernel.BudgetDecision{Action: kernel.BudgetDeny, Message: "budget guard denied the call"}, nil
	}
	var a *budgetAnswer
	if err := json.Unmarshal(raw, &a); err != nil || a == nil {
		return kernel.BudgetDecision{}, fmt.Errorf("budget guard answered %s (want a boolean or {action} / {allow})", clip(string(raw)))
	}
	d := kernel.BudgetDecision{Resource: a.Resource, Consumed: a.Consumed, Limit: a.Limit, Message: a.Message}
	switch {
	case a.Allow != nil && a.Action == "":
		d.Action = kernel.BudgetAllow
		if !*a.Allow {
			d.Action = kernel.BudgetDeny
			if d.Message == "" {
				d.Message = a.Reason
			}
		}
	case a.Action == "allow" || a.Action == "soft" || a.Action == "hard" || a.Action == "deny":
		d.Action = kernel.BudgetAction(a.Action)
	default:
		return kernel.BudgetDecision{}, fmt.Errorf("budget guard answered action %q (want allow, soft, hard or deny)", a.Action)
	}
	return d, nil
}

type confirmer struct{ g *governance }

// Confirm asks the JS confirmation handler.
func (c confirmer) Confirm(ctx context.Context, req kernel.ConfirmRequest) (kernel.ConfirmDecision, error) {
	p := map[string]any{"toolId": req.ToolID, "toolName": req.ToolName, "args": req.Args, "origin": req.Origin,
		"timeoutMs": req.Timeout.Milliseconds()}
	if req.ParentID != "" {
		p["parentId"] = req.ParentID
	}
	var raw json.RawMessage
	if err := c.g.ask(ctx, "confirm", p, &raw); err != nil {
		return kernel.ConfirmDecision{}, err
	}
	var ok bool
	if json.Unmarshal(raw, &ok) == nil {
		return kernel.ConfirmDecision{Approved: ok}, nil
	}
	var a *struct {
		Approved *bool  `json:"approved"`
		Reason   string `json:"reason"`
	}
	if err := json.Unmarshal(raw, &a); err != nil || a == nil || a.Approved == nil {
		return kernel.ConfirmDecision{}, fmt.Errorf("confirmation handler answered %s (want a boolean or {approved, reason?})", clip(string(raw)))
	}
	return kernel.ConfirmDecision{Approved: *a.Approved, Reason: a.Reason}, nil
}

// jsSanitizer is the JS security provider as the kernel sees it. It fails
// closed: if the provider throws, answers badly or not within the hook
// timeout, the text is withheld. It batches (the kernel's
// FallibleSanitizer): the strings of one result's metadata or one argument
// object cross to JS in one host call, under one timeout; and once one
// call has failed, the kernel withholds the rest of that invocation
// without asking again, so a silent provider costs one timeout per call.
type jsSanitizer struct{ g *governance }

func (s jsSanitizer) Sanitize(text string) string {
	out, err := s.TrySanitizeAll([]string{text})
	if err != nil {
		return kernel.Withheld(err)
	}
	return out[0]
}

// TrySanitizeAll asks {op: "sanitizeOutput", text} → a string or {text}
// for one text, {op: "sanitizeAll", texts} → an array of the same length,
// each element a string or {text}, for more.
func (s jsSanitizer) TrySanitizeAll(texts []string) ([]string, error) {
	if len(texts) == 0 {
		return []string{}, nil
	}
	ctx, cancel := context.WithTimeout(s.g.ctx, kernel.DefaultHookTimeout)
	defer cancel()
	var raw []json.RawMessage
	if len(texts) == 1 {
		var one json.RawMessage
		if err := s.g.ask(ctx, "security", map[string]any{"op": "sanitizeOutput", "text": texts[0]}, &one); err != nil {
			return nil, errors.New(clip(err.Error()))
		}
		raw = []json.RawMessage{one}
	} else {
		if err := s.g.ask(ctx, "security", map[string]any{"op": "sanitizeAll", "texts": texts}, &raw); err != nil {
			return nil, errors.New(clip(err.Error()))
		}
		if len(raw) != len(texts) {
			return nil, fmt.Errorf("it answered %d texts for %d", len(raw), len(texts))
		}
	}
	out := make([]string, len(texts))
	for i, r := range raw {
		t, ok := sanitized(r)
		if !ok {
			return nil, errors.New("it answered neither a string nor {text}")
		}
		out[i] = t
	}
	return out, nil
}

// sanitized reads one sanitiser answer: a string or {text}.
func sanitized(raw json.RawMessage) (string, bool) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, true
	}
	var a *struct {
		Text *string `json:"text"`
	}
	if json.Unmarshal(raw, &a) == nil && a != nil && a.Text != nil {
		return *a.Text, true
	}
	return "", false
}

func clip(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return strings.TrimSpace(s)
}

func (g *governance) session() *core.Session {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.s
}

func (g *governance) registerHook(h HookSpec) error {
	return g.session().RegisterHook(g.hook(h))
}

func (g *governance) unregisterHook(id string) bool {
	return g.session().UnregisterHook(id)
}

func (g *governance) setBudget(b *BudgetSpec) {
	k := g.session()
	if b == nil || !b.CheckBeforeTool {
		k.SetBudgetGuard(nil, 0)
		return
	}
	var t time.Duration
	if b.TimeoutMs != nil {
		t = msDuration(*b.TimeoutMs)
	}
	k.SetBudgetGuard(kernel.BudgetGuardFunc(g.checkBudget), t)
}

func (g *governance) pending() []kernel.PendingConfirmation {
	p := g.session().PendingConfirmations()
	if p == nil {
		p = []kernel.PendingConfirmation{}
	}
	return p
}

func (g *governance) confirm(toolID string, approved bool, reason string) bool {
	return g.session().ConfirmToolUse(toolID, approved, reason)
}

// governanceMethods are the methods that change or answer the session's
// governance after it started.
var governanceMethods = []row{
	method("pendingConfirmations", syncCall, func(c *call, _ *noArgs) (any, error) { return c.e.gov.pending(), nil }),
	method("registerHook", syncCall, registerHook),
	method("unregisterHook", syncCall, func(c *call, a *struct {
		ID string `json:"id"`
	}) (any, error) {
		return c.e.gov.unregisterHook(a.ID), nil
	}),
	method("setBudgetGuard", syncCall, setBudgetGuard),
	method("confirmToolUse", 0, confirmToolUse),
}

func registerHook(c *call, h *HookSpec) (any, error) {
	if err := h.validate("registerHook: hook"); err != nil {
		return nil, errf(CodeInvalidCall, "%v", err)
	}
	if h.Handler && c.e.host == nil {
		return nil, errf(CodeInvalidCall, "registerHook: a handler needs a host dispatcher")
	}
	if err := c.e.gov.registerHook(*h); err != nil {
		return nil, errf(CodeInvalidCall, "registerHook: %v", err)
	}
	return true, nil
}

// setBudgetGuard takes a guard, or null to remove it.
func setBudgetGuard(c *call, b **BudgetSpec) (any, error) {
	if *b != nil {
		if err := (*b).validate("setBudgetGuard: guard"); err != nil {
			return nil, errf(CodeInvalidCall, "%v", err)
		}
		if c.e.host == nil {
			return nil, errf(CodeInvalidCall, "setBudgetGuard: a guard needs a host dispatcher")
		}
	}
	c.e.gov.setBudget(*b)
	return true, nil
}

type confirmArgs struct {
	ToolID   string `json:"toolId"`
	Approved *bool  `json:"approved"`
	Reason   string `json:"reason"`
}

func confirmToolUse(c *call, a *confirmArgs) (any, error) {
	if a.ToolID == "" || a.Approved == nil {
		return nil, errf(CodeInvalidCall, "confirmToolUse: toolId (a non-empty string) and approved (a boolean) are required")
	}
	return c.e.gov.confirm(a.ToolID, *a.Approved, a.Reason), nil
}
