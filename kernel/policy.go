package kernel

import (
	"encoding/json"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// argStrings returns the top-level string arguments of a call; malformed
// arguments give an empty map (the call is rejected by validation anyway).
func argStrings(args json.RawMessage) map[string]string {
	var m map[string]any
	if json.Unmarshal(args, &m) != nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		if s, ok := v.(string); ok {
			out[k] = s
		}
	}
	return out
}

// pathArg is the path a call acts on: file_path, else path.
func pathArg(a map[string]string) (string, bool) {
	if p, ok := a["file_path"]; ok {
		return p, true
	}
	p, ok := a["path"]
	return p, ok
}

// mainArg is the argument a bare rule pattern is matched against.
func mainArg(a map[string]string) (string, bool) {
	for _, k := range []string{"command", "file_path", "path", "pattern", "url", "query"} {
		if v, ok := a[k]; ok {
			return v, true
		}
	}
	return "", false
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

// matchPath matches a workspace path against a doublestar glob, after the
// lexical clean-up the resolver does (leading "./" and "/" dropped).
func matchPath(pattern, p string) bool {
	p = strings.TrimPrefix(strings.ReplaceAll(p, `\`, "/"), "./")
	ok, err := doublestar.Match(pattern, p)
	return err == nil && ok
}

// rule is one parsed permission rule.
type rule struct {
	tool string
	key  string // "", "path", "command" or an argument name
	pat  string
	args bool // the rule has a parenthesised argument pattern
}

func parseRule(s string) rule {
	s = strings.TrimSpace(s)
	open := strings.IndexByte(s, '(')
	if open < 0 || !strings.HasSuffix(s, ")") {
		return rule{tool: s}
	}
	r := rule{tool: strings.TrimSpace(s[:open]), args: true}
	inner := s[open+1 : len(s)-1]
	if i := strings.IndexByte(inner, ':'); i > 0 && isIdent(inner[:i]) {
		r.key, r.pat = inner[:i], strings.TrimSpace(inner[i+1:])
	} else {
		r.pat = strings.TrimSpace(inner)
	}
	return r
}

func isIdent(s string) bool {
	for _, c := range s {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return s != ""
}

func (r rule) match(name string, a map[string]string) bool {
	if !matchName(r.tool, name) {
		return false
	}
	if !r.args {
		return true
	}
	switch r.key {
	case "path":
		p, ok := pathArg(a)
		return ok && matchPath(r.pat, p)
	case "":
		v, ok := mainArg(a)
		if !ok {
			return false
		}
		if _, isCmd := a["command"]; isCmd {
			return wildcard(r.pat, v)
		}
		return matchPath(r.pat, v) || wildcard(r.pat, v)
	default:
		v, ok := a[r.key]
		if !ok {
			// `bash(git:*)`-style prefixes: the key is not an argument.
			if v, ok := mainArg(a); ok {
				return wildcard(r.key+":"+r.pat, v) || wildcard(r.key+r.pat, v)
			}
			return false
		}
		if r.key == "command" {
			return wildcard(r.pat, v)
		}
		return matchPath(r.pat, v) || wildcard(r.pat, v)
	}
}

// Decide applies the policy to one call: deny > allow > ask, then the
// default decision. A disabled policy allows everything.
func (p PermissionPolicy) Decide(name string, args json.RawMessage) (Decision, string) {
	if !p.Enabled {
		return DecisionAllow, ""
	}
	a := argStrings(args)
	for _, set := range []struct {
		rules []string
		d     Decision
	}{{p.Deny, DecisionDeny}, {p.Allow, DecisionAllow}, {p.Ask, DecisionAsk}} {
		for _, s := range set.rules {
			if parseRule(s).match(name, a) {
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

// Matches reports whether a hook matcher selects a call.
func (m HookMatcher) Matches(name string, args json.RawMessage) bool {
	if m.Tool != "" && !matchName(m.Tool, name) {
		return false
	}
	if m.PathPattern == "" && m.CommandPattern == "" {
		return true
	}
	a := argStrings(args)
	if m.PathPattern != "" {
		p, ok := pathArg(a)
		if !ok || !matchPath(m.PathPattern, p) {
			return false
		}
	}
	if m.CommandPattern != "" {
		c, ok := a["command"]
		if !ok || !wildcard(m.CommandPattern, c) {
			return false
		}
	}
	return true
}
