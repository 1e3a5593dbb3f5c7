package tools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/a3s-lab/code-wasm/kernel"
	"github.com/a3s-lab/code-wasm/tools"
	"github.com/a3s-lab/code-wasm/workspace"
	"github.com/a3s-lab/code-wasm/workspace/memfs"
)

// heavyWS holds what the expensive searches below run over: one
// minified-bundle-like file of one 4 MiB line, and 20,000 small files.
func heavyWS(t *testing.T) *workspace.Workspace {
	t.Helper()
	ctx := context.Background()
	ws, err := workspace.New(memfs.New())
	if err != nil {
		t.Fatal(err)
	}
	// One line, with the searched literal 'z' at its end after eight of
	// [a-h] (so grep's literal prefilter and its neighbour check pass it
	// to the regexp engine), but not after nine or more: no pattern below
	// matches, and the engine runs over the whole line to find that out.
	line := strings.Repeat("abcdefgh", 4<<20/8) + "-abcdefghz"
	if err := ws.PutFile(ctx, "dist/bundle.min.js", []byte(line)); err != nil {
		t.Fatal(err)
	}
	for i := range 20_000 {
		if err := ws.PutFile(ctx, fmt.Sprintf("src/d%02d/aaaaaaaaaaaa%05d.txt", i%50, i), []byte("x\n")); err != nil {
			t.Fatal(err)
		}
	}
	return ws
}

func toolOf(ws *workspace.Workspace, name string) kernel.Tool {
	for _, tl := range tools.Builtins(ws) {
		if tl.Name() == name {
			return tl
		}
	}
	panic(name)
}

// A search that would run for minutes stops soon after its context ends,
// by timeout or by cancellation (an AbortSignal is a cancellation): the
// regexp runs over a long line are metered and read through a reader that
// checks the context, and glob's per-name matching is metered. Without
// that, each of these ran to the end (minutes) with the context long done.
// The bound asserted is generous (a busy machine); the latency is logged.
func TestHeavySearchesStopWhenCancelled(t *testing.T) {
	ws := heavyWS(t)
	// 8 × 90 = 720 distinct alternatives, each a backtracking match.
	var alts []string
	for i := range 90 {
		alts = append(alts, fmt.Sprintf("a*a*a*b%02d", i))
	}
	manyAlts := "src/**/{a,aa,aaa,aaaa,aaaaa,aaaaaa,aaaaaaa,aaaaaaaa}*{" + strings.Join(alts, ",") + "}"
	cases := []struct {
		name, tool string
		args       map[string]any
	}{
		{"grep long line, big alternation", "grep", map[string]any{"pattern": "(a|b|c|d|e|f|g|h){300}z"}},
		{"grep long line, (a|b)*c style", "grep", map[string]any{"pattern": "(a|b|c|d|e|f|g|h|ab|cd)*[a-h]{200}z"}},
		{"grep long line, -i", "grep", map[string]any{"pattern": "([a-h]|x){9,200}Z", "-i": true}},
		{"grep long line, count", "grep", map[string]any{"pattern": "(a|b|c|d|e|f|g|h){300}z", "output_mode": "count"}},
		{"grep long line, files_with_matches", "grep", map[string]any{"pattern": "[a-h]{9,1000}z", "output_mode": "files_with_matches"}},
		{"grep many files, costly glob", "grep", map[string]any{"pattern": "x", "glob": manyAlts}},
		{"glob, costly alternatives", "glob", map[string]any{"pattern": manyAlts}},
	}
	for _, c := range cases {
		for _, how := range []string{"timeout", "cancel"} {
			t.Run(c.name+"/"+how, func(t *testing.T) {
				const after = 150 * time.Millisecond
				var ctx context.Context
				var cancel context.CancelFunc
				if how == "timeout" {
					ctx, cancel = context.WithTimeout(context.Background(), after)
				} else {
					ctx, cancel = context.WithCancel(context.Background())
					time.AfterFunc(after, cancel)
				}
				defer cancel()
				args, _ := json.Marshal(c.args)
				start := time.Now()
				res, err := toolOf(ws, c.tool).Execute(ctx, &kernel.Call{Name: c.tool, Args: args})
				late := time.Since(start) - after
				if err == nil {
					t.Fatalf("finished before the context ended (%v): %.200s", time.Since(start), res.Output)
				}
				if ctx.Err() == nil {
					t.Fatalf("failed before the context ended: %v", err)
				}
				t.Logf("stopped %v after the context ended", late.Round(time.Millisecond))
				if late > 3*time.Second {
					t.Fatalf("stopped %v after the context ended", late)
				}
			})
		}
	}
}

// The same through the kernel: its tool timeout ends the call as a
// timeout. Under js/wasm this needs the search to give way as it runs: the
// kernel's timer is a goroutine that otherwise never gets a turn.
func TestHeavySearchesHonourToolTimeout(t *testing.T) {
	ws := heavyWS(t)
	reg := kernel.NewRegistry()
	for _, tl := range tools.Builtins(ws) {
		if err := reg.RegisterBuiltin(tl); err != nil {
			t.Fatal(err)
		}
	}
	g := kernel.Governance{ToolTimeout: 150 * time.Millisecond}
	g.Permission.DefaultDecision = kernel.DecisionAllow
	k, err := kernel.New(kernel.Config{Registry: reg, Governance: g})
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	for _, args := range []string{
		`{"pattern":"(a|b|c|d|e|f|g|h){300}z","output_mode":"count"}`,
		`{"pattern":"[a-h]{9,1000}Z","-i":true}`,
	} {
		res, err := k.Invoke(context.Background(), kernel.Request{Tool: "grep", Origin: kernel.OriginHostTrusted, Args: json.RawMessage(args)})
		if err != nil {
			t.Fatal(err)
		}
		if res.ErrorKind == nil || res.ErrorKind.Type != kernel.ErrTimeout {
			t.Fatalf("grep %s: not timed out: exit %d kind %+v %.200s", args, res.ExitCode, res.ErrorKind, res.Output)
		}
	}
}

// Patterns whose matching would be exponential, or whose program is huge,
// are refused before any work, as invalid_argument naming the limit: the
// glob tool's pattern, grep's glob, grep's pattern.
func TestHeavyPatternsRefusedUpFront(t *testing.T) {
	ws, err := workspace.New(memfs.New())
	if err != nil {
		t.Fatal(err)
	}
	if err := ws.PutFile(context.Background(), "a/b.txt", []byte("x\n")); err != nil {
		t.Fatal(err)
	}
	nested := strings.Repeat("{a,", 12) + "b" + strings.Repeat("}", 12)
	globs := []struct{ name, pattern, want string }{
		{"nested braces", nested, "nests braces 12 deep; the limit is 8"},
		{"braces in sequence", strings.Repeat("{a,a}", 30) + "x", "more than 1024 alternatives"},
		{"** plus braces", "**/" + strings.Repeat("{*a,*b}", 16) + "/**/x", "more than 1024 alternatives"},
		{"nested and in sequence", strings.Repeat("{{a,b}{c,d},{e,{f,g}}}", 6), "more than 1024 alternatives"},
		{"long", "**/" + strings.Repeat("*a", 600), "the limit is 1024 bytes"},
	}
	for _, g := range globs {
		for _, call := range []struct{ tool, arg string }{{"glob", "pattern"}, {"grep", "glob"}} {
			t.Run(g.name+"/"+call.tool, func(t *testing.T) {
				args := map[string]any{call.arg: g.pattern}
				if call.tool == "grep" {
					args["pattern"] = "x"
				}
				b, _ := json.Marshal(args)
				_, err := toolOf(ws, call.tool).Execute(context.Background(), &kernel.Call{Name: call.tool, Args: b})
				if k := kernel.KindOf(err); k == nil || k.Type != kernel.ErrInvalidArgument || !strings.Contains(err.Error(), g.want) {
					t.Fatalf("%s: %v; want invalid_argument saying %q", call.tool, err, g.want)
				}
			})
		}
	}
	for _, p := range []string{strings.Repeat(`[a-z]{1,1000}`, 6), `(ab|cd|ef|gh|ij){1000}`, `(\w+\s*){1,1000}(\w+\s*){1,1000}`} {
		b, _ := json.Marshal(map[string]any{"pattern": p, "-i": true})
		_, err := toolOf(ws, "grep").Execute(context.Background(), &kernel.Call{Name: "grep", Args: b})
		if k := kernel.KindOf(err); k == nil || k.Type != kernel.ErrInvalidArgument || !strings.Contains(err.Error(), "regexp instructions; the limit is 10000") {
			t.Fatalf("grep %.30q: %v; want invalid_argument naming the program limit", p, err)
		}
	}
}
