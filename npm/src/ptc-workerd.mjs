// The Cloudflare Workers host of the `program` engine (PROTOCOL.md §4
// "PTC"): Workers have no eval and no threads, so each script runs in
// QuickJS (ptc-quickjs.mjs) on the calling thread, behind the same ptc.*
// host kinds as Node and browsers (ptc-host.mjs). Each run gets a fresh
// QuickJS runtime and realm in an instance of the module imported by the
// entry (never compiled from bytes); an instance is reused after a run
// that succeeded (or, when the run's realm was its image's, after any end
// but a wasm fault: the image put back erases the run) and dropped
// otherwise (makeQuickJSPool).
//
// On the calling thread a spinning script blocks the isolate, so the
// script itself must stop: the interrupt handler enforces a CPU budget
// in ticks (Date.now() is frozen during CPU work in production) as well
// as the deadline, and the memory is capped below the isolate's 128 MB.
import { makePtcHostKinds } from './ptc-host.mjs';
import { runProgram, makeQuickJSPool } from './ptc-quickjs.mjs';

// WORKERD_LIMITS: memoryCap bounds a program's QuickJS memory (Go asks
// for 64 MiB; the isolate also holds Go and every request); ticksPerMs
// turns timeoutMs into the CPU budget (QuickJS calls the handler about 6
// times per ms of busy loop in workerd: research/workers.md); stackBytes
// is QuickJS's stack bound, within the V8 stack a Worker runs on.
export const WORKERD_LIMITS = { memoryCap: 32 << 20, ticksPerMs: 6, stackBytes: 256 << 10 };

// workerdPtcHostKinds returns the PTC handlers for makeCreateSession's
// hostKinds; wasmModule is the QuickJS WebAssembly.Module the entry imports.
/** @param {WebAssembly.Module} wasmModule */
export function workerdPtcHostKinds(wasmModule) {
  // Instances of the QuickJS module, each lent to one run at a time: a
  // run gets a fresh runtime and realm, not a fresh instance, made while
  // the isolate had nothing else to do, or put back from an image of the
  // instance taken before any script ran in it (makeQuickJSPool).
  const pool = makeQuickJSPool(wasmModule, WORKERD_LIMITS.memoryCap, { stackBytes: WORKERD_LIMITS.stackBytes });
  return makePtcHostKinds((events) => {
    let receive = null;
    let stopped = false;
    const early = [];
    return {
      ref() {},
      // direct: Go's door for ctx calls (PROTOCOL.md §4): QuickJS runs on
      // Go's thread here, so a call crosses once, synchronously.
      post(m, direct) {
        if (stopped) return;
        if (m && m.t === 'start' && receive === null) {
          receive = (x) => early.push(x);
          // Once stopped, Go may have released the door: no call reaches it.
          const door = typeof direct === 'function'
            ? (/** @type {any[]} */ ...a) => (stopped ? '!the program was stopped' : direct(...a)) : undefined;
          runProgram(m.init, (x) => { if (!stopped) events.message(x); }, { ...WORKERD_LIMITS, wasmModule, pool, direct: door }).then((r) => {
            receive = r;
            early.splice(0).forEach(r);
          }, (e) => events.error(String(e?.message ?? e)));
        } else if (receive) {
          receive(m);
        }
      },
      // Nothing of a stopped run reaches Go once receive is gone; its
      // instance goes back to the pool only if its script still ends as
      // runProgram keeps an instance for (makeQuickJSPool).
      terminate() {
        stopped = true;
        receive = () => {};
        early.length = 0;
        return Promise.resolve();
      },
    };
  }, 'quickjs-workerd');
}
