package ptc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
)

// HostFunc is a host dispatcher (npm/src/PROTOCOL.md §2): it asks the JS
// side to run the handler of kind with a JSON payload and returns the
// JSON result. It must honour ctx. internal/hostapi.Host has this shape.
type HostFunc func(ctx context.Context, kind string, payload []byte) ([]byte, error)

// HostEngine runs programs on the host's own JS engine (a Node worker
// thread, a browser Web Worker) through the PTC kinds of the host
// dispatcher (PROTOCOL.md "PTC"): ptc.start, ptc.poll, ptc.reply, ptc.stop.
// Every message is Go → JS, so the dispatcher is the only channel; the
// script's ctx calls come back as the answers to ptc.poll and go out
// again as ptc.reply.
type HostEngine struct {
	host HostFunc

	mu      sync.Mutex
	runtime string
}

// NewHostEngine returns an engine over host, or nil for a nil host.
func NewHostEngine(host HostFunc) Engine {
	if host == nil {
		return nil
	}
	return &HostEngine{host: host, runtime: "host-js"}
}

// Name is the runtime the host last reported (e.g. "node-worker").
func (e *HostEngine) Name() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.runtime
}

type hostStart struct {
	Name          string          `json:"name"`
	Source        string          `json:"source"`
	Inputs        json.RawMessage `json:"inputs"`
	Methods       []string        `json:"methods"`
	Tools         []string        `json:"tools"`
	MaxStackDepth int             `json:"maxStackDepth,omitempty"`
	// TimeoutMs is a backstop for the JS side: it stops the worker on its
	// own if Go never says ptc.stop.
	TimeoutMs int64 `json:"timeoutMs"`
}

type hostCall struct {
	ID     int64  `json:"id"`
	Method string `json:"method"`
	Args   string `json:"args"` // JSON text of the argument array
}

type hostDone struct {
	OK    bool         `json:"ok"`
	Value string       `json:"value,omitempty"` // JSON text
	Error *ScriptError `json:"error,omitempty"`
}

type hostPoll struct {
	Calls []hostCall `json:"calls"`
	Done  *hostDone  `json:"done,omitempty"`
}

type hostReply struct {
	Run   int64  `json:"run"`
	ID    int64  `json:"id"`
	OK    bool   `json:"ok"`
	Value string `json:"value,omitempty"` // JSON text
	Error string `json:"error,omitempty"`
}

// UnmarshalJSON reads ScriptError's wire form {message, line}.
func (e *ScriptError) UnmarshalJSON(b []byte) error {
	var w struct {
		Message string `json:"message"`
		Line    int    `json:"line"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	e.Message, e.Line = w.Message, w.Line
	return nil
}

func (e *HostEngine) do(ctx context.Context, kind string, in, out any) error {
	b, err := json.Marshal(in)
	if err != nil {
		return err
	}
	r, err := e.host(ctx, kind, b)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("%s: %w", kind, err)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(r, out); err != nil {
		return fmt.Errorf("%s: bad answer %.200q: %v", kind, r, err)
	}
	return nil
}

// Run implements Engine.
func (e *HostEngine) Run(ctx context.Context, p *Program, b Bridge) (json.RawMessage, error) {
	st := hostStart{Name: p.Name, Source: p.Source, Inputs: p.Inputs, Methods: p.Methods, Tools: p.Tools,
		MaxStackDepth: p.MaxStackDepth, TimeoutMs: 24 * 3600 * 1000}
	if d, ok := ctx.Deadline(); ok {
		st.TimeoutMs = time.Until(d).Milliseconds() + SettleGrace.Milliseconds()
	}
	var started struct {
		Run     int64  `json:"run"`
		Runtime string `json:"runtime"`
	}
	if err := e.do(ctx, "ptc.start", st, &started); err != nil {
		if strings.Contains(err.Error(), "no handler for host kind") {
			return nil, fmt.Errorf("%w: %v", ErrNoEngine, err)
		}
		return nil, err
	}
	if started.Runtime != "" {
		e.mu.Lock()
		e.runtime = started.Runtime
		e.mu.Unlock()
	}
	// Stop always: it terminates the worker, which pre-empts for(;;){} and
	// drops every timer and pending promise of the script.
	defer func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), SettleGrace)
		defer cancel()
		_ = e.do(sctx, "ptc.stop", map[string]int64{"run": started.Run}, nil)
	}()

	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		var pr hostPoll
		if err := e.do(ctx, "ptc.poll", map[string]int64{"run": started.Run}, &pr); err != nil {
			return nil, err
		}
		for _, c := range pr.Calls {
			wg.Add(1)
			go func(c hostCall) {
				defer wg.Done()
				rep := hostReply{Run: started.Run, ID: c.ID}
				v, err := b.Call(ctx, c.Method, json.RawMessage(c.Args))
				if err != nil {
					rep.Error = err.Error()
				} else {
					rep.OK, rep.Value = true, string(v)
				}
				_ = e.do(ctx, "ptc.reply", rep, nil)
			}(c)
		}
		if d := pr.Done; d != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if !d.OK {
				if d.Error == nil {
					return nil, errors.New("the host engine failed without a message")
				}
				return nil, d.Error
			}
			if d.Value == "" {
				return json.RawMessage("null"), nil
			}
			if !json.Valid([]byte(d.Value)) {
				return nil, fmt.Errorf("the host engine returned a result that is not JSON: %.200q", d.Value)
			}
			return json.RawMessage(d.Value), nil
		}
	}
}
