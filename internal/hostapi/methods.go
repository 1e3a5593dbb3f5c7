package hostapi

import (
	"bytes"
	"context"
	"fmt"
	"reflect"
	"strings"
)

// The boundary table: every method JS calls on a session is one row,
// built by method from its argument struct and its function. The rows
// live with their domain (sessions.go, tools.go, governance.go,
// events.go); dispatch (hostapi.go) finds them by name. Adding a method
// is adding a row and its function.
var methods = table(append([][]row{sessionMethods, toolMethods, governanceMethods, eventMethods,
	contentMethods}, laterMethods...)...)

// row is one method of the table.
type row struct {
	name string
	// sync: callSync (the method never blocks); otherwise call.
	sync bool
	// whenClosed: the method runs on a closed session too (isClosed,
	// close); every other answers SESSION_CLOSED there.
	whenClosed bool
	run        func(c *call, raw []byte) (any, error)
}

// call is one method call: its context, its session and the method name
// errors are prefixed with.
type call struct {
	ctx    context.Context
	t      *Sessions
	id     int
	e      *entry
	method string
	// in: the bytes given beside the JSON (CallBytes), or nil.
	in []byte
}

// flags mark a row.
type flags uint8

const (
	// syncCall puts the row in callSync; without it the row is in call.
	syncCall flags = 1 << iota
	// whenClosed lets the row run on a closed session.
	whenClosed
)

// noArgs is the argument type of a method that reads no arguments: its
// JSON must be absent, null or {} (anything else is refused, naming the
// method), and is not decoded further.
type noArgs struct{}

// checkNoArgs refuses arguments given to a method that takes none.
func checkNoArgs(method string, raw []byte) error {
	switch string(bytes.TrimSpace(raw)) {
	case "", "null", "{}":
		return nil
	}
	shown := raw
	if len(shown) > 60 {
		shown = append(shown[:60:60], "…"...)
	}
	return errf(CodeInvalidCall, "%s takes no arguments, got %s", method, shown)
}

// method builds one row: the call's JSON arguments are decoded strictly
// into an A (decodeArgs: bounded, jsoncheck first, unknown keys and bad
// values refused naming their key path), every field tagged
// `required:"true"` must be present (a missing one is refused by name,
// never read as its zero value: a writeFile without content must not
// truncate the file), and fn runs with the result.
func method[A any](name string, f flags, fn func(c *call, a *A) (any, error)) row {
	req := requiredFields(reflect.TypeFor[A]())
	_, skip := any((*A)(nil)).(*noArgs)
	return row{name: name, sync: f&syncCall != 0, whenClosed: f&whenClosed != 0,
		run: func(c *call, raw []byte) (any, error) {
			var a A
			if skip {
				if err := checkNoArgs(c.method, raw); err != nil {
					return nil, err
				}
			} else {
				if err := decodeArgs(c.method, raw, &a); err != nil {
					return nil, err
				}
				if err := checkRequired(c.method, reflect.ValueOf(&a).Elem(), req); err != nil {
					return nil, err
				}
			}
			return fn(c, &a)
		}}
}

// requiredField is a field tagged `required:"true"`: a pointer, nil when
// the key was absent or null.
type requiredField struct {
	index int
	key   string
	kind  string
}

func requiredFields(rt reflect.Type) []requiredField {
	if rt.Kind() != reflect.Struct {
		return nil
	}
	var out []requiredField
	for i := range rt.NumField() {
		f := rt.Field(i)
		if f.Tag.Get("required") != "true" {
			continue
		}
		if f.Type.Kind() != reflect.Pointer {
			panic(fmt.Sprintf("hostapi: required field %s.%s must be a pointer", rt, f.Name))
		}
		kind := jsType(f.Type.Elem().Kind().String())
		if f.Type.Elem() == reflect.TypeFor[jsonString]() {
			kind = "a string"
		}
		out = append(out, requiredField{index: i, key: jsonKey(f), kind: kind})
	}
	return out
}

func jsonKey(f reflect.StructField) string {
	tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	if tag == "" {
		return f.Name
	}
	return tag
}

func checkRequired(method string, v reflect.Value, req []requiredField) error {
	for _, f := range req {
		if v.Field(f.index).IsNil() {
			return errf(CodeInvalidCall, "%s: %s is required (%s)", method, f.key, f.kind)
		}
	}
	return nil
}

// table indexes the rows by name; a name given twice is a programming
// error.
func table(groups ...[]row) map[string]row {
	m := map[string]row{}
	for _, g := range groups {
		for _, r := range g {
			if _, dup := m[r.name]; dup {
				panic("hostapi: method " + r.name + " is in the table twice")
			}
			m[r.name] = r
		}
	}
	return m
}
