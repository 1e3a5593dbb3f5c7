// Browsers. On a page, the wasm runs in a dedicated Worker and the page
// talks to it through browser-proxy.mjs, so a long tool call (a grep over
// thousands of files) never blocks the page, and OPFS workspaces get the
// sync access handles that exist only in workers. Inside a worker already,
// the wasm runs in that worker's thread.
import { makeCreateSession } from './session.mjs';
import { startWorkerApi } from './browser-proxy.mjs';
import { browserPtcHostKinds } from './ptc-browser.mjs';

// WorkerGlobalScope is read off globalThis: a page's types (lib dom) do not declare it.
const WGS = /** @type {any} */ (globalThis).WorkerGlobalScope;
const inWorker = typeof WGS === 'function' && globalThis instanceof WGS;
let workerApi = null;

// The in-thread path is imported only when used, so a page never loads
// the Go runtime's glue (wasm_exec.js) it does not run.
async function loadInThread() {
  const [{ loadApi }, { getModule }] = await Promise.all([import('./loader.mjs'), import('./browser-wasm.mjs')]);
  return loadApi(getModule);
}

function getApi() {
  if (inWorker || typeof Worker === 'undefined') return loadInThread();
  if (!workerApi) {
    workerApi = startWorkerApi().catch((e) => {
      workerApi = null; // a failed start may be retried
      throw e;
    });
  }
  return workerApi;
}

export const createSession = makeCreateSession(getApi, { hostKinds: browserPtcHostKinds() });
export { CodeWasmError } from './session.mjs';
