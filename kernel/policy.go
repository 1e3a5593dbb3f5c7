package kernel

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/a3s-lab/code-wasm/toolargs"
	"github.com/a3s-lab/code-wasm/vpath"
)

// callArgs is what the permission rules and hook matchers see of a call:
// its top-level string arguments, every workspace path it touches, its
// command and the argument a bare rule pattern matches.
type callArgs struct {
	str map[string]string
	// paths are the touched paths as the workspace resolver normalises
	// them.
	paths []string
	// unresolved counts touched paths the resolver refuses (escape,
	// absolute, drive letter, control characters).
	unresolved      int
	cmd, main       string
	hasCmd, hasMain bool
}

// lazyArgs is a call's callArgs, worked out when a rule first needs
// them: most rules name a tool alone (`read`, `@mutating`), and asking a
// tool what a call touches parses its arguments twice (its Touches and
// stringArgs: ~65 µs of an agent's read of a 1 KiB file under js/wasm,
// where the gate decided on `allow: ['read']` alone).
type lazyArgs struct {
	t    Tool // nil: the argument keys alone (parseArgs)
	raw  json.RawMessage
	a    callArgs
	done bool
}

// lazyArgsOf is argsOf(t, args), worked out on first use.
func lazyArgsOf(t Tool, args json.RawMessage) *lazyArgs { return &lazyArgs{t: t, raw: args} }

// lazyParseArgs is parseArgs(args), worked out on first use.
func lazyParseArgs(args json.RawMessage) *lazyArgs { return &lazyArgs{raw: args} }

func (l *lazyArgs) get() callArgs {
	if !l.done {
		if l.t != nil {
			l.a = argsOf(l.t, l.raw)
		} else {
			l.a = parseArgs(l.raw)
		}
		l.done = true
	}
	return l.a
}

// argsOf is what t says one call with args touches (Toucher), or, for a
// tool that says nothing, what the argument keys of toolargs name.
func argsOf(t Tool, args json.RawMessage) (a callArgs) {
	tc, ok := t.(Toucher)
	if !ok {
		return parseArgs(args)
	}
	defer func() {
		if recover() != nil { // a tool that panics is read by the keys
			a = parseArgs(args)
		}
	}()
	th := tc.Touches(args)
	a.str = stringArgs(args)
	for _, p := range th.Paths {
		a.add(p)
	}
	a.cmd, a.hasCmd = th.Command, th.Command != ""
	for _, m := range []string{th.Command, th.Pattern, th.URL} {
		if m != "" {
			a.main, a.hasMain = m, true
			break
		}
	}
	return a
}

// stringArgs is a call's top-level string arguments (nil if malformed).
func stringArgs(args json.RawMessage) map[string]string {
	var m map[string]any
	if json.Unmarshal(args, &m) != nil {
		return nil
	}
	str := make(map[string]string, len(m))
	for k, v := range m {
		if s, ok := v.(string); ok {
			str[k] = s
		}
	}
	return str
}

// add resolves a touched path.
func (a *callArgs) add(p string) {
	if r, err := vpath.Resolve(p); err == nil {
		a.paths = append(a.paths, r)
	} else {
		a.unresolved++
	}
}

// parseArgs reads a call's arguments by the fallback keys of toolargs;
// malformed arguments give an empty view (the call is rejected by
// validation anyway).
func parseArgs(args json.RawMessage) callArgs {
	var m map[string]any
	if json.Unmarshal(args, &m) != nil {
		return callArgs{}
	}
	a := callArgs{str: make(map[string]string, len(m))}
	for k, v := range m {
		if s, ok := v.(string); ok {
			a.str[k] = s
		}
	}
	for _, k := range toolargs.PathKeys {
		if s, ok := a.str[k]; ok {
			a.add(s)
		}
	}
	if fs, ok := m[toolargs.FilesKey].([]any); ok {
		for _, f := range fs {
			if fm, ok := f.(map[string]any); ok {
				if s, ok := fm[toolargs.PathKey].(string); ok {
					a.add(s)
				}
			}
		}
	}
	a.cmd, a.hasCmd = a.str[toolargs.CommandKey]
	for _, k := range toolargs.MainKeys {
		if v, ok := a.str[k]; ok {
			a.main, a.hasMain = v, true
			break
		}
	}
	return a
}

// touches reports whether the call names any workspace path.
func (a callArgs) touches() bool { return len(a.paths)+a.unresolved > 0 }

// pathMatch says how a path pattern meets a call's touched paths. For a
// deny (or ask) rule any touched path matching is enough, and a path the
// resolver refuses counts as matching: a deny rule must not be bypassed
// by a spelling the workspace would refuse anyway. For an allow rule every
// touched path must match, and an unresolvable path never does.
func (a callArgs) pathMatch(f func(string) bool, conservative bool) bool {
	if !a.touches() {
		return false
	}
	if conservative {
		if a.unresolved > 0 {
			return true
		}
		for _, p := range a.paths {
			if f(p) {
				return true
			}
		}
		return false
	}
	if a.unresolved > 0 {
		return false
	}
	for _, p := range a.paths {
		if !f(p) {
			return false
		}
	}
	return true
}

// matchName matches a tool-name glob (`*`, `mcp__*`), case-insensitively.
func matchName(pattern, name string) bool {
	return wildcard(strings.ToLower(pattern), strings.ToLower(name))
}

// wildcard matches s against p where `*` matches any run of characters
// (slashes included) and `?` one character.
func wildcard(p, s string) bool {
	// Iterative glob with backtracking to the last star.
	pi, si, star, mark := 0, 0, -1, 0
	for si < len(s) {
		switch {
		case pi < len(p) && (p[pi] == '?' || p[pi] == s[si]):
			pi++
			si++
		case pi < len(p) && p[pi] == '*':
			star, mark = pi, si
			pi++
		case star >= 0:
			pi = star + 1
			mark++
			si = mark
		default:
			return false
		}
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
}

// cleanPattern puts a path pattern in the resolver's grammar: "\" is left
// alone (a glob escape), a leading "./" is dropped.
func cleanPattern(p string) string {
	p = vpath.NFC(p) // paths are NFC (vpath.Resolve); so are rules from Go
	for strings.HasPrefix(p, "./") {
		p = p[2:]
	}
	return p
}

// matchPath matches a resolved workspace path against a doublestar glob.
func matchPath(pattern, p string) bool {
	ok, err := doublestar.Match(cleanPattern(pattern), p)
	return err == nil && ok
}

// RuleMutating is the rule class of every call that may change
// something (Effects.Mutates): `deny: ['@mutating']` denies every write,
// edit, patch and any other mutating tool, `@mutating(path:secrets/**)`
// those touching secrets/. A class takes an argument pattern as a tool
// name does.
const RuleMutating = "@mutating"

// ContentRuleTool is rule vocabulary: the tool name whose path-scoped deny
// and ask rules govern content, not only calls of that tool.
// `read(path:secrets/**)` keeps what secrets/ holds from every governed
// call (ContentHidden): from calls whose answer depends on it
// (Effects.ReadsContent) and from searches that show it (ContentSearcher).
// It is the one tool name the kernel knows, as a word of the rule
// language.
const ContentRuleTool = "read"

// rule is one parsed permission rule.
type rule struct {
	src  string
	tool string // a tool-name glob, or a class (RuleMutating)
	key  string // "", a path key (toolargs.PathKeys), "command" or an argument name
	pat  string
	args bool // the rule has a parenthesised argument pattern
}

// class reports whether the rule names a class of calls, not tools.
func (r rule) class() bool { return strings.HasPrefix(r.tool, "@") }

// names reports whether the rule selects calls of tool name by its name
// or class. mutates is nil when the call's effects are not known: a class
// rule then matches for deny and ask (conservative) and not for allow.
func (r rule) names(name string, mutates *bool, conservative bool) bool {
	if !r.class() {
		return matchName(r.tool, name)
	}
	if mutates == nil {
		return conservative
	}
	return *mutates
}

// isPathKey reports whether an argument pattern is over touched paths.
func isPathKey(k string) bool { return slices.Contains(toolargs.PathKeys, k) }

// parseRule parses one rule and reports what is wrong with it.
func parseRule(s string) (rule, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return rule{}, errors.New("empty rule")
	}
	r := rule{src: s, tool: s}
	open := strings.IndexByte(s, '(')
	if open >= 0 {
		if !strings.HasSuffix(s, ")") {
			return rule{}, fmt.Errorf("rule %q: unbalanced parenthesis (want tool(pattern) or tool(key:pattern))", s)
		}
		r.tool, r.args = strings.TrimSpace(s[:open]), true
		inner := s[open+1 : len(s)-1]
		if i := strings.IndexByte(inner, ':'); i > 0 && isIdent(inner[:i]) {
			r.key, r.pat = inner[:i], strings.TrimSpace(inner[i+1:])
		} else {
			r.pat = strings.TrimSpace(inner)
		}
		if r.pat == "" && r.key == "" {
			return rule{}, fmt.Errorf("rule %q: empty argument pattern", s)
		}
	} else if strings.ContainsRune(s, ')') {
		return rule{}, fmt.Errorf("rule %q: unbalanced parenthesis", s)
	}
	if r.tool == "" {
		return rule{}, fmt.Errorf("rule %q: no tool name", s)
	}
	if strings.ContainsAny(r.tool, " \t()") {
		return rule{}, fmt.Errorf("rule %q: tool name %q has spaces or parentheses", s, r.tool)
	}
	if r.class() && r.tool != RuleMutating {
		return rule{}, fmt.Errorf("rule %q: unknown rule class %q (the class is %s: every call that may change something)", s, r.tool, RuleMutating)
	}
	// Path patterns must be valid doublestar globs; a bare pattern may be
	// matched against a path too. Command patterns are `*` wildcards, where
	// every string is valid.
	if r.args && r.key != toolargs.CommandKey {
		if !doublestar.ValidatePattern(cleanPattern(r.pat)) {
			return rule{}, fmt.Errorf("rule %q: invalid glob pattern %q", s, r.pat)
		}
	}
	return r, nil
}

func isIdent(s string) bool {
	for _, c := range s {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return s != ""
}

// match applies the rule; conservative is true for deny and ask rules
// (any touched path, unresolvable paths match) and false for allow rules
// (every touched path must match). mutates is as for names.
func (r rule) match(name string, mutates *bool, la *lazyArgs, conservative bool) bool {
	if !r.names(name, mutates, conservative) {
		return false
	}
	if !r.args {
		return true
	}
	a := la.get()
	switch {
	case isPathKey(r.key):
		return a.pathMatch(func(p string) bool { return matchPath(r.pat, p) }, conservative)
	case r.key == "":
		if a.hasCmd {
			return wildcard(r.pat, a.cmd)
		}
		if a.touches() {
			return a.pathMatch(func(p string) bool { return matchPath(r.pat, p) || wildcard(r.pat, p) }, conservative)
		}
		return a.hasMain && (matchPath(r.pat, a.main) || wildcard(r.pat, a.main))
	default:
		v, ok := a.str[r.key]
		if !ok {
			// `bash(git:*)`-style prefixes: the key is not an argument.
			return a.hasMain && (wildcard(r.key+":"+r.pat, a.main) || wildcard(r.key+r.pat, a.main))
		}
		if r.key == toolargs.CommandKey {
			return wildcard(r.pat, v)
		}
		return matchPath(r.pat, v) || wildcard(r.pat, v)
	}
}

// Validate checks every rule and the default decision; the error names
// the offending rule.
func (p PermissionPolicy) Validate() error {
	switch p.DefaultDecision {
	case "", DecisionAllow, DecisionDeny, DecisionAsk:
	default:
		return fmt.Errorf("permission defaultDecision %q: want allow, deny or ask", p.DefaultDecision)
	}
	for _, set := range []struct {
		name  string
		rules []string
	}{{"deny", p.Deny}, {"allow", p.Allow}, {"ask", p.Ask}} {
		for i, s := range set.rules {
			if _, err := parseRule(s); err != nil {
				return fmt.Errorf("permission %s[%d]: %v", set.name, i, err)
			}
		}
	}
	return nil
}

// Decide applies the policy to one call whose effects are not known: a
// class rule (@mutating) matches it for deny and ask and never for allow.
// See DecideCall.
func (p PermissionPolicy) Decide(name string, args json.RawMessage) (Decision, string) {
	d, rule, _ := p.decide(name, lazyParseArgs(args), nil)
	return d, rule
}

// DecideCall applies the policy to one call: deny > allow > ask, then the
// default decision ("" means ask). A disabled policy allows everything.
// Path patterns see every path the call touches (its tool's Touched.Paths,
// or the toolargs keys) as the workspace resolver normalises it: a deny or ask
// rule matches if any touched path matches (or cannot be resolved), an
// allow rule only if all of them match. A rule that does not parse
// (Validate refuses it) is treated as matching for deny and ask and never
// for allow. @mutating rules match when fx.Mutates. When fx.ReadsContent,
// the path-scoped deny and ask rules for read (those ContentHidden
// honours) apply to the touched paths too, and the stricter answer wins:
// such a rule denies the call, or makes an allowed call ask.
func (p PermissionPolicy) DecideCall(name string, args json.RawMessage, fx Effects) (Decision, string) {
	d, rule, _ := p.decide(name, lazyParseArgs(args), &fx)
	return d, rule
}

// decide is DecideCall; fx nil means unknown effects. content reports that
// the answer came from a read rule over the content the call reads.
func (p PermissionPolicy) decide(name string, a *lazyArgs, fx *Effects) (d Decision, rule string, content bool) {
	if p.Disabled {
		return DecisionAllow, "", false
	}
	d, rule = p.byRules(name, fx, a)
	if fx != nil && fx.ReadsContent && d != DecisionDeny {
		for _, set := range []struct {
			rules []string
			d     Decision
		}{{p.Deny, DecisionDeny}, {p.Ask, DecisionAsk}} {
			if set.d == DecisionAsk && d == DecisionAsk {
				break
			}
			for _, src := range set.rules {
				if f := contentRule(src); f != nil && a.get().pathMatch(f, true) {
					return set.d, src, true
				}
			}
		}
	}
	return d, rule, false
}

// byRules is the decision of the rules and the default alone.
func (p PermissionPolicy) byRules(name string, fx *Effects, a *lazyArgs) (Decision, string) {
	var mutates *bool
	if fx != nil {
		mutates = &fx.Mutates
	}
	for _, set := range []struct {
		rules []string
		d     Decision
	}{{p.Deny, DecisionDeny}, {p.Allow, DecisionAllow}, {p.Ask, DecisionAsk}} {
		conservative := set.d != DecisionAllow
		for _, s := range set.rules {
			r, err := parseRule(s)
			if err != nil {
				if t := strings.TrimSpace(strings.SplitN(s, "(", 2)[0]); conservative && (matchName(t, name) || strings.HasPrefix(t, "@")) {
					return set.d, s
				}
				continue
			}
			if r.match(name, mutates, a, conservative) {
				return set.d, s
			}
		}
	}
	switch p.DefaultDecision {
	case DecisionAllow, DecisionDeny:
		return p.DefaultDecision, ""
	default:
		return DecisionAsk, ""
	}
}

// pathPred is the rule's pattern over a touched path when the rule is
// scoped to paths (a path key such as `path:`, or a bare pattern, which matches
// a path as Decide matches it), and nil otherwise.
func (r rule) pathPred() func(string) bool {
	if !r.args || !(isPathKey(r.key) || r.key == "") {
		return nil
	}
	pat := r.pat
	if r.key == "" {
		return func(p string) bool { return matchPath(pat, p) || wildcard(pat, p) }
	}
	return func(p string) bool { return matchPath(pat, p) }
}

// contentRule is the path pattern of src when it is a path-scoped rule
// for read (by name or glob: `read(path:x)`, `*(x)`), and nil otherwise.
// Such deny and ask rules keep the content of what they name from every
// call: read's, grep's, and any tool's that reads content.
func contentRule(src string) func(string) bool {
	r, err := parseRule(src)
	if err != nil || r.class() || !matchName(r.tool, ContentRuleTool) {
		return nil
	}
	return r.pathPred()
}

// ContentHidden reports the paths whose content the policy keeps from
// view: those a path-scoped deny or ask rule for read names, matched as
// Decide matches a path. It is nil when there is none (or the policy is
// disabled). A tool that would return what such a file holds (the text
// it replaced, a diff) leaves it out; one whose answer depends on that
// content is judged by those rules at the gate (Effects.ReadsContent).
func (p PermissionPolicy) ContentHidden() func(string) bool {
	if p.Disabled {
		return nil
	}
	var fs []func(string) bool
	for _, set := range [][]string{p.Deny, p.Ask} {
		for _, src := range set {
			if f := contentRule(src); f != nil {
				fs = append(fs, f)
			}
		}
	}
	if len(fs) == 0 {
		return nil
	}
	return func(path string) bool {
		for _, f := range fs {
			if f(path) {
				return true
			}
		}
		return false
	}
}

// Hidden returns what a call of tool name must not see when it searches a
// directory (grep, glob, ls): a path is hidden when a deny or ask rule
// scoped to paths (a path key such as `path:`, or a bare pattern) for that
// tool, or, when content is true (the tool shows what files hold:
// ContentSearcher), for ContentRuleTool, matches it exactly as
// Decide matches a path the call names. So a search shows what calls
// naming each path could see, no more and no less: `read(*.env)` hides
// config/prod.env from grep (a bare `*` crosses '/', as in Decide) but not
// my.env/readme.txt, and `read(path:secrets/*)` hides secrets/key.txt but
// not secrets/deep/old.txt. tree reports a directory everything under which
// is hidden (a rule ending in "/**" whose prefix matches it), so a search
// need not descend into it. Both are nil when nothing is hidden. Class
// rules (@mutating) do not hide: a search changes nothing.
func (p PermissionPolicy) Hidden(name string, content bool) (path, tree func(string) bool) {
	if p.Disabled {
		return nil, nil
	}
	var exact []func(string) bool
	var prefixes []string
	for _, set := range [][]string{p.Deny, p.Ask} {
		for _, src := range set {
			r, err := parseRule(src)
			if err != nil || r.class() {
				continue
			}
			f := r.pathPred()
			if f == nil || !matchName(r.tool, name) && !(content && matchName(r.tool, ContentRuleTool)) {
				continue
			}
			exact = append(exact, f)
			if pre, ok := strings.CutSuffix(cleanPattern(r.pat), "/**"); ok {
				prefixes = append(prefixes, pre)
			} else if cleanPattern(r.pat) == "**" {
				prefixes = append(prefixes, "**")
			}
		}
	}
	if len(exact) == 0 {
		return nil, nil
	}
	path = func(p string) bool {
		for _, f := range exact {
			if f(p) {
				return true
			}
		}
		return false
	}
	tree = func(dir string) bool {
		for _, pre := range prefixes {
			if pre == "**" || matchPath(pre, dir) {
				return true
			}
		}
		return false
	}
	return path, tree
}

// Validate checks a matcher's patterns.
func (m HookMatcher) Validate() error {
	if m.PathPattern != "" && !doublestar.ValidatePattern(cleanPattern(m.PathPattern)) {
		return fmt.Errorf("matcher pathPattern %q is not a valid glob", m.PathPattern)
	}
	if strings.ContainsAny(m.Tool, "()") {
		return fmt.Errorf("matcher tool %q: want a tool-name glob", m.Tool)
	}
	return nil
}

// Matches reports whether a hook matcher selects a call. PathPattern
// matches if any path the call touches matches, after the resolver's
// normalisation; a path the resolver refuses matches too (a guarding hook
// must see the odd spellings).
func (m HookMatcher) Matches(name string, args json.RawMessage) bool {
	if !m.selects(name) {
		return false
	}
	return !m.needsArgs() || m.matches(parseArgs(args))
}

// selects reports whether the matcher's tool glob selects name.
func (m HookMatcher) selects(name string) bool { return m.Tool == "" || matchName(m.Tool, name) }

// needsArgs reports whether the matcher looks at the call's arguments.
func (m HookMatcher) needsArgs() bool { return m.PathPattern != "" || m.CommandPattern != "" }

// matches applies the matcher's path and command patterns.
func (m HookMatcher) matches(a callArgs) bool {
	if m.PathPattern != "" && !a.pathMatch(func(p string) bool { return matchPath(m.PathPattern, p) }, true) {
		return false
	}
	if m.CommandPattern != "" {
		if !a.hasCmd || !wildcard(m.CommandPattern, a.cmd) {
			return false
		}
	}
	return true
}
