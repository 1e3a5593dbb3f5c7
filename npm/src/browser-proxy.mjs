// The page side of the browser build: an object with the PROTOCOL.md `api`
// members whose work happens in a dedicated Worker (browser-worker.mjs),
// so a long tool call never blocks the page. Asynchronous members become
// messages; the synchronous ones are answered from the per-session state
// the worker keeps fresh (toolNames, toolDefinitions, activeTools,
// pendingConfirmations, isClosed, mcpStatus, skillNames), forwarded in
// order without waiting (subscribe, registerHook, unregisterHook,
// setBudgetGuard: their effect is in place before any later call of this
// page reaches the worker), or answered by a Promise (registerTool,
// unregisterTool, addSkill, removeSkill: only Go knows their answer).
// Host-dispatcher calls (hooks, confirmations…) come back from the worker
// and run here, on the page, with the user's functions.

// getModule: browser-wasm.mjs's, passed in by entry-browser.mjs, which
// imports both modules side by side: one level of module fetches fewer
// before code.wasm's fetch starts (RATIONALE.md "Why does the browser
// entry start its Worker on import?").
/** @param {() => Promise<WebAssembly.Module>} getModule */
export function startWorkerApi(getModule) {
  const worker = new Worker(new URL('./browser-worker.mjs', import.meta.url), { type: 'module', name: 'code-wasm' });
  // The page fetches and compiles code.wasm (V8 compiles off the thread)
  // while the Worker's own scripts still load, and hands it the Module; on
  // any failure the Worker fetches it itself (RATIONALE.md "Why does the
  // page compile code.wasm for its Worker?").
  const handOver = (msg) => {
    try {
      worker.postMessage(msg);
    } catch (e) { // a browser that cannot clone a Module
      worker.postMessage({ op: 'module', error: String(e?.message ?? e) });
    }
  };
  getModule().then((module) => handOver({ op: 'module', module }), (e) => handOver({ op: 'module', error: String(e?.message ?? e) }));
  let nextId = 0;
  const pending = new Map(); // request id -> {resolve, reject}
  const hosts = new Map(); // createSession request id -> host function
  const hostCalls = new Map(); // host call id -> AbortController
  const sessions = new Map(); // handle -> {state, nsub, hooks:Set}

  let dead = null; // set once the worker has failed for good
  // transfer: buffers of the proxy's own copies, moved to the worker
  // rather than cloned.
  // msg is the caller's own object: it gets the id.
  const request = (msg, transfer = []) => new Promise((resolve, reject) => {
    if (dead) { reject(dead); return; }
    msg.id = ++nextId;
    pending.set(msg.id, { resolve, reject });
    worker.postMessage(msg, transfer);
  });
  const codedError = (e) => Object.assign(new Error(e.message), { code: e.code ?? 'INTERNAL', ...(e.detail !== undefined ? { detail: e.detail } : {}) });

  let readyResolve, readyReject;
  const ready = new Promise((res, rej) => { readyResolve = res; readyReject = rej; });

  worker.onerror = (ev) => {
    const err = codedError({ message: `the code-wasm worker failed: ${ev.message ?? 'unknown error'}`, code: 'INTERNAL' });
    dead = err;
    readyReject(err);
    for (const p of pending.values()) p.reject(err);
    pending.clear();
  };

  // A host call's answer is posted when the user's function settles.
  const runHost = async (m) => {
    const host = hosts.get(m.session);
    const ac = new AbortController();
    hostCalls.set(m.id, ac);
    try {
      if (!host) throw new Error(`no host for session ${m.session}`);
      const value = await host(m.kind, m.payload, ac.signal);
      worker.postMessage({ op: 'hostResult', id: m.id, ok: true, value });
    } catch (e) {
      worker.postMessage({ op: 'hostResult', id: m.id, ok: false, error: { message: String(e?.message ?? e), code: e?.code } });
    } finally {
      hostCalls.delete(m.id);
    }
  };

  worker.onmessage = (ev) => {
    const m = ev.data;
    switch (m.op) {
      case 'ready':
        if (m.error) readyReject(codedError(m.error));
        else readyResolve(m.version);
        break;
      case 'result': {
        if (m.state) Object.assign(sessions.get(m.handle)?.state ?? {}, m.state);
        const p = pending.get(m.id);
        if (!p) break;
        pending.delete(m.id);
        if (m.ok) p.resolve(m.value);
        else p.reject(codedError(m.error));
        break;
      }
      case 'state': {
        const s = sessions.get(m.handle);
        if (s) Object.assign(s.state, m.state);
        break;
      }
      case 'host':
        runHost(m);
        break;
      case 'hostAbort':
        hostCalls.get(m.id)?.abort();
        break;
      case 'warn':
        console.warn('code-wasm:', m.message);
        break;
    }
  };

  const api = {
    version: undefined,
    worker,
    async createSession(optionsJSON, host, hostKindsJSON, _services, files) {
      // files as a function (Go pulls chunks that share one buffer): each
      // chunk is copied, and the copies move to the worker as an array.
      const transfer = [];
      if (typeof files === 'function') {
        const all = [];
        for (let c = files(); c !== undefined; c = files()) {
          all.push({ index: c.index, data: c.data.slice() });
          transfer.push(all.at(-1).data.buffer);
        }
        files = all;
      }
      const id = nextId + 1; // the id request() is about to use
      if (host) hosts.set(id, host);
      try {
        const { handle, state } = await request({ op: 'createSession', options: optionsJSON, hasHost: !!host, hostKinds: hostKindsJSON, files }, transfer);
        sessions.set(handle, { state: { ...state }, nsub: 0, hooks: new Set() });
        return handle;
      } catch (e) {
        hosts.delete(id);
        throw e;
      }
    },
    call(handle, method, argsJSON, signal) {
      if (signal?.aborted) return Promise.reject(codedError({ message: 'aborted by signal', code: 'ABORTED' }));
      const id = nextId + 1;
      const p = request({ op: 'call', handle, method, args: argsJSON, hasSignal: !!signal });
      if (signal) signal.addEventListener('abort', () => worker.postMessage({ op: 'abort', id }), { once: true });
      return method === 'close' ? p.finally(() => sessions.delete(handle)) : p;
    },
    // callBytes: the bytes are copied to the worker (structured clone) and
    // the answer's bytes are transferred back.
    callBytes(handle, method, argsJSON, bytes, signal) {
      if (signal?.aborted) return Promise.reject(codedError({ message: 'aborted by signal', code: 'ABORTED' }));
      const id = nextId + 1;
      // A view of part of a larger buffer would clone the whole buffer: it
      // is copied, and the copy moved (the caller's own buffer is cloned).
      const transfer = [];
      if (bytes && bytes.byteLength !== bytes.buffer.byteLength) {
        bytes = bytes.slice();
        transfer.push(bytes.buffer);
      }
      const p = request({ op: 'callBytes', handle, method, args: argsJSON, bytes, hasSignal: !!signal }, transfer);
      if (signal) signal.addEventListener('abort', () => worker.postMessage({ op: 'abort', id }), { once: true });
      return p;
    },
    callSync(handle, method, argsJSON) {
      const s = sessions.get(handle);
      if (!s) return { error: `no session with handle ${handle}`, code: 'UNKNOWN_SESSION' };
      if (method in s.state) {
        const v = s.state[method];
        return v ?? { error: `${method} is not available`, code: 'INVALID_CALL' };
      }
      const closed = s.state.isClosed === 'true';
      switch (method) {
        case 'subscribe': {
          if (closed) return { error: 'session is closed', code: 'SESSION_CLOSED' };
          const sub = ++s.nsub;
          worker.postMessage({ op: 'subscribe', handle, sub });
          return JSON.stringify(sub);
        }
        // Registrations whose answer (an error naming what was wrong, or
        // unregister's boolean) only Go knows: the page gets a Promise of
        // it, and the state (toolNames, skillNames) is fresh when it
        // settles.
        case 'registerTool':
        case 'unregisterTool':
        case 'addSkill':
        case 'removeSkill':
          if (closed) return { error: 'session is closed', code: 'SESSION_CLOSED' };
          return request({ op: 'callSync', handle, method, args: argsJSON });
        case 'registerHook':
        case 'unregisterHook':
        case 'setBudgetGuard': {
          if (closed) return { error: 'session is closed', code: 'SESSION_CLOSED' };
          let out = true;
          if (method === 'registerHook') s.hooks.add(JSON.parse(argsJSON).id);
          if (method === 'unregisterHook') out = s.hooks.delete(JSON.parse(argsJSON).id);
          worker.postMessage({ op: 'callSync', handle, method, args: argsJSON });
          return JSON.stringify(out);
        }
      }
      return { error: `unknown synchronous method "${method}"`, code: 'INVALID_CALL' };
    },
    nextEvents(handle, sub) {
      return request({ op: 'nextEvents', handle, sub });
    },
    unsubscribe(handle, sub) {
      worker.postMessage({ op: 'unsubscribe', handle, sub });
    },
  };
  return ready.then((version) => { api.version = version; return api; });
}
