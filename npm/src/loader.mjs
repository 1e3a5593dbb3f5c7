// The one place the Go runtime is started. Every entry point (node, browser,
// workerd) hands loadApi a function that yields a compiled WebAssembly.Module;
// the instance is created once per process, page or isolate and shared by
// every session.
import './wasm_exec.js';

let apiPromise = null;

// stats counts the Go instances this process, page or isolate started
// and holds the last one's linear memory (the Worker's stats route shows
// both: one instance per isolate, and how much memory it holds).
/** @type {{goInstances: number, goMemory: WebAssembly.Memory | null}} */
export const stats = { goInstances: 0, goMemory: null };

export function loadApi(getModule) {
  if (!apiPromise) {
    apiPromise = start(getModule).catch((err) => {
      apiPromise = null; // a failed start may be retried
      throw err;
    });
  }
  return apiPromise;
}

async function start(getModule) {
  const mod = await getModule();
  const go = new globalThis.Go();
  let resolveReady;
  const ready = new Promise((r) => { resolveReady = r; });
  globalThis.__a3sCodeWasmReady = resolveReady;
  const instance = await WebAssembly.instantiate(mod, go.importObject);
  stats.goInstances++;
  stats.goMemory = /** @type {any} */ (instance).exports.mem;
  const exited = go.run(instance).then(() => {
    apiPromise = null;
    throw new Error('the code-wasm Go runtime exited');
  });
  const api = await Promise.race([ready, exited]);
  delete globalThis.__a3sCodeWasmReady;
  return api;
}
