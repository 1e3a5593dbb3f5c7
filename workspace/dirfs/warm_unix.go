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
// runner that has run a command keeps bash started ahead (warmShells),
// each a process
// group of its own with its pipes open, blocked reading its command from
// fd 4. A call hands it the directory and the command and then treats it
// exactly as a shell it had just started: the same trap, eval, capture,
// deadline and group kill. Each shell runs one command and exits, so
// nothing is shared between calls ($$, variables, the process group are
// the command's own); the pool refills in the background after each take.
// A shell started under another environment than the call's is discarded
// (the call starts its own); close kills the idle shells.

// warmRead is the prelude of a warm shell: the directory NUL-terminated,
// the command's length in bytes on a line, then the command, read in one
// go (read -N on a pipe reads in chunks; LC_ALL=C makes its count bytes).
// SECONDS restarts: the shell waited before its command came.
const warmRead = `IFS= read -r -d '' __a3s_dir <&4 && IFS= read -r __a3s_n <&4 && LC_ALL=C IFS= read -r -N "$__a3s_n" __a3s_cmd <&4 || exit 125; ` +
	`exec 4<&-; [[ $__a3s_dir -ef . ]] || cd -- "$__a3s_dir"; unset __a3s_dir __a3s_n; SECONDS=0; `

// warmShells is how many shells a pool keeps ready: two, so that calls
// back to back find one ready while the next starts.
const warmShells = 2

// warmPool holds up to warmShells idle shells and starts one at a time.
type warmPool struct {
	mu      sync.Mutex
	idle    []warmShell   // oldest first
	filling chan struct{} // closed when the start under way ends; nil when none is
	closed  bool
}

// warmShell is an idle shell and the environment it was started with.
type warmShell struct {
	p   *proc
	env []string
}

// take returns a warm shell that has been handed cwd and command, or nil
// (the caller starts one itself): none ready, only ones of another
// environment or dead (those are discarded), or a command bash cannot take
// whole (a NUL). A start under way is waited for (it began earlier than
// one the caller would begin). Every take refills the pool.
func (w *warmPool) take(ctx context.Context, r *runner, envv []string, cwd, command string) *proc {
	if strings.IndexByte(command, 0) >= 0 {
		return nil
	}
	w.mu.Lock()
	for len(w.idle) == 0 && w.filling != nil && !w.closed {
		ch := w.filling
		w.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return nil
		}
		w.mu.Lock()
	}
	idle := w.idle
	w.idle = nil
	if !w.closed {
		w.fill(r, envv)
	}
	w.mu.Unlock()
	var got *proc
	for i, s := range idle {
		if got == nil && slices.Equal(s.env, envv) && s.p.hand(cwd, command) == nil {
			got = s.p
			idle = idle[i+1:]
			break
		}
		s.p.discard()
	}
	if got == nil {
		return nil
	}
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		for _, s := range idle {
			s.p.discard()
		}
	} else {
		w.idle = append(idle, w.idle...)
		w.mu.Unlock()
	}
	return got
}

// fill starts shells in the background, one at a time, until warmShells
// are idle. Called with mu held.
func (w *warmPool) fill(r *runner, envv []string) {
	if w.filling != nil || len(w.idle) >= warmShells {
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
		if w.closed {
			p.discard()
			return
		}
		w.idle = append(w.idle, warmShell{p, envv})
		w.fill(r, envv)
	}()
}

// close kills the idle shells and the one being started; later takes
// return nil.
func (w *warmPool) close() {
	w.mu.Lock()
	w.closed = true
	idle, ch := w.idle, w.filling
	w.idle = nil
	w.mu.Unlock()
	for _, s := range idle {
		s.p.discard()
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
