package kernel

import (
	"encoding/json"
	"slices"
	"unicode/utf8"
)

// quickSchema answers one question about a built-in tool's arguments: are
// they certainly valid? It knows the plain subset of JSON Schema the
// built-in tools' schemas use (type, properties, required,
// additionalProperties, items, enum of strings, the length, size and
// integer bounds, and annotations); a schema with any other keyword has no
// quickSchema. An instance it cannot decide (a number written other than
// as a plain integer, say) or finds invalid goes to jsonschema, which
// compiles the schema then and writes the problems: so every message is
// jsonschema's, and a valid call never compiles a schema (40 ms of a
// Chromium session's first read: RATIONALE "Why are built-in tools'
// arguments checked by a quick validator first?").
type quickSchema struct {
	types    uint8 // 1<<index in quickTypes; 0 accepts every type
	props    map[string]*quickSchema
	required []string
	closed   bool         // additionalProperties: false
	extra    *quickSchema // additionalProperties as a schema
	items    *quickSchema
	enum     []string
	hasEnum  bool
	bound    [6]int64 // by quickBounds: minLength, maxLength, minItems, maxItems, minimum, maximum
	has      uint8    // 1<<index of each bound given
}

var (
	quickTypes  = [...]string{"null", "boolean", "integer", "number", "string", "array", "object"}
	quickBounds = [...]string{"minLength", "maxLength", "minItems", "maxItems", "minimum", "maximum"}
	// quickAnnotations assert nothing.
	quickAnnotations = [...]string{"description", "title", "default", "examples", "$comment", "deprecated", "readOnly", "writeOnly"}
)

const (
	qNull uint8 = 1 << iota
	qBool
	qInteger
	qNumber
	qString
	qArray
	qObject
)

// compileQuick builds the quickSchema of schema, or nil when schema uses
// anything outside the subset (or is not one JSON object).
func compileQuick(schema []byte) *quickSchema {
	v, err := jsonUnmarshal(schema)
	if err != nil {
		return nil
	}
	return quickFrom(v, 0)
}

func quickFrom(v any, depth int) *quickSchema {
	m, ok := v.(map[string]any)
	if !ok || depth > 16 {
		return nil
	}
	q := &quickSchema{}
	for k, x := range m {
		switch k {
		case "type":
			ts, ok := x.([]any)
			if !ok {
				ts = []any{x}
			}
			for _, e := range ts {
				s, _ := e.(string)
				i := slices.Index(quickTypes[:], s)
				if i < 0 {
					return nil
				}
				q.types |= 1 << i
			}
			if q.types == 0 {
				return nil
			}
		case "properties":
			ps, ok := x.(map[string]any)
			if !ok {
				return nil
			}
			q.props = make(map[string]*quickSchema, len(ps))
			for name, p := range ps {
				if q.props[name] = quickFrom(p, depth+1); q.props[name] == nil {
					return nil
				}
			}
		case "required", "enum":
			xs, ok := x.([]any)
			if !ok {
				return nil
			}
			ss := []string{}
			for _, e := range xs {
				s, ok := e.(string)
				if !ok {
					return nil
				}
				ss = append(ss, s)
			}
			if k == "enum" {
				q.enum, q.hasEnum = ss, true
			} else {
				q.required = ss
			}
		case "additionalProperties":
			if b, ok := x.(bool); ok {
				q.closed = !b
			} else if q.extra = quickFrom(x, depth+1); q.extra == nil {
				return nil
			}
		case "items":
			if q.items = quickFrom(x, depth+1); q.items == nil {
				return nil
			}
		default:
			i := slices.Index(quickBounds[:], k)
			if i < 0 {
				if slices.Index(quickAnnotations[:], k) < 0 {
					return nil
				}
				continue
			}
			n, ok := plainInt(x)
			if !ok || (i < 4 && (n < 0 || n > 1<<30)) {
				return nil
			}
			q.bound[i], q.has = n, q.has|1<<i
		}
	}
	return q
}

// plainInt reads a JSON number written as a plain integer of at most 18
// digits ("-12", never "1.0", "1e3", "-0" or "007"); anything else is not
// decided here.
func plainInt(v any) (int64, bool) {
	s, ok := v.(json.Number)
	if !ok || s == "" {
		return 0, false
	}
	d := s
	if d[0] == '-' {
		d = d[1:]
	}
	if len(d) == 0 || len(d) > 18 || (d[0] == '0' && len(s) > 1) {
		return 0, false
	}
	var n int64
	for i := 0; i < len(d); i++ {
		if d[i] < '0' || d[i] > '9' {
			return 0, false
		}
		n = n*10 + int64(d[i]-'0')
	}
	if s[0] == '-' {
		n = -n
	}
	return n, true
}

// within reports whether n keeps the bounds i (a minimum) and i+1 (its
// maximum).
func (q *quickSchema) within(i int, n int64) bool {
	return (q.has&(1<<i) == 0 || n >= q.bound[i]) && (q.has&(2<<i) == 0 || n <= q.bound[i+1])
}

// valid reports whether v (as jsonschema.UnmarshalJSON decodes it) is
// certainly valid; false means "ask jsonschema".
func (q *quickSchema) valid(v any, depth int) bool {
	if depth > 32 {
		return false
	}
	switch x := v.(type) {
	case nil:
		return q.typeOK(qNull) && !q.hasEnum
	case bool:
		return q.typeOK(qBool) && !q.hasEnum
	case json.Number:
		n, ok := plainInt(x)
		return ok && q.typeOK(qInteger|qNumber) && !q.hasEnum && q.within(4, n)
	case string:
		if !q.typeOK(qString) || (q.has&3 != 0 && !q.within(0, int64(utf8.RuneCountInString(x)))) {
			return false
		}
		return !q.hasEnum || slices.Index(q.enum, x) >= 0
	case []any:
		if !q.typeOK(qArray) || q.hasEnum || !q.within(2, int64(len(x))) {
			return false
		}
		for _, e := range x {
			if q.items != nil && !q.items.valid(e, depth+1) {
				return false
			}
		}
		return true
	case map[string]any:
		if !q.typeOK(qObject) || q.hasEnum {
			return false
		}
		for _, r := range q.required {
			if _, ok := x[r]; !ok {
				return false
			}
		}
		for k, e := range x {
			p := q.props[k]
			if p == nil && q.closed {
				return false
			}
			if p == nil {
				p = q.extra
			}
			if p != nil && !p.valid(e, depth+1) {
				return false
			}
		}
		return true
	}
	return false
}

// typeOK: the schema names no type, or one of want.
func (q *quickSchema) typeOK(want uint8) bool { return q.types == 0 || q.types&want != 0 }

// InQuickSubset reports whether the kernel checks a built-in tool's
// arguments against schema with the quick validator first (core's tests
// hold the built-in schemas to it).
func InQuickSubset(schema json.RawMessage) bool { return compileQuick(schema) != nil }
