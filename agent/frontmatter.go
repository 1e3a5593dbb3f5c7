package agent

import (
	"fmt"
	"strconv"
	"strings"
)

// frontmatter splits a Markdown file into its YAML frontmatter (between
// the first two `---` lines) and its body. The YAML read here is the
// subset agent and skill files use: `key: scalar`, `key: [a, b]`, a key
// followed by `- item` lines, and one level of nested keys (permissions:
// allow/deny). A file without frontmatter is all body.
func frontmatter(text string) (map[string]any, string, error) {
	text = strings.TrimPrefix(strings.ReplaceAll(text, "\r\n", "\n"), "\ufeff")
	if !strings.HasPrefix(text, "---\n") {
		return map[string]any{}, text, nil
	}
	rest := text[4:]
	end := strings.Index(rest, "\n---")
	if end < 0 {
		return nil, "", fmt.Errorf("the frontmatter starting with --- has no closing ---")
	}
	body := rest[end+4:]
	if i := strings.IndexByte(body, '\n'); i >= 0 {
		body = body[i+1:]
	} else {
		body = ""
	}
	m, err := parseYAML(rest[:end])
	return m, strings.TrimSpace(body), err
}

// parseYAML reads the frontmatter subset (see frontmatter).
func parseYAML(src string) (map[string]any, error) {
	root := map[string]any{}
	var key string         // the last top-level key
	var sub map[string]any // its nested map, if any
	var subKey string      // the last nested key
	for n, line := range strings.Split(src, "\n") {
		if strings.TrimSpace(line) == "" || strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		indent := len(line) - len(strings.TrimLeft(line, " \t"))
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "- ") || t == "-" {
			item := scalar(strings.TrimSpace(strings.TrimPrefix(t, "-")))
			switch {
			case sub != nil && subKey != "" && indent > 0:
				l, _ := sub[subKey].([]any)
				sub[subKey] = append(l, item)
			case key != "":
				l, _ := root[key].([]any)
				root[key] = append(l, item)
			default:
				return nil, fmt.Errorf("line %d: a list item with no key", n+1)
			}
			continue
		}
		k, v, ok := strings.Cut(t, ":")
		if !ok {
			return nil, fmt.Errorf("line %d: want key: value, got %q", n+1, t)
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if indent > 0 && key != "" {
			if sub == nil {
				sub = map[string]any{}
				root[key] = sub
			}
			subKey = k
			if v != "" {
				sub[k] = value(v)
			}
			continue
		}
		key, sub, subKey = k, nil, ""
		if v != "" {
			root[k] = value(v)
		}
	}
	return root, nil
}

// value reads an inline value: a flow list [a, b] or a scalar.
func value(v string) any {
	if strings.HasPrefix(v, "[") && strings.HasSuffix(v, "]") {
		out := []any{}
		for _, p := range strings.Split(v[1:len(v)-1], ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, scalar(p))
			}
		}
		return out
	}
	return scalar(v)
}

// scalar reads a quoted or plain scalar; true/false and integers are typed.
func scalar(v string) any {
	if len(v) >= 2 && (v[0] == '"' && v[len(v)-1] == '"' || v[0] == '\'' && v[len(v)-1] == '\'') {
		if v[0] == '"' {
			if s, err := strconv.Unquote(v); err == nil {
				return s
			}
		}
		return v[1 : len(v)-1]
	}
	switch v {
	case "true":
		return true
	case "false":
		return false
	}
	if n, err := strconv.Atoi(v); err == nil {
		return n
	}
	return v
}

// strs reads a string or a list of strings.
func strs(v any) []string {
	switch x := v.(type) {
	case string:
		return []string{x}
	case []any:
		var out []string
		for _, e := range x {
			out = append(out, fmt.Sprint(e))
		}
		return out
	}
	return nil
}
