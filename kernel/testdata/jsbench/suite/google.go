//go:build google

package main

import (
	"encoding/json"
	"fmt"
	"net/url"

	"github.com/google/jsonschema-go/jsonschema"
)

const libName = "google/jsonschema-go v0.4.3"

func compile(s []byte, r map[string][]byte) (func([]byte) bool, error) {
	var sch jsonschema.Schema
	if err := json.Unmarshal(s, &sch); err != nil {
		return nil, err
	}
	rs, err := sch.Resolve(&jsonschema.ResolveOptions{BaseURI: "http://test.invalid/schema.json", Loader: func(u *url.URL) (*jsonschema.Schema, error) {
		u2 := *u
		u2.Fragment = ""
		b, ok := r[u2.String()]
		if !ok {
			return nil, fmt.Errorf("no remote %s", u)
		}
		var s jsonschema.Schema
		if err := json.Unmarshal(b, &s); err != nil {
			return nil, err
		}
		return &s, nil
	}})
	if err != nil {
		return nil, err
	}
	return func(d []byte) bool {
		var inst any
		if err := json.Unmarshal(d, &inst); err != nil {
			return false
		}
		return rs.Validate(inst) == nil
	}, nil
}
