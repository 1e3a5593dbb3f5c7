//go:build !js

package ptc_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a3s-lab/code-wasm/ptc"
	"github.com/a3s-lab/code-wasm/ptc/enginetest"
)

// nodeHost starts testdata/nodehost.mjs and returns a HostFunc speaking to
// it: the real Node engine (npm/src/ptc-node.mjs, QuickJS in a worker
// thread) driven natively.
func nodeHost(t *testing.T) ptc.HostFunc { return stdioHost(t, "testdata/nodehost.mjs") }

// browserHost does the same with testdata/browserhost.mjs: the real
// browser engine (npm/src/ptc-browser.mjs, QuickJS in a Web Worker) in
// headless Chromium.
func browserHost(t *testing.T) ptc.HostFunc {
	t.Helper()
	chromium := os.Getenv("CHROMIUM")
	if chromium == "" {
		chromium = "/usr/bin/chromium"
	}
	if _, err := os.Stat(chromium); err != nil {
		t.Skip("no chromium")
	}
	if _, err := os.Stat("../node_modules/playwright-core"); err != nil {
		t.Skip("no playwright-core (npm ci)")
	}
	return stdioHost(t, "testdata/browserhost.mjs")
}

func stdioHost(t *testing.T, script string) ptc.HostFunc {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not found")
	}
	cmd := exec.Command(node, script)
	cmd.Stderr = os.Stderr
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); cmd.Wait() })
	type reply struct {
		ID     int64  `json:"id"`
		OK     bool   `json:"ok"`
		Result string `json:"result"`
		Error  string `json:"error"`
	}
	var (
		mu      sync.Mutex
		next    int64
		waiting = map[int64]chan reply{}
	)
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	// browserhost.mjs's first JSON line is {ready: true}; lines before it
	// are not the protocol's (web/test/browser.mjs loads node:test, which
	// prints its TAP header).
	if script == "testdata/browserhost.mjs" {
		ready := false
		for !ready && sc.Scan() {
			ready = strings.Contains(sc.Text(), `"ready"`)
		}
		if !ready {
			t.Fatalf("%s did not start", script)
		}
	}
	go func() {
		for sc.Scan() {
			var r reply
			if json.Unmarshal(sc.Bytes(), &r) != nil {
				continue
			}
			mu.Lock()
			ch := waiting[r.ID]
			delete(waiting, r.ID)
			mu.Unlock()
			if ch != nil {
				ch <- r
			}
		}
	}()
	write := func(v any) {
		b, _ := json.Marshal(v)
		mu.Lock()
		stdin.Write(append(b, '\n'))
		mu.Unlock()
	}
	return func(ctx context.Context, kind string, payload []byte) ([]byte, error) {
		ch := make(chan reply, 1)
		mu.Lock()
		next++
		id := next
		waiting[id] = ch
		mu.Unlock()
		write(map[string]any{"id": id, "kind": kind, "payload": string(payload)})
		select {
		case r := <-ch:
			if !r.OK {
				return nil, errors.New(r.Error)
			}
			return []byte(r.Result), nil
		case <-ctx.Done():
			write(map[string]any{"abort": id})
			return nil, ctx.Err()
		}
	}
}

// warm runs a trivial program on e and gives the spare worker the host
// starts after it time to boot: the first program of a host compiles
// QuickJS's wasm and the next one may wait for a worker, neither of which
// the red-team pack's 1 s timeouts are meant to cover.
func warm(t *testing.T, e ptc.Engine) ptc.Engine {
	t.Helper()
	h := enginetest.NewHarness(t, e, nil)
	if res := h.Program(t, map[string]any{"source": "async function run() { return 1 }"}); res.ExitCode != 0 {
		t.Fatalf("warm-up program: %s", res.Output)
	}
	time.Sleep(time.Second)
	return e
}

func TestNodeEngineConformance(t *testing.T) {
	e := warm(t, ptc.NewHostEngine(nodeHost(t)))
	enginetest.Run(t, e)
	if e.Name() != "quickjs-node-worker" {
		t.Fatalf("runtime %q", e.Name())
	}
}

func TestNodeEngineRedTeam(t *testing.T) {
	enginetest.RedTeam(t, warm(t, ptc.NewHostEngine(nodeHost(t))), "node", "../npm/test/ptc-redteam.fixture.mjs")
}

// A dispatcher without the ptc.* kinds (workerd) makes the program fail as
// unsupported, with the reason.
func TestHostEngineWithoutPTCKinds(t *testing.T) {
	host := func(ctx context.Context, kind string, payload []byte) ([]byte, error) {
		return nil, errors.New(`no handler for host kind "` + kind + `"`)
	}
	h := enginetest.NewHarness(t, ptc.NewHostEngine(host), nil)
	res := h.Program(t, map[string]any{"source": "async function run(){ return 1 }"})
	if res.ExitCode == 0 || res.ErrorKind == nil || res.ErrorKind.Type != "unsupported" || !strings.Contains(res.Output, "no JavaScript engine") {
		t.Fatalf("%+v", res)
	}
}

func TestBrowserEngineConformance(t *testing.T) {
	e := warm(t, ptc.NewHostEngine(browserHost(t)))
	enginetest.Run(t, e)
	if e.Name() != "quickjs-web-worker" {
		t.Fatalf("runtime %q", e.Name())
	}
}

func TestBrowserEngineRedTeam(t *testing.T) {
	enginetest.RedTeam(t, warm(t, ptc.NewHostEngine(browserHost(t))), "browser", "../npm/test/ptc-redteam.fixture.mjs")
}
