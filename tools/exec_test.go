package tools

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/a3s-lab/code-wasm/kernel"
)

// What bash and git calls touch and do, as the kernel's rules see them.
func TestExecToolsDeclare(t *testing.T) {
	raw := func(s string) json.RawMessage { return json.RawMessage(s) }
	if got := (&Bash{}).Touches(raw(`{"command":"rm -rf build"}`)); got.Command != "rm -rf build" || got.Paths != nil {
		t.Errorf("bash touches %+v", got)
	}
	if e := (&Bash{}).Effects(raw(`{"command":"ls"}`)); !e.Mutates {
		t.Errorf("bash effects %+v", e)
	}
	g := &Git{}
	if got := g.Touches(raw(`{"command":"diff","path":"src/a.go"}`)); !reflect.DeepEqual(got, kernel.Touched{Paths: []string{"src/a.go"}, Command: "git diff"}) {
		t.Errorf("git touches %+v", got)
	}
	for _, c := range []struct {
		args           string
		mutates, reads bool
		readOnly       bool
	}{
		{`{"command":"status"}`, false, false, true},
		{`{"command":"log"}`, false, false, true},
		{`{"command":"diff"}`, false, true, true},
		{`{"command":"branch"}`, false, false, true},
		{`{"command":"branch","name":"x"}`, true, false, false},
		{`{"command":"checkout","ref":"main"}`, true, false, false},
		{`{"command":"stash"}`, false, false, true},
		{`{"command":"stash","message":"wip"}`, true, false, false},
		{`{"command":"worktree","subcommand":"create","path":"w"}`, true, false, false},
		{`{"command":`, true, true, false}, // unreadable: fail closed
	} {
		e, caps := g.Effects(raw(c.args)), g.Capabilities(raw(c.args))
		if e.Mutates != c.mutates || e.ReadsContent != c.reads || caps.ReadOnly != c.readOnly {
			t.Errorf("%s: effects %+v, read-only %v", c.args, e, caps.ReadOnly)
		}
	}
}

func TestCleanRemoteURL(t *testing.T) {
	for in, want := range map[string]string{
		"https://user:secret@example.com/r.git?token=x#f": "https://example.com/r.git",
		"https://token@github.com/o/r":                    "https://github.com/o/r",
		"ssh://git@example.com:22/r.git":                  "ssh://example.com:22/r.git",
		"git@github.com:o/r.git":                          "git@github.com:o/r.git",
		"user:pw@host:o/r.git":                            "host:o/r.git",
		"/srv/git/r.git":                                  "/srv/git/r.git",
	} {
		if got := cleanRemoteURL(in); got != want {
			t.Errorf("%s: %s, want %s", in, got, want)
		}
	}
}

func TestStatusBranch(t *testing.T) {
	for in, want := range map[string]string{
		"main...origin/main [ahead 1]": "main",
		"main":                         "main",
		"No commits yet on trunk":      "trunk",
		"HEAD (no branch)":             "HEAD (detached)",
	} {
		if got := statusBranch(in); got != want {
			t.Errorf("%s: %s", in, got)
		}
	}
}
