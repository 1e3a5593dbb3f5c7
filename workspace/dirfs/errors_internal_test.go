package dirfs

import (
	"errors"
	"testing"

	"github.com/a3s-lab/code-wasm/workspace"
)

// errEscape is the workspace's path-escape error for errors.Is, with the
// symbolic link named, as fmt.Errorf("%w (through a symbolic link)") made it.
func TestEscapeErrorIsThePathEscapeError(t *testing.T) {
	if !errors.Is(errEscape, workspace.ErrPathEscape) {
		t.Fatalf("errors.Is(errEscape, ErrPathEscape) is false")
	}
	if want := workspace.ErrPathEscape.Error() + " (through a symbolic link)"; errEscape.Error() != want {
		t.Fatalf("errEscape reads %q, want %q", errEscape.Error(), want)
	}
	if errors.Is(errEscape, workspace.ErrNotExist) {
		t.Fatalf("errEscape is also ErrNotExist")
	}
}
