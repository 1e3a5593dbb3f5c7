//go:build js

package core

import "github.com/a3s-lab/code-wasm/ptc"

// defaultProgramEngine is nil under js/wasm: the program tool runs on the
// host's own JS engine, which the host passes in Options.ProgramEngine
// (internal/hostapi wires ptc.HostEngine to the session's dispatcher).
func defaultProgramEngine() ptc.Engine { return nil }
