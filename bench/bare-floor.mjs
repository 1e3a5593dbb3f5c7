// The Chromium benches' floor (browser.bench.mjs, browser-ab.mjs): a Go
// program exporting a Promise-returning no-op (built like
// internal/jsbridge.Promise), compiled like the package, with the Worker
// that runs it (worker.js: {id, s} in, the same back) and a blank page.
// buildBareFloor answers the directory holding them; the caller removes it.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync, copyFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export function buildBareFloor() {
  const goroot = execFileSync('go', ['env', 'GOROOT'], { encoding: 'utf8' }).trim();
  const tmp = mkdtempSync(join(tmpdir(), 'code-wasm-bare-'));
  writeFileSync(join(tmp, 'go.mod'), 'module hello\n\ngo 1.22\n');
  writeFileSync(join(tmp, 'main.go'), `//go:build js && wasm

package main

import "syscall/js"

func main() {
	api := js.Global().Get("Object").New()
	api.Set("noopAsync", js.FuncOf(func(this js.Value, args []js.Value) any {
		s := args[0].String()
		var h js.Func
		h = js.FuncOf(func(this js.Value, a []js.Value) any {
			resolve := a[0]
			go func() { resolve.Invoke(s) }()
			return nil
		})
		p := js.Global().Get("Promise").New(h)
		h.Release()
		return p
	}))
	js.Global().Get("__helloReady").Invoke(api)
	select {}
}
`);
  execFileSync('go', ['build', '-trimpath', '-ldflags=-s -w', '-o', join(tmp, 'hello.wasm'), '.'], {
    cwd: tmp, env: { ...process.env, GOOS: 'js', GOARCH: 'wasm', GOFLAGS: '' },
  });
  copyFileSync(join(goroot, 'lib/wasm/wasm_exec.js'), join(tmp, 'wasm_exec.js'));
  writeFileSync(join(tmp, 'worker.js'), `importScripts('wasm_exec.js');
let api;
self.__helloReady = (a) => { api = a; postMessage({ ready: true }); };
const go = new Go();
WebAssembly.instantiateStreaming(fetch('hello.wasm'), go.importObject).then((r) => go.run(r.instance));
onmessage = (e) => api.noopAsync(e.data.s).then((s) => postMessage({ id: e.data.id, s }));
`);
  writeFileSync(join(tmp, 'blank.html'), '<!doctype html><title>bench</title>');
  return tmp;
}
