package hostapi

import (
	"context"
	"strings"
	"testing"
)

// JSON from JS that encoding/json would silently change or that nests too
// deep is refused at every entry (options, calls, synchronous calls, a
// host's answers) with a coded error naming the problem, and changes
// nothing. JSON.stringify writes a lone surrogate as an escape, which is
// what these documents hold.
func TestJSONThatCannotCrossIntact(t *testing.T) {
	ctx := context.Background()
	deep := func(n int) string { return strings.Repeat(`{"a":`, n) + `1` + strings.Repeat(`}`, n) }
	for _, c := range []struct{ name, opts, want string }{
		{"lone surrogate in a file name", `{"workspace":{"kind":"memory","files":{"a\ud800.txt":"x"}}}`, `lone surrogate (\ud800)`},
		{"lone low surrogate in content", `{"workspace":{"kind":"memory","files":{"a.txt":"x\udc00"}}}`, `lone surrogate (\udc00)`},
		{"lone surrogate in a rule", `{"permissionPolicy":{"deny":["read(path:\ud83d/**)"]}}`, `lone surrogate (\ud83d)`},
		{"deep option", `{"hooks":[{"id":"h","event":"pre_tool_use","matcher":` + deep(99) + `}]}`, `nest more than 100 levels deep; the limit is 100`},
	} {
		t.Run("create: "+c.name, func(t *testing.T) {
			_, err := NewSessions().Create(ctx, []byte(c.opts), nil, Env{})
			equal(t, CodeInvalidOptions, codeOf(err), "%v", err)
			contains(t, err.Error(), c.want)
		})
	}

	s := NewSessions()
	id := create(t, s, `{"workspace":{"kind":"memory","files":{"a.txt":"x\n"}}}`, nil)
	for _, c := range []struct{ name, method, args, want string }{
		{"tool path, high", "tool", `{"name":"write","args":{"file_path":"b\ud800.txt","content":"1"}}`, `lone surrogate (\ud800)`},
		{"tool path, low", "tool", `{"name":"write","args":{"file_path":"b\udc00.txt","content":"2"}}`, `lone surrogate (\udc00)`},
		{"governed path, reversed pair", "governedTool", `{"name":"write","args":{"file_path":"b\udc00\ud800.txt","content":"3"}}`, `lone surrogate (\udc00)`},
		{"writeFile helper", "writeFile", `{"path":"b\uDBFF.txt","content":"4"}`, `lone surrogate (\uDBFF)`},
		{"content", "writeFile", `{"path":"b.txt","content":"half an emoji \ud83d"}`, `lone surrogate (\ud83d)`},
		{"grep pattern", "grep", `{"pattern":"\ud800"}`, `lone surrogate`},
		{"deep args", "tool", `{"name":"read","args":{"file_path":"a.txt","x":` + deep(99) + `}}`, `nest more than 100 levels`},
		{"very deep args", "tool", `{"name":"read","args":` + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + `}`, `nest more than 100 levels`},
	} {
		t.Run("call: "+c.name, func(t *testing.T) {
			_, err := s.Call(ctx, id, c.method, []byte(c.args))
			equal(t, CodeInvalidCall, codeOf(err), "%v", err)
			contains(t, err.Error(), c.want)
			contains(t, err.Error(), c.method+": ")
		})
	}
	// Nothing was written: the only file is the one the session began with.
	r, err := s.Call(ctx, id, "glob", []byte(`{"pattern":"**"}`))
	noErr(t, err)
	equal(t, []string{"a.txt"}, r)
	// 100 levels in all, the envelope included, still cross.
	_, err = s.Call(ctx, id, "tool", []byte(`{"name":"read","args":{"file_path":"a.txt","x":`+deep(98)+`}}`))
	noErr(t, err)
	// U+FFFD itself, sent as UTF-8 or as an escape, is a character like
	// any other: one file.
	for _, p := range []string{"\ufffd.txt", `\ufffd.txt`} {
		_, err := s.Call(ctx, id, "writeFile", []byte(`{"path":"`+p+`","content":"r"}`))
		noErr(t, err)
	}
	r, err = s.Call(ctx, id, "glob", []byte(`{"pattern":"**"}`))
	noErr(t, err)
	equal(t, []string{"a.txt", "\ufffd.txt"}, r)

	t.Run("sync: registerHook", func(t *testing.T) {
		_, err := s.CallSync(id, "registerHook", []byte(`{"id":"h\ud800","event":"pre_tool_use"}`))
		equal(t, CodeInvalidCall, codeOf(err), "%v", err)
		contains(t, err.Error(), "lone surrogate")
		_, err = s.CallSync(id, "registerHook", []byte(`{"id":"h","event":"pre_tool_use","matcher":`+deep(100)+`}`))
		equal(t, CodeInvalidCall, codeOf(err), "%v", err)
		contains(t, err.Error(), "nest more than 100 levels")
	})

	// A hook that rewrites the arguments with a lone surrogate (or too
	// deep) is a failed hook: the call is denied, nothing is written.
	for name, answer := range map[string]string{
		"surrogate": `{"action":"continue","modified":{"file_path":"c\ud800.txt","content":"x"}}`,
		"deep":      `{"action":"continue","modified":{"file_path":"c.txt","content":"x","y":` + deep(100) + `}}`,
	} {
		t.Run("hook answer: "+name, func(t *testing.T) {
			host := func(ctx context.Context, kind string, payload []byte) ([]byte, error) {
				if !strings.Contains(string(payload), `"write"`) {
					return []byte("null"), nil // the glob that checks below
				}
				return []byte(answer), nil
			}
			s := NewSessions()
			id := create(t, s, `{"workspace":{"kind":"memory"},"hooks":[{"id":"h","event":"pre_tool_use","handler":true}]}`, host)
			r, err := s.Call(ctx, id, "tool", []byte(`{"name":"write","args":{"file_path":"c.txt","content":"y"}}`))
			noErr(t, err)
			res := r.(ToolResult)
			equal(t, 1, res.ExitCode, "%+v", res)
			contains(t, res.ErrorKindJSON, "hook_denied")
			g, err := s.Call(ctx, id, "glob", []byte(`{"pattern":"**"}`))
			noErr(t, err)
			equal(t, []string{}, g)
		})
	}
}
