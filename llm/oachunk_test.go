package llm

import (
	"encoding/json"
	"reflect"
	"testing"
)

// oaChunkSeeds are chunks as compatible servers send them, and shapes the
// fast path must hand to encoding/json.
var oaChunkSeeds = []string{
	`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1741570283,"model":"gpt-4.1-nano","system_fingerprint":"fp_b705f0c291","choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}],"usage":null}`,
	`{"choices":[{"index":0,"delta":{"content":"word \"1\" \\ \u00e9\ud83d\ude00 \n"},"finish_reason":null}]}`,
	`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"read","arguments":""}}]}}]}`,
	`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"{\"pa"}}]},"finish_reason":"tool_calls"}]}`,
	`{"choices":[],"usage":{"prompt_tokens":9,"completion_tokens":9,"total_tokens":18,"prompt_tokens_details":{"cached_tokens":4,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0}}}`,
	`{"choices":[{"index":0,"delta":{"reasoning_content":"hm","content":null},"finish_reason":""}]}`,
	`{"choices":[{"delta":{"reasoning":"x","tool_calls":[]}}],"usage":{"prompt_tokens_details":null}}`,
	`{"choices":null,"usage":null,"x":[1,-2.5e+3,true,false,null,{"a":[]}]}`,
	`{"error":{"message":"overloaded","type":"server_error"}}`,
	`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":null,"id":null,"function":null}]}}]}`,
	`{"choices":[null,{"index":1}]}`,
	` {"choices" : [ { "index" : 0 , "delta" : { } } ] } `,
	`{"Choices":[{"index":0}]}`,
	`{"choices":[{"index":0}],"choices":[{"index":1}]}`,
	`{"choices":[{"index":1.0}]}`,
	`{"choices":[{"index":1e2}]}`,
	`{"choices":[{"index":99999999999999999999}]}`,
	`{"choices":[{"delta":{"content":"\ud800"}}]}`,
	`{"choices":[{"delta":{"content":"a` + "\xff" + `"}}]}`,
	`{"choices":[{"delta":{"content":5}}]}`,
	`{"choices":[{"delta":{"content":"x"}}]} trailing`,
	`{"choices":[{"delta":{"content":"x"}}`,
	`{"ſhoices":[]}`,
	`null`,
	`[]`,
	`{"usage":{"total_tokens":-0}}`,
	`{"choices":[{"index":01}]}`,
	`{"a":"\u00zz"}`,
	`{"a":"tab	in"}`,
}

// TestOAChunkFast: the fast path decodes the usual chunks itself, and for
// every seed the result and the error equal encoding/json's.
func TestOAChunkFast(t *testing.T) {
	for _, s := range oaChunkSeeds[:7] {
		var ch oaChunk
		if p := (oaParser{b: []byte(s)}); !p.chunk(&ch) {
			t.Errorf("the fast path passed on %s", s)
		}
	}
	for _, s := range oaChunkSeeds {
		checkOAChunk(t, []byte(s))
	}
}

func checkOAChunk(t *testing.T, data []byte) {
	t.Helper()
	var want oaChunk
	werr := json.Unmarshal(data, &want)
	got, gerr := decodeOAChunk(data)
	if (werr == nil) != (gerr == nil) || werr != nil && werr.Error() != gerr.Error() {
		t.Fatalf("%q: error %v, encoding/json %v", data, gerr, werr)
	}
	if werr == nil && !reflect.DeepEqual(got, want) {
		gj, _ := json.Marshal(got)
		wj, _ := json.Marshal(want)
		t.Fatalf("%q:\n got %s\nwant %s", data, gj, wj)
	}
}

func FuzzOAChunk(f *testing.F) {
	for _, s := range oaChunkSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkOAChunk(t, data) })
}
