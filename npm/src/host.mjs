// The session's host dispatcher (PROTOCOL.md §2): Go asks JS for a hook's
// answer, the budget guard's, the confirmation handler's, the security
// provider's, or an entry point's extra kind (ptc.*), one JSON payload in
// and one JSON answer out.

/**
 * @typedef {object} SessionFns the user functions a session keeps
 * @property {Map<string, Function>} hooks handler by hook id
 * @property {Function | undefined} budget budgetGuard.checkBeforeTool
 * @property {Function | undefined} confirm confirmationHandler
 * @property {Function | undefined} sanitize securityProvider.sanitizeOutput
 * @property {{stream: Function} | undefined} llm the host-supplied model client (llm.client)
 * @property {Map<string, Function>} [tools] host tool handler by name (registerTool)
 * @property {Map<string, Function>} [search] web search provider's search by name (options.webSearch)
 */

// makeHost builds the session's host dispatcher (PROTOCOL.md §2). Every
// user function may be sync or async; its return value goes back as JSON.
/**
 * @param {SessionFns} fns
 * @param {Record<string, Function>} hostKinds
 * @returns {(kind: string, payloadJSON: string, signal: AbortSignal, extra?: any) => Promise<string>}
 */
export function makeHost(fns, hostKinds) {
  const llm = llmKinds(fns);
  // extra: what Go passes beside a payload for one call (ptc.start's
  // direct door), handed to the kind's handler as ctx.extra.
  return async function host(kind, payloadJSON, signal, extra) {
    // Never run a user function inside the Go -> JS call that asked for
    // it: a hook that calls the session synchronously would re-enter Go
    // on Go's own stack (nested re-entries killed the runtime once).
    await null;
    const payload = JSON.parse(payloadJSON);
    const ctx = extra === undefined ? { signal } : { signal, extra };
    let v;
    switch (kind) {
      case 'hook': {
        const fn = fns.hooks.get(payload.hookId);
        if (!fn) throw new Error(`no handler for hook "${payload.hookId}"`);
        v = await fn(payload, ctx);
        break;
      }
      case 'budget':
        if (!fns.budget) throw new Error('no budget guard');
        v = await fns.budget(payload, ctx);
        break;
      case 'confirm':
        if (!fns.confirm) throw new Error('no confirmation handler');
        v = await fns.confirm(payload, ctx);
        break;
      case 'security':
        if (!fns.sanitize) throw new Error('no security provider');
        // sanitizeAll: many strings (one result's metadata) in one crossing.
        v = payload.op === 'sanitizeAll'
          ? await Promise.all(payload.texts.map((t) => fns.sanitize(t, ctx)))
          : await fns.sanitize(payload.text, ctx);
        break;
      case 'llm.stream':
      case 'llm.next':
      case 'llm.close':
        v = await llm[kind](payload, signal);
        break;
      case 'tool': {
        // A host tool's handler (Session.registerTool wraps it).
        const fn = fns.tools?.get(payload.name);
        if (!fn) throw new Error(`no handler for host tool "${payload.name}"`);
        v = await fn(payload, ctx);
        break;
      }
      case 'webSearch':
        v = await webSearch(fns, payload, signal);
        break;
      default: {
        const fn = hostKinds[kind];
        if (typeof fn !== 'function') throw new Error(`no handler for host kind "${kind}"`);
        v = await fn(payload, ctx);
      }
    }
    try {
      return JSON.stringify(v === undefined ? null : v);
    } catch (e) {
      // A cycle, a BigInt, nesting past the stack: the call fails closed.
      throw new Error(`the ${kind} handler answered with a value that is not JSON data (${e.message})`);
    }
  };
}


// webSearch runs one provider's search(query, {limit, signal}) and answers
// {results} or {error: {code, message, retryAfterMs?}}: a thrown error's
// code ('rate_limited', 'timeout') says what kind of failure it was.
/**
 * @param {SessionFns} fns
 * @param {{provider: string, query: string, limit: number}} p
 * @param {AbortSignal} signal
 */
async function webSearch(fns, p, signal) {
  const fn = fns.search?.get(p.provider);
  if (!fn) throw new Error(`no web search provider "${p.provider}"`);
  try {
    const results = await fn(p.query, { limit: p.limit, signal });
    if (!Array.isArray(results)) {
      return { error: { code: 'invalid', message: `search resolved to ${typeof results}, not an array of {title, url, snippet}` } };
    }
    return { results: results.map((r) => ({ title: String(r?.title ?? ''), url: String(r?.url ?? ''), snippet: String(r?.snippet ?? '') })) };
  } catch (e) {
    const err = /** @type {any} */ (e);
    const retry = Number(err?.retryAfterMs);
    return { error: { code: String(err?.code ?? ''), message: String(err?.message ?? err),
      ...(Number.isFinite(retry) && retry > 0 ? { retryAfterMs: Math.round(retry) } : {}) } };
  }
}

// llmKinds answers the llm.* kinds for a host-supplied model client
// (PROTOCOL.md §2): llm.stream calls client.stream(request, {signal}) and
// keeps its iterator under a number; llm.next answers the next chunk (or
// {done: true}); llm.close aborts the signal and drops the iterator. An
// abort of an llm.next call (Go stopped waiting) aborts the stream too.
/** @param {SessionFns} fns */
function llmKinds(fns) {
  /** @type {Map<number, {it: AsyncIterator<any>, controller: AbortController}>} */
  const streams = new Map();
  let next = 0;
  const get = (/** @type {any} */ p) => {
    const s = streams.get(p.stream);
    if (!s) throw new Error(`no open llm stream ${p.stream}`);
    return s;
  };
  return {
    async 'llm.stream'(/** @type {any} */ request) {
      if (!fns.llm) throw new Error('no llm client');
      const controller = new AbortController();
      const src = await fns.llm.stream(request, { signal: controller.signal });
      const it = src && typeof src[Symbol.asyncIterator] === 'function' ? src[Symbol.asyncIterator]()
        : src && typeof src[Symbol.iterator] === 'function' ? src[Symbol.iterator]() : null;
      if (!it) throw new Error('llm.client.stream must return an async iterable of chunks');
      streams.set(++next, { it, controller });
      return { stream: next };
    },
    async 'llm.next'(/** @type {any} */ p, /** @type {AbortSignal} */ signal) {
      const s = get(p);
      const onAbort = () => s.controller.abort(signal.reason);
      signal.addEventListener('abort', onAbort, { once: true });
      try {
        const r = await s.it.next();
        return r.done ? { done: true } : { chunk: r.value, done: false };
      } finally {
        signal.removeEventListener('abort', onAbort);
      }
    },
    async 'llm.close'(/** @type {any} */ p) {
      const s = streams.get(p.stream);
      if (!s) return true;
      streams.delete(p.stream);
      s.controller.abort();
      // Not awaited: a generator stuck in an await would hold the answer.
      try { Promise.resolve(s.it.return?.()).catch(() => {}); } catch { /* over either way */ }
      return true;
    },
  };
}
