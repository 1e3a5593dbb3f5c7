package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unicode"

	"github.com/a3s-lab/code-wasm/kernel"
	"github.com/a3s-lab/code-wasm/workspace"
)

// Skill is one SKILL.md (research §2.4): instructions a model finds with
// search_skills and runs with the Skill tool.
type Skill struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// Content is the instructions (the file's body).
	Content string `json:"content"`
	// AllowedTools are permission rules (read(*), bash(command:gh *), *);
	// inside the skill every other call is denied. Empty: no tool at all
	// (the default is deny).
	AllowedTools           []string `json:"allowedTools,omitempty"`
	DisableModelInvocation bool     `json:"disableModelInvocation,omitempty"`
	// Kind is instruction (default), persona or tool.
	Kind    string   `json:"kind,omitempty"`
	Tags    []string `json:"tags,omitempty"`
	Version string   `json:"version,omitempty"`
}

// Skill tool names.
const (
	SkillTool        = "Skill"
	SearchSkillsTool = "search_skills"
)

// Skill discovery bounds.
const (
	// DefaultSkillDir is the workspace's skill directory.
	DefaultSkillDir = ".a3s/skills"
	// MaxSkillDepth bounds the walk below a skill directory.
	MaxSkillDepth = 64
)

// ParseSkill reads a SKILL.md (or name.md): frontmatter keys name,
// description, allowed-tools (a comma-separated string, a list, or *),
// disable-model-invocation, kind, tags, version; the body is the content.
// name defaults to def. warnings name what was accepted as legacy.
func ParseSkill(def, text string) (Skill, []string, error) {
	m, body, err := frontmatter(text)
	if err != nil {
		return Skill{}, nil, err
	}
	s := Skill{Name: def, Content: body, Kind: "instruction"}
	var warn []string
	for k, v := range m {
		switch k {
		case "name":
			s.Name = fmt.Sprint(v)
		case "description":
			s.Description = fmt.Sprint(v)
		case "allowed-tools", "allowed_tools":
			var w string
			s.AllowedTools, w = allowedTools(v)
			if w != "" {
				warn = append(warn, w)
			}
		case "disable-model-invocation":
			s.DisableModelInvocation = v == true
		case "kind":
			s.Kind = fmt.Sprint(v)
		case "tags":
			s.Tags = strs(v)
		case "version":
			s.Version = fmt.Sprint(v)
		}
	}
	return s, warn, s.check()
}

func (s *Skill) check() error {
	if s.Name == "" || strings.ContainsAny(s.Name, " \t\n/") {
		return fmt.Errorf("a skill needs a name without spaces or slashes, got %q", s.Name)
	}
	if s.Kind == "" {
		s.Kind = "instruction"
	}
	switch s.Kind {
	case "instruction", "persona", "tool":
	default:
		return fmt.Errorf("skill %s: kind must be instruction, persona or tool, got %q", s.Name, s.Kind)
	}
	s.AllowedTools = slices.Clone(s.AllowedTools)
	for i, r := range s.AllowedTools {
		s.AllowedTools[i] = skillRule(r)
	}
	if err := (kernel.PermissionPolicy{Allow: s.AllowedTools}).Validate(); err != nil {
		return fmt.Errorf("skill %s: allowed-tools: %v", s.Name, err)
	}
	return nil
}

// allowedTools reads allowed-tools in every form: "read(*), grep", a
// list, "*", or the legacy whitespace list "Read Write Edit" (with a
// warning; a single Tool(… with spaces …) rule stays whole).
func allowedTools(v any) ([]string, string) {
	if l, ok := v.([]any); ok {
		return strs(l), ""
	}
	s := strings.TrimSpace(fmt.Sprint(v))
	if s == "" {
		return nil, ""
	}
	if strings.Contains(s, ",") || strings.Contains(s, "(") || !strings.ContainsAny(s, " \t") {
		var out []string
		for _, p := range splitRules(s) {
			out = append(out, p)
		}
		return out, ""
	}
	return strings.Fields(s), fmt.Sprintf("allowed-tools %q is a whitespace-separated list (legacy): write it comma-separated", s)
}

// splitRules splits on commas outside parentheses.
func splitRules(s string) []string {
	var out []string
	depth, start := 0, 0
	for i, r := range s {
		switch r {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, strings.TrimSpace(s[start:i]))
				start = i + 1
			}
		}
	}
	if t := strings.TrimSpace(s[start:]); t != "" {
		out = append(out, t)
	}
	return slices.DeleteFunc(out, func(x string) bool { return x == "" })
}

// skillRule turns upstream's command-prefix form Bash(gh issue view:*)
// into the kernel's bash(command:gh issue view*).
func skillRule(r string) string {
	open := strings.IndexByte(r, '(')
	if open < 0 || !strings.HasSuffix(r, ":*)") {
		return r
	}
	return r[:open] + "(command:" + strings.TrimSuffix(r[open+1:len(r)-1], ":*") + "*)"
}

// LoadSkills reads the skills of dirs through the workspace, in sorted
// order: a directory holding SKILL.md is one skill (named after the
// directory unless its frontmatter says otherwise), any other `.md` file
// is one, and the walk descends at most MaxSkillDepth levels. A missing
// dir is no skills; a file that does not parse is skipped, a later
// duplicate name replaces the earlier one, each with a warning.
func LoadSkills(ctx context.Context, ws *workspace.Workspace, dirs []string) (skills []Skill, warnings []string) {
	byName := map[string]int{}
	add := func(file, def string) {
		b, _, err := ws.ReadFile(ctx, file)
		var s Skill
		var warn []string
		if err == nil {
			s, warn, err = ParseSkill(def, string(b))
		}
		for _, w := range warn {
			warnings = append(warnings, fmt.Sprintf("skill file %s: %s", file, w))
		}
		if err != nil {
			warnings = append(warnings, fmt.Sprintf("skill file %s skipped: %v", file, err))
			return
		}
		if i, ok := byName[s.Name]; ok {
			warnings = append(warnings, fmt.Sprintf("skill %s in %s replaces an earlier one of that name", s.Name, file))
			skills[i] = s
			return
		}
		byName[s.Name] = len(skills)
		skills = append(skills, s)
	}
	var walk func(dir string, depth int)
	walk = func(dir string, depth int) {
		entries, err := ws.ReadDir(ctx, dir)
		if err != nil || depth > MaxSkillDepth {
			return
		}
		slices.SortFunc(entries, func(a, b workspace.Entry) int { return strings.Compare(a.Name, b.Name) })
		if slices.ContainsFunc(entries, func(e workspace.Entry) bool { return e.Name == "SKILL.md" && e.Kind == workspace.KindFile }) && depth > 0 {
			add(path.Join(dir, "SKILL.md"), path.Base(dir))
			return
		}
		for _, e := range entries {
			p := path.Join(dir, e.Name)
			switch {
			case e.Kind == workspace.KindDir:
				walk(p, depth+1)
			case e.Kind == workspace.KindFile && path.Ext(e.Name) == ".md":
				add(p, strings.TrimSuffix(e.Name, ".md"))
			}
		}
	}
	for _, d := range dirs {
		walk(d, 0)
	}
	return skills, warnings
}

// Skills is a session's skill set and its two tools, search_skills and
// Skill, which are registered only while at least one skill is loaded
// (and the session has a model).
type Skills struct {
	cfg Config
	n   atomic.Int64

	mu   sync.Mutex
	list []Skill
}

// NewSkills is an empty skill set for a session whose model, kernel and
// event sink are cfg's (cfg.Client nil: the tools are never registered).
func NewSkills(cfg Config) *Skills { return &Skills{cfg: cfg} }

// Add adds or (same name) replaces a skill; the error names what is
// wrong with it. It reports whether it replaced one.
func (k *Skills) Add(s Skill) (bool, error) {
	if err := s.check(); err != nil {
		return false, err
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	replaced := false
	if i := slices.IndexFunc(k.list, func(x Skill) bool { return x.Name == s.Name }); i >= 0 {
		k.list[i], replaced = s, true
	} else {
		k.list = append(k.list, s)
	}
	k.sync()
	return replaced, nil
}

// Remove removes a skill; false when there was none.
func (k *Skills) Remove(name string) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	i := slices.IndexFunc(k.list, func(x Skill) bool { return x.Name == name })
	if i < 0 {
		return false
	}
	k.list = slices.Delete(k.list, i, i+1)
	k.sync()
	return true
}

// Names lists the skills, sorted.
func (k *Skills) Names() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	out := []string{}
	for _, s := range k.list {
		out = append(out, s.Name)
	}
	slices.Sort(out)
	return out
}

func (k *Skills) get(name string) (Skill, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	i := slices.IndexFunc(k.list, func(x Skill) bool { return x.Name == name })
	if i < 0 {
		return Skill{}, false
	}
	return k.list[i], true
}

// sync registers the tools when the first skill arrives and removes them
// with the last (k.mu held).
func (k *Skills) sync() {
	if k.cfg.Client == nil || k.cfg.Kernel == nil {
		return
	}
	reg := k.cfg.Kernel.Registry()
	_, listed := reg.Lookup(SkillTool)
	switch {
	case len(k.list) > 0 && !listed:
		_ = reg.RegisterDynamic(&searchSkills{k: k})
		_ = reg.RegisterDynamic(&skillTool{k: k})
	case len(k.list) == 0 && listed:
		reg.Unregister(SkillTool)
		reg.Unregister(SearchSkillsTool)
	}
}

// Hint is the system prompt's catalog header while skills are loaded
// ("" when none): the model finds skills with search_skills and runs
// one with Skill; skill bodies are never put in the prompt.
func (k *Skills) Hint() string {
	if len(k.Names()) == 0 {
		return ""
	}
	return "Skills are available: find one with search_skills, then run it with Skill using its skill_name."
}

// Search ranks the skills for query by upstream's scoring: among kinds
// instruction and tool that allow model invocation, +100 when the query
// contains the name, +80 when it contains a tag, then for each query
// token (2 characters or more, trimmed of non-alphanumerics) +20 when the
// name contains it, +15 a tag, +8 the description, +2 the content; an
// empty query scores 1 for all. Zero scores are left out; ties go by
// name.
func (k *Skills) Search(query string, limit int) []Skill {
	k.mu.Lock()
	list := slices.Clone(k.list)
	k.mu.Unlock()
	q := strings.ToLower(strings.TrimSpace(query))
	var tokens []string
	for _, f := range strings.Fields(q) {
		if t := strings.TrimFunc(f, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }); len(t) >= 2 {
			tokens = append(tokens, t)
		}
	}
	type scored struct {
		s Skill
		n int
	}
	var out []scored
	for _, s := range list {
		if (s.Kind != "instruction" && s.Kind != "tool") || s.DisableModelInvocation {
			continue
		}
		n := 0
		if q == "" {
			n = 1
		}
		name, desc, body := strings.ToLower(s.Name), strings.ToLower(s.Description), strings.ToLower(s.Content)
		tags := make([]string, len(s.Tags))
		for i, t := range s.Tags {
			tags[i] = strings.ToLower(t)
		}
		anyTag := func(f func(string) bool) bool { return slices.ContainsFunc(tags, f) }
		if q != "" && strings.Contains(q, name) {
			n += 100
		}
		if anyTag(func(t string) bool { return t != "" && strings.Contains(q, t) }) {
			n += 80
		}
		for _, t := range tokens {
			if strings.Contains(name, t) {
				n += 20
			}
			if anyTag(func(x string) bool { return strings.Contains(x, t) }) {
				n += 15
			}
			if strings.Contains(desc, t) {
				n += 8
			}
			if strings.Contains(body, t) {
				n += 2
			}
		}
		if n > 0 {
			out = append(out, scored{s, n})
		}
	}
	slices.SortStableFunc(out, func(a, b scored) int {
		if a.n != b.n {
			return b.n - a.n
		}
		return strings.Compare(a.s.Name, b.s.Name)
	})
	var res []Skill
	for i := 0; i < len(out) && i < limit; i++ {
		res = append(res, out[i].s)
	}
	return res
}

// searchSkills is the search_skills tool.
type searchSkills struct{ k *Skills }

func (*searchSkills) Name() string { return SearchSkillsTool }
func (*searchSkills) Description() string {
	return "Find skills (packaged instructions for a kind of task) by keywords; then run one with the Skill tool using its skill_name."
}
func (*searchSkills) Parameters() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{"query":{"type":"string","description":"Keywords of the task."},"limit":{"type":"integer","minimum":1,"maximum":20,"description":"At most this many skills, default 5."}},"required":["query"],"additionalProperties":false}`)
}
func (*searchSkills) Capabilities(json.RawMessage) kernel.Capabilities {
	return kernel.ParallelSafeRead(16)
}
func (*searchSkills) Effects(json.RawMessage) kernel.Effects { return kernel.Effects{} }
func (*searchSkills) Touches(json.RawMessage) kernel.Touched { return kernel.Touched{} }

func (t *searchSkills) Execute(_ context.Context, call *kernel.Call) (*kernel.Result, error) {
	var a struct {
		Query string `json:"query"`
		Limit int    `json:"limit"`
	}
	if err := json.Unmarshal(call.Args, &a); err != nil {
		return nil, kernel.InvalidArgument("search_skills: %v", err)
	}
	if a.Limit == 0 {
		a.Limit = 5
	}
	found := t.k.Search(a.Query, a.Limit)
	if len(found) == 0 {
		return kernel.OK("No matching skills found. Continue with the core tools.", map[string]any{"skills": []any{}}), nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Found %d matching skill(s). Invoke one with Skill using its skill_name.", len(found))
	meta := []any{}
	for _, s := range found {
		allowed := "not specified"
		if len(s.AllowedTools) > 0 {
			allowed = strings.Join(s.AllowedTools, ", ")
		}
		fmt.Fprintf(&b, "\n- %s (%s): %s Allowed tools: %s.", s.Name, s.Kind, s.Description, allowed)
		meta = append(meta, map[string]any{"name": s.Name, "description": s.Description, "kind": s.Kind, "tags": orEmpty(s.Tags), "allowed_tools": orEmpty(s.AllowedTools)})
	}
	return kernel.OK(b.String(), map[string]any{"skills": meta}), nil
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// skillTool is the Skill tool: it runs the skill's instructions in a
// child loop whose calls are allowed only by the skill's allowed-tools
// (default deny), on top of the session's policy.
type skillTool struct{ k *Skills }

func (*skillTool) Name() string { return SkillTool }
func (*skillTool) Description() string {
	return "Run a skill found with search_skills: its instructions are carried out by a sub-agent limited to the skill's allowed tools, and its answer is returned."
}
func (*skillTool) Parameters() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{"skill_name":{"type":"string","description":"The skill's name."},"prompt":{"type":"string","description":"What to do with it (default: execute the skill)."}},"required":["skill_name"]}`)
}

// ValidationSchema accepts upstream's aliases (name, skillName, query)
// and wrappers (input, arguments); Execute reads them.
func (*skillTool) ValidationSchema() json.RawMessage                { return json.RawMessage(`{"type":"object"}`) }
func (*skillTool) Capabilities(json.RawMessage) kernel.Capabilities { return kernel.Conservative() }
func (*skillTool) Effects(json.RawMessage) kernel.Effects           { return kernel.Effects{} }
func (*skillTool) Touches(json.RawMessage) kernel.Touched           { return kernel.Touched{} }

// skillArgs reads {skill_name, prompt?} with its aliases and wrappers.
func skillArgs(raw json.RawMessage) (name, prompt string) {
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	for _, w := range []string{"input", "arguments"} {
		if inner, ok := m[w].(map[string]any); ok {
			m = inner
		} else if s, ok := m[w].(string); ok {
			var inner map[string]any
			if json.Unmarshal([]byte(s), &inner) == nil {
				m = inner
			}
		}
	}
	for _, k := range []string{"skill_name", "name", "skillName", "query"} {
		if s, ok := m[k].(string); ok && s != "" {
			name = s
			break
		}
	}
	prompt, _ = m["prompt"].(string)
	return name, prompt
}

func (t *skillTool) Execute(ctx context.Context, call *kernel.Call) (*kernel.Result, error) {
	name, prompt := skillArgs(call.Args)
	if name == "" {
		return nil, kernel.InvalidArgument("Skill: skill_name is required")
	}
	if _, in := ctx.Value(childKey{}).(bool); in {
		return nil, kernel.InvalidArgument("Skill is not available inside a delegated agent or skill")
	}
	s, ok := t.k.get(name)
	if !ok {
		return nil, kernel.Errorf(kernel.ErrNotFound, "Skill '%s' not found", name)
	}
	if s.DisableModelInvocation {
		return nil, kernel.InvalidArgument("Skill '%s' disables model invocation and cannot be invoked via the Skill tool", name)
	}
	if prompt == "" {
		prompt = fmt.Sprintf("Execute the '%s' skill", name)
	}
	policy := kernel.PermissionPolicy{Allow: s.AllowedTools, Deny: delegationDeny, DefaultDecision: kernel.DecisionDeny}
	cctx := kernel.WithNarrowing(context.WithValue(ctx, childKey{}, true), kernel.Narrowing{Label: "skill " + name, Policy: policy, AskDenies: true})
	system := fmt.Sprintf("You are executing the '%s' skill.\n\n%s\n\n%s", name, s.Description, s.Content)
	// The child is offered every tool but the delegation ones: the gate
	// answers a call outside allowed-tools with permission_denied.
	notDelegation := func(n string) bool { return !slices.Contains(delegationDeny, n) }
	cfg := Config{Client: t.k.cfg.Client, Kernel: t.k.cfg.Kernel, Emit: t.k.cfg.Emit, Listening: t.k.cfg.Listening, System: system, Parent: call.ID, Visible: notDelegation}
	res, err := Run(cctx, cfg, "skill-"+strconv.FormatInt(t.k.n.Add(1), 10), prompt, nil)
	if err != nil {
		return nil, err
	}
	return kernel.OK(res.Text, map[string]any{"skill_name": name, "tool_calls_count": res.ToolCallsCount}), nil
}
