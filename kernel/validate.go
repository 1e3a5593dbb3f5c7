package kernel

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/a3s-lab/code-wasm/internal/digest"
	"sort"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// schemaCache compiles each distinct tool schema once (draft 2020-12),
// keyed by its bytes (a map lookup with string(schema) does not copy them;
// a SHA-256 key cost ~12 µs per call under js/wasm for a 2 KB schema). A schema that does not compile is
// cached too, with its error, so a broken tool fails fast every time.
type schemaCache struct {
	mu sync.Mutex
	m  map[string]*compiled
	// builtin holds the schemas compiled without the meta-schema check
	// (BuiltinSchema), apart, so a schema from outside is always checked.
	builtin map[string]*compiled
	// loader serves remote $refs; nil refuses them all.
	loader jsonschema.URLLoader
}

type compiled struct {
	_    [0]func() // never compared: no equality function in the wasm
	once sync.Once
	sch  *jsonschema.Schema
	err  error
	// quick is the built-in schema's quickSchema (nil: outside the subset),
	// made once, before and without the jsonschema compile.
	qonce sync.Once
	quick *quickSchema
}

func newSchemaCache() *schemaCache {
	return &schemaCache{m: map[string]*compiled{}, builtin: map[string]*compiled{}}
}

// Len reports how many distinct schemas the cache has seen (compiled, failed
// to, or so far only checked by the quick validator).
func (c *schemaCache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m) + len(c.builtin)
}

// noLoader refuses every remote $ref: tool schemas must be self-contained,
// and the kernel never touches the network or the local disk to validate.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("remote schema %q not allowed", url)
}

// get compiles schema once; builtin skips the meta-schema check (see
// BuiltinSchema).
func (c *schemaCache) get(schema []byte, builtin bool) (*jsonschema.Schema, error) {
	return c.compile(c.entry(schema, builtin), schema, builtin)
}

// entry is schema's cache entry, made on first sight.
func (c *schemaCache) entry(schema []byte, builtin bool) *compiled {
	m := c.m
	if builtin {
		m = c.builtin
	}
	c.mu.Lock()
	e, ok := m[string(schema)]
	if !ok {
		e = &compiled{}
		m[string(schema)] = e
	}
	c.mu.Unlock()
	return e
}

// quickOf is a built-in schema's quickSchema, or nil.
func (e *compiled) quickOf(schema []byte) *quickSchema {
	e.qonce.Do(func() {
		if len(schema) <= MaxSchemaBytes {
			e.quick = compileQuick(schema)
		}
	})
	return e.quick
}

// compile compiles e's schema once.
func (c *schemaCache) compile(e *compiled, schema []byte, builtin bool) (*jsonschema.Schema, error) {
	e.once.Do(func() {
		if len(schema) > MaxSchemaBytes {
			e.err = fmt.Errorf("schema is %d bytes, over the %d-byte limit", len(schema), MaxSchemaBytes)
			return
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
		if err != nil {
			e.err = fmt.Errorf("schema is not JSON: %v", err)
			return
		}
		comp := jsonschema.NewCompiler()
		comp.DefaultDraft(jsonschema.Draft2020)
		if builtin {
			comp.SkipMetaValidation()
		}
		if c.loader != nil {
			comp.UseLoader(c.loader)
		} else {
			comp.UseLoader(noLoader{})
		}
		sum := digest.Sum256(schema) // names the resource, once per schema
		url := "mem://tool-schema/" + hex.EncodeToString(sum[:]) + ".json"
		if err := comp.AddResource(url, doc); err != nil {
			e.err = err
			return
		}
		e.sch, e.err = comp.Compile(url)
	})
	return e.sch, e.err
}

// ValidateArgs checks args against a JSON Schema (draft 2020-12). It
// returns nil when valid, or an *Error of kind invalid_argument listing at
// most 8 problems in at most 4 KiB. A nil or empty schema accepts any JSON
// object.
func ValidateArgs(tool string, schema, args json.RawMessage) *Error {
	return validateWith(newSchemaCache(), tool, schema, args, false)
}

func validateWith(c *schemaCache, tool string, schema, args json.RawMessage, builtin bool) *Error {
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(args))
	if err != nil {
		return InvalidArgument("%s: arguments are not valid JSON: %v", tool, err)
	}
	if len(bytes.TrimSpace(schema)) == 0 {
		if _, ok := inst.(map[string]any); !ok {
			return InvalidArgument("%s: arguments must be a JSON object", tool)
		}
		return nil
	}
	e := c.entry(schema, builtin)
	// A built-in tool's arguments go to jsonschema only when the quick
	// validator cannot say they are valid (quick.go).
	if builtin {
		if q := e.quickOf(schema); q != nil && q.valid(inst, 0) {
			return nil
		}
	}
	sch, err := c.compile(e, schema, builtin)
	if err != nil {
		return InvalidArgument("%s: tool schema is invalid: %s", tool, capText(err.Error(), MaxSchemaErrorBytes))
	}
	verr := sch.Validate(inst)
	if verr == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(verr, &ve) {
		return InvalidArgument("%s: invalid arguments: %s", tool, capText(verr.Error(), MaxSchemaErrorBytes))
	}
	return InvalidArgument("%s", formatValidation(tool, ve))
}

// formatValidation lists the leaf problems of a validation error: at most
// MaxSchemaErrors, in at most MaxSchemaErrorBytes.
func formatValidation(tool string, ve *jsonschema.ValidationError) string {
	leaves := leafErrors(ve)
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s: invalid arguments:", tool)
	n := 0
	for _, u := range leaves {
		if n == MaxSchemaErrors {
			fmt.Fprintf(&sb, "\n- … and %d more", len(leaves)-n)
			break
		}
		loc := u.InstanceLocation
		if loc == "" {
			loc = "/"
		}
		msg := "invalid"
		if u.Error != nil {
			msg = u.Error.String()
		}
		fmt.Fprintf(&sb, "\n- at %s: %s", loc, msg)
		n++
	}
	return capText(sb.String(), MaxSchemaErrorBytes)
}

// leafErrors lists the leaf problems of a validation error, sorted by
// instance location.
func leafErrors(ve *jsonschema.ValidationError) []jsonschema.OutputUnit {
	units := ve.BasicOutput().Errors
	// Keep leaves: a unit whose keyword location is a prefix of another's
	// (at the same or a deeper instance location) only summarises it.
	var leaves []jsonschema.OutputUnit
	for i, u := range units {
		if u.Error == nil {
			continue
		}
		parent := false
		for j, v := range units {
			if i != j && v.Error != nil && strings.HasPrefix(v.KeywordLocation, u.KeywordLocation+"/") &&
				strings.HasPrefix(v.InstanceLocation, u.InstanceLocation) {
				parent = true
				break
			}
		}
		if !parent {
			leaves = append(leaves, u)
		}
	}
	if len(leaves) == 0 {
		leaves = units
	}
	sort.SliceStable(leaves, func(i, j int) bool { return leaves[i].InstanceLocation < leaves[j].InstanceLocation })
	return leaves
}

// capText cuts s to at most n bytes on a rune boundary, marking the cut.
func capText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const mark = " …[truncated]"
	cut := n - len(mark)
	for cut > 0 && !utf8Start(s[cut]) {
		cut--
	}
	return s[:cut] + mark
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

func jsonUnmarshal(b []byte) (any, error) { return jsonschema.UnmarshalJSON(bytes.NewReader(b)) }

// CheckSchema reports whether schema compiles as a tool schema (draft
// 2020-12 unless its $schema names another draft; no remote $ref).
func CheckSchema(schema json.RawMessage) error {
	_, err := newSchemaCache().get(schema, false)
	return err
}
