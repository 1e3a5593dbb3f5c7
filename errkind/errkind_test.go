package errkind_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/a3s-lab/code-wasm/errkind"
)

type pathErr struct {
	path string
	err  error
}

func (e *pathErr) Error() string     { return e.path + ": " + e.err.Error() }
func (e *pathErr) Unwrap() error     { return e.err }
func (e *pathErr) ErrorPath() string { return e.path }

func TestIsWalksTheTree(t *testing.T) {
	base := errkind.New(errkind.Unsupported, "no")
	for _, c := range []struct {
		name string
		err  error
		want bool
	}{
		{"sentinel", base, true},
		{"wrapped", fmt.Errorf("x: %w", base), true},
		{"joined", errors.Join(errors.New("a"), fmt.Errorf("b: %w", base)), true},
		{"other kind", errkind.New(errkind.NotFound, "gone"), false},
		{"plain", errors.New("no"), false},
		{"nil", nil, false},
	} {
		if got := errkind.Is(c.err, errkind.Unsupported); got != c.want {
			t.Errorf("%s: Is = %v, want %v", c.name, got, c.want)
		}
	}
	if !errors.Is(fmt.Errorf("w: %w", base), base) {
		t.Error("errors.Is does not find the sentinel")
	}
}

func TestPath(t *testing.T) {
	err := fmt.Errorf("op: %w", &pathErr{"a/b.txt", errkind.New(errkind.NotFound, "gone")})
	if p, ok := errkind.Path(err); !ok || p != "a/b.txt" {
		t.Fatalf("Path = %q, %v", p, ok)
	}
	if _, ok := errkind.Path(errors.New("x")); ok {
		t.Fatal("Path found a path in a plain error")
	}
}
