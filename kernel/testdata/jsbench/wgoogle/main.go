package main

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
)

func main() {
	t := time.Now()
	var s jsonschema.Schema
	json.Unmarshal([]byte(`{"type":"object","required":["a"]}`), &s)
	rs, err := s.Resolve(nil)
	if err != nil {
		panic(err)
	}
	var inst any
	json.Unmarshal([]byte(`{"a":1}`), &inst)
	fmt.Println("ok", rs.Validate(inst) == nil, "first compile+validate", time.Since(t))
}
