//go:build unix

package dirfs

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// Warm shells. Starting bash is most of what `bash true` costs (on the
// reference VM a fork is ~3.4 ms and exec plus bash's start ~4 ms), so a
// runner that has run a command keeps one bash started ahead, a process
// group of its own with its pipes open, blocked reading its command from
// fd 4. A call hands it the directory and the command and then treats it
// exactly as a shell it had just started: the same trap, eval, capture,
// deadline and group kill. Each shell runs one command and exits, so
// nothing is shared between calls ($$, variables, the process group are
// the command's own); the pool refills in the background after each take.
// A shell started under another environment than the call's is discarded
// (the call starts its own); close kills the idle shell.

// warmRead is the prelude of a warm shell: the directory NUL-terminated,
// the command's length in bytes on a line, then the command, read in one
// go (read -N on a pipe reads in chunks; LC_ALL=C makes its count bytes).
// SECONDS restarts: the shell waited before its command came.
const warmRead = `IFS= read -r -d '' __a3s_dir <&4 && IFS= read -r __a3s_n <&4 && LC_ALL=C IFS= read -r -N "$__a3s_n" __a3s_cmd <&4 || exit 125; ` +
	`exec 4<&-; [[ $__a3s_dir -ef . ]] || cd -- "$__a3s_dir"; unset __a3s_dir __a3s_n; SECONDS=0; `

// warmPool holds at most one idle shell and at most one start under way.
type warmPool struct {
	mu      sync.Mutex
	idle    *proc
	env     []string      // the idle shell's environment
	filling chan struct{} // closed when the start under way ends; nil when none is
	closed  bool
}

// take returns a warm shell that has been handed cwd and command, or nil
// (the caller starts one itself): none ready, another environment, a
// command bash cannot take whole (a NUL), or a dead shell. A start under
// way is waited for (it began earlier than one the caller would begin).
// Every take starts the next shell.
func (w *warmPool) take(ctx context.Context, r *runner, envv []string, cwd, command string) *proc {
	if strings.IndexByte(command, 0) >= 0 {
		return nil
	}
	w.mu.Lock()
	for w.idle == nil && w.filling != nil && !w.closed {
		ch := w.filling
		w.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return nil
		}
		w.mu.Lock()
	}
	p, penv := w.idle, w.env
	w.idle, w.env = nil, nil
	if !w.closed {
		w.fill(r, envv)
	}
	w.mu.Unlock()
	if p == nil {
		return nil
	}
	if !slices.Equal(penv, envv) {
		p.discard()
		return nil
	}
	if err := p.hand(cwd, command); err != nil {
		p.discard()
		return nil
	}
	return p
}

// fill starts a shell in the background unless one is being started.
// Called with mu held.
func (w *warmPool) fill(r *runner, envv []string) {
	if w.filling != nil {
		return
	}
	ch := make(chan struct{})
	w.filling = ch
	go func() {
		wrap := shellTrap
		if r.bwrap != "" {
			wrap = sandboxTrap
		}
		p, err := r.start(r.wrap([]string{"/bin/bash", "-c", warmRead + wrap + evalCmd, "bash"}, r.root), r.root, envv, true, true)
		w.mu.Lock()
		defer w.mu.Unlock()
		w.filling = nil
		close(ch)
		if err != nil {
			return
		}
		if w.closed || w.idle != nil {
			p.discard()
			return
		}
		w.idle, w.env = p, envv
	}()
}

// close kills the idle shell and the one being started; later takes
// return nil.
func (w *warmPool) close() {
	w.mu.Lock()
	w.closed = true
	p, ch := w.idle, w.filling
	w.idle = nil
	w.mu.Unlock()
	if p != nil {
		p.discard()
	}
	if ch != nil {
		<-ch // its goroutine discards it
	}
}

// hand writes the directory and the command to a warm shell's fd 4 and
// closes it.
func (p *proc) hand(cwd, command string) error {
	_, err := p.in.Write([]byte(cwd + "\x00" + strconv.Itoa(len(command)) + "\n" + command))
	if cerr := p.in.Close(); err == nil {
		err = cerr
	}
	p.in = nil
	return err
}

// discard kills an unused shell's group and reaps it.
func (p *proc) discard() {
	syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	if p.in != nil {
		p.in.Close()
	}
	closeAll(p.reads)
	p.cmd.Wait()
}
