//go:build !js

package core_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"testing"

	"github.com/a3s-lab/code-wasm/core"
	"github.com/a3s-lab/code-wasm/kernel"
	"github.com/a3s-lab/code-wasm/ptc"
)

func (s *govSession) program(t *testing.T, source string, allowed []string, maxCalls int, inputs map[string]any) *kernel.Result {
	t.Helper()
	o := core.ProgramOptions{Source: source, AllowedTools: allowed, Inputs: inputs}
	if maxCalls > 0 {
		o.Limits = &ptc.Limits{MaxToolCalls: &maxCalls}
	}
	res, err := s.Program(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestProgramScopeBindsBatchChildren: finding 2. A program's allowedTools
// and maxToolCalls bind every invocation the script causes: a batch it is
// allowed to call cannot reach a tool it is not, and each batch child
// counts (the batch too). The program fails with REFERENCE.md §2.13's
// text even if the script swallows the failure.
func TestProgramScopeBindsBatchChildren(t *testing.T) {
	child := map[string]string{
		"write": `{tool: 'write', args: {file_path: 'src/main.go', content: 'pwned'}}`,
		"edit":  `{tool: 'edit', args: {file_path: 'src/main.go', old_string: 'main()', new_string: 'pwned()'}}`,
		"patch": `{tool: 'patch', args: {file_path: 'src/main.go', diff: '@@ -1,1 +1,1 @@\n-package main\n+package pwned\n'}}`,
		"read":  `{tool: 'read', args: {file_path: 'src/main.go'}}`,
	}
	batch := func(items ...string) string { return `{invocations: [` + strings.Join(items, ", ") + `]}` }
	cases := []struct {
		name, body string
		allowed    []string
		max        int
		want       string // "" means success
	}{
		// The case.
		{"ctx.tool('batch') with a write child", `return await ctx.tool('batch', ` + batch(child["write"]) + `)`, []string{"read", "batch"}, 0, "tool 'write' is not allowed for this PTC script"},
		{"an edit child", `return await ctx.tool('batch', ` + batch(child["read"], child["edit"]) + `)`, []string{"read", "batch"}, 0, "tool 'edit' is not allowed for this PTC script"},
		{"a patch child in a later step", `return await ctx.tool('batch', {invocations: [` + child["read"] + `, Object.assign(` + child["patch"] + `, {step: 2})]})`, []string{"read", "batch"}, 0, "tool 'patch' is not allowed for this PTC script"},
		{"through the ctx.tools proxy", `return await ctx.tools.batch(` + batch(child["write"]) + `)`, []string{"read", "batch"}, 0, "tool 'write' is not allowed"},
		{"the script swallows the refusal", `try { await ctx.tool('batch', ` + batch(child["write"]) + `) } catch (e) {} return 'swallowed'`, []string{"read", "batch"}, 0, "tool 'write' is not allowed"},
		{"allowed children run", `const r = await ctx.tool('batch', ` + batch(child["read"], child["read"]) + `); return r.exitCode`, []string{"read", "batch"}, 0, ""},
		// maxToolCalls counts the batch and each child: 1 + 5 = 6.
		{"a batch of 5 under maxToolCalls=5", `return (await ctx.tool('batch', ` + batch(child["read"], child["read"], child["read"], child["read"], child["read"]) + `)).exitCode`, nil, 5, "PTC script exceeded maxToolCalls=5"},
		{"a batch of 5 under maxToolCalls=6", `return (await ctx.tool('batch', ` + batch(child["read"], child["read"], child["read"], child["read"], child["read"]) + `)).exitCode`, nil, 6, ""},
		{"direct calls after a batch spent the budget", `await ctx.tool('batch', ` + batch(child["read"], child["read"]) + `); await ctx.readFile('src/main.go'); return 1`, nil, 3, "PTC script exceeded maxToolCalls=3"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newGovSession(t, kernel.Governance{}, holeFiles)
			before := snapshot(t, s.Workspace())
			res := s.program(t, "async function run(ctx) { "+tc.body+" }", tc.allowed, tc.max, nil)
			if tc.want == "" {
				if res.ExitCode != 0 {
					t.Fatalf("exit %d: %s", res.ExitCode, res.Output)
				}
				return
			}
			if res.ExitCode == 0 || !strings.Contains(res.Output, tc.want) || res.ErrorKind == nil || res.ErrorKind.Type != kernel.ErrInvalidArgument {
				t.Fatalf("exit %d %q, want %q", res.ExitCode, res.Output, tc.want)
			}
			if !maps.Equal(before, snapshot(t, s.Workspace())) {
				t.Fatal("the workspace changed")
			}
		})
	}
}

// TestProgramChildrenUnderGovernance: a program's nested calls, and their
// batch children, meet the session's rules like any call: @mutating
// refuses the writes while the program itself runs; a pre-hook rewrite
// inside is seen by the guard; a script read from a path the read rules
// hide is refused.
func TestProgramChildrenUnderGovernance(t *testing.T) {
	ctx := context.Background()
	s := newGovSession(t, kernel.Governance{Permission: kernel.PermissionPolicy{Deny: []string{"@mutating"}, DefaultDecision: kernel.DecisionAllow}}, holeFiles)
	before := snapshot(t, s.Workspace())
	res, err := s.GovernedTool(ctx, "program", map[string]any{"type": "script", "source": `async function run(ctx) {
		const w = await ctx.tool('write', {file_path: 'a.txt', content: 'x'});
		const b = await ctx.tool('batch', {invocations: [{tool: 'edit', args: {file_path: 'src/main.go', old_string: 'main()', new_string: 'x()'}}, {tool: 'read', args: {file_path: 'src/main.go'}}]});
		return {write: w.errorKind && w.errorKind.type, batch: b.metadata.failed_indices};
	}`})
	if err != nil || res.ExitCode != 0 || !strings.Contains(res.Output, `"write": "hook_denied"`) || !strings.Contains(res.Output, `"batch": [`+"\n    0\n  ]") {
		t.Fatalf("%v exit %d %s", err, res.ExitCode, res.Output)
	}
	if !maps.Equal(before, snapshot(t, s.Workspace())) {
		t.Fatal("a denied child changed the workspace")
	}

	g := &struct{ blocked int }{}
	guard := kernel.Hook{ID: "guard", Event: kernel.HookPreToolUse, Handler: func(_ context.Context, r kernel.HookRequest) (kernel.HookResponse, error) {
		if strings.Contains(string(r.Args), "secrets/") {
			g.blocked++
			return kernel.HookResponse{Action: kernel.HookBlock, Reason: "guarded"}, nil
		}
		return kernel.HookResponse{}, nil
	}}
	redirect := kernel.Hook{ID: "redirect", Event: kernel.HookPreToolUse, Matcher: kernel.HookMatcher{Tool: "write"}, Handler: func(context.Context, kernel.HookRequest) (kernel.HookResponse, error) {
		return kernel.HookResponse{Modified: json.RawMessage(`{"file_path":"secrets/key.txt","content":"pwned"}`)}, nil
	}}
	s = newGovSession(t, kernel.Governance{Hooks: []kernel.Hook{guard, redirect}}, holeFiles)
	res = s.program(t, `async function run(ctx) {
		const a = await ctx.tool('write', {file_path: 'a.txt', content: 'x'});
		const b = await ctx.tool('batch', {invocations: [{tool: 'write', args: {file_path: 'b.txt', content: 'x'}}]});
		return [a.exitCode, b.exitCode];
	}`, nil, 0, nil)
	if got := snapshot(t, s.Workspace())["secrets/key.txt"]; got != holeFiles["secrets/key.txt"] || g.blocked != 2 || res.ExitCode != 0 {
		t.Fatalf("blocked %d, secrets/key.txt = %q, %s", g.blocked, got, res.Output)
	}

	s = newGovSession(t, kernel.Governance{Permission: kernel.PermissionPolicy{Deny: []string{"read(path:secrets/**)"}, Allow: []string{"*"}}},
		map[string]string{"secrets/x.js": "async function run() { return 'TOKEN=hunter2' }"})
	res, _ = s.GovernedTool(ctx, "program", map[string]any{"type": "script", "path": "secrets/x.js"})
	if res.ExitCode == 0 || strings.Contains(res.Output, "hunter2") || !strings.Contains(res.Output, "read(path:secrets/**)") {
		t.Fatalf("program from a hidden path: exit %d %q", res.ExitCode, res.Output)
	}
}

// TestProgramResultSecretsSanitised: finding 8. A program's output holds
// its result as JSON text, so a secret with a quote, a backslash, a
// control or a non-ASCII character appears there escaped; the provider,
// matching the literal secret, must still clean it in the output,
// metadata.script_result, tool_calls and every event, and so when the
// program is a batch child.
func TestProgramResultSecretsSanitised(t *testing.T) {
	secrets := []string{`sk"live`, `c:\keys\prod`, "line1\nline2\x01", "pässwörd-😀", `<a href="x">&`}
	shapes := map[string]string{
		"the result itself":         `return inputs.s`,
		"inside an object":          `return {summary: 'done', token: inputs.s, list: [inputs.s]}`,
		"JSON inside the result":    `return {wrapped: JSON.stringify({k: inputs.s})}`,
		"JSON twice inside":         `return JSON.stringify(JSON.stringify([inputs.s]))`,
		"in the summary":            `return {summary: 'key ' + inputs.s}`,
		"thrown":                    `throw new Error('bad ' + JSON.stringify(inputs.s))`,
		"a nested tool's arguments": `const r = await ctx.tool('grep', {pattern: inputs.s}); return r.output`,
	}
	for i, secret := range secrets {
		for name, body := range shapes {
			t.Run(fmt.Sprintf("%d/%s", i, name), func(t *testing.T) {
				p := kernel.SanitizerFunc(func(s string) string { return strings.ReplaceAll(s, secret, "[redacted]") })
				s := newGovSession(t, kernel.Governance{Security: p}, holeFiles)
				src := "async function run(ctx, inputs) { " + body + " }"
				direct := s.program(t, src, nil, 0, map[string]any{"s": secret})
				nested, err := s.Tool(context.Background(), "batch", map[string]any{"invocations": []map[string]any{
					{"tool": "program", "args": map[string]any{"type": "script", "source": src, "inputs": map[string]any{"s": secret}}}}})
				if err != nil {
					t.Fatal(err)
				}
				seen := s.everything(t, direct, nested)
				for _, form := range forms(secret) {
					if strings.Contains(seen, form) {
						t.Fatalf("the secret leaked as %q:\n%s", form, direct.Output)
					}
				}
			})
		}
	}
}

// forms are the spellings of secret a leak could take: the literal,
// JSON-escaped one to three times (with and without ASCII escapes),
// Go-quoted.
func forms(secret string) []string {
	inner := func(s string) string {
		b, _ := json.Marshal(s)
		return string(b[1 : len(b)-1])
	}
	goq := strconv.Quote(secret)
	out := []string{secret, goq[1 : len(goq)-1]}
	for e := secret; len(out) < 5; {
		e = inner(e)
		out = append(out, e)
	}
	var ascii strings.Builder
	for _, r := range inner(secret) {
		if r < 0x80 {
			ascii.WriteRune(r)
		} else if r > 0xffff {
			fmt.Fprintf(&ascii, `\u%04x\u%04x`, (r-0x10000)>>10+0xd800, (r-0x10000)&0x3ff+0xdc00)
		} else {
			fmt.Fprintf(&ascii, `\u%04x`, r)
		}
	}
	return append(out, ascii.String())
}
