package testkit_test

import (
	"context"
	"maps"
	"testing"

	"github.com/a3s-lab/code-wasm/internal/testkit"
	"github.com/a3s-lab/code-wasm/kernel"
)

// The seeded workspace holds exactly the files given, and Snapshot reads
// them back with their directories.
func TestWorkspaceSnapshot(t *testing.T) {
	ws := testkit.Workspace(t, map[string]string{"a.txt": "a\n", "d/b.go": "package d\n"})
	want := map[string]string{"a.txt": "a\n", "d/": "", "d/b.go": "package d\n"}
	if got := testkit.Snapshot(t, ws); !maps.Equal(got, want) {
		t.Fatalf("snapshot %v; want %v", got, want)
	}
	if _, err := ws.WriteFile(context.Background(), "d/c.txt", []byte("c")); err != nil {
		t.Fatal(err)
	}
	if got := testkit.Snapshot(t, ws); maps.Equal(got, want) {
		t.Fatal("snapshot did not see a new file")
	}
	if k := testkit.KindOf(kernel.OK("x", nil)); k != "" {
		t.Fatalf("KindOf(OK) = %q", k)
	}
	if k := testkit.KindOf(kernel.Failure("t", kernel.InvalidArgument("bad"))); k != kernel.ErrInvalidArgument {
		t.Fatalf("KindOf(Fail) = %q", k)
	}
}
