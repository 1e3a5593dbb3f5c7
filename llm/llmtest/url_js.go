package llmtest

import (
	"os"
	"testing"
)

// ServerURL is the server tests use: $LLMTEST_URL, which the helper binary
// (cmd/llmtestserver) sets for the command it runs; a wasm test cannot
// listen, so without it the test is skipped.
func ServerURL(t testing.TB) string {
	u := os.Getenv("LLMTEST_URL")
	if u == "" {
		t.Skip("LLMTEST_URL is not set: run under go run ./llm/llmtest/cmd/llmtestserver -- <command>")
	}
	return u
}
