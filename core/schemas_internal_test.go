package core

import (
	"encoding/json"
	"testing"

	"github.com/a3s-lab/code-wasm/kernel"
	"github.com/a3s-lab/code-wasm/ptc"
	"github.com/a3s-lab/code-wasm/tools"
)

// TestBuiltinSchemasAreValid is the meta-schema check the kernel skips for
// built-in tools (kernel.BuiltinSchema): every built-in tool's Parameters
// and ValidationSchema, and the content calls' schemas, pass draft 2020-12's
// meta-schema. A new built-in tool joins this list.
func TestBuiltinSchemasAreValid(t *testing.T) {
	builtins := []kernel.Tool{
		&tools.Read{}, &tools.Ls{}, &tools.Write{}, &tools.Edit{}, &tools.Patch{},
		&tools.Grep{}, &tools.Glob{}, &tools.Bash{}, &tools.Git{}, tools.NewBatch(),
		&tools.WebFetch{}, &tools.GenerateObject{}, ptc.New(ptc.Config{}),
	}
	for _, s := range []string{pathSchema, importSchema, exportSchema} {
		builtins = append(builtins, &contentOp{name: "content", schema: s})
	}
	for _, tl := range builtins {
		if _, ok := tl.(kernel.BuiltinSchema); !ok {
			t.Errorf("%s: not marked kernel.BuiltinSchema", tl.Name())
		}
		schemas := []json.RawMessage{tl.Parameters()}
		if sv, ok := tl.(kernel.SchemaValidator); ok {
			schemas = append(schemas, sv.ValidationSchema())
		}
		for _, s := range schemas {
			if err := kernel.CheckSchema(s); err != nil {
				t.Errorf("%s: %v", tl.Name(), err)
			}
			// Valid arguments are accepted without compiling the schema
			// (kernel/quick.go); generate_object's schema_name has a
			// pattern, which only jsonschema checks.
			if !kernel.InQuickSubset(s) && tl.Name() != "generate_object" {
				t.Errorf("%s: its schema is outside the kernel's quick subset", tl.Name())
			}
		}
	}
}
