package tools

import (
	"testing"

	"github.com/a3s-lab/code-wasm/workspace"
	"github.com/a3s-lab/code-wasm/workspace/memfs"
)

// wrapped hides its driver's Immediate: a driver that does not say it
// never waits.
type wrapped struct{ workspace.Driver }

// A read runs inline (kernel.Inliner) only over a driver that says its
// operations never wait (memfs); over any other it runs on its own
// goroutine, where the kernel's timeout can leave it.
func TestReadInlineOnlyInMemory(t *testing.T) {
	mem, err := workspace.New(memfs.New())
	if err != nil {
		t.Fatal(err)
	}
	if !(&Read{ws: mem}).Inline(nil) {
		t.Fatal("a read of memfs does not run inline")
	}
	other, err := workspace.New(wrapped{memfs.New()})
	if err != nil {
		t.Fatal(err)
	}
	if (&Read{ws: other}).Inline(nil) {
		t.Fatal("a read of a driver that may wait runs inline")
	}
}
