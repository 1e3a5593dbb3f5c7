//go:build !js

package core_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/a3s-lab/code-wasm/core"
	"github.com/a3s-lab/code-wasm/kernel"
	"github.com/a3s-lab/code-wasm/ptc"
)

// searchAuth is the spec's example (tools.en.md "Programmatic Tool
// Calling"), byte for byte.
const searchAuth = `// search-auth.js
export default async function run(ctx, inputs) {
  const hits = await ctx.grep(inputs.query, { glob: '*.rs' });
  const files = await ctx.glob('crates/**/*.rs');
  const snippets = [];

  for (const file of files.slice(0, 20)) {
    const content = await ctx.readFile(file);
    if (content.includes(inputs.query)) {
      snippets.push({ file, preview: content.slice(0, 1200) });
    }
  }

  return {
    summary: ` + "`Found ${snippets.length} candidate files for ${inputs.query}`" + `,
    evidence: snippets,
    rawSearch: hits,
  };
}
`

func newProgramSession(t *testing.T) *core.Session {
	t.Helper()
	return newSession(t, kernel.Governance{}, map[string]string{
		"crates/auth/src/policy.rs":  "pub struct PermissionPolicy {\n    pub deny: Vec<String>,\n}\n",
		"crates/auth/src/lib.rs":     "mod policy;\npub use policy::PermissionPolicy;\n",
		"crates/core/src/main.rs":    "fn main() {}\n",
		"docs/auth.md":               "PermissionPolicy is documented here.\n",
		"scripts/ptc/search-auth.js": searchAuth,
	})
}

func TestProgramSearchAuthExample(t *testing.T) {
	ten := 30000
	calls := 30
	out := 65536
	limits := &ptc.Limits{TimeoutMs: ptr(int64(ten)), MaxToolCalls: &calls, MaxOutputBytes: &out}
	cases := []struct {
		name string
		opts core.ProgramOptions
	}{
		{"workspace_path", core.ProgramOptions{Path: "scripts/ptc/search-auth.js"}},
		{"inline_source", core.ProgramOptions{Source: searchAuth}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newProgramSession(t)
			o := c.opts
			o.Inputs = map[string]any{"query": "PermissionPolicy"}
			o.AllowedTools = []string{"grep", "glob", "read"}
			o.Limits = limits
			res, err := s.Program(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			if res.ExitCode != 0 {
				t.Fatalf("exit %d: %s", res.ExitCode, res.Output)
			}
			var got struct {
				Summary   string
				Evidence  []struct{ File, Preview string }
				RawSearch string
			}
			b, _ := json.Marshal(res.Metadata["script_result"])
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatal(err)
			}
			if got.Summary != "Found 2 candidate files for PermissionPolicy" || len(got.Evidence) != 2 {
				t.Fatalf("result %s", b)
			}
			want := map[string]string{
				"crates/auth/src/lib.rs":    "mod policy;\npub use policy::PermissionPolicy;\n",
				"crates/auth/src/policy.rs": "pub struct PermissionPolicy {\n    pub deny: Vec<String>,\n}\n",
			}
			for _, e := range got.Evidence {
				if want[e.File] != e.Preview {
					t.Errorf("evidence %s: preview %q, want the plain file text %q", e.File, e.Preview, want[e.File])
				}
			}
			if !strings.Contains(got.RawSearch, "policy.rs") || strings.Contains(got.RawSearch, "auth.md") {
				t.Errorf("rawSearch (grep with glob *.rs) = %q", got.RawSearch)
			}
			if !strings.HasPrefix(res.Output, "Program script completed.\nFound 2 candidate files for PermissionPolicy\n") {
				t.Errorf("output:\n%s", res.Output)
			}
			p := res.Metadata["program"].(map[string]any)
			if p["runtime"] != "quickjs-wazero" || p["success"] != true {
				t.Errorf("metadata.program %v", p)
			}
		})
	}
}

// The ctx calls are nested invocations: their events name the program's
// invocation as parent.
func TestProgramNestedCallsHaveProgramAsParent(t *testing.T) {
	s := newProgramSession(t)
	sub := s.Events()
	defer sub.Close()
	res, err := s.Program(context.Background(), core.ProgramOptions{
		Source: "async function run(ctx) { return (await ctx.glob('crates/**/*.rs')).length }"})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("%v %+v", err, res)
	}
	evs, _, err := sub.Next(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	var programID string
	nested := 0
	for _, e := range evs {
		if e.Type != kernel.EventToolEnd {
			continue
		}
		switch e.Payload["name"] {
		case "program":
			programID = e.InvocationID
		case "glob":
			nested++
			if e.ParentID == "" {
				t.Errorf("glob invocation %s has no parent", e.InvocationID)
			}
		}
	}
	if programID == "" || nested != 1 {
		t.Fatalf("program id %q, %d nested glob ends in %d events", programID, nested, len(evs))
	}
	for _, e := range evs {
		if e.Type == kernel.EventToolEnd && e.Payload["name"] == "glob" && e.ParentID != programID {
			t.Errorf("glob parent %q, want %q", e.ParentID, programID)
		}
	}
}

func ptr[T any](v T) *T { return &v }
