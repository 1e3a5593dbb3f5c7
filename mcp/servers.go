package mcp

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/a3s-lab/code-wasm/errkind"
	"github.com/a3s-lab/code-wasm/kernel"
)

// Registry is where Servers registers tools (a *kernel.Registry).
type Registry interface {
	RegisterDynamic(t kernel.Tool) error
	Unregister(name string) bool
	Lookup(name string) (kernel.Tool, bool)
}

// Config names one server.
type Config struct {
	Name    string            `json:"name"`
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers,omitempty"`
	// TimeoutMs bounds connecting and listing (default 30,000).
	TimeoutMs int64 `json:"timeoutMs,omitempty"`
}

// Status is one server as mcpStatus shows it.
type Status struct {
	Name      string `json:"name"`
	URL       string `json:"url"`
	State     string `json:"state"` // "connected" or "failed"
	ToolCount int    `json:"toolCount"`
	Error     string `json:"error,omitempty"`
	// Warnings name the tools left out and why.
	Warnings []string `json:"warnings,omitempty"`
}

type server struct {
	st     Status
	client *Client
	tools  []string
}

// Servers are the MCP servers of one session. Safe for concurrent use.
type Servers struct {
	reg Registry
	mu  sync.Mutex
	m   map[string]*server
}

// NewServers returns an empty set registering into reg.
func NewServers(reg Registry) *Servers { return &Servers{reg: reg, m: map[string]*server{}} }

func invalid(format string, a ...any) error {
	return errkind.New(errkind.InvalidArgument, fmt.Sprintf(format, a...))
}

// Add connects to a server and registers its tools as
// mcp__<name>__<tool>. A server that cannot be reached registers nothing;
// it is kept with state "failed" and its error, and the error returned.
func (s *Servers) Add(ctx context.Context, cfg Config) (Status, error) {
	if !serverName().MatchString(cfg.Name) || strings.Contains(cfg.Name, "__") {
		return Status{}, invalid("addMcp: name %q must be letters, digits and single '-' ([A-Za-z0-9-]+)", cfg.Name)
	}
	if !strings.HasPrefix(cfg.URL, "http://") && !strings.HasPrefix(cfg.URL, "https://") {
		return Status{}, invalid("addMcp %s: url %q is not an http(s) URL", cfg.Name, cfg.URL)
	}
	s.mu.Lock()
	if old, ok := s.m[cfg.Name]; ok && old.st.State != "failed" {
		s.mu.Unlock()
		return Status{}, invalid("addMcp: a server named %q is already added (removeMcp it first)", cfg.Name)
	}
	srv := &server{st: Status{Name: cfg.Name, URL: cfg.URL, State: "connecting"}}
	s.m[cfg.Name] = srv
	s.mu.Unlock()

	timeout := time.Duration(cfg.TimeoutMs) * time.Millisecond
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	c, err := Connect(cctx, cfg.URL, cfg.Headers)
	var infos []ToolInfo
	if err == nil {
		infos, err = c.ListTools(cctx)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		srv.st.State, srv.st.Error = "failed", err.Error()
		return srv.st, err
	}
	srv.client = c
	seen := map[string]bool{}
	for _, info := range infos {
		name := ToolName(cfg.Name, info.Name)
		warn := ""
		switch {
		case info.Execution != nil && info.Execution.TaskSupport == "required":
			warn = fmt.Sprintf("%s: skipped, it requires task support", info.Name)
		case len(name) > MaxToolName:
			warn = fmt.Sprintf("%s: skipped, %s is over %d characters", info.Name, name, MaxToolName)
		case seen[name]:
			warn = fmt.Sprintf("%s: skipped, another tool of this server maps to %s", info.Name, name)
		}
		if warn == "" {
			if _, taken := s.reg.Lookup(name); taken {
				warn = fmt.Sprintf("%s: skipped, a tool named %s is already registered", info.Name, name)
			} else if err := s.reg.RegisterDynamic(&tool{name: name, server: cfg.Name, remote: info.Name, info: info, client: srv.get}); err != nil {
				warn = fmt.Sprintf("%s: skipped: %v", info.Name, err)
			}
		}
		if warn != "" {
			srv.st.Warnings = append(srv.st.Warnings, warn)
			continue
		}
		seen[name] = true
		srv.tools = append(srv.tools, name)
	}
	srv.st.State, srv.st.ToolCount = "connected", len(srv.tools)
	return srv.st, nil
}

func (srv *server) get() *Client { return srv.client }

// Remove unregisters a server's tools and ends its session with a DELETE.
func (s *Servers) Remove(ctx context.Context, name string) error {
	s.mu.Lock()
	srv, ok := s.m[name]
	if ok {
		delete(s.m, name)
		for _, t := range srv.tools {
			s.reg.Unregister(t)
		}
	}
	s.mu.Unlock()
	if !ok {
		return errkind.New(errkind.NotFound, fmt.Sprintf("removeMcp: no server named %q", name))
	}
	if srv.client != nil {
		return srv.client.Close(ctx)
	}
	return nil
}

// Status lists the servers, sorted by name.
func (s *Servers) Status() []Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Status, 0, len(s.m))
	for _, srv := range s.m {
		out = append(out, srv.st)
	}
	slices.SortFunc(out, func(a, b Status) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// IsConnectError reports whether err from Add is the server's failure
// (it stays in Status), not a refused configuration.
func IsConnectError(err error) bool {
	return err != nil && !errkind.Is(err, errkind.InvalidArgument)
}
