package enginetest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/a3s-lab/code-wasm/ptc"
)

// Attempt is one entry of the red-team pack.
type Attempt struct {
	Name     string         `json:"name"`
	Category string         `json:"category"`
	Expect   string         `json:"expect"` // contained | fails | bounded
	Source   []string       `json:"source"` // lines
	Engines  []string       `json:"engines,omitempty"`
	Limits   map[string]any `json:"limits,omitempty"`
	Note     string         `json:"note,omitempty"`
	// AllowWrite marks attempts that try to write pwned.txt through a
	// ctx call that outlives run; the default allow-list includes write.
	AllowWrite bool `json:"allowWrite,omitempty"`
	// AllowedTools, when set, is the program's allowed_tools.
	AllowedTools []string `json:"allowedTools,omitempty"`
}

// RedTeamPath is the pack, relative to a package directory two levels
// below the module root (ptc/<engine>).
const RedTeamPath = "../../npm/test/ptc-redteam.fixture.mjs"

// LoadRedTeam reads the pack: JSON after `export default`.
func LoadRedTeam(path string) ([]Attempt, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	i := bytes.Index(b, []byte("export default "))
	if i < 0 {
		return nil, fmt.Errorf("%s: no `export default`", path)
	}
	b = bytes.TrimSpace(b[i+len("export default "):])
	b = bytes.TrimSuffix(b, []byte(";"))
	var out []Attempt
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return out, nil
}

// canary runs after every attempt: the next program must start from clean
// intrinsics and a working ctx.
var canary = src(
	"async function run(ctx) {",
	"  const bad = [];",
	"  if (Object.prototype.polluted !== undefined || Object.prototype.injected !== undefined) bad.push('Object.prototype');",
	"  if (JSON.parse('{\"a\":1}').a !== 1 || JSON.stringify({b: 2}) !== '{\"b\":2}') bad.push('JSON');",
	"  if ([1, 2].map((x) => x * 2).join() !== '2,4') bad.push('Array.prototype.map');",
	"  if (Promise.prototype.constructor !== Promise) bad.push('Promise');",
	"  if (globalThis.__marker !== undefined) bad.push('marker');",
	"  const t = await ctx.readFile('a.txt');",
	"  if (t !== 'alpha\\n') bad.push('readFile ' + t);",
	"  return bad.length ? bad.join(',') : 'clean';",
	"}")

// RedTeam runs every attempt of the pack that applies to kind ("native",
// "node", "browser") on e, then the canary.
func RedTeam(t *testing.T, e ptc.Engine, kind, path string) {
	pack, err := LoadRedTeam(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(pack) < 30 {
		t.Fatalf("the pack has %d attempts; the floor is 30", len(pack))
	}
	Warm(t, e)
	for _, a := range pack {
		t.Run(a.Name, func(t *testing.T) {
			if len(a.Engines) > 0 && !slices.Contains(a.Engines, kind) {
				t.Skipf("not meaningful on %s: %s", kind, a.Note)
			}
			h := NewHarness(t, e, map[string]string{"a.txt": "alpha\n"})
			// A contained attempt must finish: its 30 s only catches a hang,
			// and a busy machine (load 20, -race) can take over 2 s for the
			// heavier ones. The rest stop at 2 s.
			limits := map[string]any{"timeoutMs": 2000}
			if a.Expect == "contained" {
				limits["timeoutMs"] = 30000
			}
			for k, v := range a.Limits {
				limits[k] = v
			}
			start := time.Now()
			args := map[string]any{"source": strings.Join(a.Source, "\n") + "\n",
				"inputs": map[string]any{"list": []int{1, 2}}, "limits": limits}
			if a.AllowedTools != nil {
				args["allowed_tools"] = a.AllowedTools
			}
			res := h.Program(t, args)
			el := time.Since(start)
			var result any
			ScriptResult(t, res, &result)
			if strings.Contains(res.Output, "escaped") || strings.Contains(fmt.Sprint(result), "escaped") {
				t.Fatalf("ESCAPE: exit %d %q", res.ExitCode, res.Output)
			}
			// An engine that ignores its deadline runs on for minutes; the
			// slack only keeps a busy machine (or the race detector, which
			// slows the copies a wasm memory.grow makes) from failing one
			// that stopped late.
			if el > time.Duration(millis(limits["timeoutMs"]))*time.Millisecond+ptc.SettleGrace+stopSlack {
				t.Errorf("took %v", el)
			}
			switch a.Expect {
			case "contained":
				if res.ExitCode != 0 || result != "contained" {
					t.Fatalf("want exit 0 and 'contained'; exit %d result %v output %q", res.ExitCode, result, res.Output)
				}
			case "fails":
				if res.ExitCode == 0 {
					t.Fatalf("want a failure; got %q", res.Output)
				}
			case "bounded":
			default:
				t.Fatalf("unknown expectation %q", a.Expect)
			}
			if a.Category == "lifetime" || a.AllowWrite {
				time.Sleep(200 * time.Millisecond) // let anything scheduled after run fire
			}
			if _, _, err := h.WS.ReadFile(context.Background(), "pwned.txt"); err == nil {
				t.Fatal("ESCAPE: pwned.txt was written after run returned")
			}
			c := h.Program(t, map[string]any{"source": canary})
			var got any
			ScriptResult(t, c, &got)
			if c.ExitCode != 0 || got != "clean" {
				t.Fatalf("the next program is not clean: exit %d %v %q", c.ExitCode, got, c.Output)
			}
			t.Logf("%s: exit %d in %v", a.Expect, res.ExitCode, el.Round(time.Millisecond))
		})
	}
}

// millis reads a timeoutMs limit: an int set here, or a JSON number from
// the pack.
func millis(v any) int64 {
	switch n := v.(type) {
	case int:
		return int64(n)
	case float64:
		return int64(n)
	}
	return 0
}
