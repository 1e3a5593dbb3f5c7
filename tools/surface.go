package tools

import (
	"github.com/a3s-lab/code-wasm/kernel"
	"github.com/a3s-lab/code-wasm/workspace"
)

// Builtins returns the built-in workspace tools the workspace's capabilities
// can serve (tools.zh.md's tool-layer table, REFERENCE.md §4):
// read → read, ls; write → write; read+write → edit, patch; search → grep,
// glob; exec → bash; exec+git → git (a driver with the exec capability,
// workspace.Executor, over a repository).
func Builtins(ws *workspace.Workspace) []kernel.Tool {
	c := ws.Capabilities()
	var out []kernel.Tool
	if c.Read {
		out = append(out, &Read{ws: ws}, &Ls{ws: ws})
	}
	if c.Write {
		out = append(out, &Write{ws: ws})
	}
	if c.Read && c.Write {
		out = append(out, &Edit{ws: ws}, &Patch{ws: ws})
	}
	if c.Search {
		out = append(out, &Grep{ws: ws}, &Glob{ws: ws})
	}
	return append(out, execTools(ws)...)
}

// The built-in tools' schemas are fixed at build time (kernel.BuiltinSchema;
// core's TestBuiltinSchemasAreValid checks each against the meta-schema).
func (*Read) SchemaBuiltin()           {}
func (*Ls) SchemaBuiltin()             {}
func (*Write) SchemaBuiltin()          {}
func (*Edit) SchemaBuiltin()           {}
func (*Patch) SchemaBuiltin()          {}
func (*Grep) SchemaBuiltin()           {}
func (*Glob) SchemaBuiltin()           {}
func (*Bash) SchemaBuiltin()           {}
func (*Git) SchemaBuiltin()            {}
func (*Batch) SchemaBuiltin()          {}
func (*WebFetch) SchemaBuiltin()       {}
func (*GenerateObject) SchemaBuiltin() {}
