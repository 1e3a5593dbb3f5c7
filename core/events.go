package core

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/a3s-lab/code-wasm/kernel"
)

// Bus fans events out to subscribers. Publishing never blocks. Each
// subscriber has its own queue holding at most MaxQueued unread droppable
// events (see Droppable) besides the undroppable ones; past that, the
// oldest droppable events go and the reader's next batch starts with one
// EventDropped event counting them.
type Bus struct {
	mu     sync.Mutex
	subs   map[*Subscription]struct{}
	closed bool
	// n is len(subs), read without the lock by Listening.
	n atomic.Int32
}

// Listening reports whether anyone subscribes: an event published while
// nobody does reaches nobody (a subscription sees what is published after
// it), so a publisher may skip building it (Listening in kernel.Config and
// agent.Config: an agent's turn built about a dozen payload maps, each
// with a clock read, for no reader).
func (b *Bus) Listening() bool { return b.n.Load() > 0 }

// NewBus returns an open bus.
func NewBus() *Bus { return &Bus{subs: map[*Subscription]struct{}{}} }

// MaxQueued bounds the unread droppable events of one subscription
// (terminal events, never dropped, come on top).
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
	nd     int           // droppable events in queue
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
	b.n.Store(int32(len(b.subs)))
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
		if Droppable(e.Type) {
			if s.nd++; s.nd > MaxQueued {
				s.shed()
			}
		}
		if last {
			s.closed = true
			delete(b.subs, s)
			b.n.Store(int32(len(b.subs)))
		}
		s.mu.Unlock()
		select {
		case s.wake <- struct{}{}:
		default:
		}
	}
}

// shed drops the oldest droppable events, down to MaxQueued/2 of them, in
// one pass: a flood costs amortised O(1) per event while the undroppable
// ones held stay few. Called with s.mu held.
func (s *Subscription) shed() {
	drop := s.nd - MaxQueued/2
	kept := s.queue[:0]
	for _, e := range s.queue {
		if drop > 0 && Droppable(e.Type) {
			drop--
			s.drops++
			s.nd--
			continue
		}
		kept = append(kept, e)
	}
	clear(s.queue[len(kept):])
	s.queue = kept
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
	b.n.Store(0)
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
			for _, e := range events {
				if Droppable(e.Type) && e.Type != EventDropped {
					s.nd--
				}
			}
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
	s.bus.n.Store(int32(len(s.bus.subs)))
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
