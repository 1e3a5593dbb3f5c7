// Package core holds Session, the portable type users hold: it assembles a
// workspace, the capability-gated tool surface, one invocation kernel and
// the event stream, and offers the direct SDK helpers (Tool, GovernedTool,
// ReadFile, WriteFile, EditFile, PatchFile, Ls, Glob, Grep).
//
// It is not the JavaScript API (wasm/ and npm/ wrap it) and implements no
// tool itself.
package core
