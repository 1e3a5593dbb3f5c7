// Browsers. On a page, the wasm runs in a dedicated Worker and the page
// talks to it through browser-proxy.mjs, so a long tool call (a grep over
// thousands of files) never blocks the page, and OPFS workspaces get the
// sync access handles that exist only in workers. Inside a worker already,
// the wasm runs in that worker's thread.
import { loadApi } from './loader.mjs';
import { makeCreateSession } from './session.mjs';
import { getModule } from './browser-wasm.mjs';
import { startWorkerApi } from './browser-proxy.mjs';

const inWorker = typeof WorkerGlobalScope !== 'undefined' && globalThis instanceof WorkerGlobalScope;
let workerApi = null;

function getApi() {
  if (inWorker || typeof Worker === 'undefined') return loadApi(getModule);
  if (!workerApi) {
    workerApi = startWorkerApi().catch((e) => {
      workerApi = null; // a failed start may be retried
      throw e;
    });
  }
  return workerApi;
}

export const createSession = makeCreateSession(getApi);
export { CodeWasmError } from './session.mjs';
