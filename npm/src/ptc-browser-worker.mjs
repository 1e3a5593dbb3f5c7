// The dedicated Web Worker of the browser `program` host (ptc-browser.mjs):
// waits for {t:'start'}, runs that one script on ptc-quickjs.mjs and relays
// its messages.
import { runProgram } from './ptc-quickjs.mjs';

// Blink gives a worker's V8 about 500 KB of stack, and a QuickJS frame
// costs V8 several times its own size: 64 KiB of QuickJS stack is what
// every recursion path measured fits in (deeper ones fail the program).
const STACK_BYTES = 64 << 10;

let receive = null;
const early = [];
self.onmessage = async (e) => {
  const m = e.data;
  if (m && m.t === 'start' && receive === null) {
    receive = (x) => early.push(x);
    const r = await runProgram(m.init, (x) => self.postMessage(x), { stackBytes: STACK_BYTES, wasmModule: m.wasmModule });
    receive = r;
    early.splice(0).forEach(r);
  } else if (receive) {
    receive(m);
  }
};
