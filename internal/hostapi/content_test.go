package hostapi

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// The content methods through CallBytes: bytes beside the JSON both ways,
// pages with a cursor, the check pass, and clear refusals (through Call, a
// missing byte argument, sizes that do not add up, files given twice).
func TestContentMethods(t *testing.T) {
	ctx := context.Background()
	s := NewSessions()
	files := SeedChunk{FileChunk: FileChunk{Paths: []string{"seed.bin"}, Sizes: []int{3}}, Data: []byte{0, 1, 2}}
	id, err := s.Create(ctx, []byte(`{"workspace":{"kind":"memory","files":{"seed.txt":"s\n"}}}`), nil, Env{Files: []SeedChunk{files}})
	noErr(t, err)
	call := func(method, args string, in []byte) (any, error) {
		return s.CallBytes(ctx, id, method, []byte(args), in)
	}

	v, err := call("readBytes", `{"path":"seed.bin"}`, nil)
	noErr(t, err)
	if b := v.(*Bytes); !bytes.Equal(b.Data, []byte{0, 1, 2}) || b.Meta != nil {
		t.Fatalf("readBytes: %+v", b)
	}
	_, err = call("importFiles", `{"check":true,"paths":["a.txt","../b"]}`, nil)
	if err == nil || err.(*Error).Code != CodeToolFailed || !strings.Contains(err.Error(), `files["../b"]`) {
		t.Fatalf("check of a bad path: %v", err)
	}
	_, err = call("importFiles", `{"paths":["a.txt","b/c.bin"],"sizes":[2,3]}`, []byte("hi\xff\x00z"))
	noErr(t, err)
	_, err = call("importFiles", `{"paths":["x"],"sizes":[5]}`, []byte("abc"))
	if err == nil || !strings.Contains(err.Error(), "sizes[0] = 5 runs past the 3 bytes given") {
		t.Fatalf("sizes past the data: %v", err)
	}
	v, err = call("writeBytes", `{"path":"w.bin"}`, []byte{0xfe})
	noErr(t, err)
	if r := v.(ToolResult); r.ExitCode != 0 || r.Name != "writeBytes" {
		t.Fatalf("writeBytes: %+v", r)
	}
	// One-byte pages: a file a page, in walk order, until next is "".
	var got []string
	cursor := ""
	for range 10 {
		v, err = call("exportFiles", `{"maxBytes":1,"cursor":`+quote(cursor)+`}`, nil)
		noErr(t, err)
		b := v.(*Bytes)
		j, _ := json.Marshal(b.Meta)
		var m struct {
			Paths []string
			Sizes []int
			Text  []bool
			Next  string
		}
		noErr(t, json.Unmarshal(j, &m))
		for i, p := range m.Paths {
			got = append(got, p+":"+string(b.Data[:m.Sizes[i]]))
		}
		// As the wasm host does once it has copied the page out: the next
		// page is read into the same buffer.
		b.Release()
		if b.Data != nil {
			t.Fatalf("Release left Data: %q", b.Data)
		}
		if cursor = m.Next; cursor == "" {
			break
		}
	}
	if want := "a.txt:hi b/c.bin:\xff\x00z seed.bin:\x00\x01\x02 seed.txt:s\n w.bin:\xfe"; strings.Join(got, " ") != want {
		t.Fatalf("pages: %q, want %q", strings.Join(got, " "), want)
	}
	// Through Call (JSON only): refused, naming callBytes.
	for _, m := range []string{"readText", "writeBytes"} {
		if _, err := s.Call(ctx, id, m, []byte(`{"path":"a.txt"}`)); err == nil || !strings.Contains(err.Error(), "callBytes") {
			t.Errorf("%s through Call: %v", m, err)
		}
	}
	// A file given both as JSON and as bytes is refused.
	_, err = s.Create(ctx, []byte(`{"workspace":{"kind":"memory","files":{"seed.bin":"x"}}}`), nil, Env{Files: []SeedChunk{files}})
	if err == nil || !strings.Contains(err.Error(), "given twice") {
		t.Fatalf("a file given twice: %v", err)
	}
}

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }
