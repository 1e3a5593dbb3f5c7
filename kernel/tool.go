package kernel

import (
	"context"
	"encoding/json"
)

// OutputKind says what a tool's output is, for schedulers and UIs.
type OutputKind string

const (
	OutputText       OutputKind = "text"
	OutputStructured OutputKind = "structured"
	OutputDiff       OutputKind = "diff"
	OutputMixed      OutputKind = "mixed"
)

// Capabilities are per-invocation scheduling facts (REFERENCE.md §3.3),
// computed by a tool from its arguments.
type Capabilities struct {
	ReadOnly           bool       `json:"read_only"`
	Idempotent         bool       `json:"idempotent"`
	Resumable          bool       `json:"resumable"`
	CancellationSafe   bool       `json:"cancellation_safe"`
	SupportsPagination bool       `json:"supports_pagination"`
	MaxParallelism     int        `json:"max_parallelism"`
	OutputKind         OutputKind `json:"output_kind"`
}

// Conservative is the default: nothing may be assumed; run alone.
func Conservative() Capabilities {
	return Capabilities{MaxParallelism: 1, OutputKind: OutputText}
}

// ReadOnlyPaginated is for read-only tools with cursors or offsets.
func ReadOnlyPaginated(n int) Capabilities {
	return Capabilities{ReadOnly: true, Idempotent: true, Resumable: true, CancellationSafe: true,
		SupportsPagination: true, MaxParallelism: n, OutputKind: OutputText}
}

// ParallelSafeRead is for read-only tools without pagination.
func ParallelSafeRead(n int) Capabilities {
	return Capabilities{ReadOnly: true, Idempotent: true, CancellationSafe: true,
		MaxParallelism: n, OutputKind: OutputText}
}

// ParallelSafe reports whether a batch may run this call beside others.
func (c Capabilities) ParallelSafe() bool {
	return c.ReadOnly && c.Idempotent && c.CancellationSafe && c.MaxParallelism > 1
}

// Tool is one callable tool. Implementations must be safe for concurrent
// Execute calls.
type Tool interface {
	// Name is the registry key, e.g. "read".
	Name() string
	// Description is what a model reads to decide when to call the tool.
	Description() string
	// Parameters is the model-visible JSON Schema of the arguments. It has
	// no top-level oneOf (providers reject it); such constraints are
	// checked by the tool itself or by ValidationSchema.
	Parameters() json.RawMessage
	// Capabilities computes scheduling facts for one call's arguments.
	// Arguments may be invalid; return Conservative() when unsure.
	Capabilities(args json.RawMessage) Capabilities
	// Execute runs the tool. A tool failure the model should see is either
	// a Result with ExitCode != 0 or an error (the kernel turns it into
	// such a Result, deriving the error kind with KindOf).
	Execute(ctx context.Context, call *Call) (*Result, error)
}

// Effects are what the permission rules need to know of a call beyond its
// tool name and arguments.
type Effects struct {
	// Mutates: the call may itself change the workspace or anything
	// outside the session. The rule class @mutating matches such calls.
	Mutates bool
	// ReadsContent: what the call returns (output, metadata, errors, or
	// only whether it succeeds) depends on the content of the files it
	// names (Touched.Paths). Path-scoped read rules then
	// govern the call as they govern a read of those files.
	ReadsContent bool
}

// EffectDeclarer is implemented by a tool whose Effects its Capabilities
// do not say. A tool that does not implement it mutates unless its
// Capabilities for the call are read-only, and reads no content beyond
// what its own rules govern. An orchestrator, whose effects are the
// nested calls it makes (each judged by the rules itself), declares
// Effects{}.
type EffectDeclarer interface {
	Effects(args json.RawMessage) Effects
}

// Touched is what one call touches, as its tool says (Toucher).
type Touched struct {
	// Paths are the workspace paths the call names, as written; the
	// kernel resolves them. Permission rules and hook matchers with a path
	// pattern judge them, and path-scoped read rules govern them when the
	// call reads content (Effects.ReadsContent).
	Paths []string
	// Command is the command line the call runs ("" for none); hook
	// CommandPatterns and bare rule patterns match it.
	Command string
	// URL is the URL the call fetches ("" for none).
	URL string
	// Pattern is the search pattern or query of a call (grep's, glob's):
	// a bare rule pattern matches it when the call names no path or
	// command.
	Pattern string
}

// Toucher is implemented by a tool that says what one call touches. A
// tool that does not is read by the argument keys of package toolargs
// (paths, files[].path, command, pattern, url, query): the
// fallback for tools from outside, such as MCP and host tools. Arguments
// may be invalid; Touches must not fail.
type Toucher interface {
	Touches(args json.RawMessage) Touched
}

// ContentSearcher is implemented by a tool whose directory search shows
// what the files it finds hold (grep): the content rules (path-scoped deny
// and ask rules for ContentRuleTool) hide files from its searches as they
// hide them from a read.
type ContentSearcher interface {
	Tool
	// SearchesContent marks the tool; it is never called.
	SearchesContent()
}

// Orchestrator is implemented by a tool that makes nested calls through
// Call.Invoker as its main work (batch, program). Such a tool may not be
// called again while it is on the invocation stack: the kernel refuses
// the recursive call.
type Orchestrator interface {
	Tool
	// Orchestrates marks the tool; it is never called.
	Orchestrates()
}

// SchemaValidator may be implemented by a tool whose validation schema is
// stricter than its model-visible Parameters (for example with oneOf).
type SchemaValidator interface {
	ValidationSchema() json.RawMessage
}

// BuiltinSchema is implemented by a tool whose schemas (Parameters and
// ValidationSchema) are fixed at build time and checked against the draft
// 2020-12 meta-schema by a test (TestBuiltinSchemasAreValid in core): the
// kernel compiles them without that check, whose first use compiles the
// meta-schema itself (most of a wasm session's first tool call). Schemas
// from outside (MCP, host tools) are always checked.
type BuiltinSchema interface {
	// SchemaBuiltin marks the tool; it is never called.
	SchemaBuiltin()
}

// Inliner is implemented by a tool that may run a call on the goroutine
// that invokes it, when Inline(args) says so. Such a call must end
// promptly by itself (no wait that could outlast the kernel's timeout, no
// deep recursion): the kernel cannot leave it running when the timeout
// comes, as it leaves a call on its own goroutine. A call's own goroutine
// (its start, its stack grown to 32 KB, the switches) was 50–90 µs of a
// warm tool('read') under js/wasm in Node (RATIONALE.md "Why may a read of
// an in-memory file run on the caller's goroutine?").
type Inliner interface {
	Inline(args json.RawMessage) bool
}

// Call is one invocation as a tool sees it.
type Call struct {
	ID       string          // invocation id, unique within the session
	ParentID string          // the invocation that made this nested call, or ""
	Name     string          // tool name
	Args     json.RawMessage // validated arguments (after hook rewrites)
	Origin   Origin
	// Invoker makes nested calls through the full kernel, with this call as
	// parent. Nested calls never reach the raw registry.
	Invoker Invoker
	// Hidden, when not nil, reports the workspace paths a tool that
	// searches a directory (grep, glob, ls) must leave out: those the
	// permission policy's path-scoped deny and ask rules keep from this
	// call (PermissionPolicy.Hidden), and HiddenTree the directories
	// whose whole subtree is hidden (a search may skip them). Set by the
	// kernel for calls that go through the safety gate; nil for trusted
	// host calls.
	Hidden, HiddenTree func(path string) bool
	// ContentHidden, when not nil, reports the workspace paths whose
	// content the permission policy keeps from this call: those a
	// path-scoped deny or ask rule for read names
	// (PermissionPolicy.ContentHidden). A tool that returns what a file
	// held (a diff, the text it replaced) leaves it out for such a path.
	// Set like Hidden.
	ContentHidden func(path string) bool
	// emit sends a tool_output_delta; set by the kernel.
	emit func(delta string)
}

// Emit streams a chunk of output as a tool_output_delta event. It is
// sanitised by the security provider and always arrives before tool_end.
// Safe to call from any goroutine until Execute returns.
func (c *Call) Emit(delta string) {
	if c != nil && c.emit != nil {
		c.emit(delta)
	}
}

// IsHidden reports whether the permission policy keeps path from this
// call's directory searches (see Call.Hidden).
func (c *Call) IsHidden(path string) bool { return c != nil && c.Hidden != nil && c.Hidden(path) }

// IsHiddenTree reports whether everything under directory dir is hidden
// from this call's searches (see Call.HiddenTree).
func (c *Call) IsHiddenTree(dir string) bool {
	return c != nil && c.HiddenTree != nil && c.HiddenTree(dir)
}

// IsContentHidden reports whether the permission policy keeps the content
// of path from this call (see Call.ContentHidden).
func (c *Call) IsContentHidden(path string) bool {
	return c != nil && c.ContentHidden != nil && c.ContentHidden(path)
}

// SetEmitter installs the delta sink. For kernels and tests.
func (c *Call) SetEmitter(f func(delta string)) { c.emit = f }

// Invoker is the governed entry point orchestrators (batch, program,
// custom tools) use for nested calls.
type Invoker interface {
	// Invoke runs name with args as a nested invocation. It never returns
	// nil; failures are Results with ExitCode != 0.
	Invoke(ctx context.Context, name string, args json.RawMessage) *Result
	// Capabilities returns the scheduling facts of a prospective call, and
	// false if no such tool is registered.
	Capabilities(name string, args json.RawMessage) (Capabilities, bool)
	// ToolNames lists the tools a nested call may name, sorted.
	ToolNames() []string
}

// Result is what a tool returns and what every caller receives.
type Result struct {
	Name      string         `json:"name"`
	Output    string         `json:"output"`
	ExitCode  int            `json:"exitCode"`
	Metadata  map[string]any `json:"metadata,omitempty"`
	ErrorKind *ErrorKind     `json:"errorKind,omitempty"`
}

// OK builds a successful result.
func OK(output string, metadata map[string]any) *Result {
	return &Result{Output: output, Metadata: metadata}
}

// Failure builds a failed result from an error, deriving its kind.
func Failure(name string, err error) *Result {
	k := KindOf(err)
	return &Result{Name: name, Output: err.Error(), ExitCode: 1, ErrorKind: k}
}
