package hostapi

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func BenchmarkShapeOnLargeWrite(b *testing.B) {
	raw, _ := json.Marshal(map[string]string{"path": "big.txt", "content": strings.Repeat("abcdefghij", 2_000_000)})
	type args struct {
		Path    *string `json:"path"`
		Content *string `json:"content"`
	}
	b.Run("strict decode (what runs)", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			var a args
			if err := decodeStrict("writeFile", "", raw, &a); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("shape walk too (what would run if always on)", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			var a args
			if err := shapeError(raw, reflect.TypeOf(a), ""); err != nil {
				b.Fatal(err)
			}
			if err := decodeStrict("writeFile", "", raw, &a); err != nil {
				b.Fatal(err)
			}
		}
	})
}
