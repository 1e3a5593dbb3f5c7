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
const shellWrap = `trap 'pwd -P >&3' EXIT; __a3s_cmd=$1; shift; eval "$__a3s_cmd" 3>&-`

// sandboxWrap is shellWrap for a command inside bubblewrap. The sandbox's
// PID namespace ends when the shell does, taking every background child
// with it at once; unconfined, a background child that still holds the
// output pipes keeps the call open until the deadline. To match, the EXIT
// trap waits while a process other than bwrap's init (pid 1, which holds
// the pipes itself) and the shell has a descriptor on either pipe: a
// glob of the namespace's few /proc entries, then a 50 ms poll only while
// one does (/bin/sleep by path: the command may have changed PATH or
// defined a sleep function).
const sandboxWrap = `__a3s_held() { local f; for f in /proc/[0-9]*/fd/*; do case $f in /proc/1/*|/proc/$$/*) ;; *) [[ $f -ef /proc/1/fd/1 || $f -ef /proc/1/fd/2 ]] && return 0;; esac; done; return 1; }; ` +
	`trap '__a3s_rc=$?; pwd -P >&3; while __a3s_held; do /bin/sleep 0.05; done; exit $__a3s_rc' EXIT; __a3s_cmd=$1; shift; eval "$__a3s_cmd" 3>&-`

// runner runs commands in one root.
type runner struct {
	root  string // real absolute path
	bwrap string // bubblewrap's path, "" for no sandbox
	ei    workspace.ExecInfo
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
	var prog []string
	switch {
	case req.Command != "" && r.bwrap != "":
		prog = []string{"/bin/bash", "-c", sandboxWrap, "bash", req.Command}
	case req.Command != "":
		prog = []string{"/bin/bash", "-c", shellWrap, "bash", req.Command}
	default:
		prog = req.Argv
	}
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
	argv := r.argv(req, cwd)
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

	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env(req)
	cmd.Dir = cwd
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var reads []*os.File
	pipe := func() (*os.File, error) {
		rd, wr, err := os.Pipe()
		if err != nil {
			return nil, err
		}
		reads = append(reads, rd)
		return wr, nil
	}
	closeAll := func(fs []*os.File) {
		for _, f := range fs {
			f.Close()
		}
	}
	var writes []*os.File
	for range 2 + boolInt(req.Command != "") {
		w, err := pipe()
		if err != nil {
			closeAll(reads)
			closeAll(writes)
			return res, err
		}
		writes = append(writes, w)
	}
	cmd.Stdout, cmd.Stderr = writes[0], writes[1]
	if req.Command != "" {
		cmd.ExtraFiles = writes[2:3] // fd 3: the final directory
	}
	err := cmd.Start()
	closeAll(writes)
	if err != nil {
		closeAll(reads)
		return res, err
	}
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

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
