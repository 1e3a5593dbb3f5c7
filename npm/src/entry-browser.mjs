// Browsers. On a page, the wasm runs in a dedicated Worker and the page
// talks to it through browser-proxy.mjs, so a long tool call (a grep over
// thousands of files) never blocks the page, and OPFS workspaces get the
// sync access handles that exist only in workers. Inside a worker already,
// the wasm runs in that worker's thread.
//
// On a page the Worker starts when this module is evaluated, before the
// rest of the session API is imported: its script, the fetch and compile
// of code.wasm and Go's start run while the page still loads session.mjs
// and its imports (RATIONALE.md "Why does the browser entry start its
// Worker on import?"). Only browser-proxy.mjs, browser-wasm.mjs and
// errors.mjs, which import nothing, are imported statically: the page
// fetches all three at once, then starts code.wasm's fetch.
import { startWorkerApi } from './browser-proxy.mjs';
import { getModule } from './browser-wasm.mjs';

// WorkerGlobalScope is read off globalThis: a page's types (lib dom) do not declare it.
const WGS = /** @type {any} */ (globalThis).WorkerGlobalScope;
const inWorker = typeof WGS === 'function' && globalThis instanceof WGS;
let workerApi = null;

// The in-thread path is imported only when used, so a page never loads
// the Go runtime's glue (wasm_exec.js) it does not run.
async function loadInThread() {
  const { loadApi } = await import('./loader.mjs');
  return loadApi(getModule);
}

function getApi() {
  if (inWorker || typeof Worker === 'undefined') return loadInThread();
  if (!workerApi) {
    workerApi = startWorkerApi(getModule).catch((e) => {
      workerApi = null; // a failed start may be retried
      throw e;
    });
  }
  return workerApi;
}

// The session API (session.mjs and the program host), imported once.
let impl = null;
function loadImpl() {
  impl ??= Promise.all([import('./session.mjs'), import('./ptc-browser.mjs')]).then(
    ([{ makeCreateSession }, { browserPtcHostKinds }]) => makeCreateSession(getApi, { hostKinds: browserPtcHostKinds() }),
    (e) => {
      impl = null; // a failed import may be retried
      throw e;
    },
  );
  return impl;
}

if (!inWorker && typeof Worker !== 'undefined') {
  // A failure here is the first createSession's to report (and retry).
  getApi().catch(() => {});
  loadImpl().catch(() => {});
}

/** @type {typeof import('../index.d.ts').createSession} */
export async function createSession(options) {
  return (await loadImpl())(options);
}
export { CodeWasmError } from './errors.mjs';
