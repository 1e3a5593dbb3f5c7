package hostapi

import "context"

// eventMethods are the methods about the session's event stream; the
// stream itself is read by NextEvents and ended by Unsubscribe.
var eventMethods = []row{
	method("subscribe", syncCall, subscribe),
}

func subscribe(c *call, _ *noArgs) (any, error) {
	e := c.e
	e.mu.Lock()
	e.nsub++
	sid := e.nsub
	e.subs[sid] = e.s.Events()
	e.mu.Unlock()
	return sid, nil
}

// NextEvents waits for the next events of a subscription: {events, done}.
func (t *Sessions) NextEvents(ctx context.Context, id, sub int) (any, error) {
	type batch struct {
		Events []WireEvent `json:"events"`
		Done   bool        `json:"done"`
	}
	e, err := t.get(id)
	if err != nil {
		// A closed session has left the table: its streams are over.
		return batch{Events: []WireEvent{}, Done: true}, nil
	}
	e.mu.Lock()
	s, ok := e.subs[sub]
	e.mu.Unlock()
	if !ok {
		return batch{Events: []WireEvent{}, Done: true}, nil
	}
	evs, done, err := s.Next(ctx, 256)
	if err != nil {
		return nil, mapErr("nextEvents", err)
	}
	if done {
		e.mu.Lock()
		delete(e.subs, sub)
		e.mu.Unlock()
		t.release(id, e)
	}
	out := make([]WireEvent, len(evs))
	for i, ev := range evs {
		out[i] = WireEventOf(ev)
	}
	return batch{Events: out, Done: done}, nil
}

// Unsubscribe ends a subscription.
func (t *Sessions) Unsubscribe(id, sub int) {
	e, err := t.get(id)
	if err != nil {
		return
	}
	e.mu.Lock()
	s, ok := e.subs[sub]
	delete(e.subs, sub)
	e.mu.Unlock()
	if ok {
		s.Close()
	}
	t.release(id, e)
}
