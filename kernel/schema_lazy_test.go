package kernel

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"
)

// The fork in third_party/jsonschema compiles each draft's meta-schema on
// first use; goroutines compiling schemas of every draft at once must all
// get the meta-schema checks (run with -race).
func TestSchemaDraftsCompileLazilyAndConcurrently(t *testing.T) {
	drafts := []string{
		"https://json-schema.org/draft/2020-12/schema",
		"https://json-schema.org/draft/2019-09/schema",
		"http://json-schema.org/draft-07/schema#",
		"http://json-schema.org/draft-06/schema#",
		"http://json-schema.org/draft-04/schema#",
	}
	var wg sync.WaitGroup
	errs := make(chan error, 4*len(drafts))
	for i := 0; i < 4; i++ {
		for _, d := range drafts {
			wg.Add(1)
			go func() {
				defer wg.Done()
				good := fmt.Sprintf(`{"$schema":%q,"type":"object","properties":{"n":{"type":"integer","minimum":%d}}}`, d, i)
				s, err := CompileSchema(json.RawMessage(good))
				if err != nil {
					errs <- fmt.Errorf("%s: %v", d, err)
					return
				}
				if p := s.Validate(map[string]any{"n": json.Number("-1")}); len(p) != 1 {
					errs <- fmt.Errorf("%s: n=-1 gave %q, want one problem", d, p)
				}
				bad := fmt.Sprintf(`{"$schema":%q,"type":"object","minProperties":"two"}`, d)
				if _, err := CompileSchema(json.RawMessage(bad)); err == nil {
					errs <- fmt.Errorf("%s: a schema with minProperties \"two\" compiled; the meta-schema check did not run", d)
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
