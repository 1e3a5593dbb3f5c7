package main

import (
	"encoding/json"
	"fmt"
	"os"
	"time"
)

func main() {
	t := time.Now()
	var v any
	_ = json.Unmarshal([]byte(`{"a":1}`), &v)
	fmt.Fprintln(os.Stdout, "ok", v != nil, time.Since(t))
}
