//go:build unix

package core_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/a3s-lab/code-wasm/core"
	"github.com/a3s-lab/code-wasm/kernel"
	"github.com/a3s-lab/code-wasm/workspace"
	"github.com/a3s-lab/code-wasm/workspace/dirfs"
)

// dirSession is a session over a directory with the exec capability.
func dirSession(t testing.TB, root string, o dirfs.ExecOptions) *core.Session {
	t.Helper()
	d, err := dirfs.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.EnableExec(o); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() }) // after the session's: the idle warm shell goes
	ws, err := workspace.New(d)
	if err != nil {
		t.Fatal(err)
	}
	s, err := core.New(core.Options{Workspace: ws})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

func hasBwrap() bool { _, err := exec.LookPath("bwrap"); return err == nil }

// sandboxModes are the exec options to run a test under: unconfined, and
// bubblewrap where it is installed.
func sandboxModes() map[string]dirfs.ExecOptions {
	m := map[string]dirfs.ExecOptions{"none": {Sandbox: "none"}}
	if hasBwrap() {
		m["bubblewrap"] = dirfs.ExecOptions{}
	}
	return m
}

func marker() string { return fmt.Sprintf("100.%06d", rand.IntN(1_000_000)) }

// noneLeft waits up to 10 s (a busy machine reaps slowly; the processes
// it looks for sleep 100 s) for every process whose command line holds s
// to be gone.
func noneLeft(t *testing.T, s string) {
	t.Helper()
	var found []string
	for range 500 {
		found = found[:0]
		ds, _ := filepath.Glob("/proc/[0-9]*/cmdline")
		for _, d := range ds {
			if b, err := os.ReadFile(d); err == nil && bytes.Contains(b, []byte(s)) {
				found = append(found, strings.ReplaceAll(string(b), "\x00", " "))
			}
		}
		if len(found) == 0 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("processes left: %v", found)
}

func meta(t *testing.T, res *kernel.Result, path ...string) any {
	t.Helper()
	var v any = res.Metadata
	for _, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			t.Fatalf("metadata %v has no %s: %v", path, k, res.Metadata)
		}
		v = m[k]
	}
	return v
}

func TestBashListedOnlyWithExec(t *testing.T) {
	s := dirSession(t, t.TempDir(), dirfs.ExecOptions{Sandbox: "none"})
	names := strings.Join(s.ToolNames(), ",")
	if !strings.Contains(names, "bash") || strings.Contains(names, "git") {
		t.Fatalf("tools of a plain directory: %s", names)
	}
	if _, err := s.Tool(context.Background(), "git", map[string]any{"command": "status"}); !core.IsNotRegistered(err) {
		t.Fatalf("git outside a repository: %v", err)
	}
	// Options.Directory: the same, and git in a repository.
	if _, err := exec.LookPath("git"); err == nil {
		s, err := core.New(core.Options{Directory: gitRepo(t, 1), Exec: dirfs.ExecOptions{Sandbox: "none"}})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if names := strings.Join(s.ToolNames(), ","); !strings.Contains(names, "bash") || !strings.Contains(names, "git") {
			t.Fatalf("tools of a repository: %s", names)
		}
		if _, err := core.New(core.Options{Directory: t.TempDir(), Exec: dirfs.ExecOptions{Sandbox: "jail"}}); err == nil || !strings.Contains(err.Error(), "sandbox") {
			t.Fatalf("a bad sandbox: %v", err)
		}
	}
}

func TestBashTimeout(t *testing.T) {
	for name, o := range sandboxModes() {
		t.Run(name, func(t *testing.T) {
			s := dirSession(t, t.TempDir(), o)
			m := marker()
			start := time.Now()
			res, err := s.Tool(context.Background(), "bash", map[string]any{"command": "sleep " + m + " & echo hi", "timeout": 1000})
			took := time.Since(start)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: %v", name, took)
			// The child sleeps 100 s: the bound tells "at the deadline"
			// from "at the child's end", with room for a busy machine.
			if took > 10*time.Second || !strings.HasPrefix(res.Output, "hi\n") || meta(t, res, "sandboxed") != (name == "bubblewrap") {
				t.Fatalf("after %v: %+v", took, res)
			}
			// The background sleep holds the pipes to the deadline, in the
			// sandbox as well (its shell waits for them before the PID
			// namespace ends).
			if meta(t, res, "output", "timed_out") != true || res.ErrorKind == nil || res.ErrorKind.Type != kernel.ErrTimeout || res.ErrorKind.Op != "bash" {
				t.Fatalf("not a timeout: %+v %+v", res, res.ErrorKind)
			}
			noneLeft(t, m)
		})
	}
}

// A timeout below 1000 ms is raised to 1000.
func TestBashTimeoutFloor(t *testing.T) {
	s := dirSession(t, t.TempDir(), dirfs.ExecOptions{Sandbox: "none"})
	res, err := s.Tool(context.Background(), "bash", map[string]any{"command": "sleep 0.3; echo done", "timeout": 10})
	if err != nil || res.ExitCode != 0 || res.Output != "done\n" || meta(t, res, "timeout_ms") != int64(1000) {
		t.Fatalf("%v %+v", err, res)
	}
}

func TestBashCapture(t *testing.T) {
	for name, o := range sandboxModes() {
		t.Run(name, func(t *testing.T) {
			s := dirSession(t, t.TempDir(), o)
			cmd := "seq -f %09.0f 1 524288 & seq -f %09.0f 524289 1048576 >&2; wait"
			res, err := s.Tool(context.Background(), "bash", map[string]any{"command": cmd, "timeout": 60000})
			if err != nil || res.ExitCode != 0 {
				t.Fatal(err, res.ExitCode)
			}
			out := meta(t, res, "output").(map[string]any)
			if out["total_bytes"] != int64(10485760) || out["stdout_bytes"] != int64(5242880) || out["stderr_bytes"] != int64(5242880) ||
				out["captured_bytes"] != 102400 || out["truncated"] != true {
				t.Fatalf("output metadata %v", out)
			}
			var want bytes.Buffer
			for i := 1; i <= 524288; i++ {
				fmt.Fprintf(&want, "%09d\n", i)
			}
			w := want.String()
			// The streams apart are past the 64 KiB metadata bound: whole in
			// the metadata artifact.
			art, ok := s.Artifact(meta(t, res, "metadata_artifact", "artifact_uri").(string))
			var full struct{ Stdout string }
			if !ok || json.Unmarshal([]byte(art.Content), &full) != nil {
				t.Fatalf("metadata artifact: %v", ok)
			}
			so := full.Stdout
			if !strings.HasPrefix(so, w[:workspace.CaptureHead]) || !strings.HasSuffix(so, w[len(w)-workspace.CaptureTail:]) {
				t.Fatalf("stdout head or tail differs")
			}
			if !strings.Contains(res.Output, "bytes omitted (10485760 in all)") {
				t.Fatalf("no omission marker")
			}
		})
	}
}

func TestBashCwd(t *testing.T) {
	for name, o := range sandboxModes() {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			os.Mkdir(filepath.Join(root, "sub"), 0o755)
			real, _ := filepath.EvalSymlinks(root)
			s := dirSession(t, root, o)
			ctx := context.Background()
			for _, c := range []struct{ cmd, want string }{
				{"cd sub", ""},
				{"pwd", real + "/sub\n"},
				{"echo 'unbalanced", ""},
				{"pwd", real + "/sub\n"},
				{"exit 3", "\n[exit code 3]"},
				{"pwd", real + "/sub\n"},
				{"cd /", ""},
				{"pwd", real + "/sub\n"}, // a cwd outside the root is dropped
			} {
				out, err := s.Bash(ctx, c.cmd)
				if err != nil {
					t.Fatalf("%s: %v", c.cmd, err)
				}
				if c.want != "" && out != c.want {
					t.Fatalf("%s: %q, want %q", c.cmd, out, c.want)
				}
			}
		})
	}
}

// Closing the session kills a running command and its children.
func TestBashCloseSettles(t *testing.T) {
	for name, o := range sandboxModes() {
		t.Run(name, func(t *testing.T) {
			d, _ := dirfs.Open(t.TempDir())
			d.EnableExec(o)
			ws, _ := workspace.New(d)
			s, _ := core.New(core.Options{Workspace: ws})
			m := marker()
			done := make(chan *kernel.Result)
			go func() {
				res, _ := s.Tool(context.Background(), "bash", map[string]any{"command": "sleep " + m + " & sleep " + m})
				done <- res
			}()
			time.Sleep(400 * time.Millisecond)
			start := time.Now()
			s.Close()
			res := <-done
			// 1 s on a quiet machine; the sleeps last 100 s.
			if took := time.Since(start); took > 10*time.Second {
				t.Fatalf("close took %v", took)
			}
			if res == nil || res.ErrorKind == nil || res.ErrorKind.Type != kernel.ErrCancelled {
				t.Fatalf("the call was not cancelled: %+v", res)
			}
			noneLeft(t, m)
		})
	}
}

func TestBashGoverned(t *testing.T) {
	ctx := context.Background()
	policy := core.Options{}
	policy.Permission.DefaultDecision = kernel.DecisionAllow
	open := func(o dirfs.ExecOptions) *core.Session {
		d, _ := dirfs.Open(t.TempDir())
		if err := d.EnableExec(o); err != nil {
			t.Fatal(err)
		}
		ws, _ := workspace.New(d)
		opts := policy
		opts.Workspace = ws
		s, err := core.New(opts)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		return s
	}
	if hasBwrap() {
		res, err := open(dirfs.ExecOptions{}).GovernedTool(ctx, "bash", map[string]any{"command": "echo hi"})
		if err != nil || res.ExitCode != 0 || meta(t, res, "sandboxed") != true {
			t.Fatalf("sandboxed governed: %v %+v", err, res)
		}
	}
	t.Setenv("PATH", "/nonexistent") // no bwrap to find
	noSandbox := open(dirfs.ExecOptions{})
	res, err := noSandbox.GovernedTool(ctx, "bash", map[string]any{"command": "echo hi"})
	if err != nil || res.ErrorKind == nil || res.ErrorKind.Type != kernel.ErrUnsupported {
		t.Fatalf("governed without a sandbox: %v %+v", err, res)
	}
	if out, err := noSandbox.Bash(ctx, "echo trusted"); err != nil || out != "trusted\n" {
		t.Fatalf("trusted without a sandbox: %q %v", out, err)
	}
	res, err = open(dirfs.ExecOptions{Sandbox: "none"}).GovernedTool(ctx, "bash", map[string]any{"command": "echo hi"})
	if err != nil || res.ExitCode != 0 || res.Output != "hi\n" || meta(t, res, "sandboxed") != false {
		t.Fatalf("sandbox none: %v %+v", err, res)
	}
}

// gitRepo makes a repository of n commits with git fast-import: commit i
// rewrites file i%200 with 50 lines of multi-byte text.
func gitRepo(t testing.TB, n int) string {
	t.Helper()
	dir := t.TempDir()
	run := func(stdin string, args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		cmd.Stdin = strings.NewReader(stdin)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	run("", "init", "-q", "-b", "main")
	var fi strings.Builder
	for i := 1; i <= n; i++ {
		var body strings.Builder
		for l := range 50 {
			fmt.Fprintf(&body, "line %d of commit %d: ünïcødé ✓ %s\n", l, i, strings.Repeat("é", i%7))
		}
		fmt.Fprintf(&fi, "commit refs/heads/main\nmark :%d\ncommitter T <t@example.com> %d +0000\ndata %d\n%s\n", i, 1700000000+i, len(fmt.Sprint("c", i)), fmt.Sprint("c", i))
		if i > 1 {
			fmt.Fprintf(&fi, "from :%d\n", i-1)
		}
		fmt.Fprintf(&fi, "M 100644 inline src/f%03d.txt\ndata %d\n%s\n", i%200, body.Len(), body.String())
	}
	run(fi.String(), "fast-import", "--quiet")
	run("", "checkout", "-q", "main")
	return dir
}

func gitRun(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"--no-pager"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=T", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=T", "GIT_COMMITTER_EMAIL=t@example.com")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %v: %v", args, err)
	}
	return string(out)
}

func TestGitLogPages(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	dir := gitRepo(t, 2000)
	s := dirSession(t, dir, dirfs.ExecOptions{Sandbox: "none"})
	ctx := context.Background()
	for _, landing := range []bool{false, true} {
		seen := map[string]bool{}
		cursor, pages := "", 0
		for {
			res, err := s.Git(ctx, core.GitOptions{Command: "log", Limit: 10, Cursor: cursor})
			if err != nil || res.ExitCode != 0 {
				t.Fatalf("page %d: %v %+v", pages, err, res)
			}
			pages++
			for _, c := range meta(t, res, "commits").([]map[string]any) {
				id := c["id"].(string)
				if seen[id] {
					t.Fatalf("landing=%v: %s repeated on page %d", landing, id, pages)
				}
				seen[id] = true
			}
			next, _ := meta(t, res, "page", "next_cursor").(string)
			if next == "" {
				break
			}
			if landing && pages == 1 { // a commit lands between pages
				os.WriteFile(filepath.Join(dir, "new.txt"), []byte("x\n"), 0o644)
				gitRun(t, dir, "add", "new.txt")
				gitRun(t, dir, "commit", "-qm", "landed")
			}
			cursor = next
		}
		if pages != 200 || len(seen) != 2000 {
			t.Fatalf("landing=%v: %d pages, %d ids", landing, pages, len(seen))
		}
	}
}

func TestGitDiffPages(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	dir := gitRepo(t, 300)
	s := dirSession(t, dir, dirfs.ExecOptions{Sandbox: "none"})
	ctx := context.Background()
	want := gitRun(t, dir, "diff", "--no-ext-diff", "HEAD~25", "HEAD")
	t.Logf("diff of %d bytes", len(want))
	var got strings.Builder
	cursor, pages := "", 0
	for {
		res, err := s.Git(ctx, core.GitOptions{Command: "diff", Target: "HEAD~25 HEAD", MaxBytes: 256, Cursor: cursor})
		if err != nil || res.ExitCode != 0 {
			t.Fatalf("page %d: %v %+v", pages, err, res)
		}
		n := meta(t, res, "range", "returned_bytes").(int)
		page := res.Output[:n]
		if !utf8.ValidString(page) || n > 256 {
			t.Fatalf("page %d: %d bytes, valid %v", pages, n, utf8.ValidString(page))
		}
		got.WriteString(page)
		pages++
		next, _ := meta(t, res, "range", "next_cursor").(string)
		if next == "" {
			break
		}
		cursor = next
	}
	if got.String() != want {
		t.Fatalf("%d pages concatenate to %d bytes, git diff gave %d", pages, got.Len(), len(want))
	}
	// A page of a diff that has changed since is refused.
	first, _ := s.Git(ctx, core.GitOptions{Command: "diff", MaxBytes: 256})
	if first.Output != "No changes." {
		t.Fatalf("clean tree: %q", first.Output)
	}
	os.WriteFile(filepath.Join(dir, "src/f001.txt"), []byte(strings.Repeat("changed ✓\n", 100)), 0o644)
	p1, _ := s.Git(ctx, core.GitOptions{Command: "diff", MaxBytes: 256})
	next := meta(t, p1, "range", "next_cursor").(string)
	os.WriteFile(filepath.Join(dir, "src/f002.txt"), []byte("changed again\n"), 0o644)
	if res, _ := s.Git(ctx, core.GitOptions{Command: "diff", MaxBytes: 256, Cursor: next}); res.ErrorKind == nil || !strings.Contains(res.Output, "expired") {
		t.Fatalf("stale cursor: %+v", res)
	}
}

func TestGitCommands(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	dir := gitRepo(t, 3)
	gitRun(t, dir, "remote", "add", "origin", "https://user:secret@example.com/r.git?token=x#frag")
	s := dirSession(t, dir, dirfs.ExecOptions{Sandbox: "none"})
	ctx := context.Background()
	must := func(o core.GitOptions) *kernel.Result {
		t.Helper()
		res, err := s.Git(ctx, o)
		if err != nil || res.ExitCode != 0 {
			t.Fatalf("%+v: %v %+v", o, err, res)
		}
		return res
	}
	if r := must(core.GitOptions{Command: "status"}); meta(t, r, "branch") != "main" || meta(t, r, "is_dirty") != false {
		t.Fatalf("status: %+v", r)
	}
	os.WriteFile(filepath.Join(dir, "src/f001.txt"), []byte("x\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "untracked.txt"), []byte("u\n"), 0o644)
	if r := must(core.GitOptions{Command: "status"}); meta(t, r, "dirty_count") != 2 {
		t.Fatalf("dirty status: %+v", r)
	}
	r := must(core.GitOptions{Command: "remote"})
	if strings.Contains(r.Output, "secret") || strings.Contains(r.Output, "token") || !strings.Contains(r.Output, "https://example.com/r.git") {
		t.Fatalf("remote: %q", r.Output)
	}
	msg := "wip"
	r = must(core.GitOptions{Command: "stash", Message: &msg, IncludeUntracked: true})
	if cp := fmt.Sprint(meta(t, r, "changed_paths")); !strings.Contains(cp, "src/f001.txt") || !strings.Contains(cp, "untracked.txt") {
		t.Fatalf("stash changed_paths %s", cp)
	}
	if r := must(core.GitOptions{Command: "stash"}); !strings.Contains(r.Output, "stash@{0}: On main: wip") {
		t.Fatalf("stash list %q", r.Output)
	}
	must(core.GitOptions{Command: "branch", Name: "feature", Base: "HEAD~1"})
	if r := must(core.GitOptions{Command: "branch"}); !strings.Contains(r.Output, "feature") || meta(t, r, "current") != "main" {
		t.Fatalf("branch list %q", r.Output)
	}
	r = must(core.GitOptions{Command: "checkout", Ref: "feature"})
	if cp := meta(t, r, "changed_paths").([]string); len(cp) != 1 || cp[0] != "src/f003.txt" {
		t.Fatalf("checkout changed_paths %v", cp)
	}
	must(core.GitOptions{Command: "worktree", Subcommand: "create", Name: "wt-branch", Path: "wt/one"})
	if r := must(core.GitOptions{Command: "worktree"}); !strings.Contains(r.Output, "wt-branch") {
		t.Fatalf("worktree list %q", r.Output)
	}
	must(core.GitOptions{Command: "worktree", Subcommand: "remove", Path: "wt/one"})
	// An unlisted command, an option smuggled into a ref.
	for _, o := range []map[string]any{{"command": "push"}, {"command": "checkout", "ref": "--orphan=x"}} {
		res, err := s.Tool(ctx, "git", o)
		if err != nil || res.ErrorKind == nil || res.ErrorKind.Type != kernel.ErrInvalidArgument {
			t.Fatalf("%v: %v %+v", o, err, res)
		}
	}
}

func TestGitNotARepository(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	dir := gitRepo(t, 1)
	s := dirSession(t, dir, dirfs.ExecOptions{Sandbox: "none"})
	os.RemoveAll(filepath.Join(dir, ".git")) // gone after the session listed git
	res, err := s.Git(context.Background(), core.GitOptions{Command: "status"})
	if err != nil || !strings.HasPrefix(res.Output, "Not a git repository") {
		t.Fatalf("%v %+v", err, res)
	}
}

func TestVerifyCommands(t *testing.T) {
	s := dirSession(t, t.TempDir(), dirfs.ExecOptions{Sandbox: "none"})
	ctx := context.Background()
	check := func(cmds []core.VerificationCommand, status string) core.VerificationReport {
		t.Helper()
		rep, err := s.VerifyCommands(ctx, "subject", cmds)
		if err != nil || rep.Schema != "a3s.verification_report.v1" || rep.Status != status {
			t.Fatalf("%v: %v %+v", cmds, err, rep)
		}
		return rep
	}
	pass := core.VerificationCommand{ID: "pass", Kind: "test", Command: "true", Required: true}
	fail := core.VerificationCommand{ID: "fail", Kind: "test", Command: "exit 4", Required: true}
	slow := core.VerificationCommand{ID: "slow", Kind: "test", Command: "sleep 5", TimeoutMs: 1000}
	optional := core.VerificationCommand{ID: "lint", Kind: "lint", Command: "false"}
	check(nil, "skipped")
	rep := check([]core.VerificationCommand{pass}, "passed")
	if rep.Checks[0].Status != "passed" || rep.Checks[0].SuggestedTools[0] != "bash" {
		t.Fatalf("%+v", rep.Checks)
	}
	rep = check([]core.VerificationCommand{pass, fail}, "failed")
	if rep.Checks[1].ResidualRisk != "verification command exited with code 4: exit 4" {
		t.Fatalf("%+v", rep.Checks[1])
	}
	rep = check([]core.VerificationCommand{slow}, "failed")
	if !strings.Contains(rep.Checks[0].ResidualRisk, "timed out after 1000 ms") {
		t.Fatalf("%+v", rep.Checks[0])
	}
	check([]core.VerificationCommand{pass, optional}, "failed") // an optional failure fails too
	if _, err := s.VerifyCommands(ctx, "x", []core.VerificationCommand{pass, pass}); err == nil {
		t.Fatal("a duplicate id was accepted")
	}
}

// This repository's own go.mod and package.json.
func TestVerifyPresets(t *testing.T) {
	s := dirSession(t, "..", dirfs.ExecOptions{Sandbox: "none"})
	cmds, err := s.VerifyPresets(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, c := range cmds {
		ids = append(ids, c.ID+"="+c.Command)
	}
	// package.json has no scripts: nothing from it.
	if got := strings.Join(ids, ";"); got != "go-test=go test ./...;go-vet=go vet ./..." {
		t.Fatalf("presets %s", got)
	}
	// A package.json with scripts, the package manager from its lockfile.
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"scripts":{"test":"vitest","lint":"eslint ."}}`), 0o644)
	os.WriteFile(filepath.Join(dir, "pnpm-lock.yaml"), nil, 0o644)
	cmds, err = dirSession(t, dir, dirfs.ExecOptions{Sandbox: "none"}).VerifyPresets(context.Background())
	if err != nil || len(cmds) != 2 || cmds[0].Command != "pnpm run test" || !cmds[0].Required || cmds[1].Command != "pnpm run lint" || cmds[1].Required {
		t.Fatalf("%v %+v", err, cmds)
	}
}
