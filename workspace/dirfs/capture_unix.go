//go:build unix

package dirfs

import "github.com/a3s-lab/code-wasm/workspace"

// capturer accumulates one bounded Capture from chunks.
type capturer struct {
	c    workspace.Capture
	ring []byte // the tail, as a ring once full
	pos  int    // next write position in ring when full
	full bool
	// whole, when > 0, keeps up to whole bytes in Head and no tail.
	whole int
}

// newCapturer returns a Capturer with the standard bounds, or one that
// keeps the first whole bytes (whole > 0) and counts the rest.
func newCapturer(whole int) *capturer { return &capturer{whole: whole} }

// Write adds p. It never fails.
func (c *capturer) Write(p []byte) (int, error) {
	n := len(p)
	c.c.Total += int64(n)
	if c.whole > 0 {
		if room := c.whole - len(c.c.Head); room > 0 {
			c.c.Head = append(c.c.Head, p[:min(room, len(p))]...)
		}
		return n, nil
	}
	if room := workspace.CaptureHead - len(c.c.Head); room > 0 {
		k := min(room, len(p))
		c.c.Head = append(c.c.Head, p[:k]...)
		p = p[k:]
	}
	if len(p) == 0 {
		return n, nil
	}
	if len(p) >= workspace.CaptureTail {
		c.ring = append(c.ring[:0], p[len(p)-workspace.CaptureTail:]...)
		c.pos, c.full = 0, true
		return n, nil
	}
	if !c.full {
		room := workspace.CaptureTail - len(c.ring)
		k := min(room, len(p))
		c.ring = append(c.ring, p[:k]...)
		p = p[k:]
		if len(c.ring) < workspace.CaptureTail {
			return n, nil
		}
		c.full = true
	}
	for len(p) > 0 {
		k := copy(c.ring[c.pos:], p)
		p = p[k:]
		c.pos = (c.pos + k) % workspace.CaptureTail
	}
	return n, nil
}

// Capture returns what was kept.
func (c *capturer) Capture() workspace.Capture {
	out := c.c
	out.Head = append([]byte(nil), c.c.Head...)
	if c.full {
		out.Tail = append(append(make([]byte, 0, workspace.CaptureTail), c.ring[c.pos:]...), c.ring[:c.pos]...)
	} else {
		out.Tail = append([]byte(nil), c.ring...)
	}
	return out
}
