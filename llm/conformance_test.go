package llm_test

import (
	"testing"

	"github.com/a3s-lab/code-wasm/llm"
	"github.com/a3s-lab/code-wasm/llm/llmtest"
)

func TestConformance(t *testing.T) {
	llmtest.Run(t, llmtest.ServerURL(t), llm.New)
}
