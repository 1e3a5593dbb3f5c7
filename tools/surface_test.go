package tools

import (
	"bytes"

	"context"
	"encoding/json"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"slices"
	"testing"

	"github.com/a3s-lab/code-wasm/workspace"
	"github.com/a3s-lab/code-wasm/workspace/memfs"
)

// capsDriver narrows memfs's declared capabilities.
type capsDriver struct {
	*memfs.FS
	caps workspace.Capabilities
}

func (c capsDriver) Capabilities() workspace.Capabilities { return c.caps }

func TestBuiltinsFollowCapabilities(t *testing.T) {
	cases := []struct {
		name string
		caps workspace.Capabilities
		want []string
	}{
		{"read only", workspace.Capabilities{Read: true}, []string{"ls", "read"}},
		{"write only", workspace.Capabilities{Write: true}, []string{"write"}},
		{"read+write", workspace.Capabilities{Read: true, Write: true}, []string{"edit", "ls", "patch", "read", "write"}},
		{"memory (read, write, search)", workspace.Capabilities{Read: true, Write: true, Search: true}, []string{"edit", "glob", "grep", "ls", "patch", "read", "write"}},
		{"exec and git serve no tool here", workspace.Capabilities{Exec: true, Git: true}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ws, err := workspace.New(capsDriver{memfs.New(), c.caps})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, tl := range Builtins(ws) {
				got = append(got, tl.Name())
			}
			slices.Sort(got)
			if !slices.Equal(got, c.want) {
				t.Fatalf("got %v want %v", got, c.want)
			}
		})
	}
}

// TestSchemasAreSound: every schema is a JSON object schema without a
// top-level oneOf, closed to unknown properties, with a description a model
// can act on; its examples are accepted by the tool's own argument decoder.
func TestSchemasAreSound(t *testing.T) {
	ws := newWS(t, nil)
	for _, tl := range Builtins(ws) {
		t.Run(tl.Name(), func(t *testing.T) {
			var s map[string]any
			if err := json.Unmarshal(tl.Parameters(), &s); err != nil {
				t.Fatal(err)
			}
			if s["type"] != "object" || s["additionalProperties"] != false {
				t.Fatalf("schema %v", s)
			}
			if _, ok := s["oneOf"]; ok {
				t.Fatal("top-level oneOf")
			}
			if len(tl.Description()) < 80 {
				t.Fatalf("description too thin: %q", tl.Description())
			}
			props := s["properties"].(map[string]any)
			for _, ex := range s["examples"].([]any) {
				for k := range ex.(map[string]any) {
					if _, ok := props[k]; !ok {
						t.Fatalf("example key %q is not a property", k)
					}
				}
				b, _ := json.Marshal(ex)
				res, err := tl.Execute(context.Background(), callOf(tl.Name(), b))
				if err != nil && kernelKind(err) == "invalid_argument" && isDecodeError(err) {
					t.Fatalf("example %s rejected by the decoder: %v", b, err)
				}
				_ = res
			}
		})
	}
}

// TestSchemasCompileAndAcceptExamples: every Parameters (and read's
// ValidationSchema) compiles as JSON Schema draft 2020-12 and accepts its
// own examples; read's validation schema refuses mixed modes.
func TestSchemasCompileAndAcceptExamples(t *testing.T) {
	ws := newWS(t, nil)
	compile := func(t *testing.T, raw json.RawMessage) *jsonschema.Schema {
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		c := jsonschema.NewCompiler()
		c.DefaultDraft(jsonschema.Draft2020)
		if err := c.AddResource("mem://schema.json", doc); err != nil {
			t.Fatal(err)
		}
		s, err := c.Compile("mem://schema.json")
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	for _, tl := range Builtins(ws) {
		t.Run(tl.Name(), func(t *testing.T) {
			schemas := []json.RawMessage{tl.Parameters()}
			if v, ok := tl.(interface{ ValidationSchema() json.RawMessage }); ok {
				schemas = append(schemas, v.ValidationSchema())
			}
			var s map[string]any
			json.Unmarshal(tl.Parameters(), &s)
			for _, raw := range schemas {
				sc := compile(t, raw)
				for _, ex := range s["examples"].([]any) {
					if err := sc.Validate(ex); err != nil {
						t.Fatalf("example %v rejected: %v", ex, err)
					}
				}
				if err := sc.Validate(map[string]any{"no_such_argument": 1}); err == nil {
					t.Fatal("unknown argument accepted")
				}
			}
		})
	}
	// read's mode rule is Execute's (a schema oneOf/not only says "'not'
	// failed"): these pass the schema and Execute refuses them.
	rws := newWS(t, map[string]string{"a": "x\n", "b": "y\n"})
	for _, bad := range []string{`{}`, `{"file_path":"a","files":[{"path":"b"}]}`, `{"files":[{"path":"b"}],"offset":1}`, `{"file_path":"a","max_output_bytes":2048}`} {
		if res := run(t, rws, "read", bad); res.ExitCode == 0 || kindOf(res) != "invalid_argument" {
			t.Fatalf("read accepted %s: %s", bad, res.Output)
		}
	}
}
