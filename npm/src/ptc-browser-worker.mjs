// The dedicated Web Worker of the browser `program` host (ptc-browser.mjs):
// waits for {t:'start'} (a spare first gets {t:'prepare'}: QuickJS loaded
// and a realm made ahead), runs that one script on ptc-quickjs.mjs and
// relays its messages.
import { workerMain } from './ptc-quickjs.mjs';

// Blink gives a worker's V8 about 500 KB of stack, and a QuickJS frame
// costs V8 several times its own size: 64 KiB of QuickJS stack is what
// every recursion path measured fits in (deeper ones fail the program).
const STACK_BYTES = 64 << 10;

const onMessage = workerMain((x) => self.postMessage(x), STACK_BYTES);
self.onmessage = (e) => onMessage(e.data);
