// Package core holds Session, the portable type users hold: it assembles a
// workspace, the capability-gated tool surface, one invocation kernel and
// the event stream, and offers the direct SDK helpers (Tool, GovernedTool,
// ReadFile, WriteFile, EditFile, PatchFile, Ls, Glob, Grep) and the
// exact-content calls (ReadText, ReadBytes, WriteBytes, ImportFiles,
// ExportFiles; content.go).
//
// It is not the JavaScript API (wasm/ and npm/ wrap it) and implements no
// tool itself.
package core
