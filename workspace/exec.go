package workspace

import (
	"context"
	"time"
)

// Capture bounds (REFERENCE.md §2.9): output is read in 8 KiB chunks;
// the first CaptureHead bytes are kept, then a rolling tail of
// CaptureTail bytes; totals are exact.
const (
	CaptureChunk = 8 << 10
	CaptureHead  = 64 << 10
	CaptureTail  = 36 << 10
)

// ExecRequest is one command for an Executor: a shell command line
// (Command, run by bash with the session's working directory tracked) or
// a program and its arguments (Argv, no shell: git).
type ExecRequest struct {
	// Command is a bash command line. Exactly one of Command and Argv.
	Command string `json:"command,omitempty"`
	// Argv is a program and its arguments, run without a shell; Argv[0]
	// is looked up in PATH.
	Argv []string `json:"argv,omitempty"`
	// Cwd is the directory to run in, root-relative ("" or "." for the
	// root). A Cwd that is no longer a directory runs in the root.
	Cwd string `json:"cwd,omitempty"`
	// Timeout bounds the whole run: start, draining both pipes and
	// reaping the child. Zero means none (the context still applies).
	Timeout time.Duration `json:"-"`
	// Env are NAME=value pairs added to the environment (later wins);
	// Unset are name prefixes removed from the inherited environment
	// first ("GIT_" removes every GIT_* variable).
	Env   []string `json:"env,omitempty"`
	Unset []string `json:"unset,omitempty"`
	// WholeStdout, when > 0, keeps stdout whole up to that many bytes in
	// Stdout.Head (Stdout.Tail stays empty; Truncated says it was cut):
	// for a diff read page by page. The combined capture is unchanged.
	WholeStdout int `json:"wholeStdout,omitempty"`
}

// Capture is the bounded record of output: the first bytes, the last
// bytes after them, and the exact count. Head and Tail never overlap;
// Total > len(Head)+len(Tail) means bytes between them were dropped.
type Capture struct {
	Head  []byte `json:"head"`
	Tail  []byte `json:"tail"`
	Total int64  `json:"total"`
}

// Truncated reports whether bytes were dropped between Head and Tail (or
// after Head, for a whole-stdout capture that hit its bound).
func (c Capture) Truncated() bool { return c.Total > int64(len(c.Head)+len(c.Tail)) }

// ExecResult is what a command did.
type ExecResult struct {
	// ExitCode is the command's exit status; -1 when it was killed by a
	// signal (a timeout or cancel kills it) or never started.
	ExitCode int `json:"exitCode"`
	// TimedOut: the deadline passed and the process group was killed.
	TimedOut bool `json:"timedOut"`
	// Cancelled: the context ended first and the process group was killed.
	Cancelled bool `json:"cancelled"`
	// Sandboxed: the command ran inside the sandbox.
	Sandboxed bool `json:"sandboxed"`
	// Output is stdout and stderr interleaved as they arrived; Stdout and
	// Stderr are each stream alone.
	Output Capture `json:"output"`
	Stdout Capture `json:"stdout"`
	Stderr Capture `json:"stderr"`
	// Cwd is the root-relative directory a Command ended in ("" when it
	// is unknown or outside the root: keep the previous one).
	Cwd string `json:"cwd"`
}

// Sandbox modes of an Executor (what ExecInfo reports).
const (
	// SandboxBubblewrap: every command runs inside bubblewrap (read-only
	// system, the root the only writable place, private /tmp, no network
	// unless allowed, a PID namespace).
	SandboxBubblewrap = "bubblewrap"
	// SandboxNone: commands run as the host's user, unconfined.
	SandboxNone = ""
)

// ExecInfo says how an Executor runs commands.
type ExecInfo struct {
	// Sandbox is SandboxBubblewrap or SandboxNone.
	Sandbox string `json:"sandbox"`
	// Unconfined is the host's opt-in (sandbox: 'none'): commands may run
	// without a sandbox even when the model chose them. Without it, a
	// governed command on an executor with no sandbox is refused.
	Unconfined bool `json:"unconfined"`
	// Network: sandboxed commands may use the network.
	Network bool `json:"network"`
}

// Executor is the exec capability: a driver over a real directory that
// can run commands in it implements it (workspace/dirfs), beside
// Capabilities.Exec. Exec returns an error only when the command could not
// be run at all; a command that ran and failed is an ExecResult.
type Executor interface {
	ExecInfo() ExecInfo
	Exec(ctx context.Context, req ExecRequest) (ExecResult, error)
}

// Executor returns the driver's exec capability, if it has one and
// declares Capabilities.Exec.
func (w *Workspace) Executor() (Executor, bool) {
	if !w.caps.Exec {
		return nil, false
	}
	e, ok := w.d.(Executor)
	return e, ok
}
