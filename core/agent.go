package core

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/a3s-lab/code-wasm/agent"
	"github.com/a3s-lab/code-wasm/kernel"
	"github.com/a3s-lab/code-wasm/llm"
)

// ErrNoLLM is returned by Send and Stream on a session without an LLM
// (Options.LLM); JS maps it to code NO_LLM.
var ErrNoLLM = errors.New("the session has no LLM: give createSession the llm option (core.Options.LLM)")

// AgentResult is what Send answers: the model's last text, the tool calls
// it made, and the tokens of the run.
type AgentResult = agent.Result

// agents is the session's agent-loop state: the model, the history Send
// and Stream continue, and the runs in flight (Close cancels and waits
// for them before the kernel and the event stream end).
type agents struct {
	cfg agent.Config
	// hint, when set, is appended to the system prompt of each run (the
	// skills' catalog header, while skills are loaded).
	hint func() string

	mu      sync.Mutex
	history []llm.Message
	n       int
	closed  bool
	cancels map[int]context.CancelFunc
	wg      sync.WaitGroup
}

func newAgents(opts Options, k *kernel.Kernel, bus *Bus) *agents {
	return &agents{cfg: agent.Config{Client: opts.LLM, Kernel: k, System: opts.SystemPrompt,
		MaxToolRounds: opts.MaxToolRounds, Emit: bus.Publish, Listening: bus.Listening, Tools: &agent.ToolList{}}, cancels: map[int]context.CancelFunc{}}
}

// HasLLM reports whether the session has a model (Send, Stream and the
// LLM tools).
func (s *Session) HasLLM() bool { return s.agents.cfg.Client != nil }

// History returns the conversation Send and Stream continue when they are
// given no history.
func (s *Session) History() []llm.Message { return s.agents.History() }

// Send runs the agent loop on prompt and returns its result. With a nil
// history it continues the session's history and, when the run finishes,
// makes the run's conversation the new history; a non-nil history (even
// empty) is used instead and the session's is left as it was. The model's
// tool calls go through the kernel with origin Agent. A run that does not
// finish returns an *agent.Error (its kind: cancelled, timeout,
// rate_limited, transport, invalid_argument, partial_failure); no LLM is
// ErrNoLLM, a closed session ErrClosed.
func (s *Session) Send(ctx context.Context, prompt string, history []llm.Message) (*AgentResult, error) {
	ctx, id, done, err := s.agents.start(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	return s.agents.run(ctx, id, prompt, history)
}

// Stream starts the agent loop as Send does and returns the run's events:
// agent_start … agent_end or error, and the kernel's events of the model's
// tool calls; the subscription ends after the terminal event. Closing the
// subscription before then cancels the run, as cancelling ctx does.
func (s *Session) Stream(ctx context.Context, prompt string, history []llm.Message) (*Subscription, error) {
	ctx, id, done, err := s.agents.start(ctx)
	if err != nil {
		return nil, err
	}
	sub := s.bus.subscribeRun(id)
	ctx, cancel := context.WithCancel(ctx)
	sub.onClose = cancel
	go func() {
		defer done()
		defer cancel()
		s.agents.run(ctx, id, prompt, history)
	}()
	return sub, nil
}

type runIDKey struct{}

// WithRunID makes Send and Stream called with the returned context use id
// as the run's id (the invocationId of its events, the parentId of its
// calls' events) instead of one the session chooses: for a host that picks
// a run's events out of the session's stream itself. The caller keeps ids
// unique; the session's own are run-N.
func WithRunID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, runIDKey{}, id)
}

// start registers a run: its id, a context that session close cancels,
// and the function that ends the registration.
func (a *agents) start(ctx context.Context) (context.Context, string, func(), error) {
	if a.cfg.Client == nil {
		return nil, "", nil, ErrNoLLM
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return nil, "", nil, ErrClosed
	}
	a.n++
	n := a.n
	ctx, cancel := context.WithCancel(ctx)
	a.cancels[n] = cancel
	a.wg.Add(1)
	id, _ := ctx.Value(runIDKey{}).(string)
	if id == "" {
		id = "run-" + strconv.Itoa(n)
	}
	return ctx, id, func() {
		cancel()
		a.mu.Lock()
		delete(a.cancels, n)
		a.mu.Unlock()
		a.wg.Done()
	}, nil
}

func (a *agents) run(ctx context.Context, id, prompt string, history []llm.Message) (*AgentResult, error) {
	keep := history == nil
	if keep {
		history = a.History()
	}
	cfg := a.cfg
	if a.hint != nil {
		if h := a.hint(); h != "" {
			cfg.System = strings.TrimSpace(cfg.System + "\n\n" + h)
		}
	}
	res, err := agent.Run(ctx, cfg, id, prompt, history)
	if err == nil && keep {
		a.mu.Lock()
		a.history = res.Messages
		a.mu.Unlock()
	}
	return res, err
}

// History returns a copy of the session's history.
func (a *agents) History() []llm.Message {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.history)
}

// close cancels the runs in flight and waits until each has published its
// terminal event.
func (a *agents) close() {
	a.mu.Lock()
	a.closed = true
	for _, c := range a.cancels {
		c()
	}
	a.mu.Unlock()
	a.wg.Wait()
}

// subscribeRun subscribes to the events of run id: its own (invocationId
// id), the kernel's events of the calls it made (parentId id) and of
// their nested calls, up to and including its terminal event.
func (b *Bus) subscribeRun(id string) *Subscription {
	s := b.Subscribe()
	ids := map[string]bool{id: true}
	b.mu.Lock() // Publish reads the filter under the bus lock
	defer b.mu.Unlock()
	s.filter = func(e kernel.Event) (keep, last bool) {
		switch {
		case e.InvocationID == id:
			return true, e.Type == agent.EventAgentEnd || e.Type == kernel.EventError
		case ids[e.ParentID]:
			if e.InvocationID != "" {
				ids[e.InvocationID] = true
			}
			return true, false
		case ids[e.InvocationID]:
			return true, false
		}
		return false, false
	}
	return s
}

// ToolsFor lists the session's tools in a provider's `tools` format
// ("openai" or "anthropic"; strict: OpenAI's strict-mode variant), for
// apps that run their own model loop (agent.ToolsFor).
func (s *Session) ToolsFor(provider string, strict bool) ([]any, error) {
	return agent.ToolsFor(s.reg, provider, strict)
}

// RunToolCall runs one tool call exactly as a provider sent it (an OpenAI
// tool call or an Anthropic tool_use block), governed as GovernedTool
// runs a call, and returns the provider's tool-result message and the
// result (agent.RunToolCall). A call of neither shape is an error naming
// what is wrong; what the model got wrong is a failed tool result.
func (s *Session) RunToolCall(ctx context.Context, call json.RawMessage) (any, *kernel.Result, error) {
	p, err := agent.ParseCall(call)
	if err != nil {
		return nil, nil, err
	}
	return agent.RunToolCall(ctx, s.k, p)
}
