//go:build js

package dirfs

import (
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"strconv"

	"github.com/a3s-lab/code-wasm/internal/hostcall"
	"github.com/a3s-lab/code-wasm/workspace"
)

// Under js/wasm the wasm runs no process: each request goes to the host's
// "exec" kind (npm/src/exec-node.mjs), which runs it with node's
// child_process by the same rules as the native runner (a process group,
// bubblewrap when present, bounded capture, one deadline, SIGKILL of the
// group and a 500 ms settle). Cancelling ctx aborts the host call, which
// kills the group.

type hostExecer struct {
	host hostcall.Func
	root string
	o    ExecOptions
	ei   workspace.ExecInfo
	pool string // names this runner's warm shells to the host
}

// hostExecPayload is one "exec" host call.
type hostExecPayload struct {
	Op        string                 `json:"op"` // "info" or "run"
	Root      string                 `json:"root"`
	Sandbox   string                 `json:"sandbox"`
	Network   bool                   `json:"network"`
	TimeoutMs int64                  `json:"timeoutMs,omitempty"`
	Pool      string                 `json:"pool,omitempty"` // "run" and "close": whose warm shells
	Request   *workspace.ExecRequest `json:"request,omitempty"`
}

func newExecer(f *FS, o ExecOptions) (execer, bool, error) {
	if o.Host == nil {
		return nil, false, errors.New("exec needs the host's exec kind (the npm package's Node entry)")
	}
	switch o.Sandbox {
	case "", "auto", "none":
	default:
		return nil, false, errSandboxOption(o.Sandbox)
	}
	h := &hostExecer{host: o.Host, root: f.Root(), o: o, pool: strconv.FormatUint(rand.Uint64(), 36)}
	out, err := h.call(context.Background(), hostExecPayload{Op: "info"})
	if err != nil {
		return nil, false, err
	}
	var info struct {
		workspace.ExecInfo
		Git bool `json:"git"`
	}
	if err := json.Unmarshal(out, &info); err != nil {
		return nil, false, err
	}
	h.ei = info.ExecInfo
	return h, info.Git, nil
}

func (h *hostExecer) call(ctx context.Context, p hostExecPayload) ([]byte, error) {
	p.Root, p.Sandbox, p.Network, p.Pool = h.root, h.o.Sandbox, h.o.Network, h.pool
	b, err := json.Marshal(p)
	if err != nil {
		return nil, err
	}
	return h.host(ctx, "exec", b)
}

func (h *hostExecer) execInfo() workspace.ExecInfo { return h.ei }

// close has the host kill this runner's idle warm shells.
func (h *hostExecer) close() { h.call(context.Background(), hostExecPayload{Op: "close"}) }

func (h *hostExecer) run(ctx context.Context, req workspace.ExecRequest) (workspace.ExecResult, error) {
	res := workspace.ExecResult{ExitCode: -1}
	if (req.Command == "") == (len(req.Argv) == 0) {
		return res, errors.New("exec: give exactly one of a command and an argv")
	}
	out, err := h.call(ctx, hostExecPayload{Op: "run", Request: &req, TimeoutMs: req.Timeout.Milliseconds()})
	if err != nil {
		if ctx.Err() != nil {
			res.Cancelled = true
			return res, ctx.Err()
		}
		return res, err
	}
	if err := json.Unmarshal(out, &res); err != nil {
		return res, err
	}
	return res, nil
}
