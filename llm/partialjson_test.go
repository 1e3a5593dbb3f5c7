package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// snapshot feeds s in one fragment and encodes the value (or "-" for none).
func snapshot(t *testing.T, s string) string {
	t.Helper()
	var p PartialJSON
	if err := p.Feed(s); err != nil {
		t.Fatalf("Feed(%q): %v", s, err)
	}
	v, ok := p.Value()
	if !ok {
		return "-"
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("%q: value does not encode: %v", s, err)
	}
	return string(b)
}

func TestPartialJSONPrefixes(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", "-"},
		{"  ", "-"},
		{"{", "{}"},
		{`{"na`, "{}"},
		{`{"name"`, "{}"},
		{`{"name":`, "{}"},
		{`{"name": "Ad`, `{"name":"Ad"}`},
		{`{"name": "Ada", "age": 3`, `{"age":3,"name":"Ada"}`},
		{`{"age": -`, "{}"},
		{`{"age": 1.`, `{"age":1}`},
		{`{"age": 1.5e`, `{"age":1.5}`},
		{`{"age": 1.5e+2`, `{"age":1.5e+2}`},
		{`{"ok": t`, `{"ok":true}`},
		{`{"ok": fal`, `{"ok":false}`},
		{`{"ok": n`, `{"ok":null}`},
		{`{"a": [1, 2, {"b": "x\`, `{"a":[1,2,{"b":"x"}]}`},
		{`{"a": "\u00e`, `{"a":""}`},
		{`{"a": "\u00e9`, `{"a":"é"}`},
		{`{"a": "\ud83d`, `{"a":""}`},
		{`{"a": "\ud83d\ude00`, `{"a":"😀"}`},
		{"{\"a\": \"\xe2\x82", `{"a":""}`},
		{"{\"a\": \"\xe2\x82\xac", `{"a":"€"}`},
		{`[`, `[]`},
		{`[1, `, `[1]`},
		{`[[1], [`, `[[1],[]]`},
		{`"ab`, `"ab"`},
		{`12`, `12`},
		{`-`, "-"},
		{`{"a": {}, "b": []}`, `{"a":{},"b":[]}`},
	} {
		if got := snapshot(t, c.in); got != c.want {
			t.Errorf("%q: got %s, want %s", c.in, got, c.want)
		}
	}
}

func TestPartialJSONRefuses(t *testing.T) {
	for _, in := range []string{
		`{"a" 1}`, `{1:2}`, `[1,]`, `{"a":1,}`, `[01]`, `[1.]`, `[-]`, `{"a":tru}`, `{"a":"\x"}`,
		"{\"a\":\"\x01\"}", `{} {}`, `]`, `{"a":1]`, `[1}`, `{"a":"\u12g4"}`, `[1e]`,
	} {
		var p PartialJSON
		err := p.Feed(in)
		if err == nil {
			err = p.End()
		}
		if err == nil {
			t.Errorf("%q: accepted", in)
		}
		if json.Valid([]byte(in)) {
			t.Errorf("%q: encoding/json accepts it; the case is wrong", in)
		}
		if err2 := p.Feed("{}"); err2 != err {
			t.Errorf("%q: the error is not sticky: %v then %v", in, err, err2)
		}
	}
	var p PartialJSON
	if err := p.Feed(`{"a":`); err != nil {
		t.Fatal(err)
	}
	if err := p.End(); err == nil || !strings.Contains(err.Error(), "unexpected end") {
		t.Errorf("End of an open object: %v", err)
	}
}

func TestPartialJSONDepth(t *testing.T) {
	var p PartialJSON
	err := p.Feed(strings.Repeat("[", maxDepth+1))
	if err == nil || !strings.Contains(err.Error(), "max depth") {
		t.Fatalf("depth %d: %v", maxDepth+1, err)
	}
}

// checkAgainstStdlib feeds data in fragments of size n, checks that the
// intermediate values encode (every one for short input, some for long:
// a snapshot walks the open containers), and compares the end with
// encoding/json.
func checkAgainstStdlib(t *testing.T, data []byte, n int) {
	var p PartialJSON
	var err error
	for i, k := 0, 0; i < len(data) && err == nil; i, k = i+n, k+1 {
		err = p.Feed(string(data[i:min(i+n, len(data))]))
		if len(data) > 1024 && k%97 != 0 {
			continue
		}
		if v, ok := p.Value(); ok {
			if _, merr := json.Marshal(v); merr != nil {
				t.Fatalf("prefix %d of %q: value does not encode: %v", i, data, merr)
			}
		}
	}
	if err == nil {
		err = p.End()
	}
	valid := json.Valid(data)
	if valid != (err == nil) {
		t.Fatalf("%q: encoding/json valid=%v, PartialJSON err=%v", data, valid, err)
	}
	if !valid {
		return
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var want any
	if err := dec.Decode(&want); err != nil {
		t.Fatal(err)
	}
	got, ok := p.Value()
	if !ok || !reflect.DeepEqual(got, want) {
		t.Fatalf("%q: got %#v, want %#v", data, got, want)
	}
}

func FuzzPartialJSON(f *testing.F) {
	for _, s := range []string{
		`{"a":[1,2.5e-3,-0,true,false,null,"x\"y\\z\u00e9\ud83d\ude00"],"b":{"c":{}}}`,
		`[]`, `{}`, `"\ud800\ud800\udc00"`, `"\udc00\ud800x"`, "\"\xff\xe2\x82\"", `  12  `, `[1,]`,
		`{"a":1}x`, `1e999`, `{"k":"v","k":"w"}`, `[[[[]]]]`, `-`, `"\u0000"`,
	} {
		f.Add([]byte(s), uint8(1))
		f.Add([]byte(s), uint8(7))
	}
	f.Fuzz(func(t *testing.T, data []byte, split uint8) {
		checkAgainstStdlib(t, data, int(split%16)+1)
	})
}

// object builds a JSON object of about n bytes, of the shape a model
// streams: nested records with strings, numbers and literals.
func object(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"items":[`)
	for i := 0; b.Len() < n-64; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":%d,"name":"item \"%d\" caf\u00e9","score":%d.25e-1,"ok":true,"tags":["a","b"],"x":null}`, i, i, i)
	}
	b.WriteString(`],"total":1}`)
	return b.Bytes()
}

func TestPartialJSONObjectRoundTrip(t *testing.T) {
	for _, n := range []int{1, 3, 8, 64} {
		checkAgainstStdlib(t, object(16<<10), n)
	}
}

// BenchmarkPartialJSON streams objects of 16, 64 and 256 KiB in 8-byte
// fragments; µs/KiB stays flat because feeding is linear in the input.
func BenchmarkPartialJSON(b *testing.B) {
	for _, kib := range []int{16, 64, 256} {
		data := string(object(kib << 10))
		b.Run(fmt.Sprintf("%dKiB", kib), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				var p PartialJSON
				for i := 0; i < len(data); i += 8 {
					if err := p.Feed(data[i:min(i+8, len(data))]); err != nil {
						b.Fatal(err)
					}
				}
				if _, ok := p.Value(); !ok {
					b.Fatal("no value")
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/float64(len(data)>>10), "µs/KiB")
		})
	}
}
