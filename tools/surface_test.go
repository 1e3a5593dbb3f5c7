package tools

import (
	"context"
	"encoding/json"
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
