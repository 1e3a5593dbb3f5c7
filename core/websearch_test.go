package core_test

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/a3s-lab/code-wasm/core"
	"github.com/a3s-lab/code-wasm/kernel"
	"github.com/a3s-lab/code-wasm/tools"
)

type countingEngine struct{ calls atomic.Int64 }

func (*countingEngine) Name() string { return "fake" }
func (e *countingEngine) Search(context.Context, string, int) ([]tools.SearchHit, error) {
	e.calls.Add(1)
	return []tools.SearchHit{{Title: "t", URL: "https://example.com/"}}, nil
}

// web_search is listed only with a provider and goes through the kernel:
// a policy deny asks no engine.
func TestWebSearchListedAndGoverned(t *testing.T) {
	plain, err := core.New(core.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	if slices.Contains(plain.ToolNames(), "web_search") {
		t.Fatal("web_search listed without a provider")
	}
	e := &countingEngine{}
	ws, err := tools.NewWebSearch([]tools.SearchProvider{e})
	if err != nil {
		t.Fatal(err)
	}
	s, err := core.New(core.Options{WebSearch: ws, Governance: kernel.Governance{Permission: kernel.PermissionPolicy{
		Deny: []string{"web_search"}, DefaultDecision: kernel.DecisionAllow}}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !slices.Contains(s.ToolNames(), "web_search") {
		t.Fatal("web_search not listed with a provider")
	}
	r, err := s.GovernedTool(context.Background(), "web_search", map[string]any{"query": "q"})
	if err == nil && r.ExitCode == 0 {
		t.Fatalf("denied call succeeded: %+v", r)
	}
	if e.calls.Load() != 0 {
		t.Fatal("the engine was asked despite the deny")
	}
	if r, err := s.Tool(context.Background(), "web_search", map[string]any{"query": "q"}); err != nil || r.Metadata["status"] != "complete" || e.calls.Load() != 1 {
		t.Fatalf("trusted call: %v %+v", err, r)
	}
}
