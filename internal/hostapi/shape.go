package hostapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"sort"
	"strconv"
	"strings"
)

// shapeError explains why a JSON value does not fit the Go type it is
// decoded into, naming the full key path ("hooks[0].matcher.tools",
// `workspace.files["a.txt"]`), which encoding/json's own errors do not
// (they drop slice indices and map keys, and say "unknown field" without
// the object it was in).
//
// It runs only after a strict decode has failed, so a well-formed call
// (a 20 MB writeFile included) is decoded once.
func shapeError(raw []byte, t reflect.Type, root string) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil // not JSON at all: the decoder's own message is the best
	}
	return checkShape(v, t, root)
}

func joinKey(at, k string) string {
	if at == "" {
		return k
	}
	return at + "." + k
}

// jsonFields maps the JSON names of t's fields to their types.
func shapeFields(t reflect.Type) (map[string]reflect.Type, []string) {
	m := map[string]reflect.Type{}
	var names []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" && f.Anonymous && f.Type.Kind() == reflect.Struct {
			// An embedded struct's keys are the outer object's (encoding/json).
			sub, subNames := shapeFields(f.Type)
			maps.Copy(m, sub)
			names = append(names, subNames...)
			continue
		}
		if name == "" {
			name = f.Name
		}
		m[name] = f.Type
		names = append(names, name)
	}
	return m, names
}

// describe names a decoded JSON value the way a JS caller would.
func describe(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case json.Number:
		return x.String()
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

func checkShape(v any, t reflect.Type, at string) error {
	if t == reflect.TypeOf(json.RawMessage(nil)) || t.Kind() == reflect.Interface {
		return nil
	}
	if t == reflect.TypeFor[jsonString]() {
		t = reflect.TypeFor[string]() // a string kept as its JSON text
	}
	if t.Kind() == reflect.Pointer {
		if v == nil {
			return nil
		}
		return checkShape(v, t.Elem(), at)
	}
	name := at
	if name == "" {
		name = "the arguments"
	}
	switch t.Kind() {
	case reflect.Struct:
		m, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("%s must be an object, got %s", name, describe(v))
		}
		fields, known := shapeFields(t)
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			ft, ok := fields[k]
			if !ok {
				return fmt.Errorf("unknown key %s (known: %s)", joinKey(at, k), strings.Join(known, ", "))
			}
			if err := checkShape(m[k], ft, joinKey(at, k)); err != nil {
				return err
			}
		}
	case reflect.Map:
		if v == nil {
			return nil
		}
		m, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("%s must be an object, got %s", name, describe(v))
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if err := checkShape(m[k], t.Elem(), at+"["+strconv.Quote(k)+"]"); err != nil {
				return err
			}
		}
	case reflect.Slice:
		if v == nil {
			return nil
		}
		a, ok := v.([]any)
		if !ok {
			return fmt.Errorf("%s must be an array, got %s", name, describe(v))
		}
		for i, x := range a {
			if err := checkShape(x, t.Elem(), fmt.Sprintf("%s[%d]", at, i)); err != nil {
				return err
			}
		}
	case reflect.String:
		if _, ok := v.(string); !ok {
			return fmt.Errorf("%s must be a string, got %s", name, describe(v))
		}
	case reflect.Bool:
		if _, ok := v.(bool); !ok {
			return fmt.Errorf("%s must be a boolean, got %s", name, describe(v))
		}
	case reflect.Int, reflect.Int64, reflect.Int32:
		n, ok := v.(json.Number)
		if !ok {
			return fmt.Errorf("%s must be a non-negative integer, got %s", name, describe(v))
		}
		if i, err := n.Int64(); err != nil || i < 0 {
			return fmt.Errorf("%s must be a non-negative integer, got %s", name, n)
		}
	case reflect.Float64:
		if _, ok := v.(json.Number); !ok {
			return fmt.Errorf("%s must be a number, got %s", name, describe(v))
		}
	}
	return nil
}
