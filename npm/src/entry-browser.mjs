import { loadApi } from './loader.mjs';
import { makeCreateSession } from './session.mjs';

async function getModule() {
  const url = new URL('../dist/code.wasm', import.meta.url);
  if (WebAssembly.compileStreaming) {
    try {
      return await WebAssembly.compileStreaming(fetch(url));
    } catch (_) {
      // wrong MIME type from a dev server: fall back to bytes
    }
  }
  const res = await fetch(url);
  return WebAssembly.compile(await res.arrayBuffer());
}

export const createSession = makeCreateSession(() => loadApi(getModule));
export { CodeWasmError } from './session.mjs';
