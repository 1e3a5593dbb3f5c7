package work

import (
	"context"
	"errors"
	"testing"
)

// A Meter reports a done context once Step units have passed, not before,
// and starts counting again after a check; a nil Meter never checks.
func TestMeterChecksEveryStep(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	w := New(ctx)
	if err := w.Add(Step - 1); err != nil {
		t.Fatalf("Add below a step: %v", err)
	}
	if err := w.Add(1); !errors.Is(err, context.Canceled) {
		t.Fatalf("Add reaching a step: %v; want context.Canceled", err)
	}
	if err := w.Add(Step - 1); err != nil {
		t.Fatalf("Add below a step after a check: %v", err)
	}
	if err := w.Poll(); !errors.Is(err, context.Canceled) {
		t.Fatalf("Poll: %v; want context.Canceled", err)
	}
	if err := w.Check(); !errors.Is(err, context.Canceled) {
		t.Fatalf("Check: %v; want context.Canceled", err)
	}
	var none *Meter
	if err := none.Add(10 * Step); err != nil {
		t.Fatalf("nil Meter: %v", err)
	}
}
