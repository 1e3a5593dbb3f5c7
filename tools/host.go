package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/a3s-lab/code-wasm/errkind"
	"github.com/a3s-lab/code-wasm/internal/lazyre"
	"github.com/a3s-lab/code-wasm/kernel"
)

// HostToolHandler is a host tool's typed handler, in the style of the MCP
// go-sdk's ToolHandlerFor[In, Out]: in is the validated arguments decoded
// into In. A string Out is the output, a *kernel.Result the result; any
// other Out is the output as JSON and metadata "structured". call.Invoker makes nested calls, always as
// plain nested calls under the full policy. An error is exit 1 with its
// message.
type HostToolHandler[In, Out any] func(ctx context.Context, call *kernel.Call, in In) (Out, error)

var hostToolName = lazyre.New(`^[A-Za-z0-9_-]{1,64}$`)

// CheckHostTool checks a host tool's name and schema: 1–64 characters of
// [A-Za-z0-9_-], not starting with mcp__ (MCP's namespace), and a schema
// that compiles. Shadowing a built-in is refused when it is registered.
func CheckHostTool(name string, parameters json.RawMessage) error {
	if !hostToolName().MatchString(name) {
		return errkind.New(errkind.InvalidArgument, fmt.Sprintf("registerTool: name %q must be 1–64 characters of [A-Za-z0-9_-]", name))
	}
	if strings.HasPrefix(name, "mcp__") {
		return errkind.New(errkind.InvalidArgument, fmt.Sprintf("registerTool: name %q is in the mcp__ namespace of MCP servers", name))
	}
	if err := kernel.CheckSchema(parameters); err != nil {
		return errkind.New(errkind.InvalidArgument, fmt.Sprintf("registerTool %s: parameters do not compile as a JSON Schema: %v", name, err))
	}
	return nil
}

// NewHostTool builds a host tool. It runs alone (conservative
// capabilities): the kernel knows nothing of what it does.
func NewHostTool[In, Out any](name, description string, parameters json.RawMessage, h HostToolHandler[In, Out]) (kernel.Tool, error) {
	if len(parameters) == 0 {
		parameters = json.RawMessage(`{"type":"object"}`)
	}
	if err := CheckHostTool(name, parameters); err != nil {
		return nil, err
	}
	if h == nil {
		return nil, errkind.New(errkind.InvalidArgument, "registerTool "+name+": no handler")
	}
	return &hostTool[In, Out]{name: name, desc: description, params: parameters, h: h}, nil
}

type hostTool[In, Out any] struct {
	name, desc string
	params     json.RawMessage
	h          HostToolHandler[In, Out]
}

func (t *hostTool[In, Out]) Name() string                { return t.name }
func (t *hostTool[In, Out]) Description() string         { return t.desc }
func (t *hostTool[In, Out]) Parameters() json.RawMessage { return t.params }
func (t *hostTool[In, Out]) Capabilities(json.RawMessage) kernel.Capabilities {
	return kernel.Conservative()
}

func (t *hostTool[In, Out]) Execute(ctx context.Context, call *kernel.Call) (*kernel.Result, error) {
	var in In
	if err := json.Unmarshal(call.Args, &in); err != nil {
		return nil, errkind.New(errkind.InvalidArgument, fmt.Sprintf("%s: arguments: %v", t.name, err))
	}
	out, err := t.h(ctx, call, in)
	if err != nil {
		return &kernel.Result{Name: t.name, Output: err.Error(), ExitCode: 1, ErrorKind: kernel.KindOf(err)}, nil
	}
	if r, ok := any(out).(*kernel.Result); ok {
		r.Name = t.name
		return r, nil
	}
	if s, ok := any(out).(string); ok {
		return &kernel.Result{Name: t.name, Output: s}, nil
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("%s: the result is not JSON data: %v", t.name, err)
	}
	var v any
	_ = json.Unmarshal(b, &v)
	return &kernel.Result{Name: t.name, Output: string(b), Metadata: map[string]any{"structured": v}}, nil
}
