package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/a3s-lab/code-wasm/kernel"
)

// The glue for apps that run their own model loop: the session's tools in
// a provider's format (ToolsFor) and one tool call as the provider sent it,
// run governed, answered in the provider's tool-result format
// (RunToolCall).

// Providers ToolsFor and RunToolCall speak.
const (
	OpenAI    = "openai"
	Anthropic = "anthropic"
)

// ToolsFor lists the registry's tools as provider's `tools` array: OpenAI
// chat completions' [{type:"function", function:{name, description,
// parameters}}] or Anthropic's [{name, description, input_schema}]. With
// strict (OpenAI only) each function carries strict:true and a parameters
// schema strict mode accepts: every object closed (additionalProperties
// false) with every property required, an optional property made
// nullable, and the keywords strict mode refuses left out (the kernel
// still validates the call against the full schema; RunToolCall drops the
// nulls strict mode makes the model send for an omitted optional
// argument).
func ToolsFor(reg *kernel.Registry, provider string, strict bool) ([]any, error) {
	switch {
	case provider != OpenAI && provider != Anthropic:
		return nil, fmt.Errorf("provider must be %q or %q, got %q", OpenAI, Anthropic, provider)
	case strict && provider != OpenAI:
		return nil, fmt.Errorf("strict is an OpenAI option; Anthropic has no strict tool schemas")
	}
	out := []any{}
	for _, n := range reg.Names() {
		t, ok := reg.Lookup(n)
		if !ok {
			continue
		}
		var params any
		if err := json.Unmarshal(t.Parameters(), &params); err != nil {
			return nil, fmt.Errorf("tool %s: parameters: %v", n, err)
		}
		if provider == Anthropic {
			out = append(out, map[string]any{"name": n, "description": t.Description(), "input_schema": params})
			continue
		}
		fn := map[string]any{"name": n, "description": t.Description(), "parameters": params}
		if strict {
			fn["parameters"], fn["strict"] = strictSchema(params), true
		}
		out = append(out, map[string]any{"type": "function", "function": fn})
	}
	return out, nil
}

// strictRefused are the JSON Schema keywords OpenAI's strict mode does not
// accept (structured outputs, "supported schemas").
var strictRefused = []string{"default", "minLength", "maxLength", "pattern", "format", "minimum", "maximum",
	"exclusiveMinimum", "exclusiveMaximum", "multipleOf", "patternProperties", "unevaluatedProperties",
	"propertyNames", "minProperties", "maxProperties", "unevaluatedItems", "contains", "minContains",
	"maxContains", "minItems", "maxItems", "uniqueItems", "oneOf", "not", "if", "then", "else"}

// strictSchema rewrites a schema (a copy) for OpenAI's strict mode.
func strictSchema(v any) any {
	s, ok := v.(map[string]any)
	if !ok {
		return v
	}
	out := maps.Clone(s)
	for _, k := range strictRefused {
		delete(out, k)
	}
	if props, ok := s["properties"].(map[string]any); ok {
		required := map[string]bool{}
		if rs, ok := s["required"].([]any); ok {
			for _, r := range rs {
				if n, ok := r.(string); ok {
					required[n] = true
				}
			}
		}
		np := make(map[string]any, len(props))
		all := make([]any, 0, len(props))
		for _, name := range sortedKeys(props) {
			p := strictSchema(props[name])
			if !required[name] {
				p = nullable(p)
			}
			np[name] = p
			all = append(all, name)
		}
		out["properties"], out["required"], out["additionalProperties"] = np, all, false
	} else if s["type"] == "object" {
		out["properties"], out["required"], out["additionalProperties"] = map[string]any{}, []any{}, false
	}
	if it, ok := s["items"]; ok {
		out["items"] = strictSchema(it)
	}
	for _, k := range []string{"anyOf", "allOf"} {
		if xs, ok := s[k].([]any); ok {
			ys := make([]any, len(xs))
			for i, x := range xs {
				ys[i] = strictSchema(x)
			}
			out[k] = ys
		}
	}
	for _, k := range []string{"$defs", "definitions"} {
		if ds, ok := s[k].(map[string]any); ok {
			nd := make(map[string]any, len(ds))
			for n, d := range ds {
				nd[n] = strictSchema(d)
			}
			out[k] = nd
		}
	}
	return out
}

// nullable lets a strict property be null, the strict form of "optional".
func nullable(v any) any {
	s, ok := v.(map[string]any)
	if !ok {
		return v
	}
	switch t := s["type"].(type) {
	case string:
		s["type"] = []any{t, "null"}
		if e, ok := s["enum"].([]any); ok {
			s["enum"] = append(e, nil)
		}
		return s
	case []any:
		for _, x := range t {
			if x == "null" {
				return s
			}
		}
		s["type"] = append(t, "null")
		return s
	}
	return map[string]any{"anyOf": []any{s, map[string]any{"type": "null"}}}
}

func sortedKeys(m map[string]any) []string { return slices.Sorted(maps.Keys(m)) }

// ProviderCall is one tool call as a provider sent it, parsed.
type ProviderCall struct {
	Provider string
	ID       string
	Name     string
	// Args is the arguments' JSON text ("" when the model sent none).
	Args string
}

// ParseCall reads a provider's tool call: an OpenAI chat completions tool
// call {id, type:"function", function:{name, arguments}} (arguments a JSON
// string, as sent; an object is accepted too), or an Anthropic tool_use
// block {type:"tool_use", id, name, input}. An error names what is wrong.
func ParseCall(raw json.RawMessage) (ProviderCall, error) {
	var c struct {
		Type     string          `json:"type"`
		ID       string          `json:"id"`
		Name     string          `json:"name"`
		Input    json.RawMessage `json:"input"`
		Function *struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		} `json:"function"`
	}
	const shapes = `an OpenAI tool call {id, type:"function", function:{name, arguments}} or an Anthropic tool_use block {type:"tool_use", id, name, input}`
	if err := json.Unmarshal(raw, &c); err != nil {
		return ProviderCall{}, fmt.Errorf("the call must be %s: %v", shapes, err)
	}
	var p ProviderCall
	switch {
	case c.Type == "tool_use":
		p = ProviderCall{Provider: Anthropic, ID: c.ID, Name: c.Name, Args: string(c.Input)}
		if len(c.Input) > 0 && c.Input[0] != '{' && string(c.Input) != "null" {
			return p, fmt.Errorf("the tool_use block's input must be an object")
		}
	case c.Function != nil && (c.Type == "function" || c.Type == ""):
		p = ProviderCall{Provider: OpenAI, ID: c.ID, Name: c.Function.Name}
		a := c.Function.Arguments
		switch {
		case len(a) == 0 || string(a) == "null":
		case a[0] == '"':
			if err := json.Unmarshal(a, &p.Args); err != nil {
				return p, fmt.Errorf("function.arguments: %v", err)
			}
		case a[0] == '{':
			p.Args = string(a)
		default:
			return p, fmt.Errorf("function.arguments must be the arguments' JSON text (a string)")
		}
	default:
		return ProviderCall{}, fmt.Errorf("the call must be %s", shapes)
	}
	switch {
	case p.ID == "":
		return p, fmt.Errorf("the call has no id (the tool result must name it)")
	case p.Name == "":
		return p, fmt.Errorf("the call names no tool")
	}
	return p, nil
}

// RunToolCall runs a provider's tool call governed (origin
// host_direct_governed: permission rules and confirmation apply, as to
// governedTool) and returns the provider's tool-result message: OpenAI's
// {role:"tool", tool_call_id, content}, Anthropic's {role:"user",
// content:[{type:"tool_result", tool_use_id, content, is_error?}]}
// (several of one turn go in one user message: concatenate their
// content). What the model got wrong (an unknown tool, arguments that are
// not a JSON object) is answered as a failed tool result the model reads;
// the error is non-nil only for a closed session.
func RunToolCall(ctx context.Context, k *kernel.Kernel, p ProviderCall) (any, *kernel.Result, error) {
	res, err := runCall(ctx, k, p)
	if err != nil {
		return nil, nil, err
	}
	if p.Provider == OpenAI {
		return map[string]any{"role": "tool", "tool_call_id": p.ID, "content": res.Output}, res, nil
	}
	block := map[string]any{"type": "tool_result", "tool_use_id": p.ID, "content": res.Output}
	if res.ExitCode != 0 {
		block["is_error"] = true
	}
	return map[string]any{"role": "user", "content": []any{block}}, res, nil
}

func runCall(ctx context.Context, k *kernel.Kernel, p ProviderCall) (*kernel.Result, error) {
	fail := func(kind kernel.ErrorType, msg string) *kernel.Result {
		return &kernel.Result{Name: p.Name, Output: msg, ExitCode: 1, ErrorKind: &kernel.ErrorKind{Type: kind, Message: msg}}
	}
	t, ok := k.Registry().Lookup(p.Name)
	if !ok {
		return fail(kernel.ErrNotFound, fmt.Sprintf("Error: there is no tool named %q. Available tools: %s", p.Name, strings.Join(k.Registry().Names(), ", "))), nil
	}
	args, err := parseArgs(p.Args)
	if err != nil {
		return fail(kernel.ErrInvalidArgument, fmt.Sprintf("Error: the arguments of %s are not a JSON object (%v); call it again with valid JSON arguments", p.Name, err)), nil
	}
	args = dropOptionalNulls(t, args)
	res, err := k.Invoke(ctx, kernel.Request{Tool: p.Name, Args: args, Origin: kernel.OriginHostGoverned})
	if errors.Is(err, kernel.ErrNotRegistered) {
		return fail(kernel.ErrNotFound, "Error: "+err.Error()), nil
	}
	return res, err
}

// dropOptionalNulls removes the top-level arguments that are null and not
// required by the tool's parameters: what a strict-mode model sends for
// an argument it leaves out.
func dropOptionalNulls(t kernel.Tool, args json.RawMessage) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(args, &m) != nil {
		return args
	}
	var schema struct {
		Required []string `json:"required"`
	}
	_ = json.Unmarshal(t.Parameters(), &schema)
	changed := false
	for k, v := range m {
		if string(v) == "null" && !slices.Contains(schema.Required, k) {
			delete(m, k)
			changed = true
		}
	}
	if !changed {
		return args
	}
	b, err := json.Marshal(m)
	if err != nil {
		return args
	}
	return b
}
