//go:build unix

package dirfs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/a3s-lab/code-wasm/workspace"
)

// The process runner of the exec capability, natively: each command is a
// process group of its own (inside bubblewrap when there is one), its
// stdout and stderr read in 8 KiB chunks into bounded captures, and one
// deadline covers the start, draining both pipes and reaping the child. On
// timeout or cancel the whole group gets SIGKILL, then up to settle for
// the pipes to drain before the runner closes its own ends. Research:
// /work/shared/research/directory-bash-git.md §0.2, §2 (CommandContext and
// WaitDelay alone leave a grandchild that holds the pipes running).

// settle is how long a killed command's pipes may take to drain.
const settle = 500 * time.Millisecond

// shellWrap runs the command with eval (a syntax error is the command's
// failure, not the wrapper's) and reports the final directory on fd 3
// when the shell exits, however it exits short of exec or SIGKILL. The
// command runs with fd 3 closed, so a background child never holds it:
// the call waits for the shell and the output pipes only.
const shellWrap = shellTrap + `__a3s_cmd=$1; shift; ` + evalCmd

const (
	shellTrap = `trap 'pwd -P >&3' EXIT; `
	evalCmd   = `eval "$__a3s_cmd" 3>&-`
)

// sandboxWrap is shellWrap for a command inside bubblewrap. The sandbox's
// PID namespace ends when the shell does, taking every background child
// with it at once; unconfined, a background child that still holds the
// output pipes keeps the call open until the deadline. To match, the EXIT
// trap waits while a process other than bwrap's init (pid 1, which holds
// the pipes itself) and the shell has a descriptor on either pipe: a
// glob of the namespace's few /proc entries, then a 50 ms poll only while
// one does (/bin/sleep by path: the command may have changed PATH or
// defined a sleep function).
const sandboxWrap = sandboxTrap + `__a3s_cmd=$1; shift; ` + evalCmd

const sandboxTrap = `__a3s_held() { local f; for f in /proc/[0-9]*/fd/*; do case $f in /proc/1/*|/proc/$$/*) ;; *) [[ $f -ef /proc/1/fd/1 || $f -ef /proc/1/fd/2 ]] && return 0;; esac; done; return 1; }; ` +
	`trap '__a3s_rc=$?; pwd -P >&3; while __a3s_held; do /bin/sleep 0.05; done; exit $__a3s_rc' EXIT; `

// runner runs commands in one root.
type runner struct {
	root  string // real absolute path
	bwrap string // bubblewrap's path, "" for no sandbox
	ei    workspace.ExecInfo
	warm  warmPool // shells ready for the next commands (warm_unix.go)
}

// newExecer is the native exec capability of f: the runner, and whether
// git is installed.
func newExecer(f *FS, o ExecOptions) (execer, bool, error) {
	r, err := newRunner(f.Root(), o)
	if err != nil {
		return nil, false, err
	}
	_, gitErr := exec.LookPath("git")
	return r, gitErr == nil, nil
}

// newRunner checks the options and finds the sandbox.
func newRunner(root string, o ExecOptions) (*runner, error) {
	real, err := filepath.EvalSymlinks(root)
	if err != nil {
		return nil, err
	}
	r := &runner{root: real}
	switch o.Sandbox {
	case "", "auto":
		r.bwrap = bubblewrap()
	case "none":
		r.ei.Unconfined = true
	default:
		return nil, errSandboxOption(o.Sandbox)
	}
	if r.bwrap != "" {
		r.ei.Sandbox = workspace.SandboxBubblewrap
		r.ei.Network = o.Network
	}
	return r, nil
}

func (r *runner) execInfo() workspace.ExecInfo { return r.ei }

// close kills the idle warm shells.
func (r *runner) close() { r.warm.close() }

// bwrapWorks caches, per bwrap path, whether it can make the namespaces
// (a container may have bwrap but forbid them).
var bwrapWorks sync.Map

// bubblewrap returns the path of a bwrap in PATH that works, or "".
func bubblewrap() string {
	p, err := exec.LookPath("bwrap")
	if err != nil {
		return ""
	}
	ok, seen := bwrapWorks.Load(p)
	if !seen {
		out, err := exec.Command(p, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
			"--unshare-pid", "--unshare-net", "--die-with-parent", "--", "/bin/sh", "-c", "echo ok").Output()
		ok = err == nil && string(out) == "ok\n"
		bwrapWorks.Store(p, ok)
	}
	if !ok.(bool) {
		return ""
	}
	return p
}

// argv builds the command line: the sandbox's flags, then the program.
func (r *runner) argv(req workspace.ExecRequest, cwd string) []string {
	switch {
	case req.Command != "" && r.bwrap != "":
		return r.wrap([]string{"/bin/bash", "-c", sandboxWrap, "bash", req.Command}, cwd)
	case req.Command != "":
		return r.wrap([]string{"/bin/bash", "-c", shellWrap, "bash", req.Command}, cwd)
	}
	return r.wrap(req.Argv, cwd)
}

// wrap puts prog inside the sandbox, when there is one, starting in cwd.
func (r *runner) wrap(prog []string, cwd string) []string {
	if r.bwrap == "" {
		return prog
	}
	a := []string{r.bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
		"--bind", r.root, r.root, "--unshare-pid", "--unshare-ipc", "--unshare-uts"}
	if !r.ei.Network {
		a = append(a, "--unshare-net")
	}
	a = append(a, "--die-with-parent", "--chdir", cwd, "--")
	return append(a, prog...)
}

// abs is the absolute directory for a root-relative cwd; the root when it
// is not a directory any more.
func (r *runner) abs(cwd string) string {
	if cwd == "" || cwd == "." {
		return r.root
	}
	p := filepath.Join(r.root, filepath.FromSlash(cwd))
	if st, err := os.Stat(p); err != nil || !st.IsDir() {
		return r.root
	}
	return p
}

// rel turns the shell's final directory into a root-relative one, or ""
// when it is outside the root.
func (r *runner) rel(dir string) string {
	switch {
	case dir == r.root:
		return "."
	case strings.HasPrefix(dir, r.root+"/"):
		return filepath.ToSlash(dir[len(r.root)+1:])
	}
	return ""
}

// env is the inherited environment less the Unset prefixes, plus Env.
func env(req workspace.ExecRequest) []string {
	var out []string
	for _, kv := range os.Environ() {
		keep := true
		for _, p := range req.Unset {
			if strings.HasPrefix(kv, p) {
				keep = false
				break
			}
		}
		if keep {
			out = append(out, kv)
		}
	}
	return append(out, req.Env...)
}

// run runs one request.
func (r *runner) run(ctx context.Context, req workspace.ExecRequest) (workspace.ExecResult, error) {
	res := workspace.ExecResult{ExitCode: -1, Sandboxed: r.bwrap != ""}
	if (req.Command == "") == (len(req.Argv) == 0) {
		return res, errors.New("exec: give exactly one of a command and an argv")
	}
	if len(req.Argv) > 0 && r.bwrap == "" {
		// A program is looked up outside the workspace: a checked-in
		// "git" must not run in its place.
		p, err := exec.LookPath(req.Argv[0])
		if err != nil {
			return res, err
		}
		if ap, _ := filepath.Abs(p); r.rel(ap) != "" {
			return res, fmt.Errorf("exec: %s resolves inside the workspace (%s); refusing to run it", req.Argv[0], ap)
		}
	}
	cwd := r.abs(req.Cwd)
	envv := env(req)
	var deadline <-chan time.Time
	if req.Timeout > 0 {
		t := time.NewTimer(req.Timeout)
		defer t.Stop()
		deadline = t.C
	}
	if err := ctx.Err(); err != nil {
		res.Cancelled = true
		return res, err
	}

	var p *proc
	if req.Command != "" {
		p = r.warm.take(ctx, r, envv, cwd, req.Command)
	}
	if p == nil {
		var err error
		if p, err = r.start(r.argv(req, cwd), cwd, envv, req.Command != "", false); err != nil {
			return res, err
		}
	}
	cmd, reads := p.cmd, p.reads
	pgid := cmd.Process.Pid

	var mu sync.Mutex
	all, out, errc := newCapturer(0), newCapturer(req.WholeStdout), newCapturer(0)
	var cwdBuf bytes.Buffer
	var wg sync.WaitGroup
	drain := func(f *os.File, stream *capturer) {
		defer wg.Done()
		buf := make([]byte, workspace.CaptureChunk)
		for {
			n, err := f.Read(buf)
			if n > 0 {
				mu.Lock()
				all.Write(buf[:n])
				stream.Write(buf[:n])
				mu.Unlock()
			}
			if err != nil {
				return
			}
		}
	}
	wg.Add(2)
	go drain(reads[0], out)
	go drain(reads[1], errc)
	if len(reads) == 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			io.Copy(&cwdBuf, io.LimitReader(reads[2], 64<<10))
			io.Copy(io.Discard, reads[2])
		}()
	}
	waited := make(chan struct{})
	go func() { cmd.Wait(); close(waited) }()
	done := make(chan struct{})
	go func() { wg.Wait(); <-waited; close(done) }()

	select {
	case <-done:
	case <-deadline:
		res.TimedOut = true
	case <-ctx.Done():
		res.Cancelled = true
	}
	// The group goes even after a normal exit: a background child that
	// closed its pipes must not outlive the call.
	syscall.Kill(-pgid, syscall.SIGKILL)
	if res.TimedOut || res.Cancelled {
		select {
		case <-done:
		case <-time.After(settle):
			closeAll(reads) // a process outside the group still holds them
			<-done
		}
	}
	closeAll(reads)

	res.ExitCode = cmd.ProcessState.ExitCode()
	mu.Lock()
	res.Output, res.Stdout, res.Stderr = all.Capture(), out.Capture(), errc.Capture()
	mu.Unlock()
	if req.Command != "" && !res.TimedOut && !res.Cancelled {
		lines := strings.Split(strings.TrimRight(cwdBuf.String(), "\n"), "\n")
		res.Cwd = r.rel(lines[len(lines)-1])
	}
	if res.Cancelled {
		return res, ctx.Err()
	}
	return res, nil
}

// proc is a started process: its output pipes (stdout, stderr, and the
// final directory for a shell) and, for a warm shell, the pipe its
// command arrives on.
type proc struct {
	cmd   *exec.Cmd
	reads []*os.File
	in    *os.File // fd 4's write end; nil unless warm
}

// start starts argv in dir as a process group of its own with stdout,
// stderr, fd 3 (the final directory) for a shell and fd 4 (the command)
// for a warm one.
func (r *runner) start(argv []string, dir string, envv []string, shell, warm bool) (*proc, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = envv
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	p := &proc{cmd: cmd}
	var child []*os.File // the child's ends, closed once it started
	fail := func(err error) (*proc, error) {
		closeAll(child)
		closeAll(p.reads)
		if p.in != nil {
			p.in.Close()
		}
		return nil, err
	}
	for range 2 + boolInt(shell) {
		rd, wr, err := os.Pipe()
		if err != nil {
			return fail(err)
		}
		p.reads = append(p.reads, rd)
		child = append(child, wr)
	}
	if warm {
		rd, wr, err := os.Pipe()
		if err != nil {
			return fail(err)
		}
		p.in = wr
		child = append(child, rd)
	}
	cmd.Stdout, cmd.Stderr = child[0], child[1]
	cmd.ExtraFiles = child[2:] // fd 3: the final directory; fd 4: the command
	err := cmd.Start()
	closeAll(child)
	if err != nil {
		child = nil
		return fail(err)
	}
	return p, nil
}

func closeAll(fs []*os.File) {
	for _, f := range fs {
		f.Close()
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
