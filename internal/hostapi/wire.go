package hostapi

import (
	"encoding/json"

	"github.com/a3s-lab/code-wasm/agent"

	"github.com/a3s-lab/code-wasm/kernel"
)

// ToolResult is the JS wire form of a tool result (API.md, REFERENCE.md
// §1.1). npm/index.d.ts mirrors it.
type ToolResult struct {
	Name          string `json:"name"`
	Output        string `json:"output"`
	ExitCode      int    `json:"exitCode"`
	MetadataJSON  string `json:"metadataJson,omitempty"`
	ErrorKindJSON string `json:"errorKindJson,omitempty"`
}

// Wire converts a kernel result to its JS form.
func Wire(r *kernel.Result) ToolResult {
	w := ToolResult{Name: r.Name, Output: r.Output, ExitCode: r.ExitCode}
	if r.Metadata != nil {
		if b, err := json.Marshal(r.Metadata); err == nil {
			w.MetadataJSON = string(b)
		}
	}
	if r.ErrorKind != nil {
		if b, err := json.Marshal(r.ErrorKind); err == nil {
			w.ErrorKindJSON = string(b)
		}
	}
	return w
}

// WireEvent is an event as JS sees it: the kernel's v1 envelope plus the
// convenience fields upstream derives centrally (REFERENCE.md §1.1), so
// every host (Node, a browser Worker, workerd) gets the same fields.
// npm/index.d.ts mirrors it.
type WireEvent struct {
	Version      int            `json:"version"`
	Type         string         `json:"type"`
	Payload      map[string]any `json:"payload"`
	InvocationID string         `json:"invocationId,omitempty"`
	ParentID     string         `json:"parentId,omitempty"`
	Origin       kernel.Origin  `json:"origin,omitempty"`
	TimeMs       int64          `json:"timeMs"`

	// ToolName is payload.name or payload.tool_name.
	ToolName string `json:"toolName,omitempty"`
	// ToolID is payload.id or payload.tool_id.
	ToolID string `json:"toolId,omitempty"`
	// Text is the streamed text: payload.delta of a tool_output_delta,
	// payload.output of a tool_end, payload.message of an error or a
	// budget_threshold_hit, payload.reason of a permission_denied.
	Text string `json:"text,omitempty"`
	// ExitCode is payload.exit_code of a tool_end.
	ExitCode *int `json:"exitCode,omitempty"`
	// ToolOutput is payload.output of a tool_end.
	ToolOutput *string `json:"toolOutput,omitempty"`
	// ErrorKindJSON is payload.error_kind, JSON-encoded, when present.
	ErrorKindJSON string `json:"errorKindJson,omitempty"`
}

// WireEventOf derives the JS form of an event.
func WireEventOf(e kernel.Event) WireEvent {
	w := WireEvent{Version: e.Version, Type: e.Type, Payload: e.Payload, InvocationID: e.InvocationID,
		ParentID: e.ParentID, Origin: e.Origin, TimeMs: e.TimeMs}
	if w.Payload == nil {
		w.Payload = map[string]any{}
	}
	p := w.Payload
	w.ToolName = firstString(p, "name", "tool_name")
	w.ToolID = firstString(p, "id", "tool_id")
	if w.ToolID == "" && !runEvent(e.Type) {
		w.ToolID = e.InvocationID
	}
	switch e.Type {
	case agent.EventTextDelta, agent.EventReasoningDelta, agent.EventAgentEnd:
		w.Text = firstString(p, "text")
	case agent.EventToolInputDelta:
		w.Text = firstString(p, "delta")
	case kernel.EventToolOutputDelta:
		w.Text = firstString(p, "delta")
	case kernel.EventToolEnd:
		out := firstString(p, "output")
		w.Text, w.ToolOutput = out, &out
		if c, ok := asInt(p["exit_code"]); ok {
			w.ExitCode = &c
		}
	case kernel.EventError, kernel.EventBudgetThresholdHit:
		w.Text = firstString(p, "message")
	case kernel.EventPermissionDenied:
		w.Text = firstString(p, "reason")
	}
	if ek, ok := p["error_kind"]; ok && ek != nil {
		if b, err := json.Marshal(ek); err == nil {
			w.ErrorKindJSON = string(b)
		}
	}
	return w
}

// runEvent reports whether typ is an agent run's own event (its
// invocationId is the run's id, not a tool call's).
func runEvent(typ string) bool {
	switch typ {
	case agent.EventAgentStart, agent.EventTurnStart, agent.EventTextDelta, agent.EventReasoningDelta, agent.EventTurnEnd, agent.EventAgentEnd:
		return true
	}
	return false
}

func firstString(p map[string]any, keys ...string) string {
	for _, k := range keys {
		if s, ok := p[k].(string); ok && s != "" {
			return s
		}
	}
	return ""
}

func asInt(v any) (int, bool) {
	switch n := v.(type) {
	case int:
		return n, true
	case int64:
		return int(n), true
	case float64:
		return int(n), true
	case json.Number:
		i, err := n.Int64()
		return int(i), err == nil
	}
	return 0, false
}
