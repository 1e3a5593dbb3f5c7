//go:build !js

package core

import (
	"github.com/a3s-lab/code-wasm/ptc"
	"github.com/a3s-lab/code-wasm/ptc/gojaengine"
)

// defaultProgramEngine is goja natively. It is never linked into the
// js/wasm build (RATIONALE.md "Which engine runs programs natively?").
func defaultProgramEngine() ptc.Engine { return gojaengine.New() }
