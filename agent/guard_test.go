package agent

import "testing"

// TestCallSigSame: the duplicate guard's comparison without a hash for
// equal text agrees with the signature (name + sha256 of the compact,
// key-sorted arguments) it computes when the texts differ.
func TestCallSigSame(t *testing.T) {
	sig := func(name, args string) *callSig {
		raw, err := parseArgs(args)
		if err != nil {
			t.Fatalf("parseArgs(%q): %v", args, err)
		}
		return &callSig{name: name, raw: raw}
	}
	for _, c := range []struct {
		a, b string
		same bool
	}{
		{`{"path":"."}`, `{"path":"."}`, true},
		{`{"a":1,"b":[1,2]}`, `{ "b" : [1, 2], "a" : 1 }`, true},
		{``, `{}`, true},
		{` `, `{ }`, true},
		{`{"path":"."}`, `{"path":"./"}`, false},
		{`{"n":1}`, `{"n":1.5}`, false},
	} {
		if got := sig("ls", c.a).same(sig("ls", c.b)); got != c.same {
			t.Errorf("%s vs %s: same %v, want %v", c.a, c.b, got, c.same)
		}
		if c.same && sig("ls", c.a).same(sig("read", c.b)) {
			t.Errorf("%s as ls and read: same", c.a)
		}
	}
	for _, bad := range []string{`[1]`, `"x"`, `{"a":`, `nul`} {
		if _, err := parseArgs(bad); err == nil {
			t.Errorf("parseArgs(%q) accepted", bad)
		}
	}
	if _, err := parseArgs(`{"a":`); err == nil || err.Error() != "unexpected end of JSON input" {
		t.Errorf("parseArgs: %v, want encoding/json's error", err)
	}
}
