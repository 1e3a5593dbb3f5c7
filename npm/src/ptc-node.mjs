// The Node host of the `program` engine (PROTOCOL.md §4 "PTC"): each script
// runs in QuickJS (ptc-quickjs.mjs) inside a fresh worker thread
// (ptc-node-worker.mjs) with an empty environment. The worker's own heap is
// capped as a backstop (the script's memory is QuickJS's, bounded by
// memoryBytes), and its stack is large enough that QuickJS's 512 KiB stack
// bound, not V8's, is what a deep recursion meets. ptc.stop (timeout,
// cancellation, end of the program) terminates the worker.
import { Worker } from 'node:worker_threads';
import { makePtcHostKinds } from './ptc-host.mjs';

// stackSizeMb: a QuickJS frame costs V8 several times its own size (up to
// ~30x in the parser on deeply nested source), so 32 MiB of thread stack
// holds QuickJS's 512 KiB on every path measured.
const RESOURCE_LIMITS = { maxOldGenerationSizeMb: 256, maxYoungGenerationSizeMb: 32, codeRangeSizeMb: 16, stackSizeMb: 32 };

// nodePtcHostKinds returns the PTC handlers for makeCreateSession's
// hostKinds (one table per process; runs are keyed by id).
export function nodePtcHostKinds() {
  return makePtcHostKinds((events) => {
    const w = new Worker(new URL('./ptc-node-worker.mjs', import.meta.url), {
      env: {}, argv: [], execArgv: [], stdout: true, stderr: true, resourceLimits: RESOURCE_LIMITS,
    });
    // A waiting spare does not keep the process alive: it is unref'd, and
    // its messages and output streams are taken only once it runs a
    // program (either would hold the event loop).
    w.unref();
    w.on('error', (/** @type {Error & {code?: string}} */ e) => events.error(e && e.code === 'ERR_WORKER_OUT_OF_MEMORY'
      ? 'RangeError: the program worker ran out of memory' : String(e && e.message ? e.message : e)));
    w.on('exit', (code) => events.error(`the program worker exited (code ${code})`));
    const ref = () => {
      w.ref();
      w.on('message', events.message);
      w.stdout.resume();
      w.stderr.resume();
    };
    return { post: (m) => w.postMessage(m), terminate: () => w.terminate(), ref };
  }, 'quickjs-node-worker');
}
