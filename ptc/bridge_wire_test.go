package ptc

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/a3s-lab/code-wasm/kernel"
)

// splitArray and decodeString stand in for json.Unmarshal on every ctx
// call's arguments: they must agree with it on every input, valid or not.
func TestSplitArrayAgreesWithUnmarshal(t *testing.T) {
	seeds := []string{
		`[]`, ` [ ] `, `[""]`, `["read"]`, `["read",{}]`, `["read",null]`, `[ "a" , { "b" : [1, {"c": "]}"}] } , 3 ]`,
		`["x\"y,z", "\\", "\u00e9\ud83d\ude00"]`, `[[],[[]],{}]`, `[1.5e3,-0,true,false,null]`, `["a",{"k":"v,]"}]` + "\n",
		`[1,]`, `[`, `]`, `{}`, `"s"`, `12`, ``, `[1 2]`, `["a"`, `["\x"]`, `[1] [2]`, `null`, "[\"\t\"]",
	}
	f := func(t *testing.T, raw []byte) {
		var want []json.RawMessage
		werr := json.Unmarshal(raw, &want)
		got, gerr := splitArray(raw)
		if (werr == nil) != (gerr == nil) {
			t.Fatalf("%q: Unmarshal err %v, splitArray err %v", raw, werr, gerr)
		}
		if werr != nil {
			return
		}
		if len(got) != len(want) {
			t.Fatalf("%q: %d elements, Unmarshal has %d", raw, len(got), len(want))
		}
		for i := range want {
			if !bytes.Equal(got[i], want[i]) {
				t.Fatalf("%q: element %d is %q, Unmarshal's %q", raw, i, got[i], want[i])
			}
			var ws string
			werr := json.Unmarshal(want[i], &ws)
			isString := werr == nil && want[i][0] == '"'
			var gs string
			if ok := decodeString(got[i], &gs); ok != isString || gs != ws {
				t.Fatalf("%q: decodeString(%q) = %q, %v; Unmarshal's %q, %v", raw, got[i], gs, ok, ws, werr)
			}
		}
	}
	for _, s := range seeds {
		f(t, []byte(s))
	}
	t.Run("fuzz", func(t *testing.T) {
		// Every prefix and every one-byte change of the seeds.
		alphabet := []byte(`[]{}",:\ a0-e.tnul`)
		for _, s := range seeds {
			for i := 0; i <= len(s); i++ {
				f(t, []byte(s[:i]))
				for _, c := range alphabet {
					b := []byte(s)
					if i < len(b) {
						b[i] = c
						f(t, b)
					}
				}
			}
		}
	})
}

func FuzzSplitArray(f *testing.F) {
	f.Add([]byte(`["read",{"file_path":"a"}]`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		var want []json.RawMessage
		werr := json.Unmarshal(raw, &want)
		got, gerr := splitArray(raw)
		if (werr == nil) != (gerr == nil) || len(got) != len(want) {
			t.Fatalf("%q: %v %v / %d %d", raw, werr, gerr, len(got), len(want))
		}
		for i := range want {
			if !bytes.Equal(got[i], want[i]) {
				t.Fatalf("%q: element %d %q vs %q", raw, i, got[i], want[i])
			}
		}
	})
}

// ctxResult writes what the map it replaced wrote, byte for byte.
func TestCtxResultMatchesTheMap(t *testing.T) {
	kinds := []*kernel.ErrorKind{nil, {Type: kernel.ErrInvalidArgument, Message: "bad <arg> & more"}, {Type: kernel.ErrNotFound, Path: "a/b.txt"}}
	metas := []map[string]any{nil, {}, {"range": map[string]any{"returned_lines": 3, "eof": true, "next_offset": nil}, "source_anchors": []string{"a.txt"}, "z": 1.5, "big": 1 << 40}}
	for _, k := range kinds {
		for _, m := range metas {
			for _, tr := range []bool{false, true} {
				for _, text := range []*string{nil, ptrTo("line <1>\n")} {
					meta := decodeMetadata(metadataJSON(m))
					old := map[string]any{"name": "read", "output": "out\u2028é\x01", "exitCode": 1, "metadata": meta}
					if meta == nil {
						old["metadata"] = map[string]any{}
					}
					if tr {
						old["truncated"] = true
					}
					if k != nil {
						old["errorKind"] = k
					}
					if text != nil {
						old["text"] = *text
					}
					want, err := json.Marshal(old)
					if err != nil {
						t.Fatal(err)
					}
					r := ctxResult{Name: "read", Output: "out\u2028é\x01", ExitCode: 1, Metadata: metadataJSON(m), Truncated: tr, ErrorKind: k, Text: text}
					if r.Metadata == nil {
						r.Metadata = json.RawMessage(`{}`)
					}
					got, err := json.Marshal(r)
					if err != nil {
						t.Fatal(err)
					}
					if !bytes.Equal(got, want) {
						t.Fatalf("struct\n%s\nmap\n%s", got, want)
					}
				}
			}
		}
	}
}

func ptrTo[T any](v T) *T { return &v }

// Metadata a Go tool fills with its own types reaches the script as plain
// JSON, as the round trip through a map every call once made wrote it.
func TestMetadataJSONIsPlain(t *testing.T) {
	type S struct {
		Zeta  int    `json:"zeta"`
		Alpha string `json:"alpha"`
	}
	old := func(m map[string]any) []byte {
		b, _ := json.Marshal(m)
		var v map[string]any
		_ = json.Unmarshal(b, &v)
		b, _ = json.Marshal(v)
		return b
	}
	for _, m := range []map[string]any{
		{"s": S{Zeta: 1, Alpha: "a"}},
		{"raw": json.RawMessage(`{"b":1,"a":2,"b":3}`)},
		{"n": json.Number("1.50"), "deep": []any{map[string]any{"p": &S{Alpha: "<x>"}}}},
		{"plain": map[string]any{"z": 1, "a": []any{"x", 2.5, nil, true}}, "paths": []string{"b", "a"}},
	} {
		if got, want := metadataJSON(m), old(m); !bytes.Equal(got, want) {
			t.Errorf("%v: %s, want %s", m, got, want)
		}
	}
}
