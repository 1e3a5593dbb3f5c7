package agent_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/a3s-lab/code-wasm/agent"
	"github.com/a3s-lab/code-wasm/core"
	"github.com/a3s-lab/code-wasm/kernel"
	"github.com/a3s-lab/code-wasm/workspace"
	"github.com/a3s-lab/code-wasm/workspace/memfs"
)

// TestSearchSkillsRanking: 12 skills, the query "review the go code for
// security" (tokens review, the, go, code, for, security), each score
// worked out by hand from upstream's rule (+100 the query contains the
// name, +80 it contains a tag; per token +20 name, +15 tag, +8
// description, +2 body):
//
//	code-review   tag review in query 80; name: review, code 40; tag: review 15; desc: review 8   = 143
//	go            name in query 100; name: go 20; desc: go 8; body: the, go, code 6             = 134
//	security      name in query 100; name: security 20; desc: for 8                             = 128
//	secure-coding tag security in query 80; tag: security 15; desc: security, for, code 24      = 119
//	lint          tag go in query 80; tag: go 15; body: the, for, code 6                        = 101
//	golang-review name: review, go 40; desc: review, go, code 24                                = 64
//	deploy        desc: the 8 = 8;  tests (kind tool) desc: the 8 = 8 (ties go by name)
//	docs, refactor score 0; persona-x (kind persona) and hidden-review (model invocation
//	disabled) are never candidates.
func TestSearchSkillsRanking(t *testing.T) {
	k := agent.NewSkills(agent.Config{})
	for _, s := range []agent.Skill{
		{Name: "code-review", Description: "Review a change", Tags: []string{"review"}},
		{Name: "security", Description: "Audit for vulnerabilities", Content: "check inputs"},
		{Name: "go", Description: "Go style", Tags: []string{"lang"}, Content: "gofmt the code"},
		{Name: "docs", Description: "Write documentation", Tags: []string{"writing"}},
		{Name: "persona-x", Kind: "persona", Description: "review code"},
		{Name: "hidden-review", Description: "review code", DisableModelInvocation: true},
		{Name: "deploy", Description: "Ship the release"},
		{Name: "lint", Tags: []string{"go"}, Content: "run the linter for code"},
		{Name: "tests", Kind: "tool", Description: "Run the tests"},
		{Name: "secure-coding", Description: "Security practices for code", Tags: []string{"security"}},
		{Name: "refactor"},
		{Name: "golang-review", Description: "Reviews Go code"},
	} {
		if _, err := k.Add(s); err != nil {
			t.Fatal(err)
		}
	}
	names := func(ss []agent.Skill) []string {
		var out []string
		for _, s := range ss {
			out = append(out, s.Name)
		}
		return out
	}
	for _, c := range []struct {
		query string
		limit int
		want  []string
	}{
		{"review the go code for security", 20, []string{"code-review", "go", "security", "secure-coding", "lint", "golang-review", "deploy", "tests"}},
		{"review the go code for security", 3, []string{"code-review", "go", "security"}},
		{"", 20, []string{"code-review", "deploy", "docs", "go", "golang-review", "lint", "refactor", "secure-coding", "security", "tests"}},
		{"kubernetes", 20, nil},
	} {
		if got := names(k.Search(c.query, c.limit)); !slices.Equal(got, c.want) {
			t.Errorf("Search(%q, %d) = %v, want %v", c.query, c.limit, got, c.want)
		}
	}
}

func TestParseSkillForms(t *testing.T) {
	for _, c := range []struct {
		text string
		want []string
		warn bool
	}{
		{"---\nname: a\nallowed-tools: read(*), grep\n---\nbody", []string{"read(*)", "grep"}, false},
		{"---\nname: a\nallowed-tools:\n  - read(*)\n  - Bash(gh issue view:*)\n---\nbody", []string{"read(*)", "Bash(command:gh issue view*)"}, false},
		{"---\nname: a\nallowed-tools: \"*\"\n---\nbody", []string{"*"}, false},
		{"---\nname: a\nallowed-tools: Read Write Edit\n---\nbody", []string{"Read", "Write", "Edit"}, true},
		{"---\nname: a\nallowed-tools: Bash(git log --oneline)\n---\nbody", []string{"Bash(git log --oneline)"}, false},
		{"---\nname: a\n---\nbody", nil, false},
	} {
		s, warn, err := agent.ParseSkill("x", c.text)
		if err != nil || !slices.Equal(s.AllowedTools, c.want) || (len(warn) > 0) != c.warn || s.Content != "body" {
			t.Errorf("%q: %v %v %v %+v", c.text, s.AllowedTools, warn, err, s)
		}
	}
	if _, _, err := agent.ParseSkill("x", "---\nname: a\nkind: wizard\n---\n"); err == nil || !strings.Contains(err.Error(), "kind") {
		t.Errorf("bad kind: %v", err)
	}
}

func TestLoadSkillsFromWorkspace(t *testing.T) {
	ctx := context.Background()
	ws, _ := workspace.New(memfs.New())
	for p, c := range map[string]string{
		".a3s/skills/alpha.md":          "---\ndescription: first alpha\n---\nA",
		".a3s/skills/beta/SKILL.md":     "---\ndescription: beta\nallowed-tools: read(*)\n---\nB",
		".a3s/skills/beta/notes.md":     "not a skill: beside a SKILL.md",
		".a3s/skills/broken.md":         "---\nname: broken\n",
		".a3s/skills/z/deeper/alpha.md": "---\ndescription: second alpha\n---\nA2",
	} {
		if _, err := ws.WriteFile(ctx, p, []byte(c)); err != nil {
			t.Fatal(err)
		}
	}
	skills, warn := agent.LoadSkills(ctx, ws, []string{agent.DefaultSkillDir, "missing"})
	var got []string
	for _, s := range skills {
		got = append(got, s.Name+":"+s.Description)
	}
	if want := []string{"alpha:second alpha", "beta:beta"}; !slices.Equal(got, want) {
		t.Errorf("skills %v, want %v", got, want)
	}
	joined := strings.Join(warn, "\n")
	if !strings.Contains(joined, ".a3s/skills/broken.md skipped") || !strings.Contains(joined, "skill alpha in .a3s/skills/z/deeper/alpha.md replaces") {
		t.Errorf("warnings %q", joined)
	}
}

func TestSkillToolsListedOnlyWithSkills(t *testing.T) {
	w := newWire(t, "openai", core.Options{}, text("x"))
	has := func() bool {
		return slices.Contains(w.s.ToolNames(), agent.SkillTool) && slices.Contains(w.s.ToolNames(), agent.SearchSkillsTool)
	}
	if has() {
		t.Fatal("skill tools listed with no skill")
	}
	if err := w.s.AddSkill(agent.Skill{Name: "s1", Content: "do it"}); err != nil || !has() {
		t.Fatalf("after AddSkill: %v %v", err, w.s.ToolNames())
	}
	if !w.s.RemoveSkill("s1") || has() || w.s.RemoveSkill("s1") {
		t.Fatalf("after RemoveSkill: %v", w.s.ToolNames())
	}
	if err := w.s.AddSkill(agent.Skill{Name: "bad name"}); err == nil {
		t.Error("a name with a space was accepted")
	}
}

// skillRun runs Skill name on a session whose child model makes one call
// and then answers; it returns the events.
func skillRun(t *testing.T, opts core.Options, sk agent.Skill, c call) (*wire, []kernel.Event, *kernel.Result) {
	t.Helper()
	w := newWire(t, "openai", opts, calls(c), text("done"))
	if err := w.s.AddSkill(sk); err != nil {
		t.Fatal(err)
	}
	res, err := w.s.Tool(context.Background(), agent.SkillTool, map[string]any{"skill_name": sk.Name})
	if err != nil {
		t.Fatal(err)
	}
	return w, w.events(), res
}

func denied(evs []kernel.Event, tool string) bool {
	return slices.ContainsFunc(evs, func(e kernel.Event) bool {
		return e.Type == kernel.EventPermissionDenied && e.Payload["tool_name"] == tool
	})
}

func TestSkillPolicyOnlyNarrows(t *testing.T) {
	write := call{callID("openai", "w"), "write", `{"file_path":"out.txt","content":"x"}`}
	read := call{callID("openai", "r"), "read", `{"file_path":"a.txt"}`}
	t.Run("read(*) skill writing", func(t *testing.T) {
		w, evs, res := skillRun(t, core.Options{}, agent.Skill{Name: "reader", AllowedTools: []string{"read(*)"}, Content: "read"}, write)
		if res.ExitCode != 0 || !denied(evs, "write") {
			t.Errorf("%+v; permission_denied for write: %v", res, denied(evs, "write"))
		}
		if _, err := w.s.Workspace().Stat(context.Background(), "out.txt"); err == nil {
			t.Error("out.txt was written")
		}
	})
	t.Run("read(*) skill reading", func(t *testing.T) {
		_, evs, _ := skillRun(t, core.Options{}, agent.Skill{Name: "reader", AllowedTools: []string{"read(*)"}, Content: "read"}, read)
		if denied(evs, "read") {
			t.Error("read was denied inside a skill allowing it")
		}
	})
	t.Run("no allowed-tools", func(t *testing.T) {
		_, evs, _ := skillRun(t, core.Options{}, agent.Skill{Name: "bare", Content: "read"}, read)
		if !denied(evs, "read") {
			t.Error("a skill without allowed-tools could read")
		}
	})
	t.Run("parent deny of read", func(t *testing.T) {
		opts := core.Options{}
		opts.Permission.Deny = []string{"read"}
		_, evs, _ := skillRun(t, opts, agent.Skill{Name: "reader", AllowedTools: []string{"read(*)"}, Content: "read"}, read)
		if !denied(evs, "read") {
			t.Error("the session's deny of read did not hold inside the skill")
		}
	})
	t.Run("model invocation disabled", func(t *testing.T) {
		w := newWire(t, "openai", core.Options{}, text("never"))
		if err := w.s.AddSkill(agent.Skill{Name: "manual", DisableModelInvocation: true, Content: "x"}); err != nil {
			t.Fatal(err)
		}
		res, _ := w.s.Tool(context.Background(), agent.SkillTool, map[string]any{"input": map[string]any{"name": "manual"}})
		if res.ExitCode == 0 || res.Output != "Skill 'manual' disables model invocation and cannot be invoked via the Skill tool" {
			t.Errorf("%+v", res)
		}
		if l := w.log(0); len(l.Requests) != 0 {
			t.Errorf("%d model requests", len(l.Requests))
		}
	})
}
