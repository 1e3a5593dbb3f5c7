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

// TestFastCall: the fast decode of a tools/call answer agrees with
// json.Unmarshal wherever it answers, and leaves every other shape to it.
func TestFastCall(t *testing.T) {
	fast := []string{
		`{"result":{"content":[{"type":"text","text":"Echo: m1"}]},"jsonrpc":"2.0","id":7}`,
		` { "jsonrpc" : "2.0" , "id" : 7 , "result" : { "content" : [ { "text" : "a" , "type" : "text" } , {"type":"text","text":"héllo ☃"} ] } } ` + "\n",
		`{"id":7,"result":{"content":[]}}`,
		`{"id":7,"result":{}}`,
		`{"id":7,"result":{"content":[{"type":"text"}]}}`,
	}
	slow := []string{
		`{"result":{"content":[{"type":"text","text":"a\nb"}]},"jsonrpc":"2.0","id":7}`,  // an escape
		`{"result":{"content":[{"type":"image","data":"AA=="}]},"jsonrpc":"2.0","id":7}`, // another key
		`{"result":{"content":[],"isError":true},"jsonrpc":"2.0","id":7}`,                // isError
		`{"result":{"content":[]},"jsonrpc":"2.0","id":8}`,                               // another id
		`{"result":{"content":[]},"jsonrpc":"2.0","id":"7"}`,                             // a string id
		`{"result":{"content":[]},"result":{"content":[]},"id":7}`,                       // a repeated key
		`{"result":{"content":[{"type":"text","type":"text"}]},"id":7}`,                  // a repeated key
		`{"method":"notifications/message","params":{}}`,                                 // a notification
		`{"result":{"content":[]},"id":7} x`,                                             // trailing data
		`{"result":{"content":[{"type":"text","text":"\xff"}]},"id":7}`,                  // invalid UTF-8
		`{"result":{"content":[{"type":"text","text":"a"},]},"id":7}`,                    // a trailing comma
		`{"error":{"code":-32602,"message":"no"},"id":7}`,                                // an error
		`{"result":null,"id":7}`,
		`{"id":7}`,
	}
	for _, s := range fast {
		var r CallResult
		if !fastCall([]byte(s), "7", &r) {
			t.Errorf("%s: not decoded fast", s)
			continue
		}
		var m message[CallResult]
		if err := json.Unmarshal([]byte(s), &m); err != nil || !reflect.DeepEqual(&r, m.Result) {
			t.Errorf("%s: fast %+v, json.Unmarshal %+v (%v)", s, r, m.Result, err)
		}
	}
	for _, s := range slow {
		var r CallResult
		if fastCall([]byte(s), "7", &r) {
			t.Errorf("%s: decoded fast as %+v", s, r)
		}
	}
}
