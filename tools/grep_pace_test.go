package tools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a3s-lab/code-wasm/kernel"
	"github.com/a3s-lab/code-wasm/tools"
	"github.com/a3s-lab/code-wasm/workspace"
	"github.com/a3s-lab/code-wasm/workspace/memfs"
)

// countingDriver counts file reads (and hides memfs's extras, so the
// Workspace's own walk runs).
type countingDriver struct {
	workspace.Driver
	reads atomic.Int64
}

func (d *countingDriver) ReadFile(ctx context.Context, name string) ([]byte, workspace.Version, error) {
	d.reads.Add(1)
	return d.Driver.ReadFile(ctx, name)
}

// TestLongGrepHonoursToolTimeout (A6): a grep far longer than the kernel's
// 50 ms tool timeout ends as a timeout having read only part of the tree.
// Under js/wasm this holds only because the grep loop yields to the host
// event loop (workspace.Pacer): without that the kernel's timer cannot fire
// until the grep has read every file. The assertion is about work done
// (files read), not elapsed time.
func TestLongGrepHonoursToolTimeout(t *testing.T) {
	ctx := context.Background()
	d := &countingDriver{Driver: memfs.New()}
	ws, err := workspace.New(d)
	if err != nil {
		t.Fatal(err)
	}
	// One 256 KiB body shared by every file (memfs keeps the slice), so a
	// 100 MiB search costs no memory. No line matches and the pattern has
	// no literal to skip by: every line goes to the regexp engine.
	body := []byte(strings.Repeat("abcdefghij0123456789abcdefghij-klmnop\n", 256<<10/38))
	const files = 400
	for i := 0; i < files; i++ {
		if err := ws.PutFile(ctx, fmt.Sprintf("d%02d/f%03d.txt", i%20, i), body); err != nil {
			t.Fatal(err)
		}
	}
	reg := kernel.NewRegistry()
	for _, tl := range tools.Builtins(ws) {
		if err := reg.RegisterBuiltin(tl); err != nil {
			t.Fatal(err)
		}
	}
	g := kernel.Governance{ToolTimeout: 50 * time.Millisecond}
	g.Permission.DefaultDecision = kernel.DecisionAllow
	k, err := kernel.New(kernel.Config{Registry: reg, Governance: g})
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	d.reads.Store(0)
	res, err := k.Invoke(ctx, kernel.Request{Tool: "grep", Origin: kernel.OriginHostTrusted,
		Args: json.RawMessage(`{"pattern":"^[a-z]+[0-9]{3}[a-z]{2}$","output_mode":"count"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if res.ErrorKind == nil || res.ErrorKind.Type != kernel.ErrTimeout {
		t.Fatalf("grep was not timed out: exit %d kind %+v %.200s", res.ExitCode, res.ErrorKind, res.Output)
	}
	// The kernel returns at the timeout; give the cancelled grep a moment
	// to notice and stop before counting what it read.
	time.Sleep(100 * time.Millisecond)
	if n := d.reads.Load(); n > files/2 {
		t.Fatalf("grep read %d of %d files after a 50 ms timeout: it was not interrupted", n, files)
	} else {
		t.Logf("grep read %d of %d files before the 50 ms timeout stopped it", n, files)
	}
}
