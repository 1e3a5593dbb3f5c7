package core

import (
	"context"
	"fmt"

	"github.com/a3s-lab/code-wasm/kernel"
	"github.com/a3s-lab/code-wasm/tools"
)

// The shell, git and verification helpers of a session over a workspace
// with the exec capability (a directory): trusted host calls, like the
// other typed helpers.

// Verification types (tools/verify.go).
type (
	VerificationCommand = tools.VerificationCommand
	VerificationCheck   = tools.VerificationCheck
	VerificationReport  = tools.VerificationReport
)

// BashOptions tune Bash.
type BashOptions struct {
	// TimeoutMs is the command's deadline (default 120000; at least 1000).
	TimeoutMs int64
}

// Bash calls `bash` and returns its output (stdout and stderr
// interleaved, "[exit code N]" after a command that failed). The error is
// a *ToolError when the command did not run to its end (timed out, was
// refused, could not start), and the session errors of Tool.
func (s *Session) Bash(ctx context.Context, command string, o ...BashOptions) (string, error) {
	args := map[string]any{"command": command}
	if len(o) > 0 && o[0].TimeoutMs != 0 {
		args["timeout"] = o[0].TimeoutMs
	}
	res, err := s.Tool(ctx, "bash", args)
	if err != nil {
		return "", err
	}
	if _, ran := res.Metadata["exit_code"]; !ran || (res.ErrorKind != nil && res.ErrorKind.Type == kernel.ErrTimeout) {
		return "", &ToolError{Result: res}
	}
	return res.Output, nil
}

// GitOptions are the `git` tool's arguments (REFERENCE.md §2.8); zero
// values are left out.
type GitOptions struct {
	Command          string // status, log, branch, checkout, diff, stash, remote, worktree
	Subcommand       string // worktree: list, create, remove
	Name             string
	Path             string
	NewBranch        *bool
	Base             string
	Force            bool
	MaxCount         int
	Message          *string
	IncludeUntracked bool
	Target           string
	Ref              string
	Limit            int
	Cursor           string
	ByteOffset       int
	MaxBytes         int
}

// Git calls `git`.
func (s *Session) Git(ctx context.Context, o GitOptions) (*kernel.Result, error) {
	args := map[string]any{"command": o.Command}
	set := func(k string, v any, ok bool) {
		if ok {
			args[k] = v
		}
	}
	set("subcommand", o.Subcommand, o.Subcommand != "")
	set("name", o.Name, o.Name != "")
	set("path", o.Path, o.Path != "")
	set("new_branch", o.NewBranch, o.NewBranch != nil)
	set("base", o.Base, o.Base != "")
	set("force", true, o.Force)
	set("max_count", o.MaxCount, o.MaxCount != 0)
	set("message", o.Message, o.Message != nil)
	set("include_untracked", true, o.IncludeUntracked)
	set("target", o.Target, o.Target != "")
	set("ref", o.Ref, o.Ref != "")
	set("limit", o.Limit, o.Limit != 0)
	set("cursor", o.Cursor, o.Cursor != "")
	set("byte_offset", o.ByteOffset, o.ByteOffset != 0)
	set("max_bytes", o.MaxBytes, o.MaxBytes != 0)
	return s.Tool(ctx, "git", args)
}

// VerifyCommands runs each command through `bash`, in order, and returns
// the a3s.verification_report.v1 (tools.Verify has the status rules). A
// list that cannot run (an id missing or twice, a blank command) is an
// error before anything runs, and so is a session without bash.
func (s *Session) VerifyCommands(ctx context.Context, subject string, cmds []VerificationCommand) (VerificationReport, error) {
	if err := tools.CheckVerificationCommands(cmds); err != nil {
		return VerificationReport{}, fmt.Errorf("verifyCommands: %w", err)
	}
	if _, ok := s.reg.Lookup("bash"); !ok {
		return VerificationReport{}, fmt.Errorf("verifyCommands: %w: bash (the workspace cannot run commands)", ErrNotRegistered)
	}
	return tools.Verify(ctx, subject, cmds, func(ctx context.Context, args map[string]any) (*kernel.Result, error) {
		return s.Tool(ctx, "bash", args)
	}), nil
}

// VerifyPresets derives verification commands from the workspace root
// (go.mod, package.json scripts, Cargo.toml, pyproject.toml).
func (s *Session) VerifyPresets(ctx context.Context) ([]VerificationCommand, error) {
	return tools.VerificationPresets(ctx, s.ws)
}
