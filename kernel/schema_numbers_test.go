package kernel

import (
	"encoding/json"
	"strings"
	"testing"
)

// The validator's numbers (third_party/jsonschema/decimal since the fork
// dropped math/big) in a draft-07 schema as MCP servers send them: bounds,
// multipleOf by a fraction, enum and uniqueItems equality across
// spellings (2.5 = 2.50, 1 = 1.0), an integer-valued keyword beyond int,
// and the messages' figures.
func TestSchemaNumbersDraft07(t *testing.T) {
	s, err := CompileSchema(json.RawMessage(`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object",
	"properties":{"a":{"type":"number","minimum":0,"exclusiveMaximum":100},"b":{"type":"integer","multipleOf":0.5,"maximum":1e3},
	"c":{"enum":[1,2.5,"x"]},"d":{"type":"array","uniqueItems":true},"e":{"type":"string","maxLength":1e40}},
	"required":["a","b"],"additionalProperties":false}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ doc, want string }{
		{`{"a":2,"b":40}`, ""},
		{`{"a":0,"b":40.0,"c":2.50,"d":[1,1.5],"e":"long enough"}`, ""},
		{`{"a":-1,"b":40}`, "/a: minimum: got -1, want 0"},
		{`{"a":100,"b":40}`, "/a: exclusiveMaximum: got 100, want 100"},
		{`{"a":0,"b":1001}`, "/b: maximum: got 1,001, want 1,000"},
		{`{"a":0,"b":1.5}`, "/b: got number, want integer"},
		{`{"a":0,"b":1,"c":2.51}`, "/c: value must be one of 1, 2.5, 'x'"},
		{`{"a":0,"b":1,"d":[1,1.0]}`, "/d: items at 0 and 1 are equal"},
	} {
		var v any
		if err := json.Unmarshal([]byte(c.doc), &v); err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(s.Validate(v), "; "); got != c.want {
			t.Errorf("%s: got %q, want %q", c.doc, got, c.want)
		}
	}
}
