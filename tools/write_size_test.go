package tools

import (
	"strings"
	"testing"
)

// One write carries at most maxWriteBytes of content: more is refused as
// invalid_argument naming the limit and the way round it (mode=append),
// and nothing is written; a larger file is written in parts.
func TestWriteContentLimit(t *testing.T) {
	ws := newWS(t, map[string]string{"a.txt": "keep\n"})
	over := strings.Repeat("x", maxWriteBytes+1)
	for _, args := range []map[string]any{
		{"file_path": "big.txt", "content": over},
		{"file_path": "a.txt", "content": over},
		{"file_path": "big.txt", "content": over, "mode": "append", "expected_offset": 0},
		{"file_path": "big.txt", "content": strings.Repeat("é", maxWriteBytes/2+1)}, // fewer characters than the limit, more bytes
	} {
		res := run(t, ws, "write", args)
		if kindOf(res) != "invalid_argument" || !strings.Contains(res.Output, "the limit is 16777216 bytes (16 MiB) per call") || !strings.Contains(res.Output, "mode=append") {
			t.Fatalf("write of %d bytes: %s %.200q", len(args["content"].(string)), kindOf(res), res.Output)
		}
	}
	if got, _ := fileContent(t, ws, "a.txt"); got != "keep\n" {
		t.Fatalf("a.txt = %q", got)
	}
	if _, ok := fileContent(t, ws, "big.txt"); ok {
		t.Fatal("big.txt was written")
	}
	// The limit itself, then the rest in parts.
	part := strings.Repeat("y", maxWriteBytes)
	if res := run(t, ws, "write", map[string]any{"file_path": "big.txt", "content": part}); res.ExitCode != 0 {
		t.Fatal(res.Output)
	}
	for i := 1; i <= 2; i++ {
		res := run(t, ws, "write", map[string]any{"file_path": "big.txt", "content": part, "mode": "append", "expected_offset": i * maxWriteBytes})
		if res.ExitCode != 0 {
			t.Fatal(res.Output)
		}
	}
	if got, _ := fileContent(t, ws, "big.txt"); len(got) != 3*maxWriteBytes {
		t.Fatalf("big.txt is %d bytes", len(got))
	}
}
