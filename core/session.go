package core

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/a3s-lab/code-wasm/agent"
	"github.com/a3s-lab/code-wasm/kernel"
	"github.com/a3s-lab/code-wasm/llm"
	"github.com/a3s-lab/code-wasm/mcp"
	"github.com/a3s-lab/code-wasm/ptc"
	"github.com/a3s-lab/code-wasm/tools"
	"github.com/a3s-lab/code-wasm/workspace"
	"github.com/a3s-lab/code-wasm/workspace/dirfs"
	"github.com/a3s-lab/code-wasm/workspace/memfs"
)

// Options configure a Session. The zero value gives a session over an
// empty in-memory workspace with default governance.
type Options struct {
	// Workspace the tools act on; nil means a new empty memory workspace.
	Workspace *workspace.Workspace
	// Directory, natively, is the root of a directory workspace (real
	// files through os.Root, workspace/dirfs): the Go form of JS's
	// { kind: 'directory', root }. Set it or Workspace, not both; the
	// session closes the workspace it opened.
	Directory string
	// Exec says how a Directory's commands (bash, git) run: the sandbox
	// ("auto": bubblewrap when installed; "none") and network access.
	Exec dirfs.ExecOptions
	// Governance is the kernel policy (timeouts, permission, confirmation,
	// hooks, budget, sanitisation, queue, artifacts); see kernel.Governance.
	kernel.Governance
	// Tools are host-registered tools; they may not shadow built-ins.
	Tools []kernel.Tool
	// ProgramEngine runs `program` scripts; nil means the host default
	// (core/program.go).
	ProgramEngine ptc.Engine
	// NoProgram leaves the program tool out, for a host with no script
	// engine (Cloudflare Workers): it is not listed rather than failing.
	NoProgram bool

	// LLM is the model of the agent loop (Send, Stream); nil means the
	// session has none: Send and Stream fail with ErrNoLLM.
	LLM llm.Client
	// SystemPrompt is the agent loop's system prompt.
	SystemPrompt string
	// MaxToolRounds bounds the agent loop's tool rounds; 0 means
	// agent.DefaultMaxToolRounds.
	MaxToolRounds int
	// McpServers are connected at start (see AddMcp); one that cannot be
	// reached registers nothing and shows in McpStatus with its error.
	McpServers []mcp.Config
	// WebFetch is the web_fetch tool (tools.NewWebFetch); nil leaves it
	// out.
	WebFetch *tools.WebFetch

	// Delegation and skills (delegation.go). Agents are custom agents
	// added to the built-in catalog after those of the workspace's
	// .a3s/agents; NoDelegation leaves task and parallel_task out
	// (manualDelegationEnabled: false); MaxParallelTasks bounds the
	// children running at once across the session (0: 8).
	Agents           []agent.Def
	NoDelegation     bool
	MaxParallelTasks int
	// SkillDirs are the workspace directories SKILL.md files are loaded
	// from; nil means agent.DefaultSkillDir. Skills are added after them.
	SkillDirs []string
	Skills    []agent.Skill
	// WebSearch is the web_search tool (tools.NewWebSearch over the host's
	// providers); nil leaves it out (API.md: listed only with a provider).
	WebSearch *tools.WebSearch
}

// Session is the portable type users hold: a workspace, its tool surface,
// one invocation kernel and an event stream. Safe for concurrent use.
type Session struct {
	ws  *workspace.Workspace
	reg *kernel.Registry
	k   *kernel.Kernel
	bus *Bus
	// agents runs Send and Stream (agent.go).
	agents *agents
	// opened is the driver New opened (Options.Directory), closed with
	// the session.
	opened io.Closer
	// mcp holds the session's MCP servers (mcp.go).
	mcp mcpServers
	// delegation runs task and parallel_task (delegation.go); nil without
	// an LLM or with NoDelegation.
	delegation *agent.Delegation
	skills     *agent.Skills
	warnings   []string

	closeOnce sync.Once
}

// New builds a session. It validates the options once.
func New(opts Options) (*Session, error) {
	if opts.Directory != "" {
		return newDirectory(opts)
	}
	ws := opts.Workspace
	if ws == nil {
		var err error
		if ws, err = workspace.New(memfs.New()); err != nil {
			return nil, err
		}
	}
	reg := kernel.NewRegistry()
	for _, t := range tools.Builtins(ws) {
		if err := reg.RegisterBuiltin(t); err != nil {
			return nil, err
		}
	}
	// batch is always present: it only orchestrates other tools.
	if err := reg.RegisterBuiltin(tools.NewBatch()); err != nil {
		return nil, err
	}
	if !opts.NoProgram {
		if err := registerProgram(reg, ws, opts.ProgramEngine); err != nil {
			return nil, err
		}
	}
	if err := registerLater(reg, opts); err != nil {
		return nil, err
	}
	for _, t := range opts.Tools {
		if err := reg.RegisterDynamic(t); err != nil {
			return nil, fmt.Errorf("tools: %w", err)
		}
	}
	bus := NewBus()
	k, err := kernel.New(kernel.Config{Registry: reg, OnEvent: bus.Publish, Listening: bus.Listening, Governance: opts.Governance})
	if err != nil {
		return nil, err
	}
	s := &Session{ws: ws, reg: reg, k: k, bus: bus}
	if err := s.startLater(opts); err != nil {
		return nil, err
	}
	return s, nil
}

// Workspace returns the session's workspace.
func (s *Session) Workspace() *workspace.Workspace { return s.ws }

// Kernel returns the session's invocation kernel.
func (s *Session) Kernel() *kernel.Kernel { return s.k }

// ToolNames lists the model-visible tools, sorted.
func (s *Session) ToolNames() []string { return s.reg.Names() }

// ToolDefinitions lists {name, description, parameters}, sorted by name.
func (s *Session) ToolDefinitions() []kernel.Definition { return s.reg.Definitions() }

// ActiveTools lists the invocations running now.
func (s *Session) ActiveTools() []kernel.ActiveTool { return s.k.Active() }

// Events subscribes to the event stream from now on.
func (s *Session) Events() *Subscription { return s.bus.Subscribe() }

// Tool calls a tool as a trusted host-direct call: permission policy and
// confirmation are skipped; hooks, budget, timeouts and sanitisation apply.
// The error is non-nil only when there is no tool result: the session is
// closed (ErrClosed) or the tool is not registered (ErrNotRegistered).
func (s *Session) Tool(ctx context.Context, name string, args any) (*kernel.Result, error) {
	return s.invoke(ctx, name, args, kernel.OriginHostTrusted)
}

// GovernedTool calls a tool with the full policy: permission rules and
// confirmation apply as to a model-selected call.
func (s *Session) GovernedTool(ctx context.Context, name string, args any) (*kernel.Result, error) {
	return s.invoke(ctx, name, args, kernel.OriginHostGoverned)
}

// Errors of the session API. JS maps them to Error codes.
var (
	ErrClosed        = kernel.ErrClosed
	ErrNotRegistered = kernel.ErrNotRegistered
)

func (s *Session) invoke(ctx context.Context, name string, args any, origin kernel.Origin) (*kernel.Result, error) {
	raw, err := toRaw(args)
	if err != nil {
		return nil, err
	}
	return s.k.Invoke(ctx, kernel.Request{Tool: name, Args: raw, Origin: origin})
}

func toRaw(args any) (json.RawMessage, error) {
	switch a := args.(type) {
	case nil:
		return json.RawMessage(`{}`), nil
	case json.RawMessage:
		return a, nil
	case []byte:
		return json.RawMessage(a), nil
	default:
		b, err := json.Marshal(a)
		if err != nil {
			return nil, fmt.Errorf("arguments: %w", err)
		}
		return b, nil
	}
}

// ToolError is returned by the typed helpers when the tool ran and failed.
type ToolError struct{ Result *kernel.Result }

func (e *ToolError) Error() string { return e.Result.Output }

// Kind returns the structured error kind, if any.
func (e *ToolError) Kind() *kernel.ErrorKind { return e.Result.ErrorKind }

func (s *Session) text(ctx context.Context, name string, args any) (string, error) {
	res, err := s.Tool(ctx, name, args)
	if err != nil {
		return "", err
	}
	if res.ExitCode != 0 {
		return "", &ToolError{Result: res}
	}
	return res.Output, nil
}

// ReadOptions select a line range for ReadFile.
type ReadOptions struct {
	Offset int `json:"offset,omitempty"`
	Limit  int `json:"limit,omitempty"`
}

// ReadFile calls `read` and returns its output (numbered lines).
func (s *Session) ReadFile(ctx context.Context, path string, o ReadOptions) (string, error) {
	args := map[string]any{"file_path": path}
	if o.Offset > 0 {
		args["offset"] = o.Offset
	}
	if o.Limit > 0 {
		args["limit"] = o.Limit
	}
	return s.text(ctx, "read", args)
}

// WriteFile calls `write` (overwrite).
func (s *Session) WriteFile(ctx context.Context, path, content string) (*kernel.Result, error) {
	return s.Tool(ctx, "write", map[string]any{"file_path": path, "content": content})
}

// EditFile calls `edit`.
func (s *Session) EditFile(ctx context.Context, path, oldString, newString string, replaceAll bool) (*kernel.Result, error) {
	return s.Tool(ctx, "edit", map[string]any{"file_path": path, "old_string": oldString, "new_string": newString, "replace_all": replaceAll})
}

// PatchFile calls `patch` with a unified diff.
func (s *Session) PatchFile(ctx context.Context, path, diff string) (*kernel.Result, error) {
	return s.Tool(ctx, "patch", map[string]any{"file_path": path, "diff": diff})
}

// Ls calls `ls`; an empty path lists the root.
func (s *Session) Ls(ctx context.Context, path string) (*kernel.Result, error) {
	args := map[string]any{}
	if path != "" {
		args["path"] = path
	}
	return s.Tool(ctx, "ls", args)
}

// MaxGlobPaths bounds what Glob returns: a pattern matching more fails
// (narrow it, or page with Tool("glob", …) and its cursor).
const MaxGlobPaths = 10000

// Glob calls `glob` and returns every matching path, sorted: it pages
// through the tool's results (1000 a call, sort=path so pages are stable)
// until none remain. More than MaxGlobPaths matches is a *ToolError with an
// invalid_argument kind, returned before any path list is built.
func (s *Session) Glob(ctx context.Context, pattern string) ([]string, error) {
	var all []string
	cursor := ""
	for {
		args := map[string]any{"pattern": pattern, "limit": 1000, "sort": "path"}
		if cursor != "" {
			args["cursor"] = cursor
		}
		res, err := s.Tool(ctx, "glob", args)
		if err != nil {
			return nil, err
		}
		if res.ExitCode != 0 {
			return nil, &ToolError{Result: res}
		}
		total, next := globPage(res)
		if total > MaxGlobPaths {
			msg := fmt.Sprintf("%d files match %q, more than the %d Glob returns; narrow the pattern (or a path under it), or page with the glob tool and its cursor", total, pattern, MaxGlobPaths)
			return nil, &ToolError{Result: &kernel.Result{Name: "glob", Output: msg, ExitCode: 1,
				ErrorKind: &kernel.ErrorKind{Type: kernel.ErrInvalidArgument, Message: msg}}}
		}
		ps := GlobPaths(res)
		if all == nil {
			all = make([]string, 0, max(total, len(ps)))
		}
		all = append(all, ps...)
		if next == "" || next == cursor || len(ps) == 0 {
			return all, nil
		}
		cursor = next
	}
}

// globPage reads a glob result's page metadata: the total match count and
// the next cursor ("" on the last page).
func globPage(res *kernel.Result) (total int, next string) {
	pg, _ := res.Metadata["page"].(map[string]any)
	total, _ = pg["total_items"].(int)
	next, _ = pg["next_cursor"].(string)
	return total, next
}

// GlobPaths extracts the path lines of a glob result (its metadata lists
// them when present; otherwise the non-footer output lines).
func GlobPaths(res *kernel.Result) []string {
	if ps, ok := res.Metadata["paths"].([]string); ok {
		return ps
	}
	out := []string{}
	for _, l := range strings.Split(res.Output, "\n") {
		if l == "" || strings.HasPrefix(l, "No files found") || strings.Contains(l, " file(s) shown") || strings.HasPrefix(l, "(") {
			continue
		}
		out = append(out, l)
	}
	return out
}

// Grep calls `grep` (content mode) and returns its output.
func (s *Session) Grep(ctx context.Context, pattern string) (string, error) {
	return s.text(ctx, "grep", map[string]any{"pattern": pattern})
}

// Close cancels every in-flight invocation, waits for them, and ends the
// event stream. Later calls fail with ErrClosed.
func (s *Session) Close() {
	s.closeOnce.Do(func() {
		s.closeLater()
		s.k.Close()
		s.bus.Close()
		if s.opened != nil {
			s.opened.Close()
		}
	})
}

// IsClosed reports whether Close was called.
func (s *Session) IsClosed() bool { return s.k.Closed() }

// IsNotRegistered reports whether err says the tool is not registered.
func IsNotRegistered(err error) bool { return errors.Is(err, ErrNotRegistered) }
