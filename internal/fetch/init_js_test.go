package fetch

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestInitText: the hand-written init says what json.Marshal of it says,
// for plain and awkward header names and values.
func TestInitText(t *testing.T) {
	type spec struct {
		Method   string            `json:"method"`
		Headers  map[string]string `json:"headers,omitempty"`
		Redirect string            `json:"redirect,omitempty"`
	}
	for _, h := range []map[string]string{nil, {}, {"Accept": "application/json, text/event-stream", "Mcp-Session-Id": "5f0c-1"},
		{"x-q": `say "hi"\`, "x-ctl": "a\tb\x01", "x-u": "héllo ☃", "x-bad": "\xff", "x-html": "<a&b>"}} {
		for _, isManual := range []bool{false, true} {
			want := spec{Method: "POST", Headers: h}
			if isManual {
				want.Redirect = "manual"
			}
			if len(h) == 0 {
				want.Headers = nil
			}
			text := initText("POST", h, map[bool]string{true: manual}[isManual])
			var got spec
			if err := json.Unmarshal([]byte(text), &got); err != nil {
				t.Fatalf("%s: %v", text, err)
			}
			w, _ := json.Marshal(want)
			var wantBack spec
			_ = json.Unmarshal(w, &wantBack)
			if !reflect.DeepEqual(got, wantBack) {
				t.Errorf("initText = %s, want %s", text, w)
			}
		}
	}
}
