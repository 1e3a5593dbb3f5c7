package hostapi

import (
	"encoding/json"
	"maps"
	"slices"
	"sync"
)

// syncState is the browser Worker's one read of the state the page
// answers its synchronous methods from (npm/src/browser-worker.mjs). It
// joins the table in init: it dispatches to the other rows, and a
// variable's initializer may not refer to the table it is part of.
func init() {
	methods = table(slices.Collect(maps.Values(methods)), []row{{name: "syncState", sync: true, whenClosed: true, run: syncState}})
}

// syncStateArgs names the synchronous methods to read.
type syncStateArgs struct {
	Methods []string `json:"methods"`
}

// syncStateReadable are the methods syncState may read: the synchronous
// ones without arguments that only read.
var syncStateReadable = []string{"toolNames", "toolDefinitions", "activeTools", "pendingConfirmations", "isClosed", "mcpStatus", "skillNames"}

// stateArgs holds the methods of each syncState argument text already
// checked: the Worker sends the same two texts on every call, and the
// strict decode of one cost more than the six reads it names (5.6 of
// 9.8 µs natively).
var (
	stateArgsMu sync.Mutex
	stateArgs   []stateArgsSeen
)

type stateArgsSeen struct {
	raw     string
	methods []string
}

func stateMethods(c *call, raw []byte) ([]string, error) {
	stateArgsMu.Lock()
	seen := stateArgs
	stateArgsMu.Unlock()
	for _, s := range seen {
		if s.raw == string(raw) {
			return s.methods, nil
		}
	}
	var a syncStateArgs
	if err := decodeArgs(c.method, raw, &a); err != nil {
		return nil, err
	}
	for _, m := range a.Methods {
		if !slices.Contains(syncStateReadable, m) {
			return nil, errf(CodeInvalidCall, "syncState: %q is not a state method (one of %v)", m, syncStateReadable)
		}
	}
	stateArgsMu.Lock()
	if len(stateArgs) < 8 {
		stateArgs = append(stateArgs, stateArgsSeen{string(raw), a.Methods})
	}
	stateArgsMu.Unlock()
	return a.Methods, nil
}

// syncState answers, in one crossing, what one callSync of each named
// method would: an object of each method's JSON text, a method that
// answers an error (a closed session's toolNames) left out. After every
// call the Worker read six methods by six callSyncs, each a Go entry
// with its own JSON; this is one. Each read runs its row directly: the
// session is the one dispatch found.
func syncState(c *call, raw []byte) (any, error) {
	ms, err := stateMethods(c, raw)
	if err != nil {
		return nil, err
	}
	closed := c.e.s.IsClosed()
	out := make(map[string]string, len(ms))
	for _, m := range ms {
		r, ok := methods[m]
		if !ok || closed && !r.whenClosed { // a method a build leaves out; SESSION_CLOSED
			continue
		}
		v, err := r.run(&call{ctx: c.ctx, t: c.t, id: c.id, e: c.e, method: m}, nil)
		if err != nil {
			continue
		}
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		out[m] = string(b)
	}
	return out, nil
}
