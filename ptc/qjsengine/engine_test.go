//go:build !js

package qjsengine_test

import (
	"testing"

	"github.com/a3s-lab/code-wasm/ptc/enginetest"
	"github.com/a3s-lab/code-wasm/ptc/qjsengine"
)

func TestConformance(t *testing.T) { enginetest.Run(t, qjsengine.New()) }

func TestRedTeam(t *testing.T) {
	enginetest.RedTeam(t, qjsengine.New(), "native", enginetest.RedTeamPath)
}
