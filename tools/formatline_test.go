package tools

import (
	"fmt"
	"strings"
	"testing"
)

// TestFormatLine: the hand-written line of read is fmt's "%6d\t%s\n",
// and lineBytes its length.
func TestFormatLine(t *testing.T) {
	for _, n := range []int{1, 9, 10, 12345, 99999, 100000, 999999, 1000000, 1 << 40, 1<<62 + 12345} {
		var b strings.Builder
		formatLine(&b, n, "text")
		if want := fmt.Sprintf("%6d\t%s\n", n, "text"); b.String() != want {
			t.Errorf("formatLine(%d) = %q, want %q", n, b.String(), want)
		}
		if got := lineBytes(n, "text"); got != b.Len() {
			t.Errorf("lineBytes(%d) = %d, the line is %d bytes", n, got, b.Len())
		}
	}
}
