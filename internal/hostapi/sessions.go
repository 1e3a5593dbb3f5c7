package hostapi

// sessionMethods are the methods about the session itself.
var sessionMethods = []row{
	method("isClosed", syncCall|whenClosed, func(c *call, _ *noArgs) (any, error) { return c.e.s.IsClosed(), nil }),
	method("close", whenClosed, func(c *call, _ *noArgs) (any, error) {
		c.t.close(c.id, c.e)
		return true, nil
	}),
}
