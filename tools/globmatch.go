package tools

import (
	"fmt"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/a3s-lab/code-wasm/workspace"
)

// MatchGlob compiles a glob pattern as the glob tool reads it (doublestar
// syntax, braces, the same limits) into a matcher of slash-separated
// relative paths. The session's ExportFiles filters with it (include).
func MatchGlob(pattern string) (func(name string) bool, error) {
	p, err := workspace.ValidatePattern(pattern)
	if err != nil {
		return nil, err
	}
	if !doublestar.ValidatePattern(p) {
		return nil, fmt.Errorf("%q is not a valid pattern (check brackets and braces)", pattern)
	}
	g, err := compileGlob(p)
	if err != nil {
		return nil, err
	}
	return g.match, nil
}
