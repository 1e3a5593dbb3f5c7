package kernel_test

import (
	"encoding/json"
	"testing"

	"github.com/a3s-lab/code-wasm/kernel"
)

// FuzzPermission: any rule and any arguments give one of the three
// decisions, never a panic; a deny rule equal to the tool name always
// denies.
func FuzzPermission(f *testing.F) {
	f.Add("write(path:src/**)", "write", `{"file_path":"src/a"}`)
	f.Add("bash(command:git *)", "bash", `{"command":"git status"}`)
	f.Add("*(", "x", `[]`)
	f.Add("read(", "read", `{"file_path":1}`)
	f.Fuzz(func(t *testing.T, rule, tool, args string) {
		p := kernel.PermissionPolicy{Allow: []string{rule}}
		d, _ := p.Decide(tool, json.RawMessage(args))
		if d != kernel.DecisionAllow && d != kernel.DecisionAsk {
			t.Fatalf("decision %q", d)
		}
		m := kernel.HookMatcher{Tool: rule, PathPattern: rule, CommandPattern: rule}
		_ = m.Matches(tool, json.RawMessage(args))
		if tool != "" && !containsMeta(tool) {
			deny := kernel.PermissionPolicy{Deny: []string{tool}, Allow: []string{"*"}}
			if d, _ := deny.Decide(tool, json.RawMessage(args)); d != kernel.DecisionDeny {
				t.Fatalf("deny %q did not deny %q: %s", tool, tool, d)
			}
		}
	})
}

func containsMeta(s string) bool {
	for _, c := range s {
		if c == '*' || c == '?' || c == '(' || c == ')' || c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f' || c == 0x85 || c == 0xA0 {
			return true
		}
	}
	return false
}

// FuzzValidateArgs: validation of arbitrary arguments against a fixed
// schema never panics, and an error is always invalid_argument within
// 4 KiB.
func FuzzValidateArgs(f *testing.F) {
	schema := json.RawMessage(effectSchema)
	f.Add(`{"msg":"x"}`)
	f.Add(`{"msg":1,"a":2,"b":3}`)
	f.Add(`[`)
	f.Fuzz(func(t *testing.T, args string) {
		e := kernel.ValidateArgs("fx", schema, json.RawMessage(args))
		if e == nil {
			return
		}
		if e.Kind.Type != kernel.ErrInvalidArgument || len(e.Error()) > kernel.MaxSchemaErrorBytes+200 {
			t.Fatalf("kind %s, %d bytes", e.Kind.Type, len(e.Error()))
		}
	})
}
