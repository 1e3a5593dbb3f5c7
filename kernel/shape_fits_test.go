package kernel

import (
	"encoding/json"
	"strings"
	"testing"
)

// jsonFits is an upper bound: whenever it says a value fits, its JSON
// does; it says so for ordinary small metadata, and refuses types it does
// not know.
func TestJSONFits(t *testing.T) {
	nasty := strings.Repeat("\x01<>&\"\\\u2028é", 50)
	cases := []any{
		map[string]any{"path": "a.txt", "lines": 3, "truncated": false, "n": nil},
		map[string]any{"s": nasty, "list": []any{nasty, 1.5, json.Number("12345678901234567890123456789012345678901234567890")}},
		map[string]any{"names": []string{nasty, "b"}, "deep": map[string]any{"x": []any{map[string]any{nasty: true}}}},
		map[string]any{"big": strings.Repeat("x", 70<<10)},
	}
	for i, v := range cases {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		for _, budget := range []int{len(b) - 1, len(b), 6 * len(b), MaxMetadataBytes} {
			if jsonFits(v, budget) && len(b) > budget {
				t.Errorf("case %d: fits %d bytes, but its JSON is %d", i, budget, len(b))
			}
		}
	}
	if !jsonFits(cases[0], MaxMetadataBytes) || !jsonFits(cases[1], MaxMetadataBytes) {
		t.Error("small metadata should fit without a marshal")
	}
	if jsonFits(cases[3], MaxMetadataBytes) {
		t.Error("70 KiB of metadata cannot fit 64 KiB")
	}
	if jsonFits(map[string]any{"raw": json.RawMessage(`{}`)}, MaxMetadataBytes) || jsonFits(map[string]any{"s": struct{}{}}, MaxMetadataBytes) {
		t.Error("an unknown type must be marshaled to know")
	}
}
