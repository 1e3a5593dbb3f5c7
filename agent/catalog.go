package agent

import (
	"context"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/a3s-lab/code-wasm/kernel"
	"github.com/a3s-lab/code-wasm/workspace"
)

// Def is one agent of the delegation catalog: what `task` and
// `parallel_task` may start.
type Def struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// Prompt is the child's system prompt.
	Prompt string `json:"prompt"`
	// MaxSteps bounds the child's tool rounds (0: DefaultMaxToolRounds).
	MaxSteps int `json:"maxSteps,omitempty"`
	// Permissions narrow the session's policy inside the child; the
	// delegation tools are always denied there.
	Permissions kernel.PermissionPolicy `json:"permissions"`
	// ConfirmationInheritance is what the child's own ask means:
	// "auto_approve" (the session's policy decides) or "deny". "" is
	// auto_approve when the agent declares permissions, else deny
	// (upstream's default).
	ConfirmationInheritance string `json:"confirmationInheritance,omitempty"`
	// Hidden agents are left out of the catalog the model reads.
	Hidden bool `json:"hidden,omitempty"`
}

// Delegation tool names.
const (
	TaskTool         = "task"
	ParallelTaskTool = "parallel_task"
)

// delegationDeny are the tools no child may call: no recursive fan-out.
var delegationDeny = []string{TaskTool, ParallelTaskTool, SkillTool, SearchSkillsTool}

var (
	readTools   = []string{"read", "grep", "glob", "ls"}
	lookBash    = []string{"bash(command:ls)", "bash(command:ls *)", "bash(command:cat *)", "bash(command:head *)", "bash(command:tail *)", "bash(command:find *)", "bash(command:wc *)"}
	noWrite     = []string{"write", "edit", "patch", "download"}
	verifyAllow = append(slices.Clone(readTools), "bash", "web_fetch", "web_search", "update_plan")
)

// Builtins is the built-in catalog: explore, general, plan, verification,
// review (research §2.3: upstream's step limits and policies, "search"
// read as grep and glob; the prompts are ours).
func Builtins() []Def {
	return []Def{
		{Name: "explore", MaxSteps: 20,
			Description: "Fast read-only exploration of the workspace (and the web when available): find files, read code, answer where and how something is done.",
			Prompt:      "You explore a codebase for another agent. Use the read-only tools to find the files and lines that answer the request, then reply with a short, factual report: the paths, what each holds that matters, and anything you could not find. Do not change anything.",
			Permissions: kernel.PermissionPolicy{Allow: concat(readTools, []string{"web_fetch", "web_search", "update_plan"}, lookBash),
				Deny: concat(noWrite, []string{"bash(command:rm *)", "bash(command:mv *)", "bash(command:cp *)"}), DefaultDecision: kernel.DecisionDeny}},
		{Name: "general", MaxSteps: 50,
			Description: "Multi-step execution: read, write and edit files, run commands, use git; for a self-contained piece of work.",
			Prompt:      "You carry out one self-contained piece of work for another agent. Read what you need, make the changes, run the commands that check them, and reply with what you did, what you verified and what remains.",
			Permissions: kernel.PermissionPolicy{Allow: concat(readTools, []string{"write", "edit", "patch", "bash", "web_fetch", "web_search", "download", "git", "batch", "generate_object"}),
				DefaultDecision: kernel.DecisionAsk}},
		{Name: "plan", MaxSteps: 30,
			Description: "Read-only planning: study the code and produce a step-by-step plan without changing anything.",
			Prompt:      "You plan a change for another agent. Read the relevant code without changing anything, then reply with a concrete plan: the steps in order, the files each touches, the risks and how to check the result.",
			Permissions: kernel.PermissionPolicy{Allow: concat(readTools, []string{"update_plan"}), Deny: concat(noWrite, []string{"bash"}), DefaultDecision: kernel.DecisionDeny}},
		{Name: "verification", MaxSteps: 30,
			Description: "Adversarial validation: run real checks, reproduce the claim, look for regressions; never edits files.",
			Prompt:      "You check another agent's claim adversarially. Run real checks (tests, commands, reproductions), look for the case that breaks it, and reply with what passed, what failed, the evidence for each, and what you could not check. Do not edit files.",
			Permissions: kernel.PermissionPolicy{Allow: verifyAllow, Deny: noWrite, DefaultDecision: kernel.DecisionDeny}},
		{Name: "review", MaxSteps: 25,
			Description: "Code review: correctness, regressions, security and maintainability of a change; never edits files.",
			Prompt:      "You review a change for another agent. Read it and what it touches, judge correctness, regressions, security and maintainability, and reply with findings ordered by severity, each with its file and line and a concrete fix. Do not edit files.",
			Permissions: kernel.PermissionPolicy{Allow: verifyAllow, Deny: noWrite, DefaultDecision: kernel.DecisionDeny}},
	}
}

func concat(xs ...[]string) []string { return slices.Concat(xs...) }

// aliases map upstream's other spellings to a built-in name.
var aliases = map[string]string{
	"general-purpose": "general", "general_purpose": "general",
	"verify": "verification", "verifier": "verification",
	"code-review": "review", "reviewer": "review",
}

// Catalog is the agents a session may delegate to, in order.
type Catalog struct{ defs []Def }

// NewCatalog is the built-ins followed by extra; an extra agent with a
// built-in's name replaces it. A def without a name or prompt, or with a
// bad rule, is refused naming it.
func NewCatalog(extra []Def) (*Catalog, error) {
	c := &Catalog{defs: Builtins()}
	for i, d := range extra {
		if err := c.add(d); err != nil {
			return nil, fmt.Errorf("agents[%d]: %w", i, err)
		}
	}
	return c, nil
}

func (c *Catalog) add(d Def) error {
	if d.Name == "" || strings.ContainsAny(d.Name, " \t\n") {
		return fmt.Errorf("an agent needs a name without spaces, got %q", d.Name)
	}
	if d.Prompt == "" {
		return fmt.Errorf("agent %s has no prompt", d.Name)
	}
	if err := d.Permissions.Validate(); err != nil {
		return fmt.Errorf("agent %s: %w", d.Name, err)
	}
	switch d.ConfirmationInheritance {
	case "", "auto_approve", "deny":
	default:
		return fmt.Errorf("agent %s: confirmationInheritance must be auto_approve or deny, got %q", d.Name, d.ConfirmationInheritance)
	}
	if d.MaxSteps < 0 {
		return fmt.Errorf("agent %s: maxSteps must be >= 0", d.Name)
	}
	if i := slices.IndexFunc(c.defs, func(x Def) bool { return x.Name == d.Name }); i >= 0 {
		c.defs[i] = d
		return nil
	}
	c.defs = append(c.defs, d)
	return nil
}

// Lookup finds an agent by name or alias.
func (c *Catalog) Lookup(name string) (Def, bool) {
	if a, ok := aliases[name]; ok {
		name = a
	}
	i := slices.IndexFunc(c.defs, func(d Def) bool { return d.Name == name })
	if i < 0 {
		return Def{}, false
	}
	return c.defs[i], true
}

// Visible are the agents the model may name, in order.
func (c *Catalog) Visible() []Def {
	return slices.DeleteFunc(slices.Clone(c.defs), func(d Def) bool { return d.Hidden })
}

// Names are the visible agents' names.
func (c *Catalog) Names() []string {
	var out []string
	for _, d := range c.Visible() {
		out = append(out, d.Name)
	}
	return out
}

// describe is the catalog as the `agent` field's description embeds it.
func (c *Catalog) describe() string {
	var b strings.Builder
	b.WriteString("The agent to run. Available agents:")
	for _, d := range c.Visible() {
		fmt.Fprintf(&b, "\n- %s: %s", d.Name, d.Description)
	}
	return b.String()
}

// ParseAgentFile reads a custom agent from a `.md` file with YAML
// frontmatter (the body is the prompt) or a `.yaml`/`.yml` file; the name
// defaults to the file's stem. Keys: name, description, hidden,
// max_steps, permissions {allow, deny, ask, default}, prompt,
// confirmation_inheritance.
func ParseAgentFile(file, text string) (Def, error) {
	ext := path.Ext(file)
	var m map[string]any
	var body string
	var err error
	if ext == ".md" {
		m, body, err = frontmatter(text)
	} else {
		m, err = parseYAML(text)
	}
	if err != nil {
		return Def{}, fmt.Errorf("%s: %w", file, err)
	}
	d := Def{Name: strings.TrimSuffix(path.Base(file), ext), Prompt: body}
	for k, v := range m {
		switch k {
		case "name":
			d.Name = fmt.Sprint(v)
		case "description":
			d.Description = fmt.Sprint(v)
		case "prompt":
			d.Prompt = fmt.Sprint(v)
		case "hidden":
			d.Hidden = v == true
		case "max_steps":
			n, ok := v.(int)
			if !ok {
				return Def{}, fmt.Errorf("%s: max_steps must be an integer", file)
			}
			d.MaxSteps = n
		case "confirmation_inheritance":
			d.ConfirmationInheritance = fmt.Sprint(v)
		case "permissions":
			p, ok := v.(map[string]any)
			if !ok {
				return Def{}, fmt.Errorf("%s: permissions must be a map of allow/deny/ask", file)
			}
			d.Permissions = kernel.PermissionPolicy{Allow: strs(p["allow"]), Deny: strs(p["deny"]), Ask: strs(p["ask"]), DefaultDecision: kernel.DecisionDeny}
			if dd, ok := p["default"].(string); ok {
				d.Permissions.DefaultDecision = kernel.Decision(dd)
			}
		}
	}
	return d, nil
}

// LoadAgents reads the custom agents of dir (`.md`, `.yaml`, `.yml`,
// sorted) through the workspace. A missing dir is no agents; a file that
// does not parse is skipped and named in warnings.
func LoadAgents(ctx context.Context, ws *workspace.Workspace, dir string) (defs []Def, warnings []string) {
	entries, err := ws.ReadDir(ctx, dir)
	if err != nil {
		return nil, nil
	}
	for _, e := range entries {
		ext := path.Ext(e.Name)
		if e.Kind != workspace.KindFile || (ext != ".md" && ext != ".yaml" && ext != ".yml") {
			continue
		}
		p := path.Join(dir, e.Name)
		b, _, err := ws.ReadFile(ctx, p)
		if err == nil {
			var d Def
			if d, err = ParseAgentFile(p, string(b)); err == nil {
				defs = append(defs, d)
				continue
			}
		}
		warnings = append(warnings, fmt.Sprintf("agent file %s skipped: %v", p, err))
	}
	return defs, warnings
}
