package r2_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/a3s-lab/code-wasm/workspace"
	"github.com/a3s-lab/code-wasm/workspace/r2"
)

func ws(t *testing.T, d workspace.Driver) *workspace.Workspace {
	t.Helper()
	w, err := workspace.New(d)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// Two sessions over one bucket never see each other's files, and keys
// are <prefix>/<session>/<path>.
func TestSessionsAreIsolated(t *testing.T) {
	ctx := context.Background()
	b := newMemBucket()
	a, c := ws(t, open(t, b, "a")), ws(t, open(t, b, "c"))
	if _, err := a.WriteFile(ctx, "src/x.go", []byte("package x\n")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.ReadFile(ctx, "src/x.go"); !errors.Is(err, workspace.ErrNotExist) {
		t.Errorf("session c reads a's file: %v", err)
	}
	if es, err := c.ReadDir(ctx, "."); err != nil || len(es) != 0 {
		t.Errorf("session c lists %v, %v", es, err)
	}
	if _, err := b.Head(ctx, "ws/a/src/x.go"); err != nil {
		t.Errorf("key ws/a/src/x.go: %v", err)
	}
}

// racingBucket writes other content just before a conditional put, as a
// writer in another isolate would: the ETag condition must refuse.
type racingBucket struct{ *memBucket }

func (r racingBucket) Put(ctx context.Context, key string, data []byte, ifMatch string) (r2.Object, error) {
	if ifMatch != "" {
		if _, err := r.memBucket.Put(ctx, key, []byte("written elsewhere\n"), ""); err != nil {
			return r2.Object{}, err
		}
	}
	return r.memBucket.Put(ctx, key, data, ifMatch)
}

func TestCompareAndSwapUsesTheETag(t *testing.T) {
	ctx := context.Background()
	b := racingBucket{newMemBucket()}
	w := ws(t, open(t, b, "s"))
	v, err := w.WriteFile(ctx, "a.txt", []byte("one\n"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = w.WriteFileIfVersion(ctx, "a.txt", []byte("two\n"), v)
	var ce *workspace.ConflictError
	if !errors.As(err, &ce) || ce.Actual != workspace.VersionOf([]byte("written elsewhere\n")) {
		t.Fatalf("a put between compare and swap: %v", err)
	}
	if got, _, _ := w.ReadFile(ctx, "a.txt"); string(got) != "written elsewhere\n" {
		t.Errorf("content %q", got)
	}
}

func TestNewRefusesBadKeys(t *testing.T) {
	for _, c := range [][2]string{{"", "s"}, {"ws", ""}, {"/ws", "s"}, {"ws", "a/../b"}, {"ws/", "s"}} {
		_, err := r2.New(newMemBucket(), c[0], c[1])
		if err == nil || !strings.Contains(err.Error(), "r2: ") {
			t.Errorf("New(%q, %q): %v", c[0], c[1], err)
		}
	}
}
