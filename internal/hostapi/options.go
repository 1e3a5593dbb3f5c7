package hostapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/a3s-lab/code-wasm/mcp"
	"io"
	"reflect"
	"strings"
	"time"

	"github.com/a3s-lab/code-wasm/internal/jsoncheck"
)

// WorkspaceOptions is options.workspace.
type WorkspaceOptions struct {
	Kind  string            `json:"kind"`
	Files map[string]string `json:"files"`
	Root  string            `json:"root"`
	// Sandbox and Network tune a directory workspace's commands
	// (dirfs.ExecOptions): sandbox 'auto' (default) or 'none'.
	Sandbox string `json:"sandbox"`
	Network bool   `json:"network"`
}

// PermissionPolicy is options.permissionPolicy (REFERENCE.md §1.2). Rules
// are the kernel's rule strings, e.g. "write(src/**)".
type PermissionPolicy struct {
	Deny            []string `json:"deny"`
	Allow           []string `json:"allow"`
	Ask             []string `json:"ask"`
	DefaultDecision string   `json:"defaultDecision"`
	Enabled         *bool    `json:"enabled"`
}

// ConfirmationPolicy is options.confirmationPolicy (REFERENCE.md §1.2).
// Upstream's yoloLanes belong to its lane scheduler, which this runtime
// does not have, so the key is refused rather than silently ignored.
type ConfirmationPolicy struct {
	Enabled          *bool  `json:"enabled"`
	DefaultTimeoutMs *int64 `json:"defaultTimeoutMs"`
	TimeoutAction    string `json:"timeoutAction"`
}

// HookMatcher narrows when a hook fires (kernel.HookMatcher). Upstream's
// sessionId and skill matchers have nothing to match here and are refused.
type HookMatcher struct {
	Tool           string `json:"tool,omitempty"`
	PathPattern    string `json:"pathPattern,omitempty"`
	CommandPattern string `json:"commandPattern,omitempty"`
}

// HookConfig tunes one hook.
type HookConfig struct {
	// TimeoutMs bounds the handler; 0 means the kernel default.
	TimeoutMs int64 `json:"timeoutMs,omitempty"`
}

// HookSpec is one hook as JS describes it: Handler says a JS function
// answers it through the host dispatcher (kind "hook").
type HookSpec struct {
	ID      string       `json:"id"`
	Event   string       `json:"event"`
	Matcher *HookMatcher `json:"matcher,omitempty"`
	Config  *HookConfig  `json:"config,omitempty"`
	Handler bool         `json:"handler"`
}

// BudgetSpec is options.budgetGuard / setBudgetGuard: whether
// checkBeforeTool is a JS function (kind "budget"), and the timeout after
// which a silent guard counts as a deny. Upstream's LLM checks
// (checkBeforeLlm, recordAfterLlm) are refused by name: the agent loop's
// model requests are not budget-guarded yet.
type BudgetSpec struct {
	CheckBeforeTool bool   `json:"checkBeforeTool"`
	TimeoutMs       *int64 `json:"timeoutMs"`
}

// SecuritySpec is options.securityProvider: which operations have a JS
// function (kind "security").
type SecuritySpec struct {
	SanitizeOutput bool `json:"sanitizeOutput"`
}

// Options is the JSON form of createSession's options: the data, with a
// boolean where JS keeps a function (npm/src/PROTOCOL.md §3).
type Options struct {
	Workspace           *WorkspaceOptions   `json:"workspace"`
	ToolTimeoutMs       *int64              `json:"toolTimeoutMs"`
	PermissionPolicy    *PermissionPolicy   `json:"permissionPolicy"`
	ConfirmationPolicy  *ConfirmationPolicy `json:"confirmationPolicy"`
	ConfirmationHandler bool                `json:"confirmationHandler"`
	Hooks               []HookSpec          `json:"hooks"`
	BudgetGuard         *BudgetSpec         `json:"budgetGuard"`
	SecurityProvider    *SecuritySpec       `json:"securityProvider"`

	// The agent loop (llm.go).
	LLM           *LLMOptions `json:"llm"`
	SystemPrompt  string      `json:"systemPrompt"`
	MaxToolRounds *int        `json:"maxToolRounds"`
	// McpServers connect at start (mcp.go).
	McpServers []mcp.Config  `json:"mcpServers"`
	WebFetch   *WebFetchSpec `json:"webFetch"`

	// Delegation (delegation.go).
	Agents                  []AgentSpec `json:"agents"`
	MaxParallelTasks        *int        `json:"maxParallelTasks"`
	ManualDelegationEnabled *bool       `json:"manualDelegationEnabled"`
	SkillDirs               *[]string   `json:"skillDirs"`
	Skills                  []SkillSpec `json:"skills"`
	// WebSearch's providers are JS functions (websearch.go).
	WebSearch *WebSearchSpec `json:"webSearch"`
}

// WebFetchSpec is options.webFetch: AllowOrigins are exact origins
// ("http://127.0.0.1:8787") web_fetch may reach though they are not public.
type WebFetchSpec struct {
	AllowOrigins []string `json:"allowOrigins"`
}

// Bounds of option values; the defaults are the kernel's.
const (
	// maxTimeoutMs bounds every timeout option: a day, so a typo (seconds
	// for ms twice over) is caught rather than waited out.
	maxTimeoutMs = 24 * 60 * 60 * 1000
)

// hookEvents are the hook events the tool layer fires.
func hookEvents() []string { return []string{"pre_tool_use", "post_tool_use"} }

// decodeStrict decodes one JSON value refusing unknown keys. Its errors
// name the key or field at fault by its full path under root (shape.go),
// prefixed by what: `createSession: unknown key options.workspace.bar`.
//
// JSON from JS is checked first (jsoncheck): a string that is not
// well-formed UTF-16 (a lone surrogate, which encoding/json would turn into
// U+FFFD, so two different JS strings could name one file) and nesting
// past jsoncheck.MaxDepth are refused.
func decodeStrict(what, root string, raw []byte, v any) error {
	if err := jsoncheck.Check(raw); err != nil {
		return fmt.Errorf("%s: %v", what, err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if serr := shapeError(raw, reflect.TypeOf(v).Elem(), root); serr != nil {
			return fmt.Errorf("%s: %v", what, serr)
		}
		return fmt.Errorf("%s: %s", what, explainJSON(err))
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return fmt.Errorf("%s: trailing data after the JSON value", what)
	}
	return nil
}

// explainJSON rewrites encoding/json's messages in the terms a JS caller
// used: `unknown key "x"` and `"a.b" must be a string, got number`.
func explainJSON(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		field := te.Field
		if field == "" {
			return fmt.Sprintf("must be %s, got %s", jsType(te.Type.Kind().String()), te.Value)
		}
		return fmt.Sprintf("%q must be %s, got %s", field, jsType(te.Type.Kind().String()), te.Value)
	}
	msg := err.Error()
	if rest, ok := strings.CutPrefix(msg, "json: unknown field "); ok {
		return "unknown key " + rest
	}
	return strings.TrimPrefix(msg, "json: ")
}

func jsType(goKind string) string {
	switch goKind {
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	case "int", "int64", "int32", "uint", "uint64", "float64":
		return "a number"
	case "slice":
		return "an array"
	case "map", "struct", "ptr":
		return "an object"
	}
	return "a " + goKind
}

// validate checks option values; the error names the key.
func (o *Options) validate() error {
	if o.ToolTimeoutMs != nil {
		if err := checkMs("toolTimeoutMs", *o.ToolTimeoutMs, true); err != nil {
			return err
		}
	}
	if p := o.PermissionPolicy; p != nil {
		switch p.DefaultDecision {
		case "", "allow", "deny", "ask":
		default:
			return fmt.Errorf("permissionPolicy.defaultDecision must be \"allow\", \"deny\" or \"ask\", got %q", p.DefaultDecision)
		}
		for _, l := range []struct {
			name  string
			rules []string
		}{{"deny", p.Deny}, {"allow", p.Allow}, {"ask", p.Ask}} {
			for i, r := range l.rules {
				if strings.TrimSpace(r) == "" {
					return fmt.Errorf("permissionPolicy.%s[%d] must be a non-empty rule", l.name, i)
				}
			}
		}
	}
	if c := o.ConfirmationPolicy; c != nil {
		if c.DefaultTimeoutMs != nil {
			if err := checkMs("confirmationPolicy.defaultTimeoutMs", *c.DefaultTimeoutMs, false); err != nil {
				return err
			}
		}
		switch c.TimeoutAction {
		case "", "reject", "auto_approve":
		default:
			return fmt.Errorf("confirmationPolicy.timeoutAction must be \"reject\" or \"auto_approve\", got %q", c.TimeoutAction)
		}
	}
	seen := map[string]bool{}
	for i := range o.Hooks {
		if err := o.Hooks[i].validate(fmt.Sprintf("hooks[%d]", i)); err != nil {
			return err
		}
		if seen[o.Hooks[i].ID] {
			return fmt.Errorf("hooks[%d].id %q is used twice", i, o.Hooks[i].ID)
		}
		seen[o.Hooks[i].ID] = true
	}
	if o.BudgetGuard != nil {
		if err := o.BudgetGuard.validate("budgetGuard"); err != nil {
			return err
		}
	}
	return nil
}

func (h *HookSpec) validate(at string) error {
	if strings.TrimSpace(h.ID) == "" {
		return fmt.Errorf("%s.id must be a non-empty string", at)
	}
	ok := false
	for _, e := range hookEvents() {
		ok = ok || h.Event == e
	}
	if !ok {
		return fmt.Errorf("%s.event must be one of %s, got %q", at, strings.Join(hookEvents(), ", "), h.Event)
	}
	if h.Config != nil && h.Config.TimeoutMs != 0 {
		if err := checkMs(at+".config.timeoutMs", h.Config.TimeoutMs, false); err != nil {
			return err
		}
	}
	return nil
}

func (b *BudgetSpec) validate(at string) error {
	if b.TimeoutMs != nil {
		return checkMs(at+".timeoutMs", *b.TimeoutMs, false)
	}
	return nil
}

// checkMs accepts 0 only when zeroOK (meaning "none").
func checkMs(key string, ms int64, zeroOK bool) error {
	switch {
	case ms < 0 || (ms == 0 && !zeroOK):
		if zeroOK {
			return fmt.Errorf("%s must be >= 0 milliseconds, got %d", key, ms)
		}
		return fmt.Errorf("%s must be > 0 milliseconds, got %d", key, ms)
	case ms > maxTimeoutMs:
		return fmt.Errorf("%s must be at most %d milliseconds (a day), got %d", key, maxTimeoutMs, ms)
	}
	return nil
}

func msDuration(ms int64) time.Duration { return time.Duration(ms) * time.Millisecond }
