//go:build !codewasm_core

package hostapi

import (
	"context"
	"encoding/json"
	"errors"
	"sync"

	"github.com/a3s-lab/code-wasm/kernel"
	"github.com/a3s-lab/code-wasm/tools"
)

// hostToolMethods register JS host tools; their handlers run through the
// host kind "tool" and make nested calls with hostToolInvoke, which goes
// only through the running call's governed nested invoker.
var hostToolMethods = []row{
	method("registerTool", syncCall, registerTool),
	method("unregisterTool", syncCall, func(c *call, a *struct {
		Name *string `json:"name" required:"true"`
	}) (any, error) {
		return c.e.s.UnregisterTool(*a.Name), nil
	}),
	method("hostToolInvoke", 0, func(c *call, a *struct {
		CallID *string         `json:"callId" required:"true"`
		Name   *string         `json:"name" required:"true"`
		Args   json.RawMessage `json:"args"`
	}) (any, error) {
		inv, ok := hostCalls.Load(hostCallKey{c.e, *a.CallID})
		if !ok {
			return nil, errf(CodeInvalidCall, "%s: call %q is not running (invoke only while the handler runs)", c.method, *a.CallID)
		}
		if len(a.Args) == 0 || string(a.Args) == "null" {
			a.Args = json.RawMessage(`{}`)
		}
		return Wire(inv.(kernel.Invoker).Invoke(c.ctx, *a.Name, a.Args)), nil
	}),
}

type hostCallKey struct {
	e  *entry
	id string
}

// hostCalls are the running JS host tool calls' nested invokers.
var hostCalls sync.Map

func registerTool(c *call, a *struct {
	Name        *string         `json:"name" required:"true"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}) (any, error) {
	if c.e.host == nil {
		return nil, errf(CodeInvalidCall, "registerTool: the session has no host dispatcher")
	}
	e, name := c.e, *a.Name
	t, err := tools.NewHostTool(name, a.Description, a.Parameters, func(ctx context.Context, call *kernel.Call, args json.RawMessage) (*kernel.Result, error) {
		key := hostCallKey{e, call.ID}
		hostCalls.Store(key, call.Invoker)
		defer hostCalls.Delete(key)
		b, _ := json.Marshal(map[string]any{"name": name, "callId": call.ID, "args": args})
		out, err := e.host(ctx, "tool", b)
		if err != nil {
			return nil, err
		}
		return hostToolResult(name, out)
	})
	if err != nil {
		return nil, errf(CodeInvalidCall, "%v", err)
	}
	if err := c.e.s.RegisterTool(t); err != nil {
		return nil, errf(CodeInvalidCall, "%v", err)
	}
	return nil, nil
}

// hostToolResult reads a handler's answer: a string is the output;
// {output, metadata} as given; any other value is the output as JSON.
func hostToolResult(name string, out []byte) (*kernel.Result, error) {
	var s string
	if json.Unmarshal(out, &s) == nil {
		return &kernel.Result{Name: name, Output: s}, nil
	}
	var r struct {
		Output   *string        `json:"output"`
		Metadata map[string]any `json:"metadata"`
	}
	if json.Unmarshal(out, &r) == nil && r.Output != nil {
		return &kernel.Result{Name: name, Output: *r.Output, Metadata: r.Metadata}, nil
	}
	if len(out) == 0 {
		return nil, errors.New(name + ": the handler answered nothing")
	}
	return &kernel.Result{Name: name, Output: string(out)}, nil
}
