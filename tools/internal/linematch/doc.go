// Package linematch is grep's line-matching engine: it finds the lines of
// a file that a regular expression matches, searching a literal every match
// must hold (its rarest byte first, byteRank) and the bytes that can sit next
// to it before the regexp engine sees a line, and metering the engine's work
// (work.Meter) so a long line or a large program stays cancellable.
package linematch
