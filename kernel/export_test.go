package kernel

import (
	"encoding/json"
	"fmt"
)

// memLoader serves remote schemas from memory (the test suite's remotes).
type memLoader map[string][]byte

func (m memLoader) Load(url string) (any, error) {
	b, ok := m[url]
	if !ok {
		return nil, fmt.Errorf("no remote %s", url)
	}
	return jsonUnmarshal(b)
}

// ValidateWithRemotes validates inst against schema with the kernel's
// validator, serving remote $refs from remotes.
func ValidateWithRemotes(schema, inst json.RawMessage, remotes map[string][]byte) *Error {
	c := newSchemaCache()
	c.loader = memLoader(remotes)
	return validateWith(c, "suite", schema, inst, false)
}

// SchemaCacheLen reports how many distinct schemas the kernel's cache has seen.
func (k *Kernel) SchemaCacheLen() int { return k.schemas.Len() }
