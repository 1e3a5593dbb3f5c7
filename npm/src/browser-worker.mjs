// The dedicated Worker the browser entry runs the wasm in (see
// browser-proxy.mjs for the page side and RATIONALE.md "Why does the
// browser build run in a dedicated Worker?"). It owns the one Go instance
// and answers the page's messages with the PROTOCOL.md `api` object:
//   page → worker: createSession, call, callBytes, abort, callSync, subscribe,
//                  nextEvents, unsubscribe, hostResult
//   worker → page: ready, result, state, host, hostAbort, warn
// After every call, and every 16 ms while a call of the session runs,
// the worker posts the session's synchronous state (toolNames,
// toolDefinitions, activeTools, pendingConfirmations, isClosed, mcpStatus,
// skillNames) if it changed, so the page answers those synchronous methods
// from a cache.
import { loadApi } from './loader.mjs';
import { getModule } from './browser-wasm.mjs';

// Host kinds answered here, inside the worker, instead of on the page
// (none today: the page answers the ptc.* kinds and spawns the program
// workers). Everything else goes to the page.
const workerHostKinds = {};

const STATE_METHODS = ['toolNames', 'toolDefinitions', 'activeTools', 'pendingConfirmations', 'isClosed', 'mcpStatus', 'skillNames'];
const sessions = new Map(); // handle -> {subs: Map(local -> real), state: {}, last, running, timer}
// A closed session's event subscriptions, kept until each has read the
// events queued before the close (Go keeps them readable: core.Bus.Close).
const draining = new Map(); // handle -> Map(local -> real)
const subsOf = (handle) => sessions.get(handle)?.subs ?? draining.get(handle);

function closed(handle) {
  const s = sessions.get(handle);
  sessions.delete(handle);
  if (s?.subs.size) draining.set(handle, s.subs);
}

function dropSub(handle, sub) {
  const subs = subsOf(handle);
  subs?.delete(sub);
  if (subs?.size === 0) draining.delete(handle);
}
const calls = new Map(); // call id -> AbortController
const hostWaits = new Map(); // host id -> {resolve, reject}
let nextHostId = 0;

const post = (m, transfer = []) => self.postMessage(m, { transfer });
const errorOf = (e) => ({ message: String(e?.message ?? e), code: e?.code ?? 'INTERNAL', detail: e?.detail });

// Start-up marks (code-wasm:*, bench/browser-phases.mjs), here and in loader.mjs.
performance.mark('code-wasm:worker-eval');
let api;
// The page posts the code.wasm Module it compiled (browser-proxy.mjs), or
// why it could not: then the Worker fetches and compiles it itself.
let fromPage;
const pageModule = new Promise((resolve) => { fromPage = resolve; });
const ready = loadApi(() => pageModule.then((m) => m.module ?? getModule())).then(
  (a) => { api = a; post({ op: 'ready', version: a.version }); },
  (e) => post({ op: 'ready', error: errorOf(e) }),
);

function syncJSON(handle, method, args) {
  const r = args === undefined ? api.callSync(handle, method) : api.callSync(handle, method, args);
  return typeof r === 'string' ? r : null;
}

// What each refresh re-reads: while a call runs, the running tools and
// the pending confirmations change; a call may also close the session or
// change the tool surface (toolDefinitions, the largest, is re-read only
// when the names changed). Each is one syncState (one Go entry, not one
// per method), given as its JSON arguments.
const DURING_CALL = JSON.stringify({ methods: ['activeTools', 'pendingConfirmations'] });
const AFTER_CALL = JSON.stringify({ methods: ['activeTools', 'pendingConfirmations', 'isClosed', 'toolNames', 'mcpStatus', 'skillNames'] });

// collectState re-reads methods and returns those whose JSON changed since
// the page last got them, or null. s.last holds each read's last answer
// while the state still agrees with it: the same answer again changed
// nothing, and the common case costs no JSON.parse. read: the syncState
// answer Go gave at the end of the call (api.call's after.state), if any.
function collectState(handle, methods, read) {
  const s = sessions.get(handle);
  if (!s) return null;
  const all = typeof read === 'string' ? read : syncJSON(handle, 'syncState', methods);
  if (all === null || s.last.get(methods) === all) return null;
  const changed = {};
  let any = false;
  const take = (m, v) => {
    if (v !== undefined && v !== null && v !== s.state[m]) { s.state[m] = v; changed[m] = v; any = true; }
  };
  for (const [m, v] of Object.entries(JSON.parse(all))) take(m, v);
  if (changed.toolNames) take('toolDefinitions', syncJSON(handle, 'toolDefinitions'));
  if (any) s.last.clear(); // the other reads' answers may not hold now
  s.last.set(methods, all);
  return any ? changed : null;
}

function pushState(handle, methods) {
  const changed = collectState(handle, methods);
  if (changed) post({ op: 'state', handle, state: changed });
}

// While a call of the session runs, the page's activeTools and
// pendingConfirmations are refreshed every 16 ms, so a long call shows as
// running; a short one costs no read of its own (its result carries the
// state). The Worker once followed the session's events for this: two
// batches of events per call, each a Go entry to deliver and one to wait
// for the next, nearly half of a tool('read')'s Go entries.
function busy(handle, d) {
  const s = sessions.get(handle);
  if (!s) return;
  s.running += d;
  if (s.running > 0 && !s.timer) {
    const tick = () => {
      s.timer = null;
      if (s.running <= 0 || !sessions.has(handle)) return;
      pushState(handle, DURING_CALL);
      s.timer = setTimeout(tick, 16);
    };
    s.timer = setTimeout(tick, 16);
  }
}

// hostFor routes a session's host calls to the page by the id of the
// createSession request (the handle is not known before it resolves).
function hostFor(session) {
  return (kind, payloadJSON, signal) => {
    const local = workerHostKinds[kind];
    if (local) return local(payloadJSON, signal);
    return new Promise((resolve, reject) => {
      const id = ++nextHostId;
      hostWaits.set(id, { resolve, reject });
      signal?.addEventListener('abort', () => post({ op: 'hostAbort', id }), { once: true });
      // Go is inside this call (Go -> JS): reading the session's state now
      // would call back into Go (callSync) from within it, and with many
      // host calls at once (a program's concurrent ctx calls) those
      // re-entries nest until the worker's stack overflows and the Go
      // runtime dies ("fatal error: panic on system stack"). So the state
      // is read, and the message posted, once Go has returned to JS: the
      // page's code still gets the state as of now (activeTools shows the
      // call waiting on it) before it runs.
      queueMicrotask(() => {
        for (const [handle, s] of sessions) if (s.createId === session) pushState(handle, DURING_CALL);
        post({ op: 'host', id, session, kind, payload: payloadJSON });
      });
    });
  };
}

// answer posts fn's outcome; after a call on a session it carries that
// session's changed state, so the page's cache is fresh when the call's
// Promise resolves. after: the object a call passed to api.call, whose
// state Go set at the call's end (one Go entry per call, not two).
async function answer(id, fn, handle, after) {
  let msg;
  try {
    msg = { op: 'result', id, ok: true, value: await fn() };
  } catch (e) {
    msg = { op: 'result', id, ok: false, error: errorOf(e) };
  }
  if (handle !== undefined) {
    const state = collectState(handle, AFTER_CALL, after?.state);
    if (state) Object.assign(msg, { handle, state });
  }
  // The answer's bytes (callBytes) are the worker's own: transferred, not
  // copied.
  const buf = msg.value?.bytes?.buffer;
  post(msg, buf ? [buf] : []);
}

const handlers = {
  createSession: (m) => answer(m.id, async () => {
    const handle = await api.createSession(m.options, m.hasHost ? hostFor(m.id) : undefined, m.hostKinds, undefined, m.files);
    const s = { subs: new Map(), state: {}, last: new Map(), running: 0, timer: null, createId: m.id };
    sessions.set(handle, s);
    const all = JSON.parse(syncJSON(handle, 'syncState', JSON.stringify({ methods: STATE_METHODS })) ?? '{}');
    for (const k of STATE_METHODS) s.state[k] = all[k] ?? null;
    return { handle, state: s.state };
  }),
  call: (m) => {
    const after = { syncState: AFTER_CALL };
    const done = answer(m.id, async () => {
      const ac = m.hasSignal ? new AbortController() : undefined;
      if (ac) calls.set(m.id, ac);
      busy(m.handle, 1);
      try {
        return await api.call(m.handle, m.method, m.args, ac?.signal, after);
      } finally {
        busy(m.handle, -1);
        calls.delete(m.id);
      }
    }, m.handle, after);
    if (m.method === 'close') done.then(() => closed(m.handle));
  },
  callBytes: (m) => answer(m.id, async () => {
    const ac = m.hasSignal ? new AbortController() : undefined;
    if (ac) calls.set(m.id, ac);
    busy(m.handle, 1);
    try {
      return await api.callBytes(m.handle, m.method, m.args, m.bytes, ac?.signal);
    } finally {
      busy(m.handle, -1);
      calls.delete(m.id);
    }
  }, m.handle),
  abort: (m) => calls.get(m.id)?.abort(),
  callSync: (m) => {
    const r = m.args === undefined ? api.callSync(m.handle, m.method) : api.callSync(m.handle, m.method, m.args);
    if (m.id !== undefined) { // the page waits for this one's answer
      answer(m.id, () => {
        if (typeof r !== 'string') throw Object.assign(new Error(r.error), { code: r.code });
        return r;
      }, m.handle);
      return;
    }
    if (typeof r !== 'string') post({ op: 'warn', message: `${m.method}: ${r.error} (${r.code})` });
    pushState(m.handle, AFTER_CALL);
  },
  subscribe: (m) => {
    const s = sessions.get(m.handle);
    const r = syncJSON(m.handle, 'subscribe');
    if (s && r !== null) s.subs.set(m.sub, JSON.parse(r));
  },
  nextEvents: (m) => answer(m.id, async () => {
    const real = subsOf(m.handle)?.get(m.sub);
    if (real === undefined) return JSON.stringify({ events: [], done: true });
    const r = await api.nextEvents(m.handle, real);
    if (r.endsWith('"done":true}')) dropSub(m.handle, m.sub); // Go writes {events, done}
    return r;
  }),
  unsubscribe: (m) => {
    const real = subsOf(m.handle)?.get(m.sub);
    if (real !== undefined) { dropSub(m.handle, m.sub); api.unsubscribe(m.handle, real); }
  },
  hostResult: (m) => {
    const w = hostWaits.get(m.id);
    if (!w) return;
    hostWaits.delete(m.id);
    if (m.ok) w.resolve(m.value);
    else w.reject(Object.assign(new Error(m.error.message), { code: m.error.code }));
  },
};

// Messages are handled strictly in arrival order once the instance is up,
// so a subscribe or registerHook posted before a call takes effect first.
let queue = ready;
self.onmessage = (ev) => {
  const m = ev.data;
  if (m.op === 'module') { fromPage(m); return; }
  queue = queue.then(() => {
    if (!api) {
      if (m.id !== undefined) post({ op: 'result', id: m.id, ok: false, error: { message: 'the code-wasm worker failed to start', code: 'INTERNAL' } });
      return;
    }
    const h = handlers[m.op];
    if (h) h(m);
    else post({ op: 'warn', message: `unknown message ${m.op}` });
  }).catch((e) => {
    // A handler bug must not stop the queue (or look like a dead worker).
    if (m.id !== undefined) post({ op: 'result', id: m.id, ok: false, error: errorOf(e) });
    else post({ op: 'warn', message: String(e?.stack ?? e) });
  });
};
