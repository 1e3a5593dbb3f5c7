//go:build codewasm_core

package hostapi

import (
	"encoding/json"
	"errors"

	"github.com/a3s-lab/code-wasm/core"
	"github.com/a3s-lab/code-wasm/workspace"
)

// A codewasm_core build: the file tools only, to measure their size
// (later.go wires the rest). Options of the rest are read as raw JSON and
// refused by name; their methods are not in the table.
var laterMethods [][]row

type (
	LLMOptions    = json.RawMessage
	AgentSpec     = json.RawMessage
	SkillSpec     = json.RawMessage
	WebSearchSpec = json.RawMessage
)

const notInCore = " is not in this build (codewasm_core: the file tools only)"

func (o *Options) laterOptions(Host, *core.Options) error {
	for _, k := range []struct {
		key string
		set bool
	}{{"llm", o.LLM != nil}, {"mcpServers", o.McpServers != nil}, {"webFetch", o.WebFetch != nil},
		{"webSearch", o.WebSearch != nil}, {"agents", o.Agents != nil}, {"skills", o.Skills != nil},
		{"skillDirs", o.SkillDirs != nil}, {"maxParallelTasks", o.MaxParallelTasks != nil},
		{"manualDelegationEnabled", o.ManualDelegationEnabled != nil}, {"systemPrompt", o.SystemPrompt != ""},
		{"maxToolRounds", o.MaxToolRounds != nil}} {
		if k.set {
			return errors.New(k.key + notInCore)
		}
	}
	return nil
}

func openR2(WorkspaceOptions, Env, Host) (workspace.Driver, error) {
	return nil, errf(CodeInvalidOptions, "createSession: options.workspace.kind 'r2'"+notInCore)
}

func enableExec(_ workspace.Driver, w WorkspaceOptions, _ Env, _ Host) error {
	if w.Sandbox != "" || w.Network {
		return errf(CodeInvalidOptions, "createSession: options.workspace.sandbox and .network (commands)"+notInCore)
	}
	return nil
}
