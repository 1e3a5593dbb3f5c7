package gojaengine_test

import (
	"testing"

	"github.com/a3s-lab/code-wasm/ptc/enginetest"
	"github.com/a3s-lab/code-wasm/ptc/gojaengine"
)

func TestConformance(t *testing.T) { enginetest.Run(t, gojaengine.New()) }

func TestRedTeam(t *testing.T) {
	enginetest.RedTeam(t, gojaengine.New(), "goja", enginetest.RedTeamPath)
}
