package mcp

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestEncodeRequest: the hand-written tools/call says what json.Marshal of
// the request says, for plain names and for names it leaves to
// json.Marshal, and refuses arguments that are not JSON.
func TestEncodeRequest(t *testing.T) {
	for _, name := range []string{"echo", "get-sum", `we"ird`, `back\slash`, "a<b&c>", "ünï", "tab\there"} {
		for _, args := range []string{`{"message":"m1"}`, `{ "a" : [1, 2.5e3, null, "\u00e9\n"] }`, `{}`} {
			got, err := encodeRequest("tools/call", 42, callParams{Name: name, Arguments: json.RawMessage(args)})
			if err != nil {
				t.Fatalf("%q %s: %v", name, args, err)
			}
			want, _ := json.Marshal(request{JSONRPC: "2.0", ID: 42, Method: "tools/call", Params: callParams{Name: name, Arguments: json.RawMessage(args)}})
			var g, w any
			if err := json.Unmarshal(got, &g); err != nil {
				t.Fatalf("%q %s: %s is not JSON: %v", name, args, got, err)
			}
			_ = json.Unmarshal(want, &w)
			if !reflect.DeepEqual(g, w) {
				t.Errorf("%q %s: got %s, want %s", name, args, got, want)
			}
		}
	}
	for _, args := range []string{`{"a":`, `{} {}`, `nope`, ``} {
		if b, err := encodeRequest("tools/call", 1, callParams{Name: "echo", Arguments: json.RawMessage(args)}); err == nil {
			t.Errorf("arguments %q: no error, sent %s", args, b)
		}
	}
}
