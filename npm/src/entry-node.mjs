import { readFile } from 'node:fs/promises';
import { setFlagsFromString } from 'node:v8';
import { loadApi } from './loader.mjs';
import { makeCreateSession } from './session.mjs';
import { nodePtcHostKinds } from './ptc-node.mjs';
import { openDirHost } from './dirhost.mjs';
import { execHost } from './exec-node.mjs';

// V8 compiles a wasm function lazily, on its first call, by default: the
// first call of a session then compiled every Go function it touched on
// the main thread, which blocked the event loop (an AbortSignal, timers)
// for 0.6-1.4 s on a loaded machine. The module is compiled eagerly
// instead (the flag is set for this compile only, unless the user chose
// it on the command line); RATIONALE.md "Why is the wasm compiled
// eagerly in Node?".
const userChoseLazy = [...process.execArgv, process.env.NODE_OPTIONS ?? ''].some((a) => a.includes('wasm-lazy-compilation'));

async function getModule() {
  const bytes = await readFile(new URL('../dist/code.wasm', import.meta.url));
  if (userChoseLazy) return WebAssembly.compile(bytes);
  setFlagsFromString('--no-wasm-lazy-compilation');
  try {
    return await WebAssembly.compile(bytes);
  } finally {
    setFlagsFromString('--wasm-lazy-compilation');
  }
}

export const createSession = makeCreateSession(() => loadApi(getModule), {
  hostKinds: { ...nodePtcHostKinds(), exec: execHost }, // exec: bash and git on a directory workspace
  services: { directory: openDirHost }, // { kind: 'directory', root }: real files
});
export { CodeWasmError } from './session.mjs';
