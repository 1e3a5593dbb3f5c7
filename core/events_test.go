package core_test

import (
	"context"
	"testing"

	"github.com/a3s-lab/code-wasm/core"
	"github.com/a3s-lab/code-wasm/kernel"
)

// A reader that never reads holds at most about MaxQueued events; the
// dropped ones are counted in one "dropped" event, and no tool_end is lost.
func TestBusBoundsAnUnreadSubscription(t *testing.T) {
	b := core.NewBus()
	sub := b.Subscribe()
	const calls = 20000
	for i := range calls {
		b.Publish(kernel.Event{Type: kernel.EventToolExecutionStart, Payload: map[string]any{"i": i}})
		b.Publish(kernel.Event{Type: kernel.EventToolOutputDelta})
		b.Publish(kernel.Event{Type: kernel.EventToolEnd, Payload: map[string]any{"i": i}})
	}
	b.Close()
	evs, done, err := sub.Next(context.Background(), 0)
	if err != nil || done {
		t.Fatal(err, done)
	}
	if len(evs) > core.MaxQueued+calls+1 {
		t.Fatalf("%d events held", len(evs))
	}
	if evs[0].Type != core.EventDropped {
		t.Fatalf("first event %s, want dropped", evs[0].Type)
	}
	dropped := evs[0].Payload["count"].(int)
	ends := 0
	for _, e := range evs[1:] {
		if e.Type == kernel.EventToolEnd {
			if e.Payload["i"] != ends {
				t.Fatalf("tool_end %v out of order (want %d)", e.Payload["i"], ends)
			}
			ends++
		}
	}
	if ends != calls || dropped+len(evs)-1 != 3*calls {
		t.Fatalf("%d tool_end of %d; %d dropped + %d kept != %d", ends, calls, dropped, len(evs)-1, 3*calls)
	}
	// After the drop is reported, reading resumes with no new marker.
	if _, done, _ := sub.Next(context.Background(), 0); !done {
		t.Fatal("the stream did not end")
	}
}
