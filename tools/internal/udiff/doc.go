// Package udiff formats, parses and applies single-file unified diffs: the
// format GNU `diff -u` prints, which the patch tool takes and the write,
// edit and patch tools show as a change's preview. Format's output always
// applies with Apply (tested against GNU diff as an oracle).
package udiff
