package lazyre

import "testing"

func TestNewCompilesOnFirstCallOnce(t *testing.T) {
	bad := New(`(`) // an invalid expression: no panic until it is used
	defer func() {
		if recover() == nil {
			t.Fatal("calling New(`(`) did not panic")
		}
	}()
	re := New(`^[a-z]+$`)
	if re() != re() {
		t.Fatal("each call compiled the regexp again")
	}
	if !re().MatchString("abc") || re().MatchString("a1") {
		t.Fatal("the compiled regexp does not match as ^[a-z]+$")
	}
	bad()
}
