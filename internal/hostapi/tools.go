package hostapi

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"

	"github.com/a3s-lab/code-wasm/core"
	"github.com/a3s-lab/code-wasm/kernel"
)

// toolMethods are the methods that run tools: by name (tool,
// governedTool) and the typed helpers over one tool each.
var toolMethods = []row{
	method("toolNames", syncCall, func(c *call, _ *noArgs) (any, error) { return c.e.s.ToolNames(), nil }),
	method("toolDefinitions", syncCall, func(c *call, _ *noArgs) (any, error) { return c.e.s.ToolDefinitions(), nil }),
	method("activeTools", syncCall, func(c *call, _ *noArgs) (any, error) { return c.e.s.ActiveTools(), nil }),
	method("tool", 0, func(c *call, a *toolCall) (any, error) { return c.tool(a, c.e.s.Tool) }),
	method("governedTool", 0, func(c *call, a *toolCall) (any, error) { return c.tool(a, c.e.s.GovernedTool) }),
	method("readFile", 0, readFile),
	method("writeFile", 0, writeFile),
	method("editFile", 0, editFile),
	method("patchFile", 0, patchFile),
	method("ls", 0, ls),
	method("glob", 0, glob),
	method("grep", 0, grep),
	method("getArtifact", 0, getArtifact),
}

type toolCall struct {
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
}

func (c *call) tool(a *toolCall, run func(context.Context, string, any) (*kernel.Result, error)) (any, error) {
	if a.Name == "" {
		return nil, errf(CodeInvalidCall, "%s: the tool name must be a non-empty string", c.method)
	}
	if len(a.Args) == 0 || string(a.Args) == "null" {
		a.Args = json.RawMessage(`{}`)
	}
	if a.Args[0] != '{' {
		return nil, errf(CodeInvalidCall, "%s: args must be an object", c.method)
	}
	res, err := run(c.ctx, a.Name, a.Args)
	return c.e.result(c.ctx, c.method, res, err)
}

func readFile(c *call, a *struct {
	Path   *string `json:"path" required:"true"`
	Offset int     `json:"offset"`
	Limit  int     `json:"limit"`
}) (any, error) {
	out, err := c.e.s.ReadFile(c.ctx, *a.Path, core.ReadOptions{Offset: a.Offset, Limit: a.Limit})
	return c.e.typed(c.ctx, c.method, out, err)
}

// writeFile, editFile and patchFile call their tools as core's helpers
// do (Session.WriteFile etc.), with the strings passed on as JSON text.

func writeFile(c *call, a *struct {
	Path    *string     `json:"path" required:"true"`
	Content *jsonString `json:"content" required:"true"`
}) (any, error) {
	res, err := c.e.s.Tool(c.ctx, "write", toolArgs("file_path", *a.Path, "content", a.Content))
	return c.e.result(c.ctx, c.method, res, err)
}

func editFile(c *call, a *struct {
	Path       *string     `json:"path" required:"true"`
	OldString  *jsonString `json:"oldString" required:"true"`
	NewString  *jsonString `json:"newString" required:"true"`
	ReplaceAll bool        `json:"replaceAll"`
}) (any, error) {
	res, err := c.e.s.Tool(c.ctx, "edit", toolArgs("file_path", *a.Path, "old_string", a.OldString, "new_string", a.NewString, "replace_all", a.ReplaceAll))
	return c.e.result(c.ctx, c.method, res, err)
}

func patchFile(c *call, a *struct {
	Path *string     `json:"path" required:"true"`
	Diff *jsonString `json:"diff" required:"true"`
}) (any, error) {
	res, err := c.e.s.Tool(c.ctx, "patch", toolArgs("file_path", *a.Path, "diff", a.Diff))
	return c.e.result(c.ctx, c.method, res, err)
}

func ls(c *call, a *struct {
	Path string `json:"path"`
}) (any, error) {
	res, err := c.e.s.Ls(c.ctx, a.Path)
	return c.e.result(c.ctx, c.method, res, err)
}

type patternArgs struct {
	Pattern *string `json:"pattern" required:"true"`
}

func glob(c *call, a *patternArgs) (any, error) {
	paths, err := c.e.s.Glob(c.ctx, *a.Pattern)
	if paths == nil && err == nil {
		paths = []string{}
	}
	return c.e.typed(c.ctx, c.method, paths, err)
}

func grep(c *call, a *patternArgs) (any, error) {
	out, err := c.e.s.Grep(c.ctx, *a.Pattern)
	return c.e.typed(c.ctx, c.method, out, err)
}

func getArtifact(c *call, a *struct {
	URI *string `json:"uri" required:"true"`
}) (any, error) {
	if art, ok := c.e.s.Artifact(*a.URI); ok {
		return art, nil
	}
	return nil, nil
}

// jsonString is a string argument of a typed helper kept as its JSON
// text, so file content or a diff crosses to its tool without being
// decoded and encoded again (for a 100 MB writeFile that was two of the
// passes over the content; RATIONALE.md).
type jsonString json.RawMessage

// UnmarshalJSON keeps a JSON string as it is and refuses any other value.
func (s *jsonString) UnmarshalJSON(b []byte) error {
	if len(b) == 0 || b[0] != '"' {
		kind := "number"
		switch {
		case len(b) > 0 && (b[0] == 't' || b[0] == 'f'):
			kind = "bool"
		case len(b) > 0 && b[0] == '{':
			kind = "object"
		case len(b) > 0 && b[0] == '[':
			kind = "array"
		}
		return &json.UnmarshalTypeError{Value: kind, Type: reflect.TypeFor[string]()}
	}
	*s = append((*s)[:0], b...) // a copy: b is the decoder's buffer
	return nil
}

// toolArgs builds a tool's JSON arguments from key/value pairs, each value
// a *jsonString (its JSON text, as given), a string or a bool.
func toolArgs(pairs ...any) json.RawMessage {
	n := 2
	for i := 1; i < len(pairs); i += 2 {
		if v, ok := pairs[i].(*jsonString); ok {
			n += len(*v)
		}
		n += 64
	}
	b := make([]byte, 0, n)
	b = append(b, '{')
	for i := 0; i+1 < len(pairs); i += 2 {
		if i > 0 {
			b = append(b, ',')
		}
		b, _ = appendJSON(b, pairs[i])
		b = append(b, ':')
		if v, ok := pairs[i+1].(*jsonString); ok {
			b = append(b, *v...)
		} else {
			b, _ = appendJSON(b, pairs[i+1])
		}
	}
	return append(b, '}')
}

func appendJSON(b []byte, v any) ([]byte, error) {
	j, err := json.Marshal(v)
	return append(b, j...), err
}

// result turns a kernel answer into the wire form, applying the
// cancellation rule of PROTOCOL.md: a call that failed because its caller
// aborted → ABORTED; because the session closed under it → SESSION_CLOSED
// (the kernel may report such a call as cancelled, or as denied by a hook
// or guard that was cut short). A call that finished keeps its result.
func (e *entry) result(ctx context.Context, method string, res *kernel.Result, err error) (any, error) {
	if err != nil {
		return nil, mapErr(method, err)
	}
	if res.ExitCode != 0 {
		if ctx.Err() != nil {
			return nil, errf(CodeAborted, "%s: the call was aborted", method)
		}
		if e.s.IsClosed() {
			return nil, errf(CodeSessionClosed, "%s: the session was closed while the call ran", method)
		}
	}
	return Wire(res), nil
}

// typed is result for the helpers that return a plain value (readFile,
// glob, grep): a failed tool becomes TOOL_FAILED with the result as detail.
func (e *entry) typed(ctx context.Context, method string, v any, err error) (any, error) {
	var te *core.ToolError
	if errors.As(err, &te) {
		if _, cerr := e.result(ctx, method, te.Result, nil); cerr != nil {
			return nil, cerr
		}
		d, _ := json.Marshal(Wire(te.Result))
		msg := te.Result.Output
		// Tool errors already name their tool ("glob: path not found: x");
		// prefix only those that do not, so no message says "glob: glob:".
		if n := te.Result.Name; !strings.HasPrefix(msg, n+":") && !strings.HasPrefix(msg, n+" ") {
			msg = method + ": " + msg
		}
		return nil, &Error{Code: CodeToolFailed, Msg: msg, Detail: string(d)}
	}
	if err != nil {
		return nil, mapErr(method, err)
	}
	return v, nil
}
