// Package workspace is the portable file-system type tools hold: a concrete
// Workspace over a small, ctx-first Driver interface, the virtual path
// resolver (every path is checked once, here, never in drivers), declared
// capabilities (read, write, search, exec, git), compare-and-swap versions,
// and fallbacks for optional driver extras (LineReader, Appender, Walker,
// Putter).
//
// It is not a driver: storage lives in workspace/memfs, workspace/opfs and
// later drivers, each passing workspace/workspacetest.
package workspace
