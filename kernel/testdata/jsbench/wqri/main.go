package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/qri-io/jsonschema"
)

func main() {
	t := time.Now()
	rs := &jsonschema.Schema{}
	json.Unmarshal([]byte(`{"type":"object","required":["a"]}`), rs)
	errs, err := rs.ValidateBytes(context.Background(), []byte(`{"a":1}`))
	fmt.Println("ok", err == nil && len(errs) == 0, "first compile+validate", time.Since(t))
}
