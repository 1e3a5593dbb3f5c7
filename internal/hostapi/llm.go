//go:build !codewasm_core

package hostapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"strings"
	"time"

	"github.com/a3s-lab/code-wasm/agent"
	"github.com/a3s-lab/code-wasm/core"
	"github.com/a3s-lab/code-wasm/errkind"
	"github.com/a3s-lab/code-wasm/llm"
)

// Codes of the agent loop's methods.
const (
	// CodeNoLLM: send or stream on a session created without the llm
	// option.
	CodeNoLLM = "NO_LLM"
	// CodeAgentFailed: the run started and did not finish (max tool
	// rounds, the duplicate guard, the model's client failed); detail is
	// the AgentResult so far plus its errorKind.
	CodeAgentFailed = "AGENT_FAILED"
)

// llmMethods are the agent loop's methods (send, run and stream in JS are
// one row: stream filters the session's events by the run id it chose)
// and the glue for apps that run their own model loop (runToolCall;
// toolsFor is built in JS from toolDefinitions, so every host, the
// browser's worker proxy included, answers it synchronously).
var llmMethods = []row{
	method("send", 0, send),
	method("runToolCall", 0, runToolCall),
}

// LLMOptions is options.llm: a provider's client (llm.Config), or a
// host-supplied client (Client: JS keeps {stream(request, {signal})} and
// answers the llm.* kinds of the host dispatcher).
type LLMOptions struct {
	Provider   string            `json:"provider"`
	BaseURL    string            `json:"baseURL"`
	APIKey     string            `json:"apiKey"`
	Model      string            `json:"model"`
	Headers    map[string]string `json:"headers"`
	MaxRetries *int              `json:"maxRetries"`
	TimeoutMs  int64             `json:"timeoutMs"`
	MaxTokens  int               `json:"maxTokens"`
	Client     bool              `json:"client"`
}

// maxToolRoundsLimit bounds options.maxToolRounds (a typo, not a plan).
const maxToolRoundsLimit = 10000

// agentOptions validates the agent options and sets them on opts; the
// error names the key.
func (o *Options) agentOptions(host Host, opts *core.Options) error {
	if o.MaxToolRounds != nil {
		if n := *o.MaxToolRounds; n < 1 || n > maxToolRoundsLimit {
			return fmt.Errorf("maxToolRounds must be between 1 and %d, got %d", maxToolRoundsLimit, n)
		}
		opts.MaxToolRounds = *o.MaxToolRounds
	}
	opts.SystemPrompt = o.SystemPrompt
	l := o.LLM
	if l == nil {
		return nil
	}
	if l.Client {
		for _, k := range []struct {
			key string
			set bool
		}{{"provider", l.Provider != ""}, {"baseURL", l.BaseURL != ""}, {"apiKey", l.APIKey != ""},
			{"headers", l.Headers != nil}, {"maxRetries", l.MaxRetries != nil}, {"timeoutMs", l.TimeoutMs != 0}} {
			if k.set {
				return fmt.Errorf("llm.%s is not used with a host-supplied client (llm.client); give one or the other", k.key)
			}
		}
		if l.MaxTokens < 0 {
			return fmt.Errorf("llm.maxTokens must be >= 0, got %d", l.MaxTokens)
		}
		if host == nil {
			return fmt.Errorf("llm.client needs the host dispatcher")
		}
		opts.LLM = &hostClient{host: host, model: l.Model, maxTokens: l.MaxTokens}
		return nil
	}
	c, err := llm.New(llm.Config{Provider: l.Provider, BaseURL: l.BaseURL, APIKey: l.APIKey, Model: l.Model,
		Headers: l.Headers, MaxRetries: l.MaxRetries, TimeoutMs: l.TimeoutMs, MaxTokens: l.MaxTokens})
	if err != nil {
		var le *llm.Error
		if errors.As(err, &le) && le.Key != "" {
			return errors.New(le.Message)
		}
		return fmt.Errorf("llm: %v", err)
	}
	opts.LLM = c
	return nil
}

// AgentResult is the JS wire form of a run's result (API.md).
type AgentResult struct {
	Text           string    `json:"text"`
	ToolCallsCount int       `json:"toolCallsCount"`
	Usage          llm.Usage `json:"usage"`
	// ErrorKind is set in the detail of an AGENT_FAILED rejection.
	ErrorKind *agentErrorKind `json:"errorKind,omitempty"`
}

type agentErrorKind struct {
	Type    errkind.Kind `json:"type"`
	Message string       `json:"message"`
}

func send(c *call, a *struct {
	Prompt  *jsonString    `json:"prompt" required:"true"`
	History *[]llm.Message `json:"history"`
	// RunID is the run id the caller chose, to pick the run's events out
	// of the session's stream (JS stream()); "" lets the session choose.
	RunID string `json:"runId"`
}) (any, error) {
	var prompt string
	if err := json.Unmarshal(*a.Prompt, &prompt); err != nil {
		return nil, errf(CodeInvalidCall, "send: prompt must be a string")
	}
	var history []llm.Message
	if a.History != nil {
		history = *a.History
		if history == nil {
			history = []llm.Message{}
		}
	}
	ctx := c.ctx
	if a.RunID != "" {
		if strings.HasPrefix(a.RunID, "run-") || strings.HasPrefix(a.RunID, "call-") {
			return nil, errf(CodeInvalidCall, "send: runId %q may not start with run- or call- (the session's own ids)", a.RunID)
		}
		ctx = core.WithRunID(ctx, a.RunID)
	}
	res, err := c.e.s.Send(ctx, prompt, history)
	var ae *agent.Error
	switch {
	case err == nil:
		return AgentResult{Text: res.Text, ToolCallsCount: res.ToolCallsCount, Usage: res.Usage}, nil
	case errors.Is(err, core.ErrNoLLM):
		return nil, errf(CodeNoLLM, "send: %v", err)
	case errors.As(err, &ae):
		d := AgentResult{Text: ae.Result.Text, ToolCallsCount: ae.Result.ToolCallsCount, Usage: ae.Result.Usage,
			ErrorKind: &agentErrorKind{Type: ae.Kind(), Message: ae.Message}}
		b, _ := json.Marshal(d)
		code := CodeAgentFailed
		if ae.Kind() == errkind.Cancelled {
			code = CodeAborted
			if c.e.s.IsClosed() {
				code = CodeSessionClosed
			}
		}
		return nil, &Error{Code: code, Msg: "send: " + ae.Message, Detail: string(b)}
	}
	return nil, mapErr(c.method, err)
}

func runToolCall(c *call, a *struct {
	Call json.RawMessage `json:"call"`
}) (any, error) {
	if len(a.Call) == 0 || string(a.Call) == "null" {
		return nil, errf(CodeInvalidCall, "runToolCall: call is required (a provider's tool call object)")
	}
	msg, _, err := c.e.s.RunToolCall(c.ctx, a.Call)
	if err != nil {
		if errors.Is(err, core.ErrClosed) {
			return nil, mapErr(c.method, err)
		}
		return nil, errf(CodeInvalidCall, "runToolCall: %v", err)
	}
	return msg, nil
}

// hostClient is a host-supplied model client: the JS object's
// stream(request, {signal}) behind the host dispatcher's llm.* kinds
// (PROTOCOL.md §2): llm.stream opens a stream ({stream: n}), llm.next
// answers its next chunk ({chunk} or {done: true}), llm.close ends it.
type hostClient struct {
	host      Host
	model     string
	maxTokens int
}

// hostLLMError is a host client's failure, with its errkind.
type hostLLMError struct {
	kind errkind.Kind
	msg  string
}

func (e *hostLLMError) Error() string      { return e.msg }
func (e *hostLLMError) Kind() errkind.Kind { return e.kind }

func (h *hostClient) Stream(ctx context.Context, req llm.Request) iter.Seq2[llm.Chunk, error] {
	return func(yield func(llm.Chunk, error) bool) {
		fail := func(err error) {
			if ctx.Err() != nil {
				yield(llm.Chunk{}, &hostLLMError{errkind.Cancelled, "llm client: cancelled: " + context.Cause(ctx).Error()})
				return
			}
			yield(llm.Chunk{}, &hostLLMError{errkind.Transport, "llm client: " + err.Error()})
		}
		if req.Model == "" {
			req.Model = h.model
		}
		if req.MaxTokens == 0 {
			req.MaxTokens = h.maxTokens
		}
		payload, err := json.Marshal(req)
		if err != nil {
			fail(err)
			return
		}
		out, err := h.host(ctx, "llm.stream", payload)
		if err != nil {
			fail(err)
			return
		}
		var open struct {
			Stream int `json:"stream"`
		}
		if err := json.Unmarshal(out, &open); err != nil || open.Stream == 0 {
			fail(fmt.Errorf("llm.stream answered %.100s, not {stream}", out))
			return
		}
		ref, _ := json.Marshal(open)
		defer func() {
			// Close even after cancellation: the JS side aborts the
			// client's signal and drops the iterator.
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			h.host(cctx, "llm.close", ref)
		}()
		for n := 0; ; n++ {
			out, err := h.host(ctx, "llm.next", ref)
			if err != nil {
				fail(err)
				return
			}
			var next struct {
				Chunk json.RawMessage `json:"chunk"`
				Done  bool            `json:"done"`
			}
			if err := json.Unmarshal(out, &next); err != nil {
				fail(fmt.Errorf("llm.next answered %.100s, not {chunk} or {done}", out))
				return
			}
			if next.Done {
				return
			}
			var ch llm.Chunk
			if err := decodeStrict(fmt.Sprintf("chunk %d", n), "chunk", next.Chunk, &ch); err != nil {
				fail(fmt.Errorf("the stream yielded a chunk that is not a chunk (see llm/doc.go): %v", err))
				return
			}
			if !yield(ch, nil) {
				return
			}
		}
	}
}
