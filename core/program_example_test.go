//go:build !js

package core_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/a3s-lab/code-wasm/core"
	"github.com/a3s-lab/code-wasm/workspace"
	"github.com/a3s-lab/code-wasm/workspace/memfs"
)

// A program replaces several grep/read turns with one bounded script; its
// ctx calls are governed nested tool calls.
func ExampleSession_Program() {
	ctx := context.Background()
	ws, _ := workspace.New(memfs.New())
	ws.WriteFile(ctx, "src/a.rs", []byte("struct PermissionPolicy;\n"))
	ws.WriteFile(ctx, "src/b.rs", []byte("fn main() {}\n"))
	s, _ := core.New(core.Options{Workspace: ws})
	defer s.Close()

	res, err := s.Program(ctx, core.ProgramOptions{
		Source: `export default async function run(ctx, inputs) {
  const files = await ctx.glob('src/*.rs');
  const hits = [];
  for (const f of files) if ((await ctx.readFile(f)).includes(inputs.query)) hits.push(f);
  return { summary: hits.length + ' file(s) mention ' + inputs.query, hits };
}`,
		Inputs:       map[string]any{"query": "PermissionPolicy"},
		AllowedTools: []string{"glob", "read"},
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(res.ExitCode)
	fmt.Println(strings.SplitN(res.Output, "\n", 3)[1])
	fmt.Printf("%s\n", res.Metadata["script_result"])
	// Output:
	// 0
	// 1 file(s) mention PermissionPolicy
	// {"summary":"1 file(s) mention PermissionPolicy","hits":["src/a.rs"]}
}
