package dirfs

import (
	"context"
	"fmt"

	"github.com/a3s-lab/code-wasm/internal/hostcall"
	"github.com/a3s-lab/code-wasm/workspace"
)

// The exec capability of a directory workspace (workspace.Executor):
// bash, and git when the root is a repository and git is installed.
// Natively the runner is exec_unix.go's; under js/wasm the npm package's
// Node host runs the commands (exec_js.go, npm/src/exec-node.mjs).

// ExecOptions configure the exec capability.
type ExecOptions struct {
	// Sandbox is "auto" (or ""): bubblewrap when it is installed and
	// works, else none (then a command the model chose is refused); or
	// "none": never sandbox, and the host opts in to such commands
	// running unconfined.
	Sandbox string
	// Network lets sandboxed commands use the network (the host's
	// interfaces, 127.0.0.1 included). Without it they have none.
	Network bool
	// Host is, under js/wasm, the dispatcher whose "exec" kind runs the
	// commands (the npm package's Node entry). Unused natively.
	Host hostcall.Func
}

// execer is one host's command runner.
type execer interface {
	execInfo() workspace.ExecInfo
	run(ctx context.Context, req workspace.ExecRequest) (workspace.ExecResult, error)
	// close ends what the runner keeps between commands (warm shells).
	close()
}

func errSandboxOption(s string) error {
	return fmt.Errorf("sandbox must be 'auto' or 'none', not %q", s)
}

// EnableExec gives the driver the exec capability: Capabilities then
// report Exec, and Git when the root holds .git and git is installed.
// Call it before workspace.New (capabilities are constant after).
func (f *FS) EnableExec(o ExecOptions) error {
	ex, hasGit, err := newExecer(f, o)
	if err != nil {
		return fmt.Errorf("dirfs: %w", err)
	}
	f.exec = ex
	f.caps.Exec = true
	if _, err := f.b.stat(".git", false); err == nil && hasGit {
		f.caps.Git = true
	}
	return nil
}

// ExecInfo implements workspace.Executor.
func (f *FS) ExecInfo() workspace.ExecInfo {
	if f.exec == nil {
		return workspace.ExecInfo{}
	}
	return f.exec.execInfo()
}

// Exec implements workspace.Executor.
func (f *FS) Exec(ctx context.Context, req workspace.ExecRequest) (workspace.ExecResult, error) {
	if f.exec == nil {
		return workspace.ExecResult{ExitCode: -1}, fmt.Errorf("%w: exec", workspace.ErrUnsupported)
	}
	return f.exec.run(ctx, req)
}
