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
