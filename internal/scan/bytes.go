package scan

// IndexFold returns the index of the first byte of b equal to c or, when c
// is an ASCII letter, to c in the other case; -1 if there is none.
func IndexFold(b []byte, c byte) int {
	if l := c | 0x20; l >= 'a' && l <= 'z' {
		return indexFoldLetter(b, l)
	}
	return IndexByte(b, c)
}

// Near narrows a search to hits whose neighbours are in given sets: a hit
// at index i is accepted only if b[i-PrevDist] is in Prev and
// b[i+NextDist] is in Next, both inside b. A nil set (or a distance of 0)
// accepts anything on that side.
type Near struct {
	Prev     *[256]bool
	PrevDist int
	Next     *[256]bool
	NextDist int
}

var anyByte = func() *[256]bool {
	var s [256]bool
	for i := range s {
		s[i] = true
	}
	return &s
}()

// sides returns the tables and distances to test, with "anything" as an
// all-true table at distance 0 (the hit itself, always inside b).
func (n *Near) sides() (prev *[256]bool, pd int, next *[256]bool, nd int) {
	prev, next = anyByte, anyByte
	if n != nil && n.Prev != nil && n.PrevDist > 0 {
		prev, pd = n.Prev, n.PrevDist
	}
	if n != nil && n.Next != nil && n.NextDist > 0 {
		next, nd = n.Next, n.NextDist
	}
	return
}

// IndexNear returns the index of the first byte of b at or after from that
// equals c (or, with fold and c an ASCII letter, c in either case) and
// whose neighbours n accepts; -1 if there is none. Distances are measured
// in b, so neighbours before from count.
func IndexNear(b []byte, from int, c byte, fold bool, n *Near) int {
	if from < 0 || from > len(b) {
		panic("scan: IndexNear from out of range")
	}
	var mask byte
	if l := c | 0x20; fold && l >= 'a' && l <= 'z' {
		c, mask = l, 0x20
	}
	prev, pd, next, nd := n.sides()
	return indexNear(b, from, c, mask, pd, nd, prev, next)
}
