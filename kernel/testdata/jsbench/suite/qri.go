//go:build qri

package main

import (
	"context"
	"encoding/json"

	"github.com/qri-io/jsonschema"
)

const libName = "qri-io/jsonschema v0.2.1"

// qri-io has no loader hook: remote $refs go to its global registry, which
// fetches over HTTP (no network here, so those fail).
func compile(s []byte, r map[string][]byte) (func([]byte) bool, error) {
	rs := &jsonschema.Schema{}
	if err := json.Unmarshal(s, rs); err != nil {
		return nil, err
	}
	return func(d []byte) bool {
		errs, err := rs.ValidateBytes(context.Background(), d)
		return err == nil && len(errs) == 0
	}, nil
}
