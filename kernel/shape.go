package kernel

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"
)

// mapStrings rebuilds v with f applied to every string and map key, in a
// deterministic order (map keys sorted), so a first pass can collect the
// strings and a second replace them. Values of other types are taken
// through JSON; a json.RawMessage keeps its key order.
func mapStrings(v any, f func(string) string) any {
	switch x := v.(type) {
	case nil, bool, float64, float32, int, int64, int32, uint64, uint32, uint, json.Number:
		return x
	case string:
		return f(x)
	case []string:
		out := make([]string, len(x))
		for i, s := range x {
			out[i] = f(s)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = mapStrings(e, f)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for _, k := range sortedKeys(x) {
			out[f(k)] = mapStrings(x[k], f)
		}
		return out
	case map[string]string:
		out := make(map[string]string, len(x))
		for _, k := range sortedKeys(x) {
			out[f(k)] = f(x[k])
		}
		return out
	case json.RawMessage:
		r, err := mapRaw(x, f)
		if err != nil {
			return x
		}
		return r
	case *ErrorKind:
		if x == nil {
			return x
		}
		c := *x
		c.mapStrings(f)
		return &c
	case ErrorKind:
		x.mapStrings(f)
		return x
	default:
		b, err := json.Marshal(x)
		if err != nil {
			return x
		}
		r, err := mapRaw(b, f)
		if err != nil {
			return x
		}
		return r
	}
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// mapRaw rewrites the strings of a JSON text, keeping its order.
func mapRaw(raw json.RawMessage, f func(string) string) (json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var b bytes.Buffer
	var value func() error
	str := func(s string) {
		e, _ := json.Marshal(f(s))
		b.Write(e)
	}
	value = func() error {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		switch t := tok.(type) {
		case json.Delim:
			b.WriteByte(byte(t))
			close := byte('}')
			if t == '[' {
				close = ']'
			}
			for first := true; dec.More(); first = false {
				if !first {
					b.WriteByte(',')
				}
				if t == '{' {
					k, err := dec.Token()
					if err != nil {
						return err
					}
					ks, _ := k.(string)
					str(ks)
					b.WriteByte(':')
				}
				if err := value(); err != nil {
					return err
				}
			}
			if _, err := dec.Token(); err != nil {
				return err
			}
			b.WriteByte(close)
		case string:
			str(t)
		case json.Number:
			b.WriteString(t.String())
		case bool:
			b.WriteString(fmt.Sprint(t))
		case nil:
			b.WriteString("null")
		}
		return nil
	}
	if err := value(); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("trailing data")
	}
	return b.Bytes(), nil
}

func (k *ErrorKind) mapStrings(f func(string) string) {
	for _, p := range []*string{&k.Path, &k.Expected, &k.Actual, &k.Code, &k.Message, &k.Reason, &k.Op} {
		*p = f(*p)
	}
}

// Metadata bounds (REFERENCE.md §3.4 applies the same 64 KiB threshold to
// change metadata).
const (
	// MaxMetadataBytes is the largest serialised metadata a result keeps;
	// above it, long strings become head/tail previews and the full JSON
	// goes to the artifact store (metadata_artifact).
	MaxMetadataBytes = 64 << 10
	// metadataPreviewBytes is the head (and the tail) of a long string
	// kept in bounded metadata.
	metadataPreviewBytes = 4 << 10
)

// boundMetadata keeps a result's metadata under MaxMetadataBytes: strings
// (and JSON values) longer than a preview become head/tail previews, and
// the full metadata JSON is stored as an artifact referenced by
// metadata_artifact. If previews are not enough (many small values), only
// the small top-level scalars are kept.
//
// Most metadata is small: jsonFits shows that without marshaling it (the
// marshal was a third of a read call's kernel time; the host encodes the
// metadata once more anyway).
func (k *Kernel) boundMetadata(tool string, res *Result) {
	if res.Metadata == nil || jsonFits(res.Metadata, MaxMetadataBytes) {
		return
	}
	full, err := json.Marshal(res.Metadata)
	if err != nil || len(full) <= MaxMetadataBytes {
		return
	}
	a, stored := k.artifacts.put(tool+"/metadata", string(full), MaxMetadataBytes)
	ref := map[string]any{"artifact_id": a.ID, "artifact_uri": a.URI, "tool_name": tool,
		"original_bytes": len(full), "stored": stored, "loss_mode": "head_tail"}
	var m map[string]any
	for _, keep := range []int{metadataPreviewBytes, 512} {
		m = map[string]any{}
		for key, v := range res.Metadata {
			m[key] = previewValue(v, keep)
		}
		m["metadata_artifact"] = ref
		if b, err := json.Marshal(m); err == nil && len(b) <= MaxMetadataBytes {
			ref["shown_bytes"] = len(b)
			res.Metadata = m
			return
		}
	}
	m = map[string]any{"metadata_artifact": ref, "metadata_omitted": true}
	for key, v := range res.Metadata {
		switch x := v.(type) {
		case bool, int, int64, float64, json.Number:
			m[key] = x
		case string:
			if len(x) <= 256 {
				m[key] = x
			}
		}
	}
	if a, ok := res.Metadata["artifact"]; ok {
		m["artifact"] = a
	}
	b, _ := json.Marshal(m)
	ref["shown_bytes"] = len(b)
	res.Metadata = m
}

// previewValue replaces long strings in v by head/tail previews of keep
// bytes each; values that are not plain JSON containers are previewed as
// their JSON text when it is long.
func previewValue(v any, keep int) any {
	switch x := v.(type) {
	case string:
		return preview(x, keep)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = previewValue(e, keep)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = previewValue(e, keep)
		}
		return out
	case nil, bool, int, int64, float64, json.Number:
		return x
	}
	b, err := json.Marshal(v)
	if err != nil || len(b) <= 2*keep+64 {
		return v
	}
	var s string
	if json.Unmarshal(b, &s) == nil {
		return preview(s, keep) // a JSON string: preview its text
	}
	var generic any
	if json.Unmarshal(b, &generic) == nil {
		if _, scalar := generic.(string); !scalar {
			if p := previewValue(generic, keep); p != nil {
				if pb, err := json.Marshal(p); err == nil && len(pb) <= 2*keep+256 {
					return p
				}
			}
		}
	}
	return preview(string(b), keep)
}

// preview keeps the first and last keep bytes of s (on rune boundaries)
// around a marker naming how much was left out.
func preview(s string, keep int) string {
	if len(s) <= 2*keep+64 {
		return s
	}
	h := keep
	for h > 0 && !utf8.RuneStart(s[h]) {
		h--
	}
	t := len(s) - keep
	for t < len(s) && !utf8.RuneStart(s[t]) {
		t++
	}
	var b strings.Builder
	b.WriteString(s[:h])
	fmt.Fprintf(&b, "\n…[%d bytes omitted; full metadata in metadata_artifact]…\n", t-h)
	b.WriteString(s[t:])
	return b.String()
}

// jsonFits reports whether v's JSON surely takes at most budget bytes: an
// upper bound summed over the values (a string counted as if every byte
// were escaped as \u00XX, a number as 32 bytes). A value of another type
// (a struct, a json.RawMessage) or a bound over budget reports false: the
// caller marshals to know.
func jsonFits(v any, budget int) bool {
	n := 0
	var walk func(v any) bool
	walk = func(v any) bool {
		switch x := v.(type) {
		case nil, bool:
			n += 5
		case int, int64, float64:
			n += 32
		case json.Number:
			n += len(x)
		case string:
			n += 2 + 6*len(x)
		case []string:
			for _, e := range x {
				n += 3 + 6*len(e)
			}
			n += 2
		case []any:
			for _, e := range x {
				if n++; !walk(e) {
					return false
				}
			}
			n += 2
		case map[string]any:
			for k, e := range x {
				if n += 4 + 6*len(k); !walk(e) {
					return false
				}
			}
			n += 2
		default:
			return false
		}
		return n <= budget
	}
	return walk(v)
}
