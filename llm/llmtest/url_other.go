//go:build !js

package llmtest

import (
	"os"
	"sync"
	"testing"
)

var shared struct {
	once sync.Once
	url  string
	err  error
}

// ServerURL is the server tests use: $LLMTEST_URL when set, else one
// started in this process for the whole test binary.
func ServerURL(t testing.TB) string {
	if u := os.Getenv("LLMTEST_URL"); u != "" {
		return u
	}
	shared.once.Do(func() {
		s, err := Start()
		if err == nil {
			shared.url = s.URL
		}
		shared.err = err
	})
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	return shared.url
}
