// Package opfs is a workspace driver over the browser's Origin Private File
// System. It declares read, write and search (no exec, no git).
//
// OPFS charges about 2.5 ms for every file opened for writing and 1.4 ms
// for reading, while one open FileSystemSyncAccessHandle takes a thousand
// small writes in 7–18 ms (FIELD-NOTES.md). So the driver does not map each
// workspace file to an OPFS file: a workspace root is one append-only log
// (root/log-<generation>.a3s) written through one sync access handle that
// stays open. Every change (put, remove, mkdir, rename) is one checksummed
// record, flushed before the call returns (bulk loads through PutFile share
// one flush); replaying the log rebuilds the tree. A torn record at the end (a crash mid-write) fails its checksum and
// is dropped, so a file is always whole-old or whole-new. The tree, sizes
// and versions live in memory (the tree is workspace/internal/tree, the
// one memfs uses: cached listings, Files, WalkRuns, renames in the moved
// subtree's size), with a bounded content cache; reads and
// greps touch OPFS only for contents the cache evicted. When dead records
// outweigh live ones the log is compacted into the next generation, which
// counts only once its final checkpoint record is on disk.
//
// The storage under the log is the small File/Dir pair, so the whole
// driver (replay, crash recovery, compaction) is tested natively over an
// in-memory Dir; the js-only Open binds it to OPFS, takes a Web Lock per
// root (one live session per root across tabs) and needs a dedicated
// Worker, the only place sync access handles exist.
//
// It is not a general OPFS file browser: the files it writes are its log,
// not one OPFS file per workspace file.
package opfs
