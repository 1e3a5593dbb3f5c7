// The worker thread of the Node `program` host (ptc-node.mjs): waits for
// {t:'start'} (a spare first gets {t:'prepare'}: QuickJS loaded and a
// realm made ahead), runs that one script on ptc-quickjs.mjs and relays
// its messages.
import { parentPort } from 'node:worker_threads';
import { workerMain } from './ptc-quickjs.mjs';

parentPort.on('message', workerMain((x) => parentPort.postMessage(x), 512 << 10));
