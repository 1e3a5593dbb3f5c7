//go:build js && wasm

package dirfs_test

import (
	"context"
	"path/filepath"
	"sync"
	"syscall/js"
	"testing"

	"github.com/a3s-lab/code-wasm/internal/jsbridge"
	"github.com/a3s-lab/code-wasm/workspace/dirfs"
)

// These tests run in Node (make test-wasm) over the npm package's own
// host object, npm/src/dirhost.mjs.
var (
	loadOnce sync.Once
	module   js.Value
	loadErr  error
)

func dirHost(t testing.TB) js.Value {
	t.Helper()
	loadOnce.Do(func() {
		cwd := js.Global().Get("process").Call("cwd").String()
		url := "file://" + filepath.Join(cwd, "../../npm/src/dirhost.mjs")
		imp := js.Global().Get("Function").New("p", "return import(p)")
		module, loadErr = jsbridge.Await(context.Background(), imp.Invoke(url))
	})
	if loadErr != nil {
		t.Fatalf("importing dirhost.mjs: %v", loadErr)
	}
	return module
}

// extraSteps: 30 random steps per extra under js/wasm, not 150. Every
// call is a host round trip of a few syscalls, and the extras (FS's own
// Go code, the same natively, where it passes 150) took 236 of the
// suite's 282 s at 150 on the shared machine.
const extraSteps = 30

// openDir opens root through the Node host object.
func openDir(t testing.TB, root string) *dirfs.FS {
	t.Helper()
	h := dirHost(t).Call("openDirHost", root)
	d, err := dirfs.OpenHost(h)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// swapper is a separate Node process: under js/wasm a goroutine would only
// run between two reads, never during one.
const swapper = `
const fs = require('fs');
const [sw, tmp, ...targets] = process.argv.slice(1);
let n = 0;
process.on('SIGTERM', () => { fs.writeSync(1, String(n)); process.exit(0); });
(function loop() {
  for (let k = 0; k < 200; k++) {
    try { fs.unlinkSync(tmp); } catch {}
    try { fs.symlinkSync(targets[n % targets.length], tmp); fs.renameSync(tmp, sw); n++; } catch {}
  }
  setImmediate(loop);
})();
`

func startSwapper(t *testing.T, sw string, targets ...string) (stop func() int64) {
	cp := js.Global().Get("require").Invoke("child_process")
	args := []any{"-e", swapper, sw, filepath.Join(filepath.Dir(sw), "sw.tmp")}
	for _, a := range targets {
		args = append(args, a)
	}
	child := cp.Call("spawn", js.Global().Get("process").Get("execPath"), js.ValueOf(args))
	var out []byte
	done := make(chan struct{})
	onData := js.FuncOf(func(_ js.Value, a []js.Value) any {
		out = append(out, a[0].Call("toString").String()...)
		return nil
	})
	onExit := js.FuncOf(func(js.Value, []js.Value) any { close(done); return nil })
	child.Get("stdout").Call("on", "data", onData)
	child.Call("on", "exit", onExit)
	// Let the swapper start before the reads begin.
	ready := js.Global().Get("Promise").New(js.FuncOf(func(_ js.Value, a []js.Value) any {
		js.Global().Call("setTimeout", a[0], 300)
		return nil
	}))
	jsbridge.Await(context.Background(), ready)
	return func() int64 {
		child.Call("kill", "SIGTERM")
		<-done
		onData.Release()
		onExit.Release()
		var n int64
		for _, c := range out {
			if c >= '0' && c <= '9' {
				n = n*10 + int64(c-'0')
			}
		}
		return n
	}
}
