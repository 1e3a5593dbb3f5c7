package jsoncheck

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf16"
)

func TestCheck(t *testing.T) {
	deep := func(n int, open, close string) string { return strings.Repeat(open, n) + strings.Repeat(close, n) }
	ok := []string{
		`{}`, `{"a":"x"}`, `"\ud83d\ude00"`, `"\uD83D\uDE00 and \u00e9 and \\ud800 (escaped backslash)"`,
		`["\"", "\\", "\\\"", "{[", "]}"]`, `{"a":"\ud7ff\ue000\uffff"}`, `"\u0041\uD800\uDC00\u0042"`,
		deep(MaxDepth, "[", "]"), `{"a":` + deep(MaxDepth-1, "[", "]") + `}`,
		`"` + strings.Repeat(`x\n`, 1000) + `"`, "\"" + strings.Repeat("é", 100) + "\"",
	}
	for _, s := range ok {
		if err := Check([]byte(s)); err != nil {
			t.Errorf("Check(%.60q): %v", s, err)
		}
	}
	bad := []struct{ json, want string }{
		{`"\ud800"`, `lone surrogate (\ud800)`},
		{`"a\udc00"`, `lone surrogate (\udc00)`},
		{`{"k":"x\uD800y"}`, `lone surrogate (\uD800)`},
		{`{"\ud800":1}`, `lone surrogate (\ud800)`},
		{`"\ud800\ud800\udc00"`, `would reach Go as U+FFFD (at byte 1 `},
		{`"\ud800\n"`, `lone surrogate`},
		{`"\ud800\u0041"`, `lone surrogate`},
		{`"\udc00\ud800"`, `lone surrogate (\udc00)`},
		{`["ok", "x\ud83d"]`, `lone surrogate (\ud83d)`},
		{deep(MaxDepth+1, "[", "]"), "nest more than 100 levels deep; the limit is 100"},
		{`{"a":` + deep(MaxDepth, "{\"b\":", "}") + `}`, "nest more than 100 levels"},
		{deep(100000, "[", "]"), "nest more than 100 levels"},
	}
	for _, c := range bad {
		err := Check([]byte(c.json))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Check(%.60q): %v; want an error saying %q", c.json, err, c.want)
		}
	}
}

// Every string JSON.stringify can write (its escapes for lone surrogates
// included) passes exactly when it is well-formed UTF-16: checked over all
// one- and two-unit sequences around the surrogate ranges, written as JS
// writes them (escapes for lone surrogates, UTF-8 for the rest).
func TestCheckAgreesWithWellFormedness(t *testing.T) {
	units := []uint16{'a', '"', '\\', 0xD7FF, 0xD800, 0xDBFF, 0xDC00, 0xDFFF, 0xE000}
	var seqs [][]uint16
	for _, a := range units {
		seqs = append(seqs, []uint16{a})
		for _, b := range units {
			seqs = append(seqs, []uint16{a, b})
			for _, c := range units {
				seqs = append(seqs, []uint16{a, b, c})
			}
		}
	}
	for _, u := range seqs {
		wellFormed := true
		var b strings.Builder
		b.WriteByte('"')
		for i := 0; i < len(u); i++ {
			switch c := u[i]; {
			case c >= 0xD800 && c <= 0xDBFF && i+1 < len(u) && u[i+1] >= 0xDC00 && u[i+1] <= 0xDFFF:
				b.WriteString(string(utf16.Decode(u[i : i+2])))
				i++
			case c >= 0xD800 && c <= 0xDFFF:
				wellFormed = false
				b.WriteString(`\u` + strings.ToLower(strings.TrimPrefix(jsonHex(c), "0x")))
			default:
				q, _ := json.Marshal(string(rune(c)))
				b.Write(q[1 : len(q)-1])
			}
		}
		b.WriteByte('"')
		if got := Check([]byte(b.String())) == nil; got != wellFormed {
			t.Errorf("%x as %s: Check passes %v, well-formed %v", u, b.String(), got, wellFormed)
		}
	}
}

func jsonHex(c uint16) string {
	const h = "0123456789abcdef"
	return string([]byte{h[c>>12], h[c>>8&15], h[c>>4&15], h[c&15]})
}
