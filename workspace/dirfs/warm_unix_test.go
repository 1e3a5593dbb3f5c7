//go:build unix

package dirfs

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/a3s-lab/code-wasm/workspace"
)

// warmed waits (up to 10 s: a busy machine starts bash slowly) for an
// idle warm shell of r and returns the one the next call takes.
func warmed(t *testing.T, r *runner) *proc {
	t.Helper()
	for range 500 {
		r.warm.mu.Lock()
		idle := r.warm.idle
		r.warm.mu.Unlock()
		if len(idle) > 0 {
			return idle[0].p
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("no warm shell after 10 s")
	return nil
}

// inGroup lists the live processes (not zombies) of process group g.
func inGroup(g int) []string {
	ds, _ := filepath.Glob("/proc/[0-9]*/stat")
	var out []string
	for _, d := range ds {
		b, err := os.ReadFile(d)
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp …: comm may hold spaces, not ")".
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(f) > 2 && f[2] == strconv.Itoa(g) && f[0] != "Z" {
			out = append(out, d)
		}
	}
	return out
}

// Each command runs in a warm shell of its own: the shell the pool held
// (unconfined, $$ is its pid), a fresh process every call, nothing kept
// from the previous command, stdin /dev/null and fd 4 closed; an exit or
// a SIGKILL of the shell leaves the pool working.
func TestWarmShellPerCall(t *testing.T) {
	for name, r := range runners(t) {
		t.Run(name, func(t *testing.T) {
			os.Mkdir(filepath.Join(r.root, "sub"), 0o755)
			run := func(cmd, cwd string) (workspace.ExecResult, *proc) {
				t.Helper()
				p := warmed(t, r)
				res, err := r.run(context.Background(), workspace.ExecRequest{Command: cmd, Cwd: cwd, Timeout: 20 * time.Second})
				if err != nil {
					t.Fatal(err)
				}
				if p.cmd.ProcessState == nil {
					t.Fatalf("%q did not run in the warm shell", cmd)
				}
				return res, p
			}
			r.run(context.Background(), workspace.ExecRequest{Command: "true"}) // the pool fills after a first command
			pids := map[string]bool{}
			for range 3 {
				res, p := run("echo $$", ".")
				pid := strings.TrimSpace(string(res.Stdout.Head))
				if name == "none" && pid != strconv.Itoa(p.cmd.Process.Pid) {
					t.Fatalf("$$ %s, the warm shell %d", pid, p.cmd.Process.Pid)
				}
				pids[pid+"/"+strconv.Itoa(p.cmd.Process.Pid)] = true
			}
			if len(pids) != 3 {
				t.Fatalf("the same shell twice: %v", pids)
			}
			if res, _ := run("x=1; export Y=2; f() { :; }; cd sub", "."); res.ExitCode != 0 || res.Cwd != "sub" {
				t.Fatalf("%+v", res)
			}
			if res, _ := run(`echo "${x-none} ${Y-none} $(type -t f || echo none) $(pwd)"`, "sub"); string(res.Stdout.Head) != "none none none "+filepath.Join(r.root, "sub")+"\n" {
				t.Fatalf("kept from the last call: %q", res.Stdout.Head)
			}
			if res, _ := run("cat; [[ -e /proc/$$/fd/4 ]] && echo fd4 open; echo end", "."); string(res.Output.Head) != "end\n" {
				t.Fatalf("stdin or fd 4: %q", res.Output.Head)
			}
			if res, _ := run("echo out; exit 3", "sub"); res.ExitCode != 3 || string(res.Stdout.Head) != "out\n" || res.Cwd != "sub" {
				t.Fatalf("exit 3: %+v", res)
			}
			// bwrap reports its shell's SIGKILL as 128+9.
			if res, _ := run("kill -9 $$", "."); (res.ExitCode != -1 && res.ExitCode != 137) || (res.ExitCode == 137) != (name == "bubblewrap") || res.TimedOut {
				t.Fatalf("kill -9 $$: %+v", res)
			}
			// Bytes, not characters: a multi-byte command, and one larger
			// than a pipe holds.
			big := strings.Repeat("é", 70000)
			if res, _ := run("s='"+big+"'; echo ${#s}; echo 'ü\n'", "."); string(res.Stdout.Head) != "70000\nü\n\n" && string(res.Stdout.Head) != "140000\nü\n\n" {
				t.Fatalf("%q", res.Stdout.Head)
			}
			if res, _ := run("echo ok", "."); res.ExitCode != 0 || string(res.Stdout.Head) != "ok\n" {
				t.Fatalf("after: %+v", res)
			}
		})
	}
}

// A timeout and a cancel in a warm shell kill its whole group.
func TestWarmShellTimeoutCancel(t *testing.T) {
	for name, r := range runners(t) {
		t.Run(name, func(t *testing.T) {
			r.run(context.Background(), workspace.ExecRequest{Command: "true"})
			m := marker()
			p := warmed(t, r)
			start := time.Now()
			res, err := r.run(context.Background(), workspace.ExecRequest{Command: "sleep " + m + " & echo hi", Timeout: time.Second})
			took := time.Since(start)
			if err != nil || p.cmd.ProcessState == nil {
				t.Fatal(err, "or not warm")
			}
			if !res.TimedOut || string(res.Output.Head) != "hi\n" || took < 900*time.Millisecond || took > 10*time.Second {
				t.Fatalf("after %v: %+v", took, res)
			}
			noneLeft(t, m)

			p = warmed(t, r)
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(300*time.Millisecond, cancel)
			start = time.Now()
			res, err = r.run(ctx, workspace.ExecRequest{Command: "sleep " + m + " & sleep " + m, Timeout: time.Minute})
			if err == nil || !res.Cancelled || time.Since(start) > 10*time.Second || p.cmd.ProcessState == nil {
				t.Fatalf("after %v: %v %+v", time.Since(start), err, res)
			}
			noneLeft(t, m)
		})
	}
}

// A change of the environment discards the shell started under the old
// one; close kills the idle shell and its group.
func TestWarmShellEnvAndClose(t *testing.T) {
	for name, r := range runners(t) {
		t.Run(name, func(t *testing.T) {
			r.run(context.Background(), workspace.ExecRequest{Command: "true"})
			old := warmed(t, r)
			t.Setenv("A3S_WARM_TEST", "changed")
			res, err := r.run(context.Background(), workspace.ExecRequest{Command: "echo $A3S_WARM_TEST", Timeout: 20 * time.Second})
			if err != nil || string(res.Stdout.Head) != "changed\n" {
				t.Fatal(err, res)
			}
			if old.cmd.ProcessState == nil {
				t.Fatal("a shell of the old environment is still idle")
			}
			p := warmed(t, r)
			g := p.cmd.Process.Pid
			if len(inGroup(g)) == 0 {
				t.Fatal("no process in the warm shell's group")
			}
			r.close()
			// The sandbox's inner processes are reaped by init, not us:
			// up to 10 s.
			for i := 0; len(inGroup(g)) > 0; i++ {
				if i == 500 {
					t.Fatalf("left after close: %v", inGroup(g))
				}
				time.Sleep(20 * time.Millisecond)
			}
			if res, err := r.run(context.Background(), workspace.ExecRequest{Command: "echo cold", Timeout: 20 * time.Second}); err != nil || string(res.Stdout.Head) != "cold\n" {
				t.Fatal(err, res)
			}
			r.warm.mu.Lock()
			defer r.warm.mu.Unlock()
			if len(r.warm.idle) > 0 || r.warm.filling != nil {
				t.Fatal("a closed runner started a warm shell")
			}
		})
	}
}

// An idle shell killed from outside is passed over: the call starts its
// own and the pool refills.
func TestWarmShellKilledWhileIdle(t *testing.T) {
	for name, r := range runners(t) {
		t.Run(name, func(t *testing.T) {
			r.run(context.Background(), workspace.ExecRequest{Command: "true"})
			p := warmed(t, r)
			syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
			for i := 0; len(inGroup(p.cmd.Process.Pid)) > 0; i++ {
				if i == 500 {
					t.Fatal("the killed shell did not go")
				}
				time.Sleep(20 * time.Millisecond)
			}
			res, err := r.run(context.Background(), workspace.ExecRequest{Command: "echo ok", Timeout: 20 * time.Second})
			if err != nil || res.ExitCode != 0 || string(res.Stdout.Head) != "ok\n" {
				t.Fatal(err, res)
			}
			if q := warmed(t, r); q == p {
				t.Fatal("the dead shell is still idle")
			}
		})
	}
}
