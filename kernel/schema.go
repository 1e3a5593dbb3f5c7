package kernel

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Schema is a JSON Schema compiled by the kernel's validator, for a tool
// that checks values of its own against a schema its caller gave
// (generate_object checks the model's object).
type Schema struct{ s *jsonschema.Schema }

// CompileSchema compiles schema as the kernel compiles tool schemas: draft
// 2020-12, no remote $ref, at most MaxSchemaBytes. The error says why it
// does not compile.
func CompileSchema(schema json.RawMessage) (*Schema, error) {
	s, err := newSchemaCache().get(schema, false)
	if err != nil {
		return nil, err
	}
	return &Schema{s}, nil
}

// Validate checks v, a value as encoding/json decodes into an any with
// UseNumber (json.Number numbers), and returns nil when it is valid, or
// its leaf problems as lines "<instance path>: <message>" ($ for the
// root), at most MaxSchemaErrors of them.
func (s *Schema) Validate(v any) []string {
	err := s.s.Validate(v)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return []string{"$: " + err.Error()}
	}
	leaves := leafErrors(ve)
	var out []string
	for i, u := range leaves {
		if i == MaxSchemaErrors {
			out = append(out, fmt.Sprintf("… and %d more", len(leaves)-i))
			break
		}
		loc := u.InstanceLocation
		if loc == "" {
			loc = "$"
		}
		msg := "invalid"
		if u.Error != nil {
			msg = u.Error.String()
		}
		out = append(out, loc+": "+msg)
	}
	return out
}
