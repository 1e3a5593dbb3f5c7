package hostapi

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/a3s-lab/code-wasm/kernel"
)

// TestGetArtifact: a batch of reads of a 300 KiB file whose joined output
// is over 100 KiB is cut and points to an artifact (in its output suffix
// and metadata.artifact; a single read pages itself under 100 KiB), which
// getArtifact returns whole; an unknown URI is null; a URI that is not a
// string is INVALID_CALL.
func TestGetArtifact(t *testing.T) {
	var b strings.Builder
	n := 0
	for ; b.Len() < 300<<10; n++ {
		fmt.Fprintf(&b, "line %05d %s\n", n, strings.Repeat("x", 88))
	}
	files, _ := json.Marshal(map[string]string{"big.txt": b.String()})
	s := NewSessions()
	id := create(t, s, `{"workspace":{"kind":"memory","files":`+string(files)+`}}`, nil)
	ctx := context.Background()

	var inv []any
	for o := 0; o < n; o += 500 {
		inv = append(inv, map[string]any{"tool": "read", "args": map[string]any{"file_path": "big.txt", "offset": o, "limit": 500}})
	}
	call, _ := json.Marshal(map[string]any{"name": "batch", "args": map[string]any{"invocations": inv}})
	r, err := s.Call(ctx, id, "tool", call)
	noErr(t, err)
	res := r.(ToolResult)
	equal(t, 0, res.ExitCode, res.Output[:min(300, len(res.Output))])
	uri := regexp.MustCompile(`a3s://tool-output/batch/[0-9a-f]{64}`).FindString(res.Output)
	if uri == "" {
		t.Fatalf("no artifact URI in the output's suffix: …%s", res.Output[max(0, len(res.Output)-300):])
	}
	var meta struct {
		Artifact struct {
			URI string `json:"artifact_uri"`
		} `json:"artifact"`
	}
	noErr(t, json.Unmarshal([]byte(res.MetadataJSON), &meta))
	equal(t, uri, meta.Artifact.URI, "metadata.artifact names the same artifact")

	got, err := s.Call(ctx, id, "getArtifact", []byte(`{"uri":"`+uri+`"}`))
	noErr(t, err)
	a, ok := got.(kernel.Artifact)
	if !ok {
		t.Fatalf("getArtifact returned %T", got)
	}
	equal(t, uri, a.URI)
	equal(t, "batch", a.ToolName)
	equal(t, len(a.Content), a.OriginalBytes)
	if a.ShownBytes >= a.OriginalBytes || a.ShownBytes <= 0 {
		t.Errorf("shown_bytes %d of original_bytes %d", a.ShownBytes, a.OriginalBytes)
	}
	if !strings.HasPrefix(a.Content, res.Output[:a.ShownBytes]) || !containsEveryLine(a.Content, b.String()) {
		t.Errorf("the artifact is not the whole output (%d bytes): …%q", len(a.Content), a.Content[max(0, len(a.Content)-200):])
	}
	wire, _ := json.Marshal(got)
	for _, k := range []string{"artifact_id", "artifact_uri", "tool_name", "content", "original_bytes", "shown_bytes"} {
		contains(t, string(wire), `"`+k+`":`)
	}

	cases := []struct{ name, args, code string }{
		{"unknown uri", `{"uri":"a3s://tool-output/read/00"}`, ""},
		{"empty uri", `{"uri":""}`, ""},
		{"uri a number", `{"uri":5}`, CodeInvalidCall},
		{"uri missing", `{}`, CodeInvalidCall},
		{"uri null", `{"uri":null}`, CodeInvalidCall},
		{"unknown key", `{"uri":"x","id":1}`, CodeInvalidCall},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := s.Call(ctx, id, "getArtifact", []byte(c.args))
			if c.code == "" {
				noErr(t, err)
				if got != nil {
					t.Errorf("got %v, want null", got)
				}
				return
			}
			isErr(t, err)
			equal(t, c.code, codeOf(err))
			contains(t, err.Error(), "getArtifact: ")
		})
	}
}

func containsEveryLine(hay, lines string) bool {
	for _, l := range strings.Split(strings.TrimSuffix(lines, "\n"), "\n") {
		if !strings.Contains(hay, l) {
			return false
		}
	}
	return true
}
