package llm

import (
	"bytes"
	"fmt"
	"io"
	"testing"
)

// openAIStream is a recorded-shape OpenAI stream of n text chunks, a tool
// call in fragments, finish and usage: about 190 bytes per event.
func openAIStream(n int) []byte {
	var b bytes.Buffer
	env := `{"id":"chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT","object":"chat.completion.chunk","created":1741570283,"model":"gpt-4.1-nano","system_fingerprint":"fp_b705f0c291","choices":[{"index":0,"delta":%s,"logprobs":null,"finish_reason":%s}],"usage":null}`
	for i := range n {
		fmt.Fprintf(&b, "data: "+env+"\n\n", fmt.Sprintf(`{"content":"word %d "}`, i), "null")
	}
	fmt.Fprintf(&b, "data: "+env+"\n\n", `{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"read","arguments":""}}]}`, "null")
	for range n / 4 {
		fmt.Fprintf(&b, "data: "+env+"\n\n", `{"tool_calls":[{"index":0,"function":{"arguments":"{\"pa"}}]}`, "null")
	}
	fmt.Fprintf(&b, "data: "+env+"\n\n", `{}`, `"tool_calls"`)
	b.WriteString(`data: {"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":9,"completion_tokens":9,"total_tokens":18}}` + "\n\ndata: [DONE]\n\n")
	return b.Bytes()
}

func anthropicStream(n int) []byte {
	var b bytes.Buffer
	b.WriteString("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude\",\"content\":[],\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":9,\"output_tokens\":1}}}\n\n")
	b.WriteString("event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n")
	for i := range n {
		fmt.Fprintf(&b, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"word %d \"}}\n\n", i)
		if i%50 == 0 {
			b.WriteString("event: ping\ndata: {\"type\": \"ping\"}\n\n")
		}
	}
	b.WriteString("event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n")
	b.WriteString("event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":9}}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
	return b.Bytes()
}

// BenchmarkSSE is the SSE framing alone (lines, fields, events).
func BenchmarkSSE(b *testing.B) {
	for _, c := range []struct {
		name string
		data []byte
	}{{"openai", openAIStream(4000)}, {"anthropic", anthropicStream(4000)}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.data)))
			for b.Loop() {
				s := newSSEReader(bytes.NewReader(c.data))
				for {
					if _, _, err := s.next(); err == io.EOF {
						break
					} else if err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

// BenchmarkDecode is framing plus each provider's JSON decoding into chunks.
func BenchmarkDecode(b *testing.B) {
	for _, c := range []struct {
		name string
		data []byte
		dec  func() decoder
	}{
		{"openai", openAIStream(4000), func() decoder { return &openAIDecoder{} }},
		{"anthropic", anthropicStream(4000), func() decoder { return &anthropicDecoder{} }},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.data)))
			var out []Chunk
			for b.Loop() {
				s, d := newSSEReader(bytes.NewReader(c.data)), c.dec()
				for {
					name, data, err := s.next()
					if err == io.EOF {
						break
					}
					if err != nil {
						b.Fatal(err)
					}
					if _, err := d.event(name, data, &out); err != nil {
						b.Fatal(err)
					}
					out = out[:0]
				}
			}
		})
	}
}
