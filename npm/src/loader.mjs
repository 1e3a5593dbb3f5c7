// The one place the Go runtime is started. Every entry point (node, browser,
// workerd) hands loadApi a function that yields a compiled WebAssembly.Module;
// the instance is created once per process, page or isolate and shared by
// every session.
import './wasm_exec.js';
import { fetchBody } from './fetchbody.mjs';
import { makeDoors } from './door.mjs';

let apiPromise = null;

// stats counts the Go instances this process, page or isolate started
// and holds the last one's linear memory (the Worker's stats route shows
// both: one instance per isolate, and how much memory it holds), and
// counts the entries into Go (each JS -> Go callback and each Go timer
// resumes the Go scheduler): work per call that does not depend on how
// busy the machine is (bench/browser.bench.mjs reports it per round trip).
/** @type {{goInstances: number, goMemory: WebAssembly.Memory | null, goEntries: number}} */
export const stats = { goInstances: 0, goMemory: null, goEntries: 0 };

export function loadApi(getModule) {
  if (!apiPromise) {
    apiPromise = start(getModule).catch((err) => {
      apiPromise = null; // a failed start may be retried
      throw err;
    });
  }
  return apiPromise;
}

// In Node, the Go runtime's wake-up timer must not hold the process open
// while no session is: Go cleans stopped timers lazily, so a stopped timer
// (a call's 120 s timeout that ended early) can stay its next wake-up, and
// its setTimeout kept a script alive that long after its last session
// closed. While a session is open (or being created) the timers keep the
// process alive as before: a call may be waiting on one.
class IdleTimeouts extends Map {
  open = 0;
  set(id, t) {
    if (this.open === 0) t?.unref?.();
    return super.set(id, t);
  }
  add(n) {
    const was = this.open;
    this.open += n;
    if ((was === 0) !== (this.open === 0)) for (const t of this.values()) (this.open === 0 ? t?.unref : t?.ref)?.call(t);
  }
}

// counted wraps api so timeouts know how many sessions are open.
function counted(api, timeouts) {
  const closed = new Set();
  return {
    ...api,
    async createSession(...args) {
      timeouts.add(1);
      try {
        return await api.createSession(...args);
      } catch (e) {
        timeouts.add(-1);
        throw e;
      }
    },
    call(handle, method, ...rest) {
      const p = api.call(handle, method, ...rest);
      if (method !== 'close' || closed.has(handle)) return p;
      closed.add(handle);
      const done = () => timeouts.add(-1);
      return p.then((v) => { done(); return v; }, (e) => { done(); throw e; });
    },
  };
}

// In Node, start holds a ref'd timer until Go is ready. A pending
// WebAssembly.compile or instantiate holds no libuv handle: with nothing
// else alive, uv_run returned and Node drained V8's platform tasks
// (NodePlatform::DrainTasks), running the rest of the start, the first
// createSession and the caller's next steps inside that drain, whose next
// round blocks until every background task (the wasm tier-up compiles the
// start set off) has ended: the event loop stood still 2-6 s after the
// first session was ready (load 20), and the first call's AbortSignal and
// timers waited (RATIONALE.md "Why did the first call of a process ignore
// its abort?").
async function start(getModule) {
  const node = typeof process !== 'undefined' && !!process.versions?.node;
  const keep = node ? setInterval(() => {}, 1 << 30) : undefined;
  try {
    return await startGo(getModule, node);
  } finally {
    clearInterval(keep);
  }
}

const mark = (n) => globalThis.performance?.mark?.(`code-wasm:${n}`);
async function startGo(getModule, node) {
  mark('start');
  const mod = await getModule();
  mark('compiled');
  const go = new globalThis.Go();
  const resume = go._resume.bind(go);
  go._resume = () => { stats.goEntries++; resume(); };
  const timeouts = node ? new IdleTimeouts() : null;
  if (timeouts) go._scheduledTimeouts = timeouts;
  let resolveReady;
  const ready = new Promise((r) => { resolveReady = r; });
  globalThis.__a3sCodeWasmReady = resolveReady;
  globalThis.__a3sCodeWasmFetch = fetchBody; // read once by Go's start (internal/fetch)
  const instance = await WebAssembly.instantiate(mod, go.importObject);
  mark('instantiated');
  stats.goInstances++;
  stats.goMemory = /** @type {any} */ (instance).exports.mem;
  // The program engine's ctx-call doors over Go's exports (door.mjs), read
  // once by Go's start (ptc, direct_js.go); a call through one counts as an
  // entry into Go.
  globalThis.__a3sCodeWasmDoor = makeDoors(/** @type {any} */ (instance).exports, () => { stats.goEntries++; });
  const exited = go.run(instance).then(() => {
    apiPromise = null;
    throw new Error('the code-wasm Go runtime exited');
  });
  const api = await Promise.race([ready, exited]);
  mark('go-ready');
  delete globalThis.__a3sCodeWasmReady;
  delete globalThis.__a3sCodeWasmFetch;
  delete globalThis.__a3sCodeWasmDoor;
  return timeouts ? counted(api, timeouts) : api;
}
