package hostapi

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
