package tools_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/a3s-lab/code-wasm/kernel"
	"github.com/a3s-lab/code-wasm/tools"
	"github.com/a3s-lab/code-wasm/workspace"
	"github.com/a3s-lab/code-wasm/workspace/memfs"
)

// TestReadModeThroughKernel (C19): a wrong mix of read's modes, checked by
// the kernel's schema validation and then by Execute, gets one clear
// invalid_argument naming the rule, never a validator's "'not' failed".
func TestReadModeThroughKernel(t *testing.T) {
	ctx := context.Background()
	ws, err := workspace.New(memfs.New())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ws.WriteFile(ctx, "a.txt", []byte("alpha\n")); err != nil {
		t.Fatal(err)
	}
	reg := kernel.NewRegistry()
	for _, tl := range tools.Builtins(ws) {
		if err := reg.RegisterBuiltin(tl); err != nil {
			t.Fatal(err)
		}
	}
	k, err := kernel.New(kernel.Config{Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	const rule = "give exactly one of file_path or files; put offset/limit inside each files[] entry"
	tests := []struct{ name, args string }{
		{"both", `{"file_path":"a.txt","files":[{"path":"a.txt"}]}`},
		{"neither", `{}`},
		{"only offset", `{"offset":3}`},
		{"files with offset", `{"files":[{"path":"a.txt"}],"offset":1}`},
		{"files with limit", `{"files":[{"path":"a.txt"}],"limit":5}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := k.Invoke(ctx, kernel.Request{Tool: "read", Args: json.RawMessage(tc.args), Origin: kernel.OriginHostTrusted})
			if err != nil {
				t.Fatal(err)
			}
			if res.ExitCode == 0 || res.ErrorKind == nil || res.ErrorKind.Type != kernel.ErrInvalidArgument {
				t.Fatalf("exit %d kind %+v: %s", res.ExitCode, res.ErrorKind, res.Output)
			}
			if !strings.Contains(res.Output, rule) || strings.Contains(res.Output, "failed") {
				t.Errorf("output %q does not state the rule plainly", res.Output)
			}
		})
	}
	res, err := k.Invoke(ctx, kernel.Request{Tool: "read", Args: json.RawMessage(`{"files":[{"path":"a.txt","offset":0,"limit":1}]}`), Origin: kernel.OriginHostTrusted})
	if err != nil || res.ExitCode != 0 || !strings.Contains(res.Output, "alpha") {
		t.Fatalf("a valid batch failed: %v %+v", err, res)
	}
}
