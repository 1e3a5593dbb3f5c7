package tools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/a3s-lab/code-wasm/internal/testkit"
	"github.com/a3s-lab/code-wasm/kernel"
	"github.com/a3s-lab/code-wasm/tools"
)

// BenchmarkBatch runs a batch of 32 reads of small files, 8 at a time,
// through the kernel: the cost of batch's fan-out around cheap children.
func BenchmarkBatch(b *testing.B) {
	files := map[string]string{}
	var inv []string
	for i := range tools.BatchMaxInvocations {
		p := fmt.Sprintf("f%02d.txt", i)
		files[p] = strings.Repeat("line\n", 20)
		inv = append(inv, fmt.Sprintf(`{"tool":"read","args":{"file_path":%q}}`, p))
	}
	reg := kernel.NewRegistry()
	for _, tl := range append(tools.Builtins(testkit.Workspace(b, files)), tools.NewBatch()) {
		if err := reg.RegisterBuiltin(tl); err != nil {
			b.Fatal(err)
		}
	}
	k, err := kernel.New(kernel.Config{Registry: reg, Governance: kernel.Governance{
		Permission: kernel.PermissionPolicy{DefaultDecision: kernel.DecisionAllow}}})
	if err != nil {
		b.Fatal(err)
	}
	defer k.Close()
	args := json.RawMessage(`{"max_concurrency":8,"invocations":[` + strings.Join(inv, ",") + `]}`)
	for b.Loop() {
		res, err := k.Invoke(context.Background(), kernel.Request{Tool: "batch", Args: args, Origin: kernel.OriginAgent})
		if err != nil {
			b.Fatal(err)
		}
		if res.ExitCode != 0 || res.Metadata["applied_concurrency"] != 8 {
			b.Fatalf("exit %d, applied_concurrency %v: %.300s", res.ExitCode, res.Metadata["applied_concurrency"], res.Output)
		}
	}
}
