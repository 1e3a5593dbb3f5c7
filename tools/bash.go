package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/a3s-lab/code-wasm/kernel"
	"github.com/a3s-lab/code-wasm/workspace"
)

// Bash is the `bash` tool (REFERENCE.md §2.9): one command line through
// the workspace's exec capability, in the session's working directory
// (a `cd` persists across calls), output bounded to a 64 KiB head and a
// 36 KiB tail with exact byte counts, one deadline over the whole run.
type Bash struct {
	ex workspace.Executor

	mu  sync.Mutex
	cwd string // root-relative; "" is the root
}

// Bash timeouts (ms): the default, and the floor a smaller one is raised to.
const (
	bashDefaultTimeout = 120_000
	bashMinTimeout     = 1000
)

func (*Bash) Name() string { return "bash" }
func (*Bash) Description() string {
	return "Run a bash command line in the workspace directory and return its output (stdout and stderr interleaved). " +
		"The working directory persists across calls (`cd sub` moves it). timeout is in ms (default 120000, at least 1000); " +
		"when it passes, every process of the command is killed. Output keeps the first 64 KiB and the last 36 KiB, with exact byte counts in metadata. " +
		"Use read, grep, glob and edit for files; bash for builds, tests and other programs."
}
func (*Bash) Parameters() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{` +
		`"command":{"type":"string","minLength":1,"description":"The bash command line."},` +
		`"timeout":{"type":"integer","description":"Deadline in milliseconds (default 120000; values below 1000 are raised to 1000)."},` +
		`"sandbox_permissions":{"type":"string","enum":["use_default","require_escalated"],"description":"use_default (the default): run in the workspace's sandbox."},` +
		`"justification":{"type":"string","description":"Why escalation is needed (with require_escalated)."}},` +
		`"required":["command"],"additionalProperties":false,"examples":[{"command":"go test ./..."},{"command":"npm run build","timeout":300000}]}`)
}
func (*Bash) Capabilities(json.RawMessage) kernel.Capabilities { return kernel.Conservative() }

// Effects: a command may change anything the workspace can reach.
func (*Bash) Effects(json.RawMessage) kernel.Effects { return kernel.Effects{Mutates: true} }

// Touches: the command line.
func (*Bash) Touches(args json.RawMessage) kernel.Touched {
	var a struct{ Command any }
	json.Unmarshal(args, &a)
	s, _ := a.Command.(string)
	return kernel.Touched{Command: s}
}

func (b *Bash) Execute(ctx context.Context, call *kernel.Call) (*kernel.Result, error) {
	var a struct {
		Command            *string `json:"command"`
		Timeout            *int64  `json:"timeout"`
		SandboxPermissions *string `json:"sandbox_permissions"`
		Justification      *string `json:"justification"`
	}
	if err := decodeArgs("bash", call.Args, &a); err != nil {
		return nil, err
	}
	if a.Command == nil || strings.TrimSpace(*a.Command) == "" {
		return nil, kernel.InvalidArgument("bash: command is required and must not be blank")
	}
	if a.SandboxPermissions != nil && *a.SandboxPermissions == "require_escalated" {
		if a.Justification == nil || strings.TrimSpace(*a.Justification) == "" {
			return nil, kernel.InvalidArgument("bash: require_escalated needs a justification")
		}
		return nil, kernel.Errorf(kernel.ErrUnsupported, "bash: require_escalated is not offered here: every command runs with the workspace's default permissions")
	}
	timeout := int64(bashDefaultTimeout)
	if a.Timeout != nil {
		timeout = max(*a.Timeout, bashMinTimeout)
	}
	info := b.ex.ExecInfo()
	if info.Sandbox == workspace.SandboxNone && !info.Unconfined && !call.Origin.Trusted() {
		return nil, kernel.Errorf(kernel.ErrUnsupported, "bash: no sandbox is available for this workspace, so a command the model (or governedTool) chose is refused; "+
			"install bubblewrap, or let the host opt in with the workspace option sandbox: 'none'")
	}
	b.mu.Lock()
	cwd := b.cwd
	b.mu.Unlock()
	res, err := b.ex.Exec(ctx, workspace.ExecRequest{Command: *a.Command, Cwd: cwd, Timeout: time.Duration(timeout) * time.Millisecond})
	if err != nil {
		return nil, err
	}
	if res.Cwd != "" {
		b.mu.Lock()
		b.cwd = res.Cwd
		b.mu.Unlock()
		cwd = res.Cwd
	}
	out := renderCapture(res.Output)
	meta := map[string]any{
		"exit_code":  res.ExitCode,
		"sandboxed":  res.Sandboxed,
		"timeout_ms": timeout,
		"cwd":        displayCwd(cwd),
		"output": map[string]any{
			"total_bytes":    res.Output.Total,
			"captured_bytes": len(res.Output.Head) + len(res.Output.Tail),
			"truncated":      res.Output.Truncated(),
			"timed_out":      res.TimedOut,
			"stdout_bytes":   res.Stdout.Total,
			"stderr_bytes":   res.Stderr.Total,
		},
	}
	if res.Stdout.Total > 0 && res.Stderr.Total > 0 {
		meta["stdout"], meta["stderr"] = renderCapture(res.Stdout), renderCapture(res.Stderr)
	}
	r := kernel.OK(out, meta)
	switch {
	case res.TimedOut:
		r.Output += fmt.Sprintf("\n[timed out after %d ms: every process of the command was killed]", timeout)
		r.ExitCode = 1
		r.ErrorKind = &kernel.ErrorKind{Type: kernel.ErrTimeout, Op: "bash", DurationMs: timeout}
	case res.ExitCode != 0:
		r.Output += fmt.Sprintf("\n[exit code %d]", res.ExitCode)
		r.ExitCode = 1
	}
	return r, nil
}

func displayCwd(cwd string) string {
	if cwd == "" {
		return "."
	}
	return cwd
}

// renderCapture is a capture as text, marking where bytes were dropped.
func renderCapture(c workspace.Capture) string {
	if !c.Truncated() {
		return string(c.Head) + string(c.Tail)
	}
	dropped := c.Total - int64(len(c.Head)+len(c.Tail))
	return string(c.Head) + fmt.Sprintf("\n[... %d bytes omitted (%d in all) ...]\n", dropped, c.Total) + string(c.Tail)
}
