package kernel

import (
	"bytes"
	"encoding/json"
	"math/rand"
	"testing"
)

// The quick validator may only ever say "valid" where jsonschema says so:
// every case of the JSON-Schema suite whose schema it takes.
func TestQuickNeverAcceptsWhatTheSuiteRefuses(t *testing.T) {
	groups, decided := 0, 0
	for _, g := range ReadSuite(t) {
		// The suite names the draft in every schema; the kernel's
		// default draft is the same, so the quick validator sees
		// the schema without it.
		var sm map[string]any
		d := json.NewDecoder(bytes.NewReader(g.Schema))
		d.UseNumber()
		if d.Decode(&sm) == nil && sm["$schema"] == "https://json-schema.org/draft/2020-12/schema" {
			delete(sm, "$schema")
			g.Schema, _ = json.Marshal(sm)
		}
		q := compileQuick(g.Schema)
		if q == nil {
			continue
		}
		groups++
		for _, tc := range g.Tests {
			inst, err := jsonUnmarshal(tc.Data)
			if err != nil {
				t.Fatal(err)
			}
			if q.valid(inst, 0) {
				decided++
				if !tc.Valid {
					t.Errorf("%s: %s / %s: quick says valid, the suite says invalid", g.File, g.Description, tc.Description)
				}
			}
		}
	}
	t.Logf("%d suite schemas in the quick subset, %d cases it called valid", groups, decided)
	if groups < 40 || decided < 60 {
		t.Errorf("only %d schemas / %d cases decided: the subset check looks broken", groups, decided)
	}
}

// Random schemas of the subset and random instances: whatever the quick
// validator calls valid, jsonschema does too; and it decides enough of
// them to be worth having.
func TestQuickAgreesWithJSONSchemaOnRandomSchemas(t *testing.T) {
	r := rand.New(rand.NewSource(18))
	n := 3000
	if testing.Short() {
		n = 500
	}
	var schemas, decided, validCases int
	for i := 0; i < n; i++ {
		sv := genSchema(r, 0)
		sb, _ := json.Marshal(sv)
		q := compileQuick(sb)
		if q == nil {
			t.Fatalf("a schema of the subset was not taken: %s", sb)
		}
		// As the kernel compiles a built-in schema: no meta-schema check.
		sch, err := newSchemaCache().get(sb, true)
		if err != nil {
			t.Fatalf("%s: %v", sb, err)
		}
		schemas++
		for j := 0; j < 40; j++ {
			ib, _ := json.Marshal(genInstance(r, 0, sv))
			inst, err := jsonUnmarshal(ib)
			if err != nil {
				t.Fatal(err)
			}
			want := sch.Validate(inst) == nil
			if want {
				validCases++
			}
			if q.valid(inst, 0) {
				decided++
				if !want {
					t.Fatalf("quick says valid, jsonschema says invalid:\nschema %s\ninstance %s", sb, ib)
				}
			}
		}
	}
	t.Logf("%d schemas; %d valid instances, %d of them decided by the quick validator", schemas, validCases, decided)
	if decided*2 < validCases {
		t.Errorf("the quick validator decided only %d of %d valid instances", decided, validCases)
	}
}

// Every keyword of draft 2020-12 (and the older drafts' names) outside
// the subset leaves a schema without a quick validator, whatever its value:
// an assertion taken for an annotation would let arguments through
// unchecked.
func TestQuickRefusesEveryOtherKeyword(t *testing.T) {
	subset := map[string]bool{
		"type": true, "properties": true, "required": true, "additionalProperties": true, "items": true,
		"enum": true, "minLength": true, "maxLength": true, "minItems": true, "maxItems": true,
		"minimum": true, "maximum": true,
		"description": true, "title": true, "default": true, "examples": true, "$comment": true,
		"deprecated": true, "readOnly": true, "writeOnly": true,
	}
	keywords := []string{
		"$schema", "$id", "$ref", "$anchor", "$dynamicRef", "$dynamicAnchor", "$vocabulary", "$defs",
		"allOf", "anyOf", "oneOf", "not", "if", "then", "else", "dependentSchemas", "prefixItems",
		"contains", "properties", "patternProperties", "additionalProperties", "propertyNames",
		"items", "unevaluatedItems", "unevaluatedProperties", "type", "const", "enum", "multipleOf",
		"maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum", "maxLength", "minLength",
		"pattern", "maxItems", "minItems", "uniqueItems", "maxContains", "minContains",
		"maxProperties", "minProperties", "required", "dependentRequired", "format",
		"contentEncoding", "contentMediaType", "contentSchema",
		"title", "description", "default", "deprecated", "readOnly", "writeOnly", "examples", "$comment",
		"definitions", "dependencies", "additionalItems", "id", "$recursiveRef", "$recursiveAnchor",
		"divisibleBy", "disallow", "extends",
	}
	values := []string{`{}`, `true`, `false`, `1`, `"a"`, `["a"]`, `[{}]`, `{"a":{}}`, `null`}
	for _, k := range keywords {
		for _, v := range values {
			s := `{"` + k + `":` + v + `}`
			if compileQuick([]byte(s)) != nil && !subset[k] {
				t.Errorf("%s: taken by the quick validator", s)
			}
		}
	}
}

// Schemas with anything outside the subset have no quick validator.
func TestQuickRefusesWhatItDoesNotKnow(t *testing.T) {
	for _, s := range []string{
		`{"type":"string","pattern":"^a"}`,
		`{"properties":{"a":{"$ref":"#"}}}`,
		`{"anyOf":[{"type":"string"}]}`,
		`{"type":"integer","minimum":0.5}`,
		`{"type":"integer","maximum":1e3}`,
		`{"enum":[1,2]}`,
		`{"items":[{"type":"string"}]}`,
		`{"properties":{"a":true}}`,
		`{"type":"strings"}`,
		`{"type":[]}`,
		`{"minLength":-1}`,
		`{"const":"a"}`,
		`{"format":"uri"}`,
		`{"$schema":"http://json-schema.org/draft-07/schema#"}`,
		`{"unevaluatedProperties":false}`,
		`{"dependentRequired":{"a":["b"]}}`,
		`true`,
		`[]`,
		`{"type":"object"} {}`,
		`{`,
	} {
		if compileQuick([]byte(s)) != nil {
			t.Errorf("%s: taken by the quick validator", s)
		}
	}
	for _, s := range []string{
		`{}`,
		`{"type":"object","properties":{"a":{"type":"string","minLength":1,"description":"x","default":"y","examples":["z"]}},"required":["a"],"additionalProperties":false}`,
		`{"type":["string","null"],"enum":["a","b"]}`,
		`{"type":"array","items":{"type":"integer","minimum":-3,"maximum":3},"minItems":1,"maxItems":2}`,
		`{"type":"object","additionalProperties":{"type":"boolean"}}`,
	} {
		if compileQuick([]byte(s)) == nil {
			t.Errorf("%s: not taken by the quick validator", s)
		}
	}
}

// Numbers the quick validator leaves to jsonschema: anything but a plain
// integer of at most 18 digits.
func TestQuickLeavesOtherNumbersToJSONSchema(t *testing.T) {
	q := compileQuick([]byte(`{"type":"integer","minimum":0,"maximum":10}`))
	for lit, want := range map[string]bool{
		"0": true, "10": true, "7": true, "-1": false, "11": false,
		"1.0": false, "1e1": false, "-0": false, "0.5": false, "-0.0": false,
		"1234567890123456789": false,
	} {
		inst, err := jsonUnmarshal([]byte(lit))
		if err != nil {
			t.Fatal(err)
		}
		if got := q.valid(inst, 0); got != want {
			t.Errorf("%s: quick valid=%v, want %v", lit, got, want)
		}
	}
}

var quickNames = []string{"a", "b", "c", "d"}
var quickStrings = []string{"", "x", "y", "é", "ab", "abc", "日本x", "a\u0301"}
var quickNumbers = []string{"0", "1", "-1", "2", "3", "-4", "7", "1.0", "1e1", "0.5", "-0", "100000000000000000000", "-3"}

func genSchema(r *rand.Rand, depth int) map[string]any {
	s := map[string]any{}
	types := []string{"null", "boolean", "integer", "number", "string", "array", "object"}
	switch r.Intn(4) {
	case 0:
	case 1:
		var ts []any
		for _, i := range r.Perm(len(types))[:1+r.Intn(3)] {
			ts = append(ts, types[i])
		}
		s["type"] = ts
	default:
		s["type"] = types[r.Intn(len(types))]
	}
	if r.Intn(3) == 0 {
		s["description"] = "d"
	}
	if depth < 3 && r.Intn(2) == 0 {
		ps := map[string]any{}
		for _, n := range quickNames[:1+r.Intn(len(quickNames))] {
			if r.Intn(3) > 0 {
				ps[n] = genSchema(r, depth+1)
			}
		}
		s["properties"] = ps
	}
	if r.Intn(3) == 0 {
		req := []any{}
		for _, n := range quickNames {
			if r.Intn(3) == 0 {
				req = append(req, n)
			}
		}
		s["required"] = req
	}
	switch r.Intn(5) {
	case 0:
		s["additionalProperties"] = false
	case 1:
		s["additionalProperties"] = true
	case 2:
		if depth < 3 {
			s["additionalProperties"] = genSchema(r, depth+1)
		}
	}
	if depth < 3 && r.Intn(3) == 0 {
		s["items"] = genSchema(r, depth+1)
	}
	if r.Intn(5) == 0 {
		var e []any
		for _, x := range quickStrings[:1+r.Intn(4)] {
			e = append(e, x)
		}
		s["enum"] = e
	}
	for _, k := range []string{"minLength", "maxLength", "minItems", "maxItems"} {
		if r.Intn(4) == 0 {
			s[k] = json.Number([]string{"0", "1", "2", "3"}[r.Intn(4)])
		}
	}
	for _, k := range []string{"minimum", "maximum"} {
		if r.Intn(4) == 0 {
			s[k] = json.Number([]string{"-3", "-1", "0", "1", "2", "7"}[r.Intn(6)])
		}
	}
	return s
}

// genInstance makes a value, half the time shaped after schema s.
func genInstance(r *rand.Rand, depth int, s map[string]any) any {
	kind := r.Intn(7)
	if s != nil && r.Intn(2) == 0 {
		switch t := s["type"].(type) {
		case string:
			kind = map[string]int{"null": 0, "boolean": 1, "integer": 2, "number": 2, "string": 3, "array": 4, "object": 5}[t]
		}
	}
	if depth > 3 && kind >= 4 {
		kind = 3
	}
	child := func(key string) map[string]any {
		if s == nil {
			return nil
		}
		if key == "" {
			m, _ := s["items"].(map[string]any)
			return m
		}
		if ps, ok := s["properties"].(map[string]any); ok {
			if m, ok := ps[key].(map[string]any); ok {
				return m
			}
		}
		return nil
	}
	switch kind {
	case 0:
		return nil
	case 1:
		return r.Intn(2) == 0
	case 2, 6:
		return json.Number(quickNumbers[r.Intn(len(quickNumbers))])
	case 3:
		return quickStrings[r.Intn(len(quickStrings))]
	case 4:
		a := []any{}
		for i := r.Intn(4); i > 0; i-- {
			a = append(a, genInstance(r, depth+1, child("")))
		}
		return a
	default:
		m := map[string]any{}
		for _, n := range quickNames {
			if r.Intn(2) == 0 {
				m[n] = genInstance(r, depth+1, child(n))
			}
		}
		if r.Intn(6) == 0 {
			m["zz"] = "extra"
		}
		return m
	}
}

// FuzzQuickValid: for one schema of each shape the built-in tools use, any
// JSON the quick validator calls valid, jsonschema calls valid too.
func FuzzQuickValid(f *testing.F) {
	schema := []byte(`{"type":"object","properties":{"file_path":{"type":"string","minLength":1},"offset":{"type":"integer","minimum":0},"limit":{"type":"integer","minimum":1,"maximum":2000},"mode":{"type":"string","enum":["a","b"]},"files":{"type":"array","minItems":1,"maxItems":3,"items":{"type":"object","properties":{"path":{"type":"string","maxLength":8}},"required":["path"],"additionalProperties":false}}},"required":["file_path"],"additionalProperties":false}`)
	for _, s := range []string{`{"file_path":"a"}`, `{"file_path":"a","offset":3,"limit":2000}`, `{"file_path":"é","mode":"b","files":[{"path":"x"}]}`, `{"file_path":""}`, `{"FILE_PATH":"a"}`, `{"file_path":"a","limit":1.0}`} {
		f.Add([]byte(s))
	}
	q := compileQuick(schema)
	sch, err := newSchemaCache().get(schema, true)
	if q == nil || err != nil {
		f.Fatal(q, err)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		inst, err := jsonUnmarshal(b)
		if err != nil {
			return
		}
		if q.valid(inst, 0) && sch.Validate(inst) != nil {
			t.Fatalf("quick says valid, jsonschema says invalid: %s", b)
		}
	})
}
