package kernel_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/a3s-lab/code-wasm/kernel"
)

func TestCompileSchema(t *testing.T) {
	for _, c := range []struct{ name, schema, want string }{
		{"not JSON", `{"type":`, "not JSON"},
		{"bad keyword value", `{"type": 5}`, "type"},
		{"remote $ref", `{"$ref": "https://example.com/s.json"}`, "not allowed"},
	} {
		if _, err := kernel.CompileSchema(json.RawMessage(c.schema)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	s, err := kernel.CompileSchema(json.RawMessage(`{"type":"object","required":["a"],"properties":{"a":{"type":"integer"},"b":{"type":"array","items":{"type":"string"}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		value any
		want  []string
	}{
		{map[string]any{"a": json.Number("1"), "b": []any{"x"}}, nil},
		{map[string]any{"a": "1"}, []string{"/a: got string, want integer"}},
		{map[string]any{"b": []any{"x", json.Number("2")}}, []string{"$: missing property 'a'", "/b/1: got number, want string"}},
		{[]any{}, []string{"$: got array, want object"}},
	} {
		if got := s.Validate(c.value); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%v: got %q, want %q", c.value, got, c.want)
		}
	}
}

// builtinTool is effectTool marked kernel.BuiltinSchema.
type builtinTool struct{ *effectTool }

func (builtinTool) SchemaBuiltin() {}

// A built-in tool's schema is compiled without the meta-schema check (its
// bytes are checked by a test instead), a tool from outside always gets it:
// `"$comment": 5` breaks only the meta-schema, not the compiler.
func TestBuiltinSchemaSkipsMetaValidation(t *testing.T) {
	const metaInvalid = `{"type":"object","$comment":5,"properties":{"msg":{"type":"string"}},"required":["msg"]}`
	if err := kernel.CheckSchema(json.RawMessage(metaInvalid)); err == nil {
		t.Fatal("CheckSchema accepted a schema the meta-schema refuses")
	}
	outside := newEffect("outside")
	outside.schema = metaInvalid
	inside := builtinTool{newEffect("inside")}
	inside.schema = metaInvalid
	f := newKernel(t, kernel.Governance{}, []kernel.Tool{inside}, outside)
	if res := f.call(t, kernel.OriginAgent, "outside", `{"msg":"x"}`); res.ExitCode == 0 || !strings.Contains(res.Output, "tool schema is invalid") {
		t.Errorf("outside tool: exit %d %q, want the schema refused", res.ExitCode, res.Output)
	}
	if res := f.call(t, kernel.OriginAgent, "inside", `{"msg":"x"}`); res.ExitCode != 0 {
		t.Errorf("built-in tool: exit %d %q", res.ExitCode, res.Output)
	}
	if res := f.call(t, kernel.OriginAgent, "inside", `{"msg":5}`); res.ExitCode == 0 || !strings.Contains(res.Output, "want string") {
		t.Errorf("built-in tool still validates its arguments: exit %d %q", res.ExitCode, res.Output)
	}
}
