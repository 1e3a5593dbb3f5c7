// Package tree is the in-memory file tree the workspace drivers share
// (hackpadfs's keyvalue core is the model: the tree logic exists once,
// backends differ in what they store). It maps resolved paths to nodes and
// does lookup, parent creation, removal and O(subtree) renames, caches
// each directory's sorted listing with its entries' paths, keeps the flat
// file list searches take (Files), and walks from those caches (Walk,
// WalkRuns). It is generic over F, what a file's content is to the
// driver: memfs stores the bytes, opfs where they lie in its log.
//
// It is not safe for concurrent use on its own, and it takes no lock
// except in Walk and WalkRuns (through the driver's Locker): the driver
// holds its lock around every other call, for reading around Lookup, Stat,
// ReadDir and Files (the caches they fill are stored atomically, so
// concurrent readers are safe), for writing around the rest. It does no
// path checking (the workspace did), no I/O and no versioning.
package tree
