package kernel_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/a3s-lab/code-wasm/kernel"
)

// BenchmarkInvoke compares one call of a trivial tool: Execute directly,
// through the kernel with nothing configured but the permission checker
// off (the zero policy would deny the agent call), and through the kernel
// with every gate configured (a pre- and post-hook, a permission policy, a
// budget guard and a sanitiser). Read the results side by side, as ratios.
func BenchmarkInvoke(b *testing.B) {
	args := json.RawMessage(`{"msg":"hello","file_path":"src/a.go"}`)
	full := kernel.Governance{
		Permission: kernel.PermissionPolicy{Deny: []string{"fx(path:secret/**)"}, Allow: []string{"fx"}},
		Hooks: []kernel.Hook{
			{ID: "pre", Event: kernel.HookPreToolUse, Handler: func(context.Context, kernel.HookRequest) (kernel.HookResponse, error) {
				return kernel.HookResponse{}, nil
			}},
			{ID: "post", Event: kernel.HookPostToolUse, Handler: func(context.Context, kernel.HookRequest) (kernel.HookResponse, error) {
				return kernel.HookResponse{}, nil
			}},
		},
		BudgetGuard: kernel.BudgetGuardFunc(func(context.Context, kernel.BudgetRequest) (kernel.BudgetDecision, error) {
			return kernel.BudgetDecision{}, nil
		}),
		Security: kernel.SanitizerFunc(func(s string) string { return s }),
	}
	b.Run("direct", func(b *testing.B) {
		fx := newEffect("fx")
		call := &kernel.Call{ID: "x", Name: "fx", Args: args}
		for b.Loop() {
			if _, err := fx.Execute(context.Background(), call); err != nil {
				b.Fatal(err)
			}
		}
	})
	for name, g := range map[string]kernel.Governance{"kernel-zero": {Permission: kernel.PermissionPolicy{Disabled: true}}, "kernel-full": full} {
		b.Run(name, func(b *testing.B) {
			reg := kernel.NewRegistry()
			reg.RegisterBuiltin(newEffect("fx"))
			k, err := kernel.New(kernel.Config{Registry: reg, Governance: g, OnEvent: func(kernel.Event) {}})
			if err != nil {
				b.Fatal(err)
			}
			defer k.Close()
			for b.Loop() {
				res, err := k.Invoke(context.Background(), kernel.Request{Tool: "fx", Args: args, Origin: kernel.OriginAgent})
				if err != nil || res.ExitCode != 0 {
					b.Fatal(err, res)
				}
			}
		})
	}
}

// BenchmarkSanitiseOutput is what the sanitiser costs on a 1 MiB output:
// plain text (no backslash: the quoted-literal pass is one byte search),
// and a program's pretty-printed JSON result with an escape in every
// string (each literal decoded and cleaned once more, in one batch).
func BenchmarkSanitiseOutput(b *testing.B) {
	plain := strings.Repeat("line of plain tool output with \"quotes\" and no escapes\n", 1<<20/56)
	var items []string
	for len(items)*40 < 1<<20 {
		items = append(items, `{"k": "a \"quoted\" value\nwith a newline"}`)
	}
	escaped := "Result:\n[" + strings.Join(items, ",\n") + "]\n"
	for name, text := range map[string]string{"plain": plain, "escaped-json": escaped} {
		b.Run(name, func(b *testing.B) {
			reg := kernel.NewRegistry()
			fx := newEffect("fx")
			fx.onRun = func(context.Context, *kernel.Call) (*kernel.Result, error) { return kernel.OK(text, nil), nil }
			reg.RegisterBuiltin(fx)
			p := kernel.SanitizerFunc(func(s string) string { return strings.ReplaceAll(s, "SECRET", "***") })
			k, err := kernel.New(kernel.Config{Registry: reg, Governance: kernel.Governance{Security: p, Permission: kernel.PermissionPolicy{Disabled: true}}})
			if err != nil {
				b.Fatal(err)
			}
			defer k.Close()
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				if res, _ := k.Invoke(context.Background(), kernel.Request{Tool: "fx", Args: json.RawMessage(`{"msg":"x"}`)}); res.ExitCode != 0 {
					b.Fatal(res.Output)
				}
			}
		})
	}
}
