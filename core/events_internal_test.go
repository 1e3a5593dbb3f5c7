package core

import (
	"testing"

	"github.com/a3s-lab/code-wasm/agent"
	"github.com/a3s-lab/code-wasm/kernel"
)

// Listening follows the subscriptions: a subscribe, a close, a run
// subscription ended by its last event, and the bus closing.
func TestBusListening(t *testing.T) {
	b := NewBus()
	if b.Listening() {
		t.Fatal("a new bus listens")
	}
	s := b.Subscribe()
	if !b.Listening() {
		t.Fatal("a subscribed bus does not listen")
	}
	s.Close()
	if b.Listening() {
		t.Fatal("listening after the only subscription closed")
	}
	b.subscribeRun("run-1")
	if !b.Listening() {
		t.Fatal("a run subscription does not listen")
	}
	b.Publish(kernel.Event{Type: agent.EventAgentEnd, InvocationID: "run-1"})
	if b.Listening() {
		t.Fatal("listening after the run's terminal event")
	}

	b.Subscribe()
	b.Close()
	if b.Listening() {
		t.Fatal("a closed bus listens")
	}
}
