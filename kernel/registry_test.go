package kernel_test

import (
	"slices"
	"testing"

	"github.com/a3s-lab/code-wasm/kernel"
)

// Names follows every registration and removal, sorted, and a caller
// changing the list it got changes nothing the registry answers later.
func TestRegistryNames(t *testing.T) {
	reg := kernel.NewRegistry()
	if got := reg.Names(); len(got) != 0 {
		t.Fatalf("empty registry: %v", got)
	}
	for _, n := range []string{"c", "a"} {
		if err := reg.RegisterBuiltin(newEffect(n)); err != nil {
			t.Fatal(err)
		}
	}
	got := reg.Names()
	if !slices.Equal(got, []string{"a", "c"}) {
		t.Fatalf("names %v", got)
	}
	got[0] = "zzz"
	if err := reg.RegisterDynamic(newEffect("b")); err != nil {
		t.Fatal(err)
	}
	if got := reg.Names(); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Fatalf("after a registration: %v", got)
	}
	if !reg.Unregister("b") {
		t.Fatal("b was not removed")
	}
	again := reg.Names()
	if !slices.Equal(again, []string{"a", "c"}) {
		t.Fatalf("after a removal: %v", again)
	}
	again = slices.Delete(again, 0, 1)
	if got := reg.Names(); !slices.Equal(got, []string{"a", "c"}) || len(again) != 1 {
		t.Fatalf("a caller's change reached the registry: %v", got)
	}
}
