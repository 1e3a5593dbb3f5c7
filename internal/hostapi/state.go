package hostapi

import (
	"encoding/json"
	"maps"
	"slices"
)

// syncState is the browser Worker's one read of the state the page
// answers its synchronous methods from (npm/src/browser-worker.mjs). It
// joins the table in init: it dispatches to the other rows, and a
// variable's initializer may not refer to the table it is part of.
func init() {
	methods = table(slices.Collect(maps.Values(methods)), []row{method("syncState", syncCall|whenClosed, syncState)})
}

// syncStateArgs names the synchronous methods to read.
type syncStateArgs struct {
	Methods []string `json:"methods"`
}

// syncStateReadable are the methods syncState may read: the synchronous
// ones without arguments that only read.
var syncStateReadable = []string{"toolNames", "toolDefinitions", "activeTools", "pendingConfirmations", "isClosed", "mcpStatus", "skillNames"}

// syncState answers, in one crossing, what one callSync of each named
// method would: an object of each method's JSON text, a method that
// answers an error (a closed session's toolNames) left out. After every
// call the Worker read six methods by six callSyncs, each a Go entry
// with its own JSON; this is one.
func syncState(c *call, a *syncStateArgs) (any, error) {
	out := make(map[string]string, len(a.Methods))
	for _, m := range a.Methods {
		if !slices.Contains(syncStateReadable, m) {
			return nil, errf(CodeInvalidCall, "syncState: %q is not a state method (one of %v)", m, syncStateReadable)
		}
		v, err := c.t.dispatch(c.ctx, c.id, m, nil, true)
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
