//go:build sant

package main

import (
	"bytes"
	"fmt"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

const libName = "santhosh-tekuri/jsonschema/v6 v6.0.3"

type memLoader map[string][]byte

func (m memLoader) Load(url string) (any, error) {
	b, ok := m[url]
	if !ok {
		return nil, fmt.Errorf("no remote %s", url)
	}
	return jsonschema.UnmarshalJSON(bytes.NewReader(b))
}

func compile(s []byte, r map[string][]byte) (func([]byte) bool, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(s))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(memLoader(r))
	if err := c.AddResource("http://test.invalid/schema.json", doc); err != nil {
		return nil, err
	}
	sch, err := c.Compile("http://test.invalid/schema.json")
	if err != nil {
		return nil, err
	}
	return func(d []byte) bool {
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(d))
		if err != nil {
			return false
		}
		return sch.Validate(inst) == nil
	}, nil
}
