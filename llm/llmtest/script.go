package llmtest

import (
	"encoding/json"
	"time"

	"github.com/a3s-lab/code-wasm/llm"
)

// Script is what the server answers to one client: request n gets
// Replies[n], the last reply repeating.
type Script struct {
	// Provider is "openai" or "anthropic": the wire format and the
	// validation rules.
	Provider string  `json:"provider"`
	Replies  []Reply `json:"replies"`
}

// Reply is one answer. With Status 0 or 200 it is a stream of Events,
// else an error answer with the provider's error body.
type Reply struct {
	Status int               `json:"status,omitempty"`
	Header map[string]string `json:"header,omitempty"`
	// Error is the error answer's type and message (defaults by status).
	Error *ErrorBody `json:"error,omitempty"`
	// DelayMs holds the response head back.
	DelayMs int     `json:"delayMs,omitempty"`
	Events  []Event `json:"events,omitempty"`
	// End is how the stream ends: "" (OpenAI's [DONE], Anthropic's
	// message_stop), "no_done" (without them), "truncate" (the body ends
	// where the events end), "stall" (the server keeps the stream open
	// and silent until the client leaves) or "hold" (the stream's usual
	// end, then open and silent until the client leaves).
	End string `json:"end,omitempty"`
	// CRLF ends lines with CRLF.
	CRLF bool `json:"crlf,omitempty"`
	// Cumulative (OpenAI) resends the whole text so far in every content
	// delta, as some compatible servers do.
	Cumulative bool `json:"cumulative,omitempty"`
	// Split writes the body in flushed pieces of this many bytes.
	Split int `json:"split,omitempty"`
}

// Event is one step of a stream; exactly one field other than DelayMs is
// set.
type Event struct {
	// DelayMs waits before the event.
	DelayMs   int        `json:"delayMs,omitempty"`
	Text      string     `json:"text,omitempty"`
	Reasoning string     `json:"reasoning,omitempty"`
	Tool      *ToolStart `json:"tool,omitempty"`
	Args      *ToolArgs  `json:"args,omitempty"`
	Finish    *Finish    `json:"finish,omitempty"`
	// Ping is a keep-alive: an SSE comment (OpenAI) or a ping event.
	Ping bool `json:"ping,omitempty"`
	// Error is an error reported inside the 200 stream.
	Error *ErrorBody `json:"error,omitempty"`
	// Raw is written as it is.
	Raw string `json:"raw,omitempty"`
}

// ToolStart starts tool call Index (numbered from 0 in the turn).
type ToolStart struct {
	Index int    `json:"index"`
	ID    string `json:"id"`
	Name  string `json:"name"`
}

// ToolArgs is a fragment of call Index's arguments.
type ToolArgs struct {
	Index    int    `json:"index"`
	Fragment string `json:"fragment"`
}

// Finish ends the turn with Stop, sent as the provider's word for it
// unless Wire names one, and the usage.
type Finish struct {
	Stop  llm.StopReason `json:"stop,omitempty"`
	Wire  string         `json:"wire,omitempty"`
	Usage llm.Usage      `json:"usage"`
}

// ErrorBody is a provider error's type and message.
type ErrorBody struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// Log is what the server saw of one script.
type Log struct {
	Requests []Request `json:"requests"`
	// Disconnects counts the clients that left before their stream ended.
	Disconnects int `json:"disconnects"`
	// Rejected holds the 400 messages of requests that failed validation.
	Rejected []string `json:"rejected,omitempty"`
}

// Request is one recorded request.
type Request struct {
	// AtMs is when it arrived, in ms since the script was loaded.
	AtMs   float64           `json:"atMs"`
	Path   string            `json:"path"`
	Header map[string]string `json:"header"`
	// Remote is the client's address: the same for requests that came
	// over one connection.
	Remote string          `json:"remote"`
	Body   json.RawMessage `json:"body"`
}

// At is AtMs as a duration.
func (r Request) At() time.Duration { return time.Duration(r.AtMs * float64(time.Millisecond)) }
