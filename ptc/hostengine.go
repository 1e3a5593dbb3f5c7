package ptc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/a3s-lab/code-wasm/internal/hostcall"
)

// HostFunc is a host dispatcher (npm/src/PROTOCOL.md §2): it asks the JS
// side to run the handler of kind with a JSON payload and returns the
// JSON result. It must honour ctx. It is the one host callback type of
// the module (internal/hostcall.Func), named here for Go users.
type HostFunc = hostcall.Func

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

// ReportsRunning: the host posts `running` in a poll answer once the
// worker has loaded QuickJS and the script is about to run.
func (e *HostEngine) ReportsRunning() {}

// EnforcesTimeout: the worker stops the script at timeoutMs, counted from
// `running` in the worker itself, and says so in the poll answer's done
// (timedOut); a script that settled before is never timed out by a host
// slow to read its answer.
func (e *HostEngine) EnforcesTimeout() {}

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
	// TimeoutMs is the script's time, counted in the worker from the
	// script's start (after the engine loaded) to its settling: the worker
	// stops the script then (the done says timedOut), and the host stops
	// the worker 1 s later if it could not.
	TimeoutMs int64 `json:"timeoutMs"`
	// The engine's limits (Program's, defaults filled in).
	MaxToolCalls   int `json:"maxToolCalls"`
	MaxInFlight    int `json:"maxInFlight"`
	MaxResultBytes int `json:"maxResultBytes"`
	MemoryBytes    int `json:"memoryBytes"`
}

// orDefault is v, or d when v is not positive.
func orDefault(v, d int) int {
	if v > 0 {
		return v
	}
	return d
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
	// TimedOut: the script was stopped at timeoutMs.
	TimedOut bool `json:"timedOut,omitempty"`
}

type hostPoll struct {
	Calls []hostCall `json:"calls"`
	Done  *hostDone  `json:"done,omitempty"`
	// Violation is a limit the script hit inside the engine (maxToolCalls),
	// reported once.
	Violation string `json:"violation,omitempty"`
	// Running: the engine has started and the script runs (reported once,
	// before any call or done).
	Running bool `json:"running,omitempty"`
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
		MaxStackDepth: p.MaxStackDepth, TimeoutMs: 24 * 3600 * 1000,
		MaxToolCalls: orDefault(p.MaxToolCalls, DefaultMaxToolCalls), MaxInFlight: orDefault(p.MaxInFlight, DefaultMaxInFlight),
		MaxResultBytes: orDefault(p.MaxResultBytes, DefaultMaxResultBytes), MemoryBytes: orDefault(p.MemoryBytes, DefaultMemoryBytes)}
	if p.Timeout > 0 {
		st.TimeoutMs = max(p.Timeout.Milliseconds(), 1)
	} else if d, ok := ctx.Deadline(); ok {
		st.TimeoutMs = time.Until(d).Milliseconds() + SettleGrace.Milliseconds()
	}
	var started struct {
		Run     int64  `json:"run"`
		Runtime string `json:"runtime"`
		// First: the run's one poll answer when the script settled
		// inside ptc.start (workerd); the host has stopped the run.
		First *hostPoll `json:"first"`
	}
	// The direct door (direct_js.go): a host running QuickJS on Go's own
	// thread calls it for each ctx call instead of answering ptc.poll with
	// it; others ignore it. wg counts the calls of both paths.
	var wg sync.WaitGroup
	// The ctx calls of a script stopped at its deadline are cancelled
	// before Run waits for them (nothing awaits them any more).
	callCtx, cancelCalls := context.WithCancel(ctx)
	defer cancelCalls()
	door, closeDoor, releaseDoor := newDirect(callCtx, b, st.MaxInFlight, st.MaxResultBytes, &wg)
	defer releaseDoor() // last: after ptc.stop, nothing calls it
	sctx := ctx
	if door != nil {
		sctx = hostcall.WithExtra(ctx, door)
	}
	if err := e.do(sctx, "ptc.start", st, &started); err != nil {
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
	first := started.First
	defer func() {
		if started.First != nil && started.First.Done != nil {
			return // the host stopped it
		}
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), SettleGrace)
		defer cancel()
		_ = e.do(sctx, "ptc.stop", map[string]int64{"run": started.Run}, nil)
	}()

	// At most maxInFlight bridge calls run at once, whatever the host
	// sends: a goroutine per call without bound once crashed the Go
	// runtime in the browser's wasm Worker (~300 concurrent calls). The
	// poll loop waits for a free slot, so the host keeps the rest.
	slots := make(chan struct{}, st.MaxInFlight)
	defer wg.Wait()
	defer closeDoor() // before the wait: no call starts after it
	var violation *LimitError
	fail := func(err error) error {
		if violation != nil {
			violation.Err = err
			return violation
		}
		return err
	}
	for {
		var pr hostPoll
		if first != nil {
			pr, first = *first, nil
		} else if err := e.do(ctx, "ptc.poll", map[string]int64{"run": started.Run}, &pr); err != nil {
			return nil, fail(err)
		}
		if pr.Running && p.Running != nil {
			p.Running()
		}
		if pr.Violation != "" && violation == nil {
			violation = &LimitError{Message: pr.Violation}
		}
		for _, c := range pr.Calls {
			select {
			case slots <- struct{}{}:
			case <-ctx.Done():
				return nil, fail(ctx.Err())
			}
			wg.Add(1)
			go func(c hostCall) {
				defer func() { <-slots; wg.Done() }()
				rep := hostReply{Run: started.Run, ID: c.ID}
				ok, text := answer(callCtx, b, c.Method, c.Args, st.MaxResultBytes)
				if ok {
					rep.OK, rep.Value = true, text
				} else {
					rep.Error = text
				}
				_ = e.do(ctx, "ptc.reply", rep, nil)
			}(c)
		}
		if d := pr.Done; d != nil {
			if ctx.Err() != nil {
				return nil, fail(ctx.Err())
			}
			if d.TimedOut {
				cancelCalls()
				return nil, fail(fmt.Errorf("%w (%s)", ErrScriptTimeout, d.Error))
			}
			if violation != nil {
				return nil, violation
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

// answer runs one ctx call of the script on b: ok and the result's JSON
// text, or the message the call rejects with. A panic below the bridge
// becomes the call's error.
func answer(ctx context.Context, b Bridge, method, args string, maxArgs int) (ok bool, text string) {
	if len(args) > maxArgs { // the engine refuses these first
		return false, fmt.Sprintf("the arguments of ctx.%s are %d bytes of JSON; the limit is %d", method, len(args), maxArgs)
	}
	defer func() {
		if r := recover(); r != nil {
			ok, text = false, fmt.Sprintf("ctx.%s: internal error: %v", method, r)
		}
	}()
	v, err := b.Call(ctx, method, json.RawMessage(args))
	if err != nil {
		return false, err.Error()
	}
	return true, string(v)
}
