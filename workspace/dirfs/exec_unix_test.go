//go:build unix

package dirfs

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/a3s-lab/code-wasm/workspace"
)

// marker is a unique sleep length: a process of a test's command is found
// by it in /proc/*/cmdline.
func marker() string { return fmt.Sprintf("100.%06d", rand.IntN(1_000_000)) }

// left lists the processes whose command line holds s.
func left(t *testing.T, s string) []string {
	t.Helper()
	ds, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	var out []string
	for _, d := range ds {
		b, err := os.ReadFile(d)
		if err == nil && bytes.Contains(b, []byte(s)) && !bytes.Contains(b, []byte("go test")) {
			out = append(out, d+": "+strings.ReplaceAll(string(b), "\x00", " "))
		}
	}
	return out
}

// noneLeft waits up to 10 s (a busy machine reaps slowly; the processes
// it looks for sleep 100 s) for the processes holding s to go.
func noneLeft(t *testing.T, s string) {
	t.Helper()
	for range 500 {
		if len(left(t, s)) == 0 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("processes left: %v", left(t, s))
}

func testRunner(t testing.TB, o ExecOptions) *runner {
	t.Helper()
	r, err := newRunner(t.TempDir(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.close)
	return r
}

// runners are the runner with and without the sandbox (when there is one).
func runners(t testing.TB) map[string]*runner {
	m := map[string]*runner{"none": testRunner(t, ExecOptions{Sandbox: "none"})}
	if bubblewrap() != "" {
		m["bubblewrap"] = testRunner(t, ExecOptions{})
	} else {
		t.Log("no working bwrap: the sandboxed runs are skipped")
	}
	return m
}

func TestExecCapture(t *testing.T) {
	for name, r := range runners(t) {
		t.Run(name, func(t *testing.T) {
			res, err := r.run(context.Background(), workspace.ExecRequest{Command: "echo hi; echo err >&2; exit 3", Timeout: 10 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			if res.ExitCode != 3 || string(res.Stdout.Head) != "hi\n" || string(res.Stderr.Head) != "err\n" || res.Output.Total != 7 {
				t.Fatalf("got %+v", res)
			}
			if res.Sandboxed != (name == "bubblewrap") {
				t.Fatalf("sandboxed %v", res.Sandboxed)
			}
		})
	}
}

// A background child holding the pipes: the deadline ends the call, the
// output so far is kept, and the whole group is gone.
func TestExecTimeoutKillsGroup(t *testing.T) {
	for name, r := range runners(t) {
		t.Run(name, func(t *testing.T) {
			m := marker()
			start := time.Now()
			res, err := r.run(context.Background(), workspace.ExecRequest{Command: "sleep " + m + " & echo hi", Timeout: time.Second})
			took := time.Since(start)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("returned after %v", took)
			// 1,600 ms on a quiet machine; the child sleeps 100 s, so the
			// bound tells "at the deadline" from "at the child's end" with
			// room for a busy machine. The same in the sandbox: its shell
			// waits for the pipes.
			if !res.TimedOut || string(res.Output.Head) != "hi\n" || took < 900*time.Millisecond || took > 10*time.Second {
				t.Fatalf("after %v: %+v", took, res)
			}
			noneLeft(t, m)
		})
	}
}

// A background child that ends before the deadline, or lets go of the
// pipes: the call ends with the shell (or the child), not at the deadline,
// with the exit code of the shell, in both modes.
func TestExecBackgroundChildEnds(t *testing.T) {
	for name, r := range runners(t) {
		t.Run(name, func(t *testing.T) {
			m := marker()
			for _, c := range []struct{ cmd, out string }{
				{"(sleep 0.3; echo late) & echo hi; exit 4", "hi\nlate\n"},
				{"sleep " + m + " >/dev/null 2>&1 & echo hi; exit 4", "hi\n"},
			} {
				start := time.Now()
				res, err := r.run(context.Background(), workspace.ExecRequest{Command: c.cmd, Timeout: 20 * time.Second})
				took := time.Since(start)
				if err != nil || res.TimedOut || res.ExitCode != 4 || string(res.Output.Head) != c.out || took > 10*time.Second {
					t.Fatalf("%q after %v: %v %+v", c.cmd, took, err, res)
				}
			}
			noneLeft(t, m)
		})
	}
}

// A child that leaves the group with setsid survives a group kill; the
// sandbox's PID namespace takes it down.
func TestExecSandboxSetsid(t *testing.T) {
	if bubblewrap() == "" {
		t.Skip("no working bwrap")
	}
	r := testRunner(t, ExecOptions{})
	m := marker()
	res, err := r.run(context.Background(), workspace.ExecRequest{Command: "setsid sleep " + m + " & echo hi", Timeout: time.Second})
	if err != nil || !res.Sandboxed {
		t.Fatal(err, res.Sandboxed)
	}
	noneLeft(t, m)
}

func TestExecSandboxConfines(t *testing.T) {
	if bubblewrap() == "" {
		t.Skip("no working bwrap")
	}
	outside := t.TempDir()
	r := testRunner(t, ExecOptions{})
	cmd := fmt.Sprintf("echo in > inside.txt; echo out > %s/out.txt; echo etc > /etc/a3s-test; echo tmp > /tmp/a3s-tmp; cat /tmp/a3s-tmp", outside)
	res, err := r.run(context.Background(), workspace.ExecRequest{Command: cmd, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(r.root, "inside.txt")); err != nil || string(b) != "in\n" {
		t.Fatalf("inside: %q %v", b, err)
	}
	for _, p := range []string{filepath.Join(outside, "out.txt"), "/etc/a3s-test", "/tmp/a3s-tmp"} {
		if _, err := os.Stat(p); err == nil {
			os.Remove(p)
			t.Errorf("the sandboxed command wrote %s", p)
		}
	}
	if string(res.Stdout.Head) != "tmp\n" { // a private /tmp of its own
		t.Errorf("stdout %q", res.Stdout.Head)
	}
}

func TestExecSandboxNetwork(t *testing.T) {
	if bubblewrap() == "" {
		t.Skip("no working bwrap")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("hello\n"))
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	cmd := fmt.Sprintf("exec 5<>/dev/tcp/127.0.0.1/%d && head -n1 <&5", port)
	for _, allow := range []bool{false, true} {
		r := testRunner(t, ExecOptions{Network: allow})
		res, err := r.run(context.Background(), workspace.ExecRequest{Command: cmd, Timeout: 10 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if got := string(res.Stdout.Head) == "hello\n"; got != allow {
			t.Errorf("network %v: %+v %q", allow, res, res.Stderr.Head)
		}
	}
}

// 5 MiB on each stream at once: exact totals, each stream's head and tail
// byte-exact, the interleaved capture 64 KiB + 36 KiB.
func TestExecCaptureBounds(t *testing.T) {
	for name, r := range runners(t) {
		t.Run(name, func(t *testing.T) {
			cmd := "seq -f %09.0f 1 524288 & seq -f %09.0f 524289 1048576 >&2; wait"
			res, err := r.run(context.Background(), workspace.ExecRequest{Command: cmd, Timeout: 60 * time.Second})
			if err != nil || res.ExitCode != 0 {
				t.Fatal(err, res.ExitCode)
			}
			seq := func(from, to int) []byte {
				var b bytes.Buffer
				for i := from; i <= to; i++ {
					fmt.Fprintf(&b, "%09d\n", i)
				}
				return b.Bytes()
			}
			wantOut, wantErr := seq(1, 524288), seq(524289, 1048576)
			if res.Output.Total != 10485760 || res.Stdout.Total != 5242880 || res.Stderr.Total != 5242880 {
				t.Fatalf("totals %d %d %d", res.Output.Total, res.Stdout.Total, res.Stderr.Total)
			}
			if len(res.Output.Head)+len(res.Output.Tail) != 102400 || !res.Output.Truncated() {
				t.Fatalf("captured %d+%d", len(res.Output.Head), len(res.Output.Tail))
			}
			for _, c := range []struct {
				got  workspace.Capture
				want []byte
			}{{res.Stdout, wantOut}, {res.Stderr, wantErr}} {
				if !bytes.Equal(c.got.Head, c.want[:workspace.CaptureHead]) || !bytes.Equal(c.got.Tail, c.want[len(c.want)-workspace.CaptureTail:]) {
					t.Fatalf("head/tail differ")
				}
			}
		})
	}
}

// One stream after the other: the interleaved capture's head and tail are
// byte-exact too.
func TestExecCaptureSequential(t *testing.T) {
	r := testRunner(t, ExecOptions{Sandbox: "none"})
	cmd := "head -c 5242880 /dev/zero | tr '\\0' a; head -c 5242880 /dev/zero | tr '\\0' b >&2; printf END >&2"
	res, err := r.run(context.Background(), workspace.ExecRequest{Command: cmd, Timeout: 60 * time.Second})
	if err != nil || res.ExitCode != 0 {
		t.Fatal(err, res.ExitCode)
	}
	wantTail := strings.Repeat("b", workspace.CaptureTail-3) + "END"
	if res.Output.Total != 10485763 || string(res.Output.Head) != strings.Repeat("a", workspace.CaptureHead) || string(res.Output.Tail) != wantTail {
		t.Fatalf("total %d, head %q…, tail …%q", res.Output.Total, res.Output.Head[:8], res.Output.Tail[len(res.Output.Tail)-8:])
	}
}

func TestExecCwd(t *testing.T) {
	for name, r := range runners(t) {
		t.Run(name, func(t *testing.T) {
			os.Mkdir(filepath.Join(r.root, "sub"), 0o755)
			run := func(cmd, cwd string) workspace.ExecResult {
				res, err := r.run(context.Background(), workspace.ExecRequest{Command: cmd, Cwd: cwd, Timeout: 10 * time.Second})
				if err != nil {
					t.Fatal(err)
				}
				return res
			}
			if res := run("cd sub", "."); res.Cwd != "sub" {
				t.Fatalf("cd sub: %q", res.Cwd)
			}
			if res := run("pwd", "sub"); string(res.Stdout.Head) != filepath.Join(r.root, "sub")+"\n" || res.Cwd != "sub" {
				t.Fatalf("pwd: %q %q", res.Stdout.Head, res.Cwd)
			}
			if res := run("echo 'unbalanced", "sub"); res.ExitCode == 0 || res.Cwd != "sub" {
				t.Fatalf("syntax error: %+v", res)
			}
			if res := run("cd /", "sub"); res.Cwd != "" {
				t.Fatalf("outside: %q", res.Cwd)
			}
			if res := run("pwd", "gone"); string(res.Stdout.Head) != r.root+"\n" {
				t.Fatalf("missing cwd: %q", res.Stdout.Head)
			}
		})
	}
}

// Cancelling during `sleep & sleep` settles at once and leaves nothing.
func TestExecCancel(t *testing.T) {
	for name, r := range runners(t) {
		t.Run(name, func(t *testing.T) {
			m := marker()
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(300*time.Millisecond, cancel)
			start := time.Now()
			res, err := r.run(ctx, workspace.ExecRequest{Command: "sleep " + m + " & sleep " + m, Timeout: time.Minute})
			// The sleeps last 100 s: the bound tells settled from hung.
			if err == nil || !res.Cancelled || time.Since(start) > 10*time.Second {
				t.Fatalf("after %v: %v %+v", time.Since(start), err, res)
			}
			noneLeft(t, m)
		})
	}
}
