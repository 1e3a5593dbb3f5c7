// The Node engine for the `program` tool (PROTOCOL.md "PTC"): each script
// runs in a fresh worker thread, inside an empty vm context (ECMAScript
// globals only) with code generation from strings and wasm turned off,
// 64 MiB of heap, an empty environment, and no objects of the worker's own
// realm in reach. ctx calls leave as messages and come back as JSON text,
// parsed inside the sandbox realm. ptc.stop (timeout, cancellation, end
// of the program) terminates the worker, which pre-empts `for(;;){}` and
// drops every pending promise of the script.
import { Worker } from 'node:worker_threads';
import { PRELUDE, makePtcHostKinds } from './ptc-prelude.mjs';

// Runs in the worker thread (CommonJS, strict). Only primitives cross
// into the sandbox's prelude; the vm context object is never exposed.
const WORKER_SOURCE = `'use strict';
const { parentPort, workerData } = require('node:worker_threads');
const vm = require('node:vm');
const PRELUDE = ${JSON.stringify(PRELUDE)};
(function main(d) {
  const post = (m) => parentPort.postMessage(m);
  function send(id, method, json) { post({ t: 'call', id: Number(id), method: String(method), args: String(json) }); }
  function finish(ok, text, line) {
    post(ok ? { t: 'done', ok: true, value: String(text) } : { t: 'done', ok: false, error: { message: String(text), line: Number(line) || 0 } });
  }
  const context = vm.createContext({}, { name: 'ptc', codeGeneration: { strings: false, wasm: false } });
  const kit = vm.runInContext(PRELUDE, context, { filename: 'ptc-prelude.js' })(send, finish, JSON.stringify(d.methods), JSON.stringify(d.tools), d.name);
  parentPort.on('message', (m) => { if (m && m.t === 'reply') kit.deliver(Number(m.id), !!m.ok, String(m.ok ? m.value : m.error)); });
  let script;
  try {
    script = new vm.Script(d.source, { filename: d.name });
  } catch (e) {
    const m = /:(\\d+)\\n/.exec(String(e.stack));
    finish(false, 'SyntaxError: ' + e.message, m ? Number(m[1]) : 0);
    return;
  }
  let run;
  try {
    script.runInContext(context);
    run = vm.runInContext('typeof run === "function" ? run : undefined', context);
  } catch (e) {
    kit.start(() => { throw e; }, d.inputs);
    return;
  }
  kit.start(run, d.inputs);
})(workerData);
`;

// REFERENCE.md §2.13: 64 MiB of VM memory. The stack is V8's (1 MiB here);
// deep recursion throws a catchable RangeError inside the sandbox.
const RESOURCE_LIMITS = { maxOldGenerationSizeMb: 64, maxYoungGenerationSizeMb: 16, codeRangeSizeMb: 16, stackSizeMb: 1 };

// nodePtcHostKinds returns the PTC handlers for makeCreateSession's
// hostKinds (one table per process; runs are keyed by id).
export function nodePtcHostKinds() {
  return makePtcHostKinds((init, on) => {
    const w = new Worker(WORKER_SOURCE, {
      eval: true, env: {}, argv: [], execArgv: [], stdout: true, stderr: true,
      resourceLimits: RESOURCE_LIMITS, workerData: init,
    });
    w.stdout.resume();
    w.stderr.resume();
    w.on('message', on.message);
    w.on('error', (e) => on.error(e && e.code === 'ERR_WORKER_OUT_OF_MEMORY'
      ? 'RangeError: the program ran out of memory (64 MiB)' : String(e && e.message ? e.message : e)));
    w.on('exit', (code) => on.error(`the program worker exited (code ${code})`));
    return { post: (m) => w.postMessage(m), terminate: () => w.terminate() };
  }, 'node-worker');
}
