package core

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/a3s-lab/code-wasm/kernel"
)

// Bus fans events out to subscribers. Publishing never blocks. Each
// subscriber has its own queue of at most MaxQueued unread events; past
// that, the oldest droppable events go (see Droppable) and the reader's
// next batch starts with one EventDropped event counting them.
type Bus struct {
	mu     sync.Mutex
	subs   map[*Subscription]struct{}
	closed bool
}

// NewBus returns an open bus.
func NewBus() *Bus { return &Bus{subs: map[*Subscription]struct{}{}} }

// MaxQueued bounds the unread events of one subscription (terminal events
// aside, which are never dropped).
const MaxQueued = 10000

// EventDropped is the event that tells a reader events were dropped:
// payload {count}.
const EventDropped = "dropped"

// Droppable reports whether an event may be dropped from a full queue:
// progress (tool_request_bound, tool_execution_start, tool_output_delta,
// budget_threshold_hit, confirmation_received) may; what ends something
// (tool_end and any other *_end, permission_denied, confirmation_timeout,
// error) or asks for an answer (confirmation_required) may not.
func Droppable(typ string) bool {
	switch typ {
	case kernel.EventPermissionDenied, kernel.EventConfirmationRequired, kernel.EventConfirmationTimeout, kernel.EventError:
		return false
	}
	return !strings.HasSuffix(typ, "_end")
}

// Subscription is one reader's view of the stream from the moment it
// subscribed.
type Subscription struct {
	bus    *Bus
	mu     sync.Mutex
	queue  []kernel.Event
	drops  int           // dropped since the reader's last batch
	wake   chan struct{} // cap 1
	closed bool
}

// Subscribe starts a new subscription. On a closed bus it is already done.
func (b *Bus) Subscribe() *Subscription {
	s := &Subscription{bus: b, wake: make(chan struct{}, 1)}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		s.closed = true
		return s
	}
	b.subs[s] = struct{}{}
	return s
}

// Publish delivers e to every subscriber.
func (b *Bus) Publish(e kernel.Event) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for s := range b.subs {
		s.mu.Lock()
		if len(s.queue) >= MaxQueued {
			s.shed()
		}
		s.queue = append(s.queue, e)
		s.mu.Unlock()
		select {
		case s.wake <- struct{}{}:
		default:
		}
	}
}

// shed drops the droppable events of the older half of a full queue (one
// pass, so a flood costs amortised O(1) per event). Called with s.mu held.
func (s *Subscription) shed() {
	half := len(s.queue) / 2
	kept := s.queue[:0]
	for _, e := range s.queue[:half] {
		if Droppable(e.Type) {
			s.drops++
		} else {
			kept = append(kept, e)
		}
	}
	s.queue = append(kept, s.queue[half:]...)
}

// Close ends every subscription after its queued events are read.
func (b *Bus) Close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	for s := range b.subs {
		s.mu.Lock()
		s.closed = true
		s.mu.Unlock()
		select {
		case s.wake <- struct{}{}:
		default:
		}
	}
	b.subs = map[*Subscription]struct{}{}
}

// Next waits for events and returns every queued one (at most max; max <= 0
// means all). done is true when the stream has ended and nothing is left.
func (s *Subscription) Next(ctx context.Context, max int) (events []kernel.Event, done bool, err error) {
	for {
		s.mu.Lock()
		if n := len(s.queue); n > 0 {
			if max <= 0 || max > n {
				max = n
			}
			if s.drops > 0 {
				events = append(events, kernel.Event{Version: 1, Type: EventDropped, Payload: map[string]any{"count": s.drops}, TimeMs: time.Now().UnixMilli()})
				s.drops = 0
			}
			events = append(events, s.queue[:max]...)
			s.queue = s.queue[max:]
			s.mu.Unlock()
			return events, false, nil
		}
		if s.closed {
			s.mu.Unlock()
			return nil, true, nil
		}
		s.mu.Unlock()
		select {
		case <-s.wake:
		case <-ctx.Done():
			return nil, false, ctx.Err()
		}
	}
}

// Close ends this subscription.
func (s *Subscription) Close() {
	s.bus.mu.Lock()
	delete(s.bus.subs, s)
	s.bus.mu.Unlock()
	s.mu.Lock()
	s.closed = true
	s.queue = nil
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}
