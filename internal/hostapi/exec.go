//go:build !codewasm_core

package hostapi

import (
	"github.com/a3s-lab/code-wasm/core"
	"github.com/a3s-lab/code-wasm/internal/hostcall"
	"github.com/a3s-lab/code-wasm/workspace"
	"github.com/a3s-lab/code-wasm/workspace/dirfs"
)

// execEnabler is a driver that can run commands (dirfs.FS).
type execEnabler interface {
	EnableExec(dirfs.ExecOptions) error
}

// enableExec gives a directory driver the exec capability, with the
// workspace's sandbox and network options and, under js/wasm, the host
// dispatcher whose "exec" kind runs the commands. A host that states its
// kinds without "exec" runs none (its sessions list no bash or git).
func enableExec(d workspace.Driver, w WorkspaceOptions, env Env, host Host) error {
	e, ok := d.(execEnabler)
	if !ok {
		if w.Sandbox != "" || w.Network {
			return errf(CodeInvalidOptions, "createSession: options.workspace.sandbox and .network are for a directory workspace, which runs commands; a %s workspace runs none", w.Kind)
		}
		return nil
	}
	switch w.Sandbox {
	case "", "auto", "none":
	default:
		return errf(CodeInvalidOptions, "createSession: options.workspace.sandbox must be 'auto' or 'none', got %q", w.Sandbox)
	}
	if !env.hasKind("exec") {
		return nil
	}
	if err := e.EnableExec(dirfs.ExecOptions{Sandbox: w.Sandbox, Network: w.Network, Host: hostcall.Func(host)}); err != nil {
		return errf(CodeInvalidOptions, "createSession: options.workspace: %v", err)
	}
	return nil
}

// hasKind reports whether the host answers a dispatcher kind (every kind
// when it did not say).
func (env Env) hasKind(kind string) bool {
	if env.HostKinds == nil {
		return true
	}
	for _, k := range env.HostKinds {
		if k == kind {
			return true
		}
	}
	return false
}

// execMethods are the shell, git and verification helpers of a session
// over a directory workspace (core/exec.go).
var execMethods = []row{
	method("bash", 0, bash),
	method("git", 0, git),
	method("verifyCommands", 0, verifyCommands),
	method("verifyPresets", 0, func(c *call, _ *noArgs) (any, error) {
		cmds, err := c.e.s.VerifyPresets(c.ctx)
		if err != nil {
			return nil, mapErr(c.method, err)
		}
		return cmds, nil
	}),
}

func bash(c *call, a *struct {
	Command   *string `json:"command" required:"true"`
	TimeoutMs int64   `json:"timeoutMs"`
}) (any, error) {
	out, err := c.e.s.Bash(c.ctx, *a.Command, core.BashOptions{TimeoutMs: a.TimeoutMs})
	return c.e.typed(c.ctx, c.method, out, err)
}

// gitArgs is GitCommandOptions (REFERENCE.md §1.2) plus the paging keys;
// session.mjs maps the positional form onto it.
type gitArgs struct {
	Command          *string `json:"command" required:"true"`
	Subcommand       string  `json:"subcommand"`
	Name             string  `json:"name"`
	Path             string  `json:"path"`
	NewBranch        *bool   `json:"newBranch"`
	Base             string  `json:"base"`
	Force            bool    `json:"force"`
	MaxCount         int     `json:"maxCount"`
	Message          *string `json:"message"`
	IncludeUntracked bool    `json:"includeUntracked"`
	Target           string  `json:"target"`
	Ref              string  `json:"ref"`
	Reference        string  `json:"reference"`
	Limit            int     `json:"limit"`
	Cursor           string  `json:"cursor"`
	ByteOffset       int     `json:"byteOffset"`
	MaxBytes         int     `json:"maxBytes"`
}

func git(c *call, a *gitArgs) (any, error) {
	ref := a.Ref
	if ref == "" {
		ref = a.Reference
	}
	res, err := c.e.s.Git(c.ctx, core.GitOptions{Command: *a.Command, Subcommand: a.Subcommand, Name: a.Name, Path: a.Path,
		NewBranch: a.NewBranch, Base: a.Base, Force: a.Force, MaxCount: a.MaxCount, Message: a.Message,
		IncludeUntracked: a.IncludeUntracked, Target: a.Target, Ref: ref, Limit: a.Limit, Cursor: a.Cursor,
		ByteOffset: a.ByteOffset, MaxBytes: a.MaxBytes})
	return c.e.result(c.ctx, c.method, res, err)
}

func verifyCommands(c *call, a *struct {
	Subject  *string                     `json:"subject" required:"true"`
	Commands *[]core.VerificationCommand `json:"commands" required:"true"`
}) (any, error) {
	rep, err := c.e.s.VerifyCommands(c.ctx, *a.Subject, *a.Commands)
	if err != nil {
		return nil, mapErr(c.method, err)
	}
	return rep, nil
}
