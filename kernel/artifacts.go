package kernel

import (
	"encoding/hex"
	"github.com/a3s-lab/code-wasm/internal/digest"
	"strings"
	"sync"
	"unicode/utf8"
)

// ArtifactURIPrefix starts every artifact URI.
const ArtifactURIPrefix = "a3s://tool-output/"

// artifactStore keeps the full text of cut outputs (REFERENCE.md §3.4):
// at most maxN entries and maxBytes of content, oldest evicted first.
type artifactStore struct {
	mu       sync.Mutex
	maxN     int
	maxBytes int64
	total    int64
	order    []string
	m        map[string]Artifact
}

func newArtifactStore(l ArtifactLimits) *artifactStore {
	s := &artifactStore{maxN: l.MaxArtifacts, maxBytes: l.MaxBytes, m: map[string]Artifact{}}
	if s.maxN <= 0 {
		s.maxN = DefaultMaxArtifacts
	}
	if s.maxBytes <= 0 {
		s.maxBytes = DefaultArtifactSize
	}
	return s
}

// put stores content and returns its artifact; stored is false when the
// content alone is larger than the whole store.
func (s *artifactStore) put(tool, content string, shown int) (a Artifact, stored bool) {
	sum := digest.Sum256([]byte(content))
	id := hex.EncodeToString(sum[:])
	a = Artifact{ID: id, URI: ArtifactURIPrefix + tool + "/" + id, ToolName: tool, Content: content,
		OriginalBytes: len(content), ShownBytes: shown}
	if int64(len(content)) > s.maxBytes {
		return a, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.m[a.URI]; ok {
		return a, true
	}
	s.m[a.URI] = a
	s.order = append(s.order, a.URI)
	s.total += int64(len(content))
	for len(s.order) > s.maxN || s.total > s.maxBytes {
		old := s.order[0]
		s.order = s.order[1:]
		s.total -= int64(len(s.m[old].Content))
		delete(s.m, old)
	}
	return a, true
}

func (s *artifactStore) get(uri string) (Artifact, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.m[uri]
	return a, ok
}

// cutOutput keeps the first max bytes of out (on a rune boundary) and
// points to the artifact holding the rest.
func (k *Kernel) cutOutput(tool string, res *Result) {
	if len(res.Output) <= MaxOutputBytes {
		return
	}
	cut := MaxOutputBytes
	for cut > 0 && !utf8.RuneStart(res.Output[cut]) {
		cut--
	}
	a, stored := k.artifacts.put(tool, res.Output, cut)
	var b strings.Builder
	b.WriteString(res.Output[:cut])
	b.WriteString("\n\n[Full output artifact: ")
	b.WriteString(a.URI)
	b.WriteString("]")
	res.Output = b.String()
	if res.Metadata == nil {
		res.Metadata = map[string]any{}
	}
	res.Metadata["artifact"] = map[string]any{"artifact_id": a.ID, "artifact_uri": a.URI, "tool_name": tool,
		"original_bytes": a.OriginalBytes, "shown_bytes": cut, "stored": stored, "loss_mode": "bounded_preview"}
}
