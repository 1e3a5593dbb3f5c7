import { readFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
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

// Once compiled, V8 recompiles the hot Go functions with TurboFan in the
// background, on every thread of its pool (4 in Node): on a 2-core machine
// those compiles took the cores from the event loop and from the
// processes it spawns (a session's first 100 `bash true` calls: 6.5 s of
// background CPU, 465 ms a call at load 22). After the eager compile the
// background compiles are held to one core less than the machine has (2.5-
// 3.2 s, 208-243 ms a call): the same TurboFan code, arriving later; left
// alone if the user set the flag. RATIONALE.md "Why does the Node entry
// limit V8's wasm compile tasks?".
const userChoseTasks = [...process.execArgv, process.env.NODE_OPTIONS ?? ''].some((a) => a.includes('wasm-num-compilation-tasks'));

async function getModule() {
  const bytes = await readFile(new URL('../dist/code.wasm', import.meta.url));
  try {
    if (userChoseLazy) return await WebAssembly.compile(bytes);
    setFlagsFromString('--no-wasm-lazy-compilation');
    try {
      return await WebAssembly.compile(bytes);
    } finally {
      setFlagsFromString('--wasm-lazy-compilation');
    }
  } finally {
    if (!userChoseTasks) setFlagsFromString(`--wasm-num-compilation-tasks=${Math.max(1, availableParallelism() - 1)}`);
  }
}

export const createSession = makeCreateSession(() => loadApi(getModule), {
  hostKinds: { ...nodePtcHostKinds(), exec: execHost }, // exec: bash and git on a directory workspace
  services: { directory: openDirHost }, // { kind: 'directory', root }: real files
});
export { CodeWasmError } from './session.mjs';
