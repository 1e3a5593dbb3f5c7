package ptc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

// Engine runs one script. Implementations must be safe for concurrent Run
// calls; each Run starts from clean intrinsics (a fresh realm, VM or
// worker), so nothing one script does is seen by the next.
//
// The interface asks for no host eval: an engine may be an interpreter
// compiled to wasm (the route for hosts that forbid eval, such as
// Cloudflare Workers), since all it receives is the source text and all it
// returns is JSON.
type Engine interface {
	// Name is the runtime recorded in metadata.program.runtime.
	Name() string
	// Run evaluates p.Source, which declares `async function run(ctx,
	// inputs)`, calls run with a frozen ctx and the parsed inputs, waits for
	// the returned promise and returns its value as JSON ("null" for
	// undefined). Each ctx method m, called with arguments a, calls
	// b.Call(ctx, m, JSON(a)) and resolves to the parsed JSON it returns,
	// or throws an Error with the returned error's message.
	//
	// Run returns ctx.Err() (possibly wrapped) once ctx is done, within the
	// settle grace of 500 ms, even if the script never yields (for(;;){});
	// a *ScriptError when the script throws or its promise rejects; any
	// other error when the engine itself failed.
	Run(ctx context.Context, p *Program, b Bridge) (json.RawMessage, error)
}

// Program is what an engine runs.
type Program struct {
	// Name is the script's display name (a workspace path, or
	// "inline.js"); engines use it as the file name in stack traces.
	Name string
	// Source declares `async function run(ctx, inputs)` as a plain script
	// (an `export default` prefix has already been removed, keeping line
	// numbers).
	Source string
	// Inputs is a JSON object.
	Inputs json.RawMessage
	// Methods are the ctx method names to define (always "tool"; the
	// helpers whose tools are allowed).
	Methods []string
	// Tools are the names ctx.tools.<name> proxies over ctx.tool.
	Tools []string
	// MaxStackDepth bounds recursion where the engine can (0: its default).
	MaxStackDepth int
}

// Bridge is the only way out of a script: one ctx method call at a time,
// JSON in and out. The program tool implements it; engines only forward.
// Safe for concurrent use.
type Bridge interface {
	Call(ctx context.Context, method string, args json.RawMessage) (json.RawMessage, error)
}

// ErrNoEngine is returned (wrapped) by an engine that cannot run scripts
// on this host, e.g. a host dispatcher without the ptc.* kinds (workerd).
var ErrNoEngine = errors.New("no JavaScript engine is available on this host")

// ScriptError is a script's uncaught exception or rejected run promise.
type ScriptError struct {
	Message string // e.g. "TypeError: x is not a function"
	Line    int    // 1-based line in Program.Source; 0 when unknown
}

func (e *ScriptError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s (line %d)", e.Message, e.Line)
	}
	return e.Message
}
