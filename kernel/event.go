package kernel

// Origin says who asked for an invocation (REFERENCE.md §3.1). It decides
// which gates apply: every origin runs hooks, budget, timeouts and
// sanitisation; trusted host-direct origins skip permission and
// confirmation.
type Origin string

const (
	// OriginAgent: a model-selected call. Full gate.
	OriginAgent Origin = "agent"
	// OriginNested: a call made by extension code or by an orchestrator
	// under an agent call. Full gate; inherits the caller's scope.
	OriginNested Origin = "nested"
	// OriginHostTrusted: session.tool and the typed helpers. Skips
	// permission and confirmation; pre-hooks can still block.
	OriginHostTrusted Origin = "host_direct_trusted"
	// OriginHostGoverned: session.governedTool. Full gate.
	OriginHostGoverned Origin = "host_direct_governed"
	// OriginHostNestedTrusted / Governed: calls made by a built-in
	// orchestrator (batch, program) that the host called directly; they
	// inherit the host policy. Public code cannot create them.
	OriginHostNestedTrusted  Origin = "host_direct_nested_trusted"
	OriginHostNestedGoverned Origin = "host_direct_nested_governed"
)

// Trusted reports whether the origin skips permission and confirmation.
func (o Origin) Trusted() bool {
	return o == OriginHostTrusted || o == OriginHostNestedTrusted
}

// Event types of the session stream (REFERENCE.md §1.3).
const (
	EventToolRequestBound     = "tool_request_bound"
	EventToolExecutionStart   = "tool_execution_start"
	EventToolOutputDelta      = "tool_output_delta"
	EventToolEnd              = "tool_end"
	EventPermissionDenied     = "permission_denied"
	EventConfirmationRequired = "confirmation_required"
	EventConfirmationReceived = "confirmation_received"
	EventConfirmationTimeout  = "confirmation_timeout"
	EventBudgetThresholdHit   = "budget_threshold_hit"
	EventError                = "error"
)

// Event is one entry of the session stream. Payload fields are snake_case
// as upstream's v1 envelope. Every invocation event carries the invocation
// id, its parent id and its origin, so a UI can draw the call tree.
type Event struct {
	Version      int            `json:"version"`
	Type         string         `json:"type"`
	Payload      map[string]any `json:"payload"`
	InvocationID string         `json:"invocationId,omitempty"`
	ParentID     string         `json:"parentId,omitempty"`
	Origin       Origin         `json:"origin,omitempty"`
	TimeMs       int64          `json:"timeMs"`
}

// ActiveTool is a running invocation, as activeTools() shows it.
type ActiveTool struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	StartedAtMs int64  `json:"startedAtMs"`
	ParentID    string `json:"parentId,omitempty"`
	Origin      Origin `json:"origin"`
}
