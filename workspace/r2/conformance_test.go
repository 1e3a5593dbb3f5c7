package r2_test

import (
	"testing"

	"github.com/a3s-lab/code-wasm/workspace"
	"github.com/a3s-lab/code-wasm/workspace/r2"
	"github.com/a3s-lab/code-wasm/workspace/workspacetest"
)

func open(t *testing.T, b r2.Bucket, session string) *r2.FS {
	t.Helper()
	f, err := r2.New(b, "ws", session)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestConformance(t *testing.T) {
	buckets := map[workspace.Driver]*memBucket{}
	workspacetest.RunHarness(t, workspacetest.Harness{
		New: func(t *testing.T) workspace.Driver {
			b := newMemBucket()
			d := open(t, b, "s1")
			buckets[d] = b
			return d
		},
		// The bucket is the storage: a new driver over it sees what the
		// old one wrote.
		Reopen: func(t *testing.T, d workspace.Driver) workspace.Driver {
			b := buckets[d]
			n := open(t, b, "s1")
			buckets[n] = b
			return n
		},
	})
}
