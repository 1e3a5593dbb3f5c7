package tools

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"github.com/a3s-lab/code-wasm/internal/digest"
	"github.com/a3s-lab/code-wasm/internal/lazyre"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/a3s-lab/code-wasm/kernel"
	"github.com/a3s-lab/code-wasm/workspace"
)

// Git is the `git` tool (REFERENCE.md §2.8): status, log, branch,
// checkout, diff, stash, remote and worktree through the system git CLI,
// run by the workspace's exec capability as an argv (no shell) with
// hooks, pagers, external diff and credential helpers off.
type Git struct {
	ws *workspace.Workspace
	ex workspace.Executor
}

// gitCommands are the commands the tool runs; any other is refused.
var gitCommands = []string{"status", "log", "branch", "checkout", "diff", "stash", "remote", "worktree"}

// Git limits (REFERENCE.md §2.8).
const (
	gitLogDefault   = 10
	gitLogMax       = 200
	gitListDefault  = 50
	gitDiffDefault  = 65536
	gitDiffMin      = 256
	gitDiffMax      = 102400
	gitTimeout      = 30 * time.Second
	gitMaxOutput    = 16 << 20
	gitLogScanLimit = 5000
)

// gitFlags harden every run: no pager, no hooks, no fsmonitor, no
// credential helper, no transport (research §4: -c diff.external= breaks
// diff on git 2.39; --no-ext-diff --no-textconv go on each diff instead).
var gitFlags = []string{"--no-pager", "-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null",
	"-c", "credential.helper=", "-c", "protocol.allow=never", "-c", "core.quotePath=false", "-c", "color.ui=false"}

// gitEnv: no system or global config, no prompts, no optional locks.
// EMAIL is only git's last fallback for an identity (a stash needs one).
var gitEnv = []string{"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_TERMINAL_PROMPT=0",
	"GIT_PAGER=cat", "GIT_OPTIONAL_LOCKS=0", "EMAIL=a3s@localhost"}

func (*Git) Name() string { return "git" }
func (*Git) Description() string {
	return "Run a git command on the workspace repository: status, log (paged by cursor), branch (list, or create with name), checkout (ref), " +
		"diff (working tree, or target; paged by byte_offset/max_bytes), stash (list, or save with message/include_untracked), remote (list; URLs without credentials), " +
		"worktree (subcommand list, create or remove). Copy cursors exactly from the previous call."
}
func (*Git) Parameters() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{` +
		`"command":{"type":"string","enum":["status","log","branch","checkout","diff","stash","remote","worktree"]},` +
		`"subcommand":{"type":"string","enum":["list","create","remove"],"description":"worktree only (default list)."},` +
		`"name":{"type":"string","description":"branch: the branch to create; worktree create: its new branch."},` +
		`"branch":{"type":"string","description":"Alias of name for worktree create."},` +
		`"path":{"type":"string","description":"log and diff: limit to this path; worktree: the worktree's directory (workspace-relative)."},` +
		`"ref":{"type":"string","description":"checkout: the branch, tag or commit."},` +
		`"force":{"type":"boolean"},` +
		`"target":{"type":"string","description":"diff: what to compare the working tree with (a commit), or two commits 'A B' / a range 'A..B'. Omit for unstaged changes."},` +
		`"max_count":{"type":"integer","minimum":1,"description":"Deprecated alias of limit (log)."},` +
		`"limit":{"type":"integer","minimum":1,"description":"Entries per page: log 1-200 (default 10); branch, stash, remote, worktree list default 50."},` +
		`"cursor":{"type":"string","description":"Opaque: copy next_cursor exactly from the previous call."},` +
		`"byte_offset":{"type":"integer","minimum":0,"description":"diff: the byte to start the page at (next_byte_offset of the previous page)."},` +
		`"max_bytes":{"type":"integer","description":"diff: page size in bytes (256-102400, default 65536)."},` +
		`"message":{"type":"string","description":"stash: save the changes with this message."},` +
		`"include_untracked":{"type":"boolean","description":"stash: save untracked files too."},` +
		`"remote_name":{"type":"string","description":"Reserved."},` +
		`"new_branch":{"type":"boolean","description":"worktree create: make name a new branch (default true)."},` +
		`"base":{"type":"string","description":"branch and worktree create: the start point (default HEAD)."}},` +
		`"required":["command"],"additionalProperties":false,` +
		`"examples":[{"command":"status"},{"command":"log","limit":20},{"command":"diff","target":"HEAD~1"},{"command":"checkout","ref":"main"}]}`)
}

// gitArgs are the tool's arguments.
type gitArgs struct {
	Command          string  `json:"command"`
	Subcommand       string  `json:"subcommand"`
	Name             string  `json:"name"`
	Branch           string  `json:"branch"`
	Path             string  `json:"path"`
	Ref              string  `json:"ref"`
	Force            bool    `json:"force"`
	Target           string  `json:"target"`
	MaxCount         *int    `json:"max_count"`
	Limit            *int    `json:"limit"`
	Cursor           string  `json:"cursor"`
	ByteOffset       *int    `json:"byte_offset"`
	MaxBytes         *int    `json:"max_bytes"`
	Message          *string `json:"message"`
	IncludeUntracked bool    `json:"include_untracked"`
	RemoteName       string  `json:"remote_name"`
	NewBranch        *bool   `json:"new_branch"`
	Base             string  `json:"base"`
}

// mutates reports whether the call changes the repository.
func (a gitArgs) mutates() bool {
	switch a.Command {
	case "checkout":
		return true
	case "branch":
		return a.Name != ""
	case "stash":
		return a.Message != nil || a.IncludeUntracked
	case "worktree":
		return a.Subcommand == "create" || a.Subcommand == "remove"
	}
	return false
}

func readGitArgs(raw json.RawMessage) (gitArgs, bool) {
	var a gitArgs
	return a, json.Unmarshal(raw, &a) == nil
}

func (*Git) Capabilities(args json.RawMessage) kernel.Capabilities {
	a, ok := readGitArgs(args)
	if !ok || a.mutates() {
		return kernel.Conservative()
	}
	c := kernel.ReadOnlyPaginated(8)
	if a.Command == "status" {
		c.SupportsPagination = false
	}
	if a.Command == "diff" {
		c.OutputKind = kernel.OutputDiff
	}
	return c
}

// Effects: mutations change the workspace; a diff shows file content.
func (*Git) Effects(args json.RawMessage) kernel.Effects {
	a, ok := readGitArgs(args)
	return kernel.Effects{Mutates: !ok || a.mutates(), ReadsContent: !ok || a.Command == "diff"}
}

// Touches: the path named, and the git command line.
func (*Git) Touches(args json.RawMessage) kernel.Touched {
	a, _ := readGitArgs(args)
	var t kernel.Touched
	if a.Path != "" {
		t.Paths = []string{a.Path}
	}
	if a.Command != "" {
		t.Command = "git " + a.Command
	}
	return t
}

func (g *Git) Execute(ctx context.Context, call *kernel.Call) (*kernel.Result, error) {
	var a gitArgs
	if err := decodeArgs("git", call.Args, &a); err != nil {
		return nil, err
	}
	for _, s := range []struct{ key, v string }{{"name", a.Name}, {"branch", a.Branch}, {"ref", a.Ref}, {"target", a.Target}, {"base", a.Base}, {"path", a.Path}} {
		if strings.HasPrefix(strings.TrimSpace(s.v), "-") {
			return nil, kernel.InvalidArgument("git: %s must not start with '-' (%q)", s.key, s.v)
		}
	}
	if a.Path != "" {
		p, err := workspace.Resolve(a.Path)
		if err != nil {
			return nil, &workspace.PathError{Op: "git", Path: a.Path, Err: err}
		}
		a.Path = p
	}
	switch a.Command {
	case "status":
		return g.status(ctx)
	case "log":
		return g.log(ctx, a)
	case "branch":
		return g.branch(ctx, a)
	case "checkout":
		return g.checkout(ctx, a)
	case "diff":
		return g.diff(ctx, a)
	case "stash":
		return g.stash(ctx, a)
	case "remote":
		return g.remote(ctx, a)
	case "worktree":
		return g.worktree(ctx, a)
	}
	return nil, kernel.InvalidArgument("git: command %q is not supported (one of %s)", a.Command, strings.Join(gitCommands, ", "))
}

// run runs one git command and returns its stdout. A failure is an error
// with git's own message; outside a repository, "Not a git repository".
func (g *Git) run(ctx context.Context, args ...string) (string, error) {
	argv := append(append([]string{"git"}, gitFlags...), args...)
	res, err := g.ex.Exec(ctx, workspace.ExecRequest{Argv: argv, Timeout: gitTimeout, Env: gitEnv,
		Unset: []string{"GIT_", "SSH_ASKPASS=", "SSH_AUTH_SOCK="}, WholeStdout: gitMaxOutput})
	if err != nil {
		return "", err
	}
	if res.TimedOut {
		return "", &kernel.Error{Kind: kernel.ErrorKind{Type: kernel.ErrTimeout, Op: "git", DurationMs: gitTimeout.Milliseconds()},
			Msg: fmt.Sprintf("git %s timed out after %v", args[0], gitTimeout)}
	}
	if res.ExitCode != 0 {
		msg := strings.TrimSpace(string(res.Stderr.Head) + string(res.Stderr.Tail))
		if strings.Contains(strings.ToLower(msg), "not a git repository") {
			return "", kernel.Errorf(kernel.ErrUnsupported, "Not a git repository: the workspace root (.)")
		}
		return "", kernel.InvalidArgument("git %s failed (exit %d): %s", args[0], res.ExitCode, msg)
	}
	if res.Stdout.Truncated() {
		return "", kernel.InvalidArgument("git %s: output is over %d bytes; narrow it (a path, a smaller range)", args[0], gitMaxOutput)
	}
	return string(res.Stdout.Head), nil
}

func (g *Git) status(ctx context.Context) (*kernel.Result, error) {
	out, err := g.run(ctx, "status", "--porcelain=v1", "--branch", "--untracked-files=all")
	if err != nil {
		return nil, err
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	branch := ""
	if len(lines) > 0 && strings.HasPrefix(lines[0], "## ") {
		branch = statusBranch(lines[0][3:])
		lines = lines[1:]
	}
	if len(lines) == 1 && lines[0] == "" {
		lines = nil
	}
	isWorktree := false
	if e, err := g.ws.Stat(ctx, ".git"); err == nil && e.Kind == workspace.KindFile {
		isWorktree = true // a linked worktree's .git is a file
	}
	var b strings.Builder
	fmt.Fprintf(&b, "On branch %s\n", branch)
	if len(lines) == 0 {
		b.WriteString("Nothing to commit, working tree clean\n")
	} else {
		fmt.Fprintf(&b, "%d changed path(s):\n", len(lines))
		for _, l := range lines {
			b.WriteString(l + "\n")
		}
	}
	text, _ := boundOutput(b.String(), "narrow the status with git diff and a path")
	return kernel.OK(text, map[string]any{"branch": branch, "is_worktree": isWorktree, "dirty_count": len(lines), "is_dirty": len(lines) > 0}), nil
}

// statusBranch reads the branch out of porcelain's "## …" header.
func statusBranch(h string) string {
	switch {
	case strings.HasPrefix(h, "No commits yet on "):
		return strings.TrimPrefix(h, "No commits yet on ")
	case strings.HasPrefix(h, "HEAD (no branch)"):
		return "HEAD (detached)"
	}
	if i := strings.Index(h, "..."); i >= 0 {
		h = h[:i]
	}
	if i := strings.IndexByte(h, ' '); i >= 0 {
		h = h[:i]
	}
	return h
}

var shaRE = lazyre.New(`^[0-9a-f]{40,64}$`)

// log pages the history. The cursor pins the head commit of the first
// page and an offset, so a commit landing between pages repeats nothing.
func (g *Git) log(ctx context.Context, a gitArgs) (*kernel.Result, error) {
	lim := a.Limit
	if lim == nil {
		lim = a.MaxCount
	}
	requested, applied, clamped := gitLogDefault, gitLogDefault, false
	if lim != nil {
		if *lim < 1 {
			return nil, kernel.InvalidArgument("git log: limit must be at least 1, got %d", *lim)
		}
		requested, applied = *lim, min(*lim, gitLogMax)
		clamped = *lim > gitLogMax
	}
	pin, off := "HEAD", 0
	if c := strings.TrimSpace(a.Cursor); c != "" {
		sha, n, ok := strings.Cut(c, ":")
		o, err := strconv.Atoi(n)
		if !ok || !shaRE().MatchString(sha) || err != nil || o < 0 {
			return nil, kernel.InvalidArgument("git log: cursor is invalid or expired: %q (copy next_cursor exactly, or omit it for the first page)", a.Cursor)
		}
		pin, off = sha, o
	}
	if off+applied > gitLogScanLimit {
		return nil, kernel.InvalidArgument("git log: offset %d is past the %d commits the log pages through; use a narrower path", off, gitLogScanLimit)
	}
	args := []string{"log", "--format=%H%x00%an%x00%aI%x00%s", "-n", strconv.Itoa(applied + 1), "--skip=" + strconv.Itoa(off), pin}
	if a.Path != "" {
		args = append(args, "--", a.Path)
	} else {
		args = append(args, "--")
	}
	out, err := g.run(ctx, args...)
	if err != nil {
		if pin != "HEAD" && (strings.Contains(err.Error(), "bad revision") || strings.Contains(err.Error(), "unknown revision")) {
			return nil, kernel.InvalidArgument("git log: cursor is invalid or expired: commit %s is not in this repository", pin)
		}
		if strings.Contains(err.Error(), "does not have any commits yet") {
			return kernel.OK("No commits yet.", map[string]any{"count": 0, "commits": []any{}}), nil
		}
		return nil, err
	}
	var commits []map[string]any
	for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		f := strings.SplitN(l, "\x00", 4)
		if len(f) < 4 {
			continue
		}
		commits = append(commits, map[string]any{"id": f[0], "short_id": f[0][:7], "author": f[1], "date": f[2], "message": f[3]})
	}
	if off == 0 && pin == "HEAD" && len(commits) > 0 {
		pin = commits[0]["id"].(string)
	}
	more := len(commits) > applied
	if more {
		commits = commits[:applied]
	}
	var b strings.Builder
	for _, c := range commits {
		fmt.Fprintf(&b, "%s %s %s: %s\n", c["short_id"], c["date"], c["author"], c["message"])
	}
	pg := map[string]any{"offset": off, "requested_limit": requested, "applied_limit": applied, "returned_items": len(commits),
		"total_items": nil, "next_cursor": nil, "truncated": more, "limit_clamped": clamped}
	if more {
		next := fmt.Sprintf("%s:%d", pin, off+applied)
		pg["next_cursor"] = next
		fmt.Fprintf(&b, "(More commits: continue with cursor=%q)\n", next)
	} else {
		pg["total_items"] = off + len(commits)
	}
	if len(commits) == 0 {
		b.WriteString("No commits on this page.\n")
	}
	return kernel.OK(b.String(), map[string]any{"count": len(commits), "commits": commits, "page": pg}), nil
}

// listPage pages a list command's lines (branch, stash, remote, worktree
// list): limit default 50, a decimal-offset cursor.
func listPage(tool string, a gitArgs, items []string, meta map[string]any, noun string) (*kernel.Result, error) {
	lim := a.Limit
	if lim == nil {
		d := gitListDefault
		lim = &d
	}
	pg, err := parsePage(tool, lim, &a.Cursor)
	if err != nil {
		return nil, err
	}
	lo, hi, err := pg.window(tool, len(items))
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	if len(items) == 0 {
		fmt.Fprintf(&b, "No %s.\n", noun)
	}
	for _, it := range items[lo:hi] {
		b.WriteString(it + "\n")
	}
	if len(items) > 0 {
		b.WriteString(pg.footer(noun) + "\n")
	}
	meta["page"] = pg.meta()
	meta["count"] = hi - lo
	text, _ := boundOutput(b.String(), "use a smaller limit")
	return kernel.OK(text, meta), nil
}

func lines(s string) []string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

func (g *Git) branch(ctx context.Context, a gitArgs) (*kernel.Result, error) {
	if a.Name != "" {
		base := a.Base
		if base == "" {
			base = "HEAD"
		}
		if _, err := g.run(ctx, "branch", a.Name, base); err != nil {
			return nil, err
		}
		return kernel.OK(fmt.Sprintf("Created branch %s at %s\n", a.Name, base), map[string]any{"branch": a.Name, "base": base, "changed_paths": []string{}}), nil
	}
	out, err := g.run(ctx, "branch", "--list", "--format=%(HEAD)%00%(refname:short)%00%(objectname:short)%00%(contents:subject)")
	if err != nil {
		return nil, err
	}
	var items []string
	var branches []map[string]any
	current := ""
	for _, l := range lines(out) {
		f := strings.SplitN(l, "\x00", 4)
		if len(f) < 4 {
			continue
		}
		if f[0] == "*" {
			current = f[1]
		}
		items = append(items, fmt.Sprintf("%s %s %s %s", strings.TrimSpace(f[0]+" "), f[1], f[2], f[3]))
		branches = append(branches, map[string]any{"name": f[1], "current": f[0] == "*", "commit": f[2]})
	}
	return listPage("git branch", a, items, map[string]any{"current": current, "branches": branches}, "branches")
}

// head is the commit HEAD names, or "" before the first commit.
func (g *Git) head(ctx context.Context) string {
	out, err := g.run(ctx, "rev-parse", "--verify", "-q", "HEAD")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(out)
}

// changedBetween lists the paths whose content differs between commits.
func (g *Git) changedBetween(ctx context.Context, from, to string) []string {
	if from == "" || to == "" || from == to {
		return []string{}
	}
	out, err := g.run(ctx, "diff", "--no-ext-diff", "--no-textconv", "--name-only", "-z", from, to, "--")
	if err != nil {
		return []string{}
	}
	return splitZ(out)
}

func splitZ(s string) []string {
	out := []string{}
	for _, p := range strings.Split(s, "\x00") {
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}

func (g *Git) checkout(ctx context.Context, a gitArgs) (*kernel.Result, error) {
	ref := a.Ref
	if ref == "" {
		ref = a.Name
	}
	if ref == "" {
		return nil, kernel.InvalidArgument("git checkout: ref is required (a branch, tag or commit)")
	}
	before := g.head(ctx)
	args := []string{"checkout"}
	if a.Force {
		args = append(args, "--force")
	}
	if _, err := g.run(ctx, append(args, ref, "--")...); err != nil {
		return nil, err
	}
	after := g.head(ctx)
	changed := g.changedBetween(ctx, before, after)
	return kernel.OK(fmt.Sprintf("Checked out %s (%d path(s) changed)\n", ref, len(changed)),
		map[string]any{"ref": ref, "head": after, "changed_paths": changed}), nil
}

// diff pages git diff's bytes. A page never splits a UTF-8 sequence; its
// cursor carries a digest of the whole diff, so a page of a diff that
// changed since is refused rather than misaligned.
func (g *Git) diff(ctx context.Context, a gitArgs) (*kernel.Result, error) {
	args := []string{"diff", "--no-ext-diff", "--no-textconv"}
	if t := strings.Fields(a.Target); len(t) > 2 {
		return nil, kernel.InvalidArgument("git diff: target is one commit, a range A..B, or two commits 'A B'; got %q", a.Target)
	} else {
		args = append(args, t...)
	}
	args = append(args, "--")
	if a.Path != "" {
		args = append(args, a.Path)
	}
	requested, applied, clamped := gitDiffDefault, gitDiffDefault, false
	if a.MaxBytes != nil {
		requested = *a.MaxBytes
		applied = min(max(requested, gitDiffMin), gitDiffMax)
		clamped = applied != requested
	}
	off, seen := 0, ""
	if a.ByteOffset != nil {
		off = *a.ByteOffset
	}
	if c := strings.TrimSpace(a.Cursor); c != "" {
		d, n, ok := strings.Cut(c, ":")
		o, err := strconv.Atoi(n)
		if !ok || err != nil || o < 0 || len(d) != 16 {
			return nil, kernel.InvalidArgument("git diff: cursor is invalid or expired: %q (copy next_cursor exactly)", a.Cursor)
		}
		off, seen = o, d
	}
	out, err := g.run(ctx, args...)
	if err != nil {
		return nil, err
	}
	sum := digest.Sum256([]byte(out))
	dg := hex.EncodeToString(sum[:8])
	if seen != "" && seen != dg {
		return nil, kernel.InvalidArgument("git diff: cursor is invalid or expired: the diff changed since that page was read (start again without a cursor)")
	}
	if off > len(out) || (off < len(out) && !utf8.RuneStart(out[off])) {
		return nil, kernel.InvalidArgument("git diff: byte_offset %d is not a page boundary of the %d-byte diff (use next_byte_offset)", off, len(out))
	}
	end := min(off+applied, len(out))
	for end < len(out) && end > off && !utf8.RuneStart(out[end]) {
		end--
	}
	page := out[off:end]
	eof := end >= len(out)
	rng := map[string]any{"byte_offset": off, "requested_max_bytes": requested, "applied_max_bytes": applied, "returned_bytes": len(page),
		"total_bytes": len(out), "next_byte_offset": nil, "eof": eof, "limit_clamped": clamped, "digest": dg, "next_cursor": nil}
	text := page
	switch {
	case len(out) == 0:
		text = "No changes."
	case !eof:
		next := fmt.Sprintf("%s:%d", dg, end)
		rng["next_byte_offset"], rng["next_cursor"] = end, next
		text += fmt.Sprintf("\n[diff continues: %d of %d bytes shown; continue with cursor=%q]", end, len(out), next)
	}
	return kernel.OK(text, map[string]any{"range": rng}), nil
}

func (g *Git) stash(ctx context.Context, a gitArgs) (*kernel.Result, error) {
	if a.Message != nil || a.IncludeUntracked {
		// What the stash takes away: every changed path (untracked too
		// when they go with it).
		status, err := g.run(ctx, "status", "--porcelain=v1", "-z", "--untracked-files="+map[bool]string{true: "all", false: "no"}[a.IncludeUntracked])
		if err != nil {
			return nil, err
		}
		args := []string{"stash", "push"}
		if a.IncludeUntracked {
			args = append(args, "--include-untracked")
		}
		if a.Message != nil {
			args = append(args, "-m", *a.Message)
		}
		out, err := g.run(ctx, args...)
		if err != nil {
			return nil, err
		}
		return kernel.OK(out, map[string]any{"changed_paths": statusPaths(status)}), nil
	}
	out, err := g.run(ctx, "stash", "list", "--format=%gd%x00%s")
	if err != nil {
		return nil, err
	}
	var items []string
	var stashes []map[string]any
	for _, l := range lines(out) {
		ref, msg, _ := strings.Cut(l, "\x00")
		items = append(items, ref+": "+msg)
		stashes = append(stashes, map[string]any{"ref": ref, "message": msg})
	}
	return listPage("git stash", a, items, map[string]any{"stashes": stashes}, "stashes")
}

// statusPaths reads the paths of `status --porcelain=v1 -z` (a rename's
// source follows its entry).
func statusPaths(z string) []string {
	out := []string{}
	f := strings.Split(z, "\x00")
	for i := 0; i < len(f); i++ {
		e := f[i]
		if len(e) < 4 {
			continue
		}
		out = append(out, e[3:])
		if e[0] == 'R' || e[0] == 'C' {
			i++ // the source path
			if i < len(f) && f[i] != "" {
				out = append(out, f[i])
			}
		}
	}
	return out
}

func (g *Git) remote(ctx context.Context, a gitArgs) (*kernel.Result, error) {
	out, err := g.run(ctx, "remote", "-v")
	if err != nil {
		return nil, err
	}
	var items []string
	var remotes []map[string]any
	for _, l := range lines(out) {
		name, rest, _ := strings.Cut(l, "\t")
		u, kind, _ := strings.Cut(rest, " ")
		u = cleanRemoteURL(u)
		items = append(items, fmt.Sprintf("%s %s %s", name, u, kind))
		remotes = append(remotes, map[string]any{"name": name, "url": u, "kind": strings.Trim(kind, "()")})
	}
	return listPage("git remote", a, items, map[string]any{"remotes": remotes}, "remotes")
}

// cleanRemoteURL drops credentials, query and fragment from a remote URL.
// An scp-like address (git@host:path) keeps its user, which is no secret,
// unless it carries a password.
func cleanRemoteURL(s string) string {
	if u, err := url.Parse(s); err == nil && u.Scheme != "" && u.Host != "" {
		u.User, u.RawQuery, u.Fragment, u.ForceQuery = nil, "", "", false
		return u.String()
	}
	if at := strings.LastIndexByte(s, '@'); at >= 0 && strings.Contains(s[:at], ":") {
		return s[at+1:]
	}
	return s
}

func (g *Git) worktree(ctx context.Context, a gitArgs) (*kernel.Result, error) {
	switch a.Subcommand {
	case "", "list":
		out, err := g.run(ctx, "worktree", "list", "--porcelain")
		if err != nil {
			return nil, err
		}
		var items []string
		var wts []map[string]any
		for _, block := range strings.Split(strings.TrimSpace(out), "\n\n") {
			w := map[string]any{}
			for _, l := range strings.Split(block, "\n") {
				k, v, _ := strings.Cut(l, " ")
				switch k {
				case "worktree", "HEAD":
					w[strings.ToLower(k)] = v
				case "branch":
					w["branch"] = strings.TrimPrefix(v, "refs/heads/")
				case "detached", "bare", "locked", "prunable":
					w[k] = true
				}
			}
			if len(w) == 0 {
				continue
			}
			head, _ := w["head"].(string)
			br, _ := w["branch"].(string)
			if br == "" {
				br = "(detached)"
			}
			items = append(items, fmt.Sprintf("%v %.7s %s", w["worktree"], head, br))
			wts = append(wts, w)
		}
		return listPage("git worktree", a, items, map[string]any{"worktrees": wts}, "worktrees")
	case "create":
		if a.Path == "" || a.Path == "." {
			return nil, kernel.InvalidArgument("git worktree create: path is required (a new directory in the workspace)")
		}
		name := a.Name
		if name == "" {
			name = a.Branch
		}
		base := a.Base
		if base == "" {
			base = "HEAD"
		}
		args := []string{"worktree", "add"}
		switch {
		case name != "" && (a.NewBranch == nil || *a.NewBranch):
			args = append(args, "-b", name, a.Path, base)
		case name != "":
			args = append(args, a.Path, name)
		default:
			args = append(args, "--detach", a.Path, base)
		}
		if _, err := g.run(ctx, args...); err != nil {
			return nil, err
		}
		return kernel.OK(fmt.Sprintf("Created worktree %s\n", a.Path), map[string]any{"path": a.Path, "branch": name, "changed_paths": []string{a.Path}}), nil
	case "remove":
		if a.Path == "" || a.Path == "." {
			return nil, kernel.InvalidArgument("git worktree remove: path is required")
		}
		args := []string{"worktree", "remove"}
		if a.Force {
			args = append(args, "--force")
		}
		if _, err := g.run(ctx, append(args, a.Path)...); err != nil {
			return nil, err
		}
		return kernel.OK(fmt.Sprintf("Removed worktree %s\n", a.Path), map[string]any{"path": a.Path, "changed_paths": []string{a.Path}}), nil
	}
	return nil, kernel.InvalidArgument("git worktree: subcommand %q is not supported (list, create or remove)", a.Subcommand)
}
