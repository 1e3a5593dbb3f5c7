// The worker thread of the Node `program` host (ptc-node.mjs): waits for
// {t:'start'}, runs that one script on ptc-quickjs.mjs and relays its
// messages.
import { parentPort } from 'node:worker_threads';
import { runProgram } from './ptc-quickjs.mjs';

let receive = null;
const early = [];
parentPort.on('message', async (m) => {
  if (m && m.t === 'start' && receive === null) {
    receive = (x) => early.push(x);
    const r = await runProgram(m.init, (x) => parentPort.postMessage(x), { stackBytes: 512 << 10, wasmModule: m.wasmModule });
    receive = r;
    early.splice(0).forEach(r);
  } else if (receive) {
    receive(m);
  }
});
