//go:build !js

package core

import (
	"github.com/a3s-lab/code-wasm/ptc"
	"github.com/a3s-lab/code-wasm/ptc/qjsengine"
)

// defaultProgramEngine is QuickJS on wazero natively. It is never linked
// into the js/wasm build (RATIONALE.md "Which engine runs programs
// natively?").
func defaultProgramEngine() ptc.Engine { return qjsengine.New() }
