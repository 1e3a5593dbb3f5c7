// The browser host of the `program` engine (PROTOCOL.md §4 "PTC"): each
// script runs in QuickJS (ptc-quickjs.mjs) inside a fresh dedicated module
// Web Worker (ptc-browser-worker.mjs), spawned by whoever holds the host
// dispatcher (the page, or a worker the package runs in). Nothing of the
// worker's own global scope is reachable from the script: the script's
// realm is QuickJS's. A heap bomb meets the memory cap, a fault of the
// engine ends that worker only, and ptc.stop terminates it.
import { makePtcHostKinds } from './ptc-host.mjs';

// browserPtcHostKinds returns the PTC handlers for makeCreateSession's
// hostKinds, or {} where there is no Worker (the host then answers "no
// handler" and the program fails as unsupported).
export function browserPtcHostKinds() {
  if (typeof Worker === 'undefined') return {};
  return makePtcHostKinds((events) => {
    const w = new Worker(new URL('./ptc-browser-worker.mjs', import.meta.url), { type: 'module', name: 'a3s-ptc' });
    let ended = false;
    w.onmessage = (e) => events.message(e.data);
    w.onerror = (e) => { e.preventDefault?.(); if (!ended) events.error(e.message || 'the program worker failed'); };
    w.onmessageerror = () => events.error('a message from the program worker could not be read');
    return { post: (m) => w.postMessage(m), terminate: () => { ended = true; w.terminate(); }, ref: () => {} };
  }, 'quickjs-web-worker');
}
