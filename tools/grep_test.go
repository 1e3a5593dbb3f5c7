package tools

import (
	"strings"
	"testing"
)

// TestGrepRefusesHugeProgram: a pattern past linematch.MaxProgram is an
// invalid argument naming the limit.
func TestGrepRefusesHugeProgram(t *testing.T) {
	res := run(t, newWS(t, map[string]string{"a.txt": "x\n"}), "grep", map[string]any{"pattern": strings.Repeat(`[a-z]{1,1000}`, 6)})
	if kindOf(res) != "invalid_argument" || !strings.Contains(res.Output, "grep: the pattern compiles to about") {
		t.Fatalf("grep with a huge program: %s %q", kindOf(res), res.Output)
	}
}

// TestFoldLiteralWithoutUpperCase: ß has no upper case of its own
// (ToUpper gives ß) yet folds to ẞ, so with -i a literal of it must not be
// searched for as it is.
func TestFoldLiteralWithoutUpperCase(t *testing.T) {
	ws := newWS(t, map[string]string{"de.txt": "STRAẞE\nstraße\nstrasse\n"})
	for _, args := range []map[string]any{
		{"pattern": "ß", "-i": true, "output_mode": "count"},
		{"pattern": "(?i)ß", "output_mode": "count"},
		{"pattern": "(?i)[a-z]ß", "output_mode": "count"},
	} {
		res := run(t, ws, "grep", args)
		if !strings.Contains(res.Output, "de.txt: 2 matching line(s)") {
			t.Errorf("%v: %s", args, res.Output)
		}
	}
}
