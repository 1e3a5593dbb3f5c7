// Package memfs is the in-memory workspace driver, the default everywhere
// (native Go, Node, browsers, Workers). File contents are immutable once
// stored, so reads share bytes without copying and version hashes are
// computed at most once per content. The tree itself (lookup, listings,
// walks, renames) is workspace/internal/tree, shared with opfs.
//
// It is not persistent and does no path checking (the workspace does).
package memfs
