// Fetches and compiles the package's code.wasm in a browser (page or
// worker). Shared by entry-browser.mjs (in-thread) and browser-worker.mjs.
export async function getModule() {
  const url = new URL('../dist/code.wasm', import.meta.url);
  if (WebAssembly.compileStreaming) {
    try {
      return await WebAssembly.compileStreaming(fetch(url).then((r) => { performance.mark?.('code-wasm:response'); return r; }));
    } catch (_) {
      // wrong MIME type from a dev server: fall back to bytes
    }
  }
  const res = await fetch(url);
  if (!res.ok) throw new Error(`code-wasm: fetching ${url} failed: HTTP ${res.status}`);
  return WebAssembly.compile(await res.arrayBuffer());
}
