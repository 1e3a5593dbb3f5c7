package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"net/url"
	"strings"
	"time"

	"github.com/a3s-lab/code-wasm/errkind"
)

// Client streams one model turn. Both providers of New and a host-supplied
// client implement it.
type Client interface {
	// Stream sends req and yields the turn as normalized chunks. Nothing is
	// sent until the sequence is ranged over; breaking out of the loop or
	// cancelling ctx aborts the request. A successful turn ends with
	// exactly one Finish chunk. A failure is yielded once, as (Chunk{}, err)
	// with err carrying an errkind kind (see Error), and ends the sequence;
	// chunks yielded before it stay valid.
	Stream(ctx context.Context, req Request) iter.Seq2[Chunk, error]
}

// Role is who wrote a message: the system prompt is Request.System, and tool
// results travel in user messages (as Anthropic's API has them; the OpenAI
// client sends them as "tool" messages).
type Role string

// The roles of a message.
const (
	User      Role = "user"
	Assistant Role = "assistant"
)

// Request is one turn: the conversation so far and what the model may do.
type Request struct {
	// Model overrides Config.Model when not empty.
	Model    string    `json:"model,omitempty"`
	System   string    `json:"system,omitempty"`
	Messages []Message `json:"messages"`
	Tools    []Tool    `json:"tools,omitempty"`
	// ToolChoice is "auto" when zero.
	ToolChoice ToolChoice `json:"toolChoice,omitzero"`
	// MaxTokens overrides Config.MaxTokens when positive.
	MaxTokens   int      `json:"maxTokens,omitempty"`
	Temperature *float64 `json:"temperature,omitempty"`
}

// Message is one message of the conversation. An assistant message holds
// text and the tool calls the model made; a user message holds text and the
// results of the previous assistant message's tool calls (every call
// answered, in call order). Messages of one role in a row are sent as one.
type Message struct {
	Role        Role         `json:"role"`
	Text        string       `json:"text,omitempty"`
	ToolCalls   []ToolCall   `json:"toolCalls,omitempty"`
	ToolResults []ToolResult `json:"toolResults,omitempty"`
}

// ToolCall is one tool call of an assistant message.
type ToolCall struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// Arguments is the JSON text of the arguments, as the model wrote it
	// (it may not parse; the Anthropic client then sends {}).
	Arguments string `json:"arguments"`
}

// ToolResult answers the tool call whose ID is CallID.
type ToolResult struct {
	CallID  string `json:"callId"`
	Content string `json:"content"`
	IsError bool   `json:"isError,omitempty"`
}

// Tool is a tool the model may call.
type Tool struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Parameters is a JSON Schema of the arguments object.
	Parameters json.RawMessage `json:"parameters"`
}

// ToolChoiceType says whether and which tool the model must call.
type ToolChoiceType string

// The tool choices.
const (
	ToolChoiceAuto     ToolChoiceType = "auto"     // the model decides
	ToolChoiceNone     ToolChoiceType = "none"     // no tool call
	ToolChoiceRequired ToolChoiceType = "required" // some tool call (Anthropic's "any")
	ToolChoiceTool     ToolChoiceType = "tool"     // the tool named Name
)

// ToolChoice is Request.ToolChoice; Name is set only with ToolChoiceTool.
type ToolChoice struct {
	Type ToolChoiceType `json:"type"`
	Name string         `json:"name,omitempty"`
}

// ChunkType is the kind of a stream chunk.
type ChunkType string

// The chunk kinds.
const (
	TextDelta      ChunkType = "text_delta"      // Text
	ReasoningDelta ChunkType = "reasoning_delta" // Text
	ToolCallStart  ChunkType = "tool_call_start" // Index, ID, Name
	ToolCallDelta  ChunkType = "tool_call_delta" // Index, Fragment
	ToolCallEnd    ChunkType = "tool_call_end"   // Index
	Finish         ChunkType = "finish"          // StopReason, Usage
)

// Chunk is one event of the normalized stream. Which fields are set depends
// on Type (see the constants). Tool calls are numbered by Index from 0 in
// the order they start; their chunks may interleave, every start is
// followed by exactly one end before Finish, and the arguments are the
// concatenation of the call's fragments ("" means {}).
type Chunk struct {
	Type       ChunkType  `json:"type"`
	Text       string     `json:"text,omitempty"`
	Index      int        `json:"index"`
	ID         string     `json:"id,omitempty"`
	Name       string     `json:"name,omitempty"`
	Fragment   string     `json:"fragment,omitempty"`
	StopReason StopReason `json:"stopReason,omitempty"`
	Usage      Usage      `json:"usage,omitzero"`
}

// StopReason says why the model stopped, normalized across providers.
type StopReason string

// The stop reasons.
const (
	Stop          StopReason = "stop"           // end of turn, or a stop sequence
	ToolUse       StopReason = "tool_use"       // the model wants its tool calls answered
	MaxTokens     StopReason = "max_tokens"     // the output limit cut the turn
	ContentFilter StopReason = "content_filter" // the provider withheld the output (a refusal)
	OtherStop     StopReason = "other"          // anything else the provider reports
)

// Usage counts a turn's tokens as the provider reported them.
type Usage struct {
	PromptTokens     int `json:"promptTokens"`
	CompletionTokens int `json:"completionTokens"`
	TotalTokens      int `json:"totalTokens"`
	// CacheReadTokens and CacheWriteTokens are the parts of PromptTokens
	// read from and written to the provider's prompt cache, as it reports
	// them (OpenAI: prompt_tokens_details.cached_tokens; Anthropic:
	// cache_read_input_tokens and cache_creation_input_tokens); absent
	// when zero.
	CacheReadTokens  int `json:"cacheReadTokens,omitempty"`
	CacheWriteTokens int `json:"cacheWriteTokens,omitempty"`
}

// Add returns the sum of u and v.
func (u Usage) Add(v Usage) Usage {
	return Usage{PromptTokens: u.PromptTokens + v.PromptTokens, CompletionTokens: u.CompletionTokens + v.CompletionTokens,
		TotalTokens: u.TotalTokens + v.TotalTokens, CacheReadTokens: u.CacheReadTokens + v.CacheReadTokens,
		CacheWriteTokens: u.CacheWriteTokens + v.CacheWriteTokens}
}

// Config is the `llm` option of API.md: which provider, where, and how
// patiently.
type Config struct {
	// Provider is "openai" (OpenAI-compatible chat completions) or
	// "anthropic" (the Messages API).
	Provider string `json:"provider"`
	// BaseURL defaults to https://api.openai.com/v1 or
	// https://api.anthropic.com; the client posts to
	// BaseURL+"/chat/completions" or BaseURL+"/v1/messages".
	BaseURL string            `json:"baseURL,omitempty"`
	APIKey  string            `json:"apiKey,omitempty"`
	Model   string            `json:"model"`
	Headers map[string]string `json:"headers,omitempty"`
	// MaxRetries is how many times a request that failed before any stream
	// byte is retried; nil means DefaultMaxRetries.
	MaxRetries *int `json:"maxRetries,omitempty"`
	// TimeoutMs bounds the wait for the response headers and each silence
	// of the stream after them; 0 means DefaultTimeout.
	TimeoutMs int64 `json:"timeoutMs,omitempty"`
	// MaxTokens is the output limit sent with every request (Anthropic
	// requires one: 0 means DefaultMaxTokens there, and no limit for
	// OpenAI-compatible servers; api.openai.com gets it as
	// max_completion_tokens, which its newer models require).
	MaxTokens int `json:"maxTokens,omitempty"`
}

// Defaults of Config.
const (
	DefaultMaxRetries = 2
	DefaultTimeout    = 120 * time.Second
	DefaultMaxTokens  = 8192
	maxMaxRetries     = 10
)

// New validates cfg and returns its provider's client. A bad field is an
// *Error of kind invalid_argument whose Key names it.
func New(cfg Config) (Client, error) {
	c, err := cfg.normalize()
	if err != nil {
		return nil, err
	}
	switch c.Provider {
	case "openai":
		return &openAI{transport{cfg: c, tools: &toolsCache{}}}, nil
	default:
		return &anthropic{transport{cfg: c, tools: &toolsCache{}}}, nil
	}
}

// normalize checks cfg and fills its defaults.
func (cfg Config) normalize() (Config, error) {
	bad := func(key, format string, a ...any) (Config, error) {
		return cfg, &Error{kind: errkind.InvalidArgument, Key: key, Message: "llm." + key + ": " + fmt.Sprintf(format, a...)}
	}
	switch cfg.Provider {
	case "openai":
		if cfg.BaseURL == "" {
			cfg.BaseURL = "https://api.openai.com/v1"
		}
	case "anthropic":
		if cfg.BaseURL == "" {
			cfg.BaseURL = "https://api.anthropic.com"
		}
		if cfg.MaxTokens == 0 {
			cfg.MaxTokens = DefaultMaxTokens
		}
	case "":
		return bad("provider", `is required ("openai" or "anthropic")`)
	default:
		return bad("provider", `unknown provider %q (want "openai" or "anthropic")`, cfg.Provider)
	}
	if strings.TrimSpace(cfg.Model) == "" {
		return bad("model", "is required")
	}
	u, err := url.Parse(cfg.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https" && u.Scheme != "") || (u.Scheme == "" && !strings.HasPrefix(cfg.BaseURL, "/")) {
		return bad("baseURL", "%q is not an http(s) URL or an absolute path", cfg.BaseURL)
	}
	cfg.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	for k, v := range cfg.Headers {
		if k == "" || strings.ContainsAny(k, " \t\r\n:") || strings.ContainsAny(v, "\r\n") {
			return bad("headers", "%q is not a valid header", k)
		}
	}
	if cfg.MaxRetries == nil {
		n := DefaultMaxRetries
		cfg.MaxRetries = &n
	} else if *cfg.MaxRetries < 0 || *cfg.MaxRetries > maxMaxRetries {
		return bad("maxRetries", "%d is outside 0..%d", *cfg.MaxRetries, maxMaxRetries)
	}
	if cfg.TimeoutMs < 0 {
		return bad("timeoutMs", "%d is negative", cfg.TimeoutMs)
	}
	if cfg.TimeoutMs == 0 {
		cfg.TimeoutMs = DefaultTimeout.Milliseconds()
	}
	if cfg.MaxTokens < 0 {
		return bad("maxTokens", "%d is negative", cfg.MaxTokens)
	}
	return cfg, nil
}

// Error is how this package reports a failure: a bad Config or Request, an
// HTTP error answer (Status, and the provider's Type and Message), an error
// inside the stream, a malformed or truncated stream, a timeout or a
// cancellation. Kind says which (errkind): invalid_argument, rate_limited
// (429, after the retries), transport (other statuses, network failures,
// malformed streams), timeout, cancelled.
type Error struct {
	kind errkind.Kind
	// Key names the Config field a bad config failed on.
	Key string
	// Status is the HTTP status of an error answer, 0 for others.
	Status int
	// Type is the provider's error type ("rate_limit_error",
	// "invalid_request_error", "overloaded_error", …), if it sent one.
	Type    string
	Message string
	// RetryAfter is the server's last retry hint, 0 if it sent none.
	RetryAfter time.Duration
	// Attempts is how many requests were sent.
	Attempts int
	hinted   bool // RetryAfter came from the server
	err      error
}

func (e *Error) Error() string {
	s := e.Message
	if e.Status != 0 {
		s = fmt.Sprintf("HTTP %d: %s", e.Status, s)
	}
	if e.err != nil && e.Message == "" {
		s = e.err.Error()
	}
	return s
}

// Kind reports the errkind of e.
func (e *Error) Kind() errkind.Kind { return e.kind }

// Unwrap returns the cause (a context error, a network error), if any.
func (e *Error) Unwrap() error { return e.err }
