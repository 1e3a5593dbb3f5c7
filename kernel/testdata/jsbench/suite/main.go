// Command suite runs the required draft 2020-12 cases of the JSON-Schema test
// suite against one library (selected by build tag).
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// root is the suite, from kernel/testdata/jsbench in the repository checkout;
// override with JSONSCHEMA_SUITE.
var root = func() string {
	if r := os.Getenv("JSONSCHEMA_SUITE"); r != "" {
		return r
	}
	return "../../../../shared/data/json-schema-test-suite"
}()

type group struct {
	Description string          `json:"description"`
	Schema      json.RawMessage `json:"schema"`
	Tests       []struct {
		Description string          `json:"description"`
		Data        json.RawMessage `json:"data"`
		Valid       bool            `json:"valid"`
	} `json:"tests"`
}

// validator compiles a schema and returns a validity check; remotes maps
// http://localhost:1234/<path> to the bytes of remotes/<path>.
type compileFunc func(schema []byte, remotes map[string][]byte) (func(inst []byte) bool, error)

func main() {
	remotes := map[string][]byte{}
	filepath.WalkDir(filepath.Join(root, "remotes"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, _ := os.ReadFile(p)
		rel, _ := filepath.Rel(filepath.Join(root, "remotes"), p)
		remotes["http://localhost:1234/"+filepath.ToSlash(rel)] = b
		return nil
	})
	files, _ := filepath.Glob(filepath.Join(root, "tests/draft2020-12/*.json"))
	sort.Strings(files)
	pass, fail := 0, 0
	perFile := map[string]int{}
	var failures []string
	for _, f := range files {
		b, _ := os.ReadFile(f)
		var gs []group
		if err := json.Unmarshal(b, &gs); err != nil {
			panic(err)
		}
		for _, g := range gs {
			check, err := safeCompile(g.Schema, remotes)
			for _, tc := range g.Tests {
				ok := false
				if err == nil {
					got, perr := safeCheck(check, tc.Data)
					ok = perr == nil && got == tc.Valid
				}
				if ok {
					pass++
				} else {
					fail++
					perFile[filepath.Base(f)]++
					failures = append(failures, fmt.Sprintf("%s: %s / %s (compile err: %v)", filepath.Base(f), g.Description, tc.Description, trunc(err)))
				}
			}
		}
	}
	fmt.Printf("library=%s pass=%d fail=%d total=%d\n", libName, pass, fail, pass+fail)
	keys := make([]string, 0, len(perFile))
	for k := range perFile {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Printf("  %s: %d failing\n", k, perFile[k])
	}
	if len(os.Args) > 1 && os.Args[1] == "-v" {
		for _, f := range failures {
			fmt.Println("FAIL", f)
		}
	}
}

func trunc(err error) string {
	if err == nil {
		return "none"
	}
	s := err.Error()
	if len(s) > 120 {
		s = s[:120]
	}
	return strings.ReplaceAll(s, "\n", " ")
}

func safeCompile(s []byte, r map[string][]byte) (f func([]byte) bool, err error) {
	defer func() {
		if x := recover(); x != nil {
			err = fmt.Errorf("panic: %v", x)
		}
	}()
	return compile(bytes.Clone(s), r)
}

func safeCheck(f func([]byte) bool, d []byte) (ok bool, err error) {
	defer func() {
		if x := recover(); x != nil {
			err = fmt.Errorf("panic: %v", x)
		}
	}()
	return f(d), nil
}
