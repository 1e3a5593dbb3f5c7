// The worker thread of the Node `program` host (ptc-node.mjs): runs one
// script on ptc-quickjs.mjs and relays its messages.
import { parentPort, workerData } from 'node:worker_threads';
import { runProgram } from './ptc-quickjs.mjs';

const early = [];
let receive = (m) => early.push(m);
parentPort.on('message', (m) => receive(m));
const r = await runProgram(workerData.init, (m) => parentPort.postMessage(m), { stackBytes: 512 << 10, wasmModule: workerData.wasmModule });
receive = r;
early.splice(0).forEach(r);
