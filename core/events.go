package core

import (
	"context"
	"sync"

	"github.com/a3s-lab/code-wasm/kernel"
)

// Bus fans events out to subscribers. Publishing never blocks and never
// drops: each subscriber has its own unbounded queue, so a slow reader
// costs memory, not events.
type Bus struct {
	mu     sync.Mutex
	subs   map[*Subscription]struct{}
	closed bool
}

// NewBus returns an open bus.
func NewBus() *Bus { return &Bus{subs: map[*Subscription]struct{}{}} }

// Subscription is one reader's view of the stream from the moment it
// subscribed.
type Subscription struct {
	bus    *Bus
	mu     sync.Mutex
	queue  []kernel.Event
	wake   chan struct{} // cap 1
	closed bool
	// filter, when set, picks the events of one agent run (runFilter);
	// the subscription ends after the one it calls last.
	filter func(kernel.Event) (keep, last bool)
	// onClose, when set, runs when the reader closes the subscription.
	onClose func()
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
		last := false
		if s.filter != nil {
			var keep bool
			if keep, last = s.filter(e); !keep {
				continue
			}
		}
		s.mu.Lock()
		s.queue = append(s.queue, e)
		if last {
			s.closed = true
			delete(b.subs, s)
		}
		s.mu.Unlock()
		select {
		case s.wake <- struct{}{}:
		default:
		}
	}
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
			events = append([]kernel.Event(nil), s.queue[:max]...)
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
	if s.onClose != nil {
		s.onClose()
	}
}
