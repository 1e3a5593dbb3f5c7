package tools_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/a3s-lab/code-wasm/kernel"
	"github.com/a3s-lab/code-wasm/tools"
)

// TestTouches: each file tool says which paths and pattern a call touches,
// and says what the kernel's argument-key fallback would read, so the
// permission rules judge a built-in call as before (each touched path is
// denied by a path rule through the fallback too).
func TestTouches(t *testing.T) {
	for _, c := range []struct {
		tool    kernel.Tool
		args    string
		paths   []string
		pattern string
	}{
		{&tools.Read{}, `{"file_path":"a/b.txt"}`, []string{"a/b.txt"}, ""},
		{&tools.Read{}, `{"files":[{"path":"x.txt"},{"path":"../y"},{"offset":3}]}`, []string{"x.txt", "../y"}, ""},
		{&tools.Write{}, `{"file_path":"w.txt","content":"x"}`, []string{"w.txt"}, ""},
		{&tools.Edit{}, `{"file_path":"src/e.go","old_string":"a","new_string":"b"}`, []string{"src/e.go"}, ""},
		{&tools.Patch{}, `{"file_path":"p.txt","diff":""}`, []string{"p.txt"}, ""},
		{&tools.Grep{}, `{"pattern":"TODO","path":"src"}`, []string{"src"}, "TODO"},
		{&tools.Grep{}, `{"pattern":"TODO"}`, nil, "TODO"},
		{&tools.Glob{}, `{"pattern":"**/*.go","path":""}`, []string{""}, "**/*.go"},
		{&tools.Ls{}, `{"path":"docs"}`, []string{"docs"}, ""},
		{&tools.Ls{}, `{}`, nil, ""},
		{&tools.Ls{}, `{"path":7}`, nil, ""},
		{&tools.Ls{}, `not json`, nil, ""},
	} {
		name := c.tool.Name()
		got := c.tool.(kernel.Toucher).Touches(json.RawMessage(c.args))
		if !slices.Equal(got.Paths, c.paths) || (got.Paths == nil) != (c.paths == nil) || got.Pattern != c.pattern || got.Command != "" || got.URL != "" {
			t.Errorf("%s %s: Touches = %+v, want paths %q pattern %q", name, c.args, got, c.paths, c.pattern)
		}
		for _, p := range got.Paths {
			if p == "" || p == "../y" {
				continue // not a valid glob; the fallback matches them conservatively
			}
			pol := kernel.PermissionPolicy{Deny: []string{name + "(path:" + p + ")"}, Allow: []string{"*"}}
			if d, _ := pol.Decide(name, json.RawMessage(c.args)); d != kernel.DecisionDeny {
				t.Errorf("%s %s: the fallback does not see path %q (decision %s)", name, c.args, p, d)
			}
		}
	}
}
