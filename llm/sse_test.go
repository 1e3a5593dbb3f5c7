package llm

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func events(t testing.TB, r io.Reader) ([]string, error) {
	t.Helper()
	s := newSSEReader(r)
	var out []string
	for {
		ev, data, err := s.next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, fmt.Sprintf("%s|%s", ev, data))
	}
}

func TestSSE(t *testing.T) {
	for _, c := range []struct {
		name, in string
		want     []string
	}{
		{"data only", "data: {\"a\":1}\n\ndata: [DONE]\n\n", []string{`|{"a":1}`, "|[DONE]"}},
		{"named", "event: ping\ndata: {}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n", []string{"ping|{}", `message_stop|{"type":"message_stop"}`}},
		{"comments and keep-alives", ": keep-alive\n\n:\ndata: x\n: mid\n\n", []string{"|x"}},
		{"crlf", "event: e\r\ndata: a\r\n\r\ndata: b\r\n\r\n", []string{"e|a", "|b"}},
		{"lone cr", "data: a\rdata: b\r\rdata: c\r\r", []string{"|a\nb", "|c"}},
		{"multi-line data", "data: a\ndata:b\ndata:  c\n\n", []string{"|a\nb\n c"}},
		{"no space after colon", "data:x\n\n", []string{"|x"}},
		{"field without colon", "data\n\n", []string{"|"}},
		{"event name reset by an empty event", "event: x\n\ndata: y\n\n", []string{"|y"}},
		{"id and retry ignored", "id: 7\nretry: 100\ndata: z\n\n", []string{"|z"}},
		{"last event without its blank line", "data: a\n\ndata: b\n", []string{"|a", "|b"}},
		{"truncated last line dropped", "data: a\n\ndata: {\"x", []string{"|a"}},
		{"empty stream", "", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, r := range []io.Reader{strings.NewReader(c.in), iotest.OneByteReader(strings.NewReader(c.in))} {
				got, err := events(t, r)
				if err != nil {
					t.Fatal(err)
				}
				if fmt.Sprint(got) != fmt.Sprint(c.want) {
					t.Fatalf("got %q, want %q", got, c.want)
				}
			}
		})
	}
}

func TestSSELongLineAndError(t *testing.T) {
	long := strings.Repeat("x", 200<<10)
	got, err := events(t, strings.NewReader("data: "+long+"\n\n"))
	if err != nil || len(got) != 1 || got[0] != "|"+long {
		t.Fatalf("long line: %v, %d events", err, len(got))
	}
	boom := errors.New("boom")
	_, err = events(t, io.MultiReader(strings.NewReader("data: a\n"), iotest.ErrReader(boom)))
	if !errors.Is(err, boom) {
		t.Fatalf("reader error: got %v", err)
	}
}

// FuzzSSE: however the bytes are split into reads, the events are the same.
func FuzzSSE(f *testing.F) {
	f.Add("event: a\r\ndata: 1\r\n\r\n: c\ndata: 2\rdata: 3\r\r")
	f.Fuzz(func(t *testing.T, in string) {
		whole, err1 := events(t, strings.NewReader(in))
		split, err2 := events(t, iotest.HalfReader(strings.NewReader(in)))
		one, err3 := events(t, iotest.OneByteReader(strings.NewReader(in)))
		if err1 != nil || err2 != nil || err3 != nil {
			t.Fatal(err1, err2, err3)
		}
		if fmt.Sprint(whole) != fmt.Sprint(split) || fmt.Sprint(whole) != fmt.Sprint(one) {
			t.Fatalf("split changed events: %q / %q / %q", whole, split, one)
		}
	})
}

// FuzzDecoders: whatever a server sends, the decoders never panic and the
// chunks they emit before an error are in the order Turn checks.
func FuzzDecoders(f *testing.F) {
	f.Add(string(openAIStream(3)), false)
	f.Add(string(anthropicStream(3)), true)
	f.Add("event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":2,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"n\"}}\n\nevent: content_block_stop\ndata: {\"index\":2}\n\nevent: content_block_stop\ndata: {\"index\":2}\n\n", true)
	f.Add("data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":3,\"function\":{\"arguments\":\"{\"}},{\"index\":1,\"id\":\"a\",\"function\":{\"name\":\"x\"}}]},\"finish_reason\":\"stop\"}]}\n\n", false)
	f.Fuzz(func(t *testing.T, in string, anthropic bool) {
		var d decoder = &openAIDecoder{}
		if anthropic {
			d = &anthropicDecoder{}
		}
		s := newSSEReader(strings.NewReader(in))
		var tr Turn
		var out []Chunk
		for {
			name, data, err := s.next()
			done := false
			if err == io.EOF {
				err, done = d.eof(&out), true
			} else if err == nil {
				done, err = d.event(name, data, &out)
			}
			for _, c := range out {
				if aerr := tr.Add(c); aerr != nil {
					t.Fatalf("decoder emitted out of order: %v (chunks %+v)", aerr, out)
				}
			}
			out = out[:0]
			if err != nil || done {
				return
			}
		}
	})
}
