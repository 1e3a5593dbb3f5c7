// Package workspace is the portable file-system type tools hold: a concrete
// Workspace over a small, ctx-first Driver interface, the virtual path
// resolver (every path is checked once, here, never in drivers), declared
// capabilities (read, write, search, exec, git), compare-and-swap versions,
// and fallbacks for optional driver extras (LineReader, Appender, Walker,
// RunWalker, FileLister, DataReader, Putter). WalkTree / WalkTreeOf /
// WalkRunsOf are the one walk algorithm every driver's walk uses; Files,
// WalkRuns and ReadData are the cheap paths searches take (every file
// under a directory at once, a run of entries per call, bytes without a
// version hash).
//
// It is not a driver: storage lives in workspace/memfs, workspace/opfs and
// later drivers, each passing workspace/workspacetest.
package workspace
