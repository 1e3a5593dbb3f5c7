package kernel

import (
	"context"
	"encoding/json"
	"time"
)

// Governance is the policy the kernel enforces (REFERENCE.md §3.2). The
// zero value is valid and is REFERENCE's default: no timeout, a permission
// policy with no rules whose default decision is ask, and no confirmation
// manager, so ask means deny. Trusted host calls (and the nested calls of
// built-in orchestrators under them) skip the gate and run; agent, nested
// and governed host calls are denied until a policy allows them or a
// confirmation manager answers. No hooks, no budget guard, no sanitiser,
// no skill restriction, no queue, default artifact limits.
//
// Every callback (hooks, confirmer, budget guard) takes a context and may be
// slow or fail: the kernel bounds each one with its timeout, and a callback
// that errors or does not answer in time denies the call (fails closed).
type Governance struct {
	// ToolTimeout bounds the execution of every invocation; 0 means no
	// kernel timeout. A timed-out call ends with error kind
	// timeout{op, duration_ms}.
	ToolTimeout time.Duration

	// Permission is the deny/allow/ask rule set for agent, nested and
	// governed host calls. Trusted host calls skip it.
	Permission PermissionPolicy

	// Confirmation configures human-in-the-loop confirmation of calls the
	// permission policy answers with ask.
	Confirmation ConfirmationPolicy
	// Confirmer answers confirmation requests. When nil and
	// Confirmation.Enabled is true, the kernel's own manager keeps a
	// pending list answered by Kernel.ConfirmToolUse. When
	// Confirmation.Enabled is false there is no manager: ask means deny.
	Confirmer Confirmer

	// Hooks run before (pre_tool_use) and after (post_tool_use) every
	// invocation, for every origin. More can be added with
	// Kernel.RegisterHook.
	Hooks []Hook

	// BudgetGuard is asked before every side effect; nil means no budget.
	BudgetGuard BudgetGuard
	// BudgetTimeout bounds one CheckBeforeTool; 0 means 5 s.
	BudgetTimeout time.Duration

	// Security cleans outputs, streamed deltas and error reasons; nil
	// leaves them as they are.
	Security SecurityProvider

	// SkillRestriction limits calls to an active skill's tools; off by
	// default.
	SkillRestriction SkillRestriction

	// Queue bounds how many invocations execute at once.
	Queue QueueConfig

	// Artifacts bounds the store of full outputs that were cut.
	Artifacts ArtifactLimits
}

// Default timeouts and limits (REFERENCE.md §3).
const (
	DefaultConfirmationTimeout = 30 * time.Second
	DefaultBudgetTimeout       = 5 * time.Second
	DefaultHookTimeout         = 5 * time.Second
	// SettleGrace is how long a cancelled or timed-out tool may take to
	// return before the kernel ends the call without it.
	SettleGrace = 500 * time.Millisecond
	// MaxOutputBytes is the head of an output kept in the result; the full
	// text goes to the artifact store.
	MaxOutputBytes = 100 << 10
	// MaxSchemaBytes: larger tool schemas are refused.
	MaxSchemaBytes = 256 << 10
	// MaxSchemaErrors and MaxSchemaErrorBytes bound a validation message.
	MaxSchemaErrors     = 8
	MaxSchemaErrorBytes = 4 << 10
	DefaultMaxArtifacts = 256
	DefaultArtifactSize = 16 << 20
)

// Decision is a permission answer.
type Decision string

const (
	DecisionAllow Decision = "allow"
	DecisionDeny  Decision = "deny"
	DecisionAsk   Decision = "ask"
)

// PermissionPolicy is a rule set over tool names and argument patterns.
// The zero value is on, with no rules and default decision ask; Disabled
// allows everything.
//
// A rule is `*`, a tool-name glob (`write`, `mcp__*`), or a tool-name glob
// with an argument pattern in parentheses:
//
//	write(path:src/**)       a path the call touches matches src/**
//	bash(command:git *)      the command argument matches git *
//	read(src/**)             the call's touched paths, or else its command,
//	                         pattern or URL, match src/**
//
// What a call touches is what its tool says (Toucher), or for a tool that
// says nothing what the argument keys of package toolargs name; a rule's
// path keys are toolargs.PathKeys.
//
// A rule may name a class of calls instead of a tool: @mutating is every
// call that may change something (Effects.Mutates; a tool is taken to
// mutate unless it declares otherwise or its capabilities are read-only),
// so `deny: ['@mutating']` makes a session read-only and
// `@mutating(path:secrets/**)` denies every change under secrets/, while
// `write` names the write tool only. Path-scoped deny and ask rules for
// read also govern content: no governed call returns what such a file
// holds (ContentHidden), and a call whose answer depends on it
// (Effects.ReadsContent: edit, patch) is denied or asked as a read.
//
// Tool names compare case-insensitively; paths match with doublestar
// globs, commands with `*` matching anything. Paths are every path the
// call touches (Touched.Paths), normalised by
// vpath.Resolve; see Decide. Precedence: deny > allow > ask; a call no
// rule matches gets DefaultDecision ("" means ask). Invalid rules are
// refused by Validate (kernel.New calls it).
type PermissionPolicy struct {
	// Disabled turns the checker off: every call is allowed (upstream's
	// enabled: false). The zero value is on.
	Disabled        bool     `json:"-"`
	Deny            []string `json:"deny,omitempty"`
	Allow           []string `json:"allow,omitempty"`
	Ask             []string `json:"ask,omitempty"`
	DefaultDecision Decision `json:"defaultDecision,omitempty"`
}

// TimeoutAction is what an unanswered confirmation does.
type TimeoutAction string

const (
	TimeoutReject      TimeoutAction = "reject"
	TimeoutAutoApprove TimeoutAction = "auto_approve"
)

// ConfirmationPolicy configures confirmation. DefaultTimeout 0 means 30 s;
// TimeoutAction "" means reject.
type ConfirmationPolicy struct {
	Enabled        bool          `json:"enabled"`
	DefaultTimeout time.Duration `json:"-"`
	TimeoutAction  TimeoutAction `json:"timeoutAction,omitempty"`
}

// ConfirmRequest is one call waiting for a human.
type ConfirmRequest struct {
	ToolID   string
	ToolName string
	Args     json.RawMessage
	Origin   Origin
	ParentID string
	Timeout  time.Duration
}

// ConfirmDecision is the answer to a ConfirmRequest.
type ConfirmDecision struct {
	Approved bool
	Reason   string
}

// Confirmer answers confirmation requests. The kernel cancels ctx when the
// confirmation times out; an error denies.
type Confirmer interface {
	Confirm(ctx context.Context, req ConfirmRequest) (ConfirmDecision, error)
}

// PendingConfirmation is one entry of PendingConfirmations.
type PendingConfirmation struct {
	ToolID      string          `json:"toolId"`
	ToolName    string          `json:"toolName"`
	Args        json.RawMessage `json:"args"`
	RemainingMs int64           `json:"remainingMs"`
}

// HookEvent names when a hook runs.
type HookEvent string

const (
	HookPreToolUse  HookEvent = "pre_tool_use"
	HookPostToolUse HookEvent = "post_tool_use"
)

// HookMatcher selects the calls a hook sees. Empty fields match
// everything. Tool is a glob over tool names; PathPattern a doublestar
// glob over the paths the call touches; CommandPattern a `*` wildcard
// over its command (Touched). A call without the argument a pattern names
// does not match.
type HookMatcher struct {
	Tool           string `json:"tool,omitempty"`
	PathPattern    string `json:"pathPattern,omitempty"`
	CommandPattern string `json:"commandPattern,omitempty"`
}

// HookAction is a hook's answer.
type HookAction string

const (
	// HookContinue lets the call go on, with Modified arguments if set.
	HookContinue HookAction = "continue"
	// HookBlock denies the call.
	HookBlock HookAction = "block"
	// HookRetry denies the call as retryable after Delay.
	HookRetry HookAction = "retry"
	// HookSkip continues and skips the remaining hooks of this event.
	HookSkip HookAction = "skip"
)

// HookRequest is what a hook sees.
type HookRequest struct {
	Event    HookEvent       `json:"event"`
	ToolID   string          `json:"toolId"`
	ToolName string          `json:"toolName"`
	Args     json.RawMessage `json:"args"`
	Origin   Origin          `json:"origin"`
	ParentID string          `json:"parentId,omitempty"`
	// Result is set for post_tool_use.
	Result *Result `json:"result,omitempty"`
}

// HookResponse is a hook's answer. The zero value continues.
type HookResponse struct {
	Action HookAction
	Reason string
	// Delay is the retry_after of a retry (or a block with Retryable).
	Delay     time.Duration
	Retryable bool
	// Modified replaces the arguments (pre_tool_use only); they are
	// validated again.
	Modified json.RawMessage
}

// HookHandler runs a hook. An error, or no answer within the hook's
// timeout, denies a pre_tool_use call; post_tool_use failures are ignored.
// A post_tool_use hook answering block (or retry) cannot undo the call: the
// result becomes a hook_denied failure whose output says the side effect,
// if any, has happened; the tool's output and metadata are withheld.
type HookHandler func(ctx context.Context, req HookRequest) (HookResponse, error)

// Hook is one registered hook. Timeout 0 means 5 s.
type Hook struct {
	ID      string
	Event   HookEvent
	Matcher HookMatcher
	Timeout time.Duration
	Handler HookHandler
}

// BudgetRequest is asked of the budget guard before a side effect.
type BudgetRequest struct {
	ToolID   string          `json:"toolId"`
	ToolName string          `json:"toolName"`
	Args     json.RawMessage `json:"args"`
	Origin   Origin          `json:"origin"`
}

// BudgetAction is a budget guard's answer.
type BudgetAction string

const (
	// BudgetAllow ("" too) lets the call run.
	BudgetAllow BudgetAction = "allow"
	// BudgetSoft emits budget_threshold_hit{kind: soft} and continues.
	BudgetSoft BudgetAction = "soft"
	// BudgetHard emits budget_threshold_hit{kind: hard} and denies.
	BudgetHard BudgetAction = "hard"
	// BudgetDeny denies ("Budget exhausted").
	BudgetDeny BudgetAction = "deny"
)

// BudgetDecision is the answer of CheckBeforeTool.
type BudgetDecision struct {
	Action   BudgetAction
	Resource string
	Consumed float64
	Limit    float64
	Message  string
}

// BudgetGuard is asked before every side effect. It fails closed: an
// error or no answer within the budget timeout denies.
type BudgetGuard interface {
	CheckBeforeTool(ctx context.Context, req BudgetRequest) (BudgetDecision, error)
}

// BudgetGuardFunc adapts a function to BudgetGuard.
type BudgetGuardFunc func(ctx context.Context, req BudgetRequest) (BudgetDecision, error)

// CheckBeforeTool calls f.
func (f BudgetGuardFunc) CheckBeforeTool(ctx context.Context, req BudgetRequest) (BudgetDecision, error) {
	return f(ctx, req)
}

// SecurityProvider cleans every string the kernel hands back or
// publishes: outputs, streamed deltas, the string fields of error kinds,
// every string (and map key) inside result metadata, and the arguments in
// event payloads and pending confirmations. It must be fast and safe for
// concurrent use. Hooks, confirmers and budget guards see the real
// arguments: they are policy, not audience.
type SecurityProvider interface {
	Sanitize(text string) string
}

// BatchSanitizer may be implemented by a SecurityProvider that cleans many
// strings in one go (a JS sanitiser behind one host round trip): the
// kernel then hands over all the strings of one result's metadata, or of
// one argument object, at once. It returns a slice of the same length.
type BatchSanitizer interface {
	SanitizeAll(texts []string) []string
}

// SanitizerFunc adapts a function to SecurityProvider.
type SanitizerFunc func(text string) string

// Sanitize calls f.
func (f SanitizerFunc) Sanitize(text string) string { return f(text) }

// SkillRestriction limits governed calls to the active skill's tools when
// Enabled. Trusted host calls are not restricted.
type SkillRestriction struct {
	Enabled      bool
	AllowedTools []string
}

// QueueConfig bounds concurrent execution. MaxConcurrency 0 means no queue.
// A nested call made from inside a slot runs directly, so a single slot
// cannot deadlock an orchestrator.
type QueueConfig struct {
	MaxConcurrency int
}

// ArtifactLimits bound the artifact store; zero fields take the defaults
// (256 artifacts, 16 MiB). The oldest artifacts are evicted first.
type ArtifactLimits struct {
	MaxArtifacts int
	MaxBytes     int64
}

// Artifact is a full output kept when a result was cut.
type Artifact struct {
	ID            string `json:"artifact_id"`
	URI           string `json:"artifact_uri"`
	ToolName      string `json:"tool_name"`
	Content       string `json:"content"`
	OriginalBytes int    `json:"original_bytes"`
	ShownBytes    int    `json:"shown_bytes"`
}
