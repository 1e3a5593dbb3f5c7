package ptc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
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
	// or throws an Error with the returned error's message. The engine
	// enforces p's MaxToolCalls, MaxInFlight, MaxResultBytes and
	// MemoryBytes itself, before anything reaches b.
	//
	// Run returns ctx.Err() (possibly wrapped) once ctx is done, within the
	// settle grace of 500 ms, even if the script never yields (for(;;){});
	// a *ScriptError when the script throws or its promise rejects; a
	// *LimitError (wrapping those) when the script hit MaxToolCalls; any
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
	// MaxToolCalls is how many ctx calls the engine forwards to the
	// Bridge; it refuses every later one inside the script ("PTC script
	// exceeded maxToolCalls=N"), and Run then returns a *LimitError.
	MaxToolCalls int
	// MaxInFlight bounds the ctx calls outstanding at the Bridge at once;
	// more wait, in order, inside the engine.
	MaxInFlight int
	// MaxResultBytes bounds the JSON text of the script's result and of
	// each ctx call's arguments; larger ones are refused inside the engine.
	MaxResultBytes int
	// MemoryBytes bounds the script's heap (QuickJS's memory limit).
	MemoryBytes int
	// Timeout is the script's own time (limits.timeoutMs), for an engine
	// that keeps a backstop of its own or enforces it (TimeoutEnforcer);
	// otherwise Run's ctx is cancelled when it passes.
	Timeout time.Duration
	// Running is set for an engine that implements RunningReporter: it
	// calls Running once, when the script's realm is ready and the script
	// is about to run. Timeout counts from then; the engine's start has
	// its own bound (EngineStartTimeout).
	Running func()
}

// RunningReporter is implemented by an engine whose start (a worker
// booting, QuickJS loading) can take longer than a short script's
// timeout: it calls Program.Running when the script starts, and the
// program tool counts limits.timeoutMs from then.
type RunningReporter interface {
	// ReportsRunning marks the engine; it is never called.
	ReportsRunning()
}

// TimeoutEnforcer is implemented by an engine that stops the script at
// Program.Timeout itself, counted where the script runs (from its start
// to the moment it settles), and then returns an error wrapping
// ErrScriptTimeout: a script that settled in time succeeds however late
// its answer reaches Go (a busy host thread). The program tool's own
// timer is then a backstop, EnforcedTimeoutGrace later.
type TimeoutEnforcer interface {
	// EnforcesTimeout marks the engine; it is never called.
	EnforcesTimeout()
}

// ErrScriptTimeout is returned (wrapped) by a TimeoutEnforcer whose script
// did not settle within Program.Timeout.
var ErrScriptTimeout = errors.New("program script timed out")

// EnforcedTimeoutGrace is how long past Program.Timeout the program tool
// waits for a TimeoutEnforcer to report the end of its script before it
// stops the run itself: the engine's own host keeps a backstop of 1 s
// (PROTOCOL.md §4), and the answer crosses a host thread that may stall
// for seconds on a loaded machine.
var EnforcedTimeoutGrace = 5 * time.Second

// EngineStartTimeout bounds an engine's start before its script runs
// (RunningReporter): generous, as a cold worker on a loaded machine takes
// seconds; reported as metadata.program.engine_start_ms.
const EngineStartTimeout = 60 * time.Second

// The engine limits of a Program left 0, and the stack every engine gives
// QuickJS (REFERENCE.md §2.13: 64 MiB VM memory, 512 KiB VM stack).
const (
	DefaultMaxInFlight    = 16
	DefaultMaxResultBytes = 1 << 20
	DefaultMemoryBytes    = 64 << 20
	MaxStackBytes         = 512 << 10
)

// Bridge is the only way out of a script: one ctx method call at a time,
// JSON in and out. The program tool implements it; engines only forward.
// Safe for concurrent use.
type Bridge interface {
	Call(ctx context.Context, method string, args json.RawMessage) (json.RawMessage, error)
}

// ErrNoEngine is returned (wrapped) by an engine that cannot run scripts
// on this host, e.g. a host dispatcher without the ptc.* kinds (workerd).
var ErrNoEngine = errors.New("no JavaScript engine is available on this host")

// LimitError is a limit the engine enforced inside the script: the calls
// past Program.MaxToolCalls were refused there and never reached the
// Bridge. Run returns it even when the script caught the refusal, or
// failed or ran out of time afterwards (Err); the program fails with its
// message.
type LimitError struct {
	Message string
	Err     error // how the run ended otherwise, or nil
}

func (e *LimitError) Error() string { return e.Message }

// Unwrap returns Err.
func (e *LimitError) Unwrap() error { return e.Err }

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
