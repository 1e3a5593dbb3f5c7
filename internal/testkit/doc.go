// Package testkit is what the tests of several packages share: a memory
// workspace seeded from a map of files, a snapshot of a workspace's files
// (to check that a refused call changed nothing), and a result's error
// kind. It imports no tool and no session, so the tests of tools, kernel
// and core, and ptc/enginetest's harness, can all use it. Assertions stay
// plain `if … { t.Errorf }` (testify is kept out of the module's graph).
package testkit
