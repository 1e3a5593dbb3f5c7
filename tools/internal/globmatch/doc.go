// Package globmatch is glob's name matcher, which grep's glob shares: a
// doublestar pattern checked against limits, its braces expanded once, each
// alternative matched by prefix, suffix and substring tests where it is that
// simple and by doublestar otherwise, with the work metered (work.Meter).
package globmatch
