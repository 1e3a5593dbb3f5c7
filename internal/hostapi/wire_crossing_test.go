package hostapi

import (
	"context"
	"encoding/json"
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

// Unicode normalisation (issue 11 finding 10c): paths are put in NFC by
// the resolver and rules by the session, so a rule covers both spellings
// of a name whichever one it and the call use, and both spellings are one
// file.
func TestUnicodeSpellingsAreOneFileForEveryRule(t *testing.T) {
	ctx := context.Background()
	const nfc, nfd = "café", "cafe\u0301"
	for _, rule := range []string{nfc, nfd} {
		for _, path := range []string{nfc, nfd} {
			t.Run("rule "+quoteRunes(rule)+" path "+quoteRunes(path), func(t *testing.T) {
				s := NewSessions()
				opts, _ := json.Marshal(map[string]any{
					"workspace":        map[string]any{"kind": "memory", "files": map[string]string{nfc + "/secret.txt": "s3cret\n", "open.txt": "x\n"}},
					"permissionPolicy": map[string]any{"deny": []string{"read(path:" + rule + "/**)", "write(path:" + rule + "/**)"}, "allow": []string{"*"}},
				})
				id := create(t, s, string(opts), nil)
				for _, c := range []struct{ name, args string }{
					{"read", `{"file_path":"` + path + `/secret.txt"}`},
					{"write", `{"file_path":"` + path + `/new.txt","content":"x"}`},
					{"read", `{"files":[{"path":"open.txt"},{"path":"` + path + `/secret.txt"}]}`},
				} {
					r, err := s.Call(ctx, id, "governedTool", []byte(`{"name":"`+c.name+`","args":`+c.args+`}`))
					noErr(t, err)
					res := r.(ToolResult)
					equal(t, 1, res.ExitCode, "%s %s: %+v", c.name, c.args, res)
					contains(t, res.ErrorKindJSON, "hook_denied")
					notContains(t, res.Output, "s3cret")
				}
				// A search sees the protected file under neither spelling.
				for _, args := range []string{`{"pattern":"s3c.et"}`, `{"pattern":"s3c.et","path":"` + path + `"}`} {
					r, err := s.Call(ctx, id, "governedTool", []byte(`{"name":"grep","args":`+args+`}`))
					noErr(t, err)
					notContains(t, r.(ToolResult).Output, "secret.txt", args)
					notContains(t, r.(ToolResult).Output, "s3cret", args)
				}
			})
		}
	}
	t.Run("two spellings, one file", func(t *testing.T) {
		s := NewSessions()
		id := create(t, s, `{"workspace":{"kind":"memory"}}`, nil)
		for i, p := range []string{nfd + ".txt", nfc + ".txt"} {
			_, err := s.Call(ctx, id, "writeFile", []byte(`{"path":"`+p+`","content":"v`+string(rune('1'+i))+`"}`))
			noErr(t, err)
		}
		r, err := s.Call(ctx, id, "glob", []byte(`{"pattern":"**"}`))
		noErr(t, err)
		equal(t, []string{nfc + ".txt"}, r)
		for _, pat := range []string{nfd + "*", nfc + "*", "caf?.txt"} {
			r, err := s.Call(ctx, id, "glob", []byte(`{"pattern":"`+pat+`"}`))
			noErr(t, err)
			equal(t, []string{nfc + ".txt"}, r, "glob %q", pat)
		}
		out, err := s.Call(ctx, id, "readFile", []byte(`{"path":"`+nfd+`.txt"}`))
		noErr(t, err)
		contains(t, out, "v2")
	})
}

func quoteRunes(s string) string {
	if s == "café" {
		return "NFC"
	}
	return "NFD"
}

// One call from JS carries at most MaxCallBytes of JSON: a larger one is
// refused before it is decoded (a 100 MB write took 13–31 s and over a
// gigabyte under Node), as is a host answer past it.
func TestCallSizeBound(t *testing.T) {
	ctx := context.Background()
	s := NewSessions()
	id := create(t, s, `{"workspace":{"kind":"memory","files":{"a.txt":"x\n"}}}`, nil)
	big := strings.Repeat("y", MaxCallBytes)
	for _, c := range []struct{ method, args string }{
		{"writeFile", `{"path":"b.txt","content":"` + big + `"}`},
		{"tool", `{"name":"write","args":{"file_path":"b.txt","content":"` + big + `"}}`},
		{"tool", `{"name":"batch","args":{"invocations":[{"tool":"write","args":{"file_path":"b.txt","content":"` + big[:MaxCallBytes/2] + `"}},{"tool":"write","args":{"file_path":"c.txt","content":"` + big[:MaxCallBytes/2] + `"}}]}}`},
		{"patchFile", `{"path":"a.txt","diff":"` + big + `"}`},
	} {
		_, err := s.Call(ctx, id, c.method, []byte(c.args))
		equal(t, CodeInvalidCall, codeOf(err), "%s: %v", c.method, err)
		contains(t, err.Error(), "bytes of JSON; the limit is 16777216 bytes (16 MiB) per call")
	}
	r, err := s.Call(ctx, id, "glob", []byte(`{"pattern":"**"}`))
	noErr(t, err)
	equal(t, []string{"a.txt"}, r)
	// Just inside the bound, writeFile passes its content on as JSON text.
	content := `line \"one\"\n` + strings.Repeat("z", 1<<20)
	_, err = s.Call(ctx, id, "writeFile", []byte(`{"path":"b.txt","content":"`+content+`"}`))
	noErr(t, err)
	out, err := s.Call(ctx, id, "readFile", []byte(`{"path":"b.txt","limit":1}`))
	noErr(t, err)
	contains(t, out, `line "one"`)

	host := func(ctx context.Context, kind string, payload []byte) ([]byte, error) {
		return []byte(`{"action":"continue","modified":{"file_path":"c.txt","content":"` + big + `"}}`), nil
	}
	s2 := NewSessions()
	id2 := create(t, s2, `{"workspace":{"kind":"memory"},"hooks":[{"id":"h","event":"pre_tool_use","handler":true,"matcher":{"tool":"write"}}]}`, host)
	r, err = s2.Call(ctx, id2, "tool", []byte(`{"name":"write","args":{"file_path":"c.txt","content":"y"}}`))
	noErr(t, err)
	contains(t, r.(ToolResult).ErrorKindJSON, "hook_denied")
	contains(t, r.(ToolResult).Output, "the limit is 16777216 bytes")
}
