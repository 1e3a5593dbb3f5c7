package main

import (
	"bytes"
	"fmt"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

func main() {
	t := time.Now()
	c := jsonschema.NewCompiler()
	doc, _ := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(`{"type":"object","required":["a"]}`)))
	c.AddResource("s.json", doc)
	s, err := c.Compile("s.json")
	if err != nil {
		panic(err)
	}
	inst, _ := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(`{"a":1}`)))
	fmt.Println("ok", s.Validate(inst) == nil, "first compile+validate", time.Since(t))
}
