package core

import (
	"context"

	"github.com/a3s-lab/code-wasm/kernel"
	"github.com/a3s-lab/code-wasm/ptc"
	"github.com/a3s-lab/code-wasm/workspace"
)

// ProgramOptions is session.program's argument (tools.en.md "Programmatic
// Tool Calling"): give Source or Path (a workspace-relative .js/.mjs file).
type ProgramOptions struct {
	Source       string         `json:"source,omitempty"`
	Path         string         `json:"path,omitempty"`
	Inputs       map[string]any `json:"inputs,omitempty"`
	AllowedTools []string       `json:"allowedTools,omitempty"`
	Limits       *ptc.Limits    `json:"limits,omitempty"`
}

// Program runs a PTC script through the `program` tool as a trusted
// host-direct call; it is session.Tool(ctx, "program", {type: "script",
// language: "javascript", ...}) with SDK naming (AllowedTools becomes
// allowed_tools). The script's ctx calls are nested invocations under it.
func (s *Session) Program(ctx context.Context, o ProgramOptions) (*kernel.Result, error) {
	args := ptc.Args{Type: "script", Language: "javascript", Path: o.Path, AllowedTools: o.AllowedTools, Limits: o.Limits}
	if o.Source != "" || o.Path == "" {
		src := o.Source
		args.Source = &src
	}
	if o.Inputs != nil {
		raw, err := toRaw(o.Inputs)
		if err != nil {
			return nil, err
		}
		args.Inputs = raw
	}
	return s.Tool(ctx, "program", args)
}

// registerProgram adds the program tool on the given engine, or on the
// host's default one (native: QuickJS on wazero; js/wasm: none unless the
// host supplies its JS engine) when engine is nil.
func registerProgram(reg *kernel.Registry, ws *workspace.Workspace, engine ptc.Engine) error {
	if engine == nil {
		engine = defaultProgramEngine()
	}
	return reg.RegisterBuiltin(ptc.New(ptc.Config{Engine: engine, Workspace: ws}))
}
