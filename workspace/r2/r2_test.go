package r2_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

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

// gateBucket holds every request until release: the test sees which
// requests the driver has in flight at once.
type gateBucket struct {
	*memBucket
	mu      sync.Mutex
	pending []string
	release chan struct{}
}

func (b *gateBucket) wait(op string) {
	b.mu.Lock()
	b.pending = append(b.pending, op)
	b.mu.Unlock()
	<-b.release
}

func (b *gateBucket) Head(ctx context.Context, key string) (r2.Object, error) {
	b.wait("head " + key)
	return b.memBucket.Head(ctx, key)
}

func (b *gateBucket) List(ctx context.Context, prefix, delimiter, cursor string, limit int) (r2.Page, error) {
	b.wait("list " + prefix)
	return b.memBucket.List(ctx, prefix, delimiter, cursor, limit)
}

// A directory's head and its listing (what a session's create asks about
// .a3s/agents) are in flight together, not one after another.
func TestReadDirAsksAtOnce(t *testing.T) {
	b := &gateBucket{memBucket: newMemBucket(), release: make(chan struct{})}
	f, err := r2.New(b, "ws", "s")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := f.ReadDir(context.Background(), ".a3s/agents")
		done <- err
	}()
	b.awaitInFlight(t, "head ws/s/.a3s/agents", "list ws/s/.a3s/agents/")
	if err := <-done; !errors.Is(err, workspace.ErrNotExist) {
		t.Fatalf("ReadDir of a missing directory: %v, want ErrNotExist", err)
	}
}

// awaitInFlight waits until exactly the requests want (sorted) are held
// in flight together, then releases them all.
func (b *gateBucket) awaitInFlight(t *testing.T, want ...string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		b.mu.Lock()
		got := slices.Sorted(slices.Values(b.pending))
		b.mu.Unlock()
		if slices.Equal(got, want) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("in flight together: %q, want %q", got, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
	close(b.release)
}

func (b *gateBucket) Get(ctx context.Context, key string) ([]byte, r2.Object, error) {
	b.wait("get " + key)
	return b.memBucket.Get(ctx, key)
}

// A conditional write fetches the content it compares together with the
// directory check: one round trip before the put, not two.
func TestConditionalWriteAsksAtOnce(t *testing.T) {
	b := &gateBucket{memBucket: newMemBucket(), release: make(chan struct{})}
	if _, err := b.memBucket.Put(context.Background(), "ws/s/a.txt", []byte("old\n"), ""); err != nil {
		t.Fatal(err)
	}
	f, err := r2.New(b, "ws", "s")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := f.WriteFile(context.Background(), "a.txt", []byte("new\n"), workspace.VersionOf([]byte("old\n")))
		done <- err
	}()
	b.awaitInFlight(t, "get ws/s/a.txt", "list ws/s/a.txt/")
	if err := <-done; err != nil {
		t.Fatalf("conditional write: %v", err)
	}
	if data, _, err := b.memBucket.Get(context.Background(), "ws/s/a.txt"); err != nil || string(data) != "new\n" {
		t.Fatalf("after the write: %q, %v", data, err)
	}
}
