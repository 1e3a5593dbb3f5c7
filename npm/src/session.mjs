// The public Session: one JS->Go crossing per call, JSON in and out, over
// the `api` object of PROTOCOL.md §1. JS functions in the options (hooks,
// budget guard, confirmation handler, security provider) stay here; Go
// reaches them through the one host dispatcher of PROTOCOL.md §2.

export class CodeWasmError extends Error {
  constructor(message, code, extra) {
    super(message);
    this.name = 'CodeWasmError';
    this.code = code;
    if (extra) Object.assign(this, extra);
  }
}

// shortMessage keeps a Go stack trace out of an error message (the Go side
// logs it to the console; this is the belt to its braces).
function shortMessage(m) {
  const i = m.indexOf('\ngoroutine ');
  return i < 0 ? m : m.slice(0, i);
}

function asError(e) {
  if (e instanceof CodeWasmError) return e;
  if (e && typeof e === 'object' && typeof e.code === 'string') {
    const extra = {};
    if (typeof e.detail === 'string' && e.detail) {
      try { extra.result = JSON.parse(e.detail); } catch { /* keep the message */ }
    }
    return new CodeWasmError(shortMessage(String(e.message)), e.code, extra);
  }
  return new CodeWasmError(shortMessage(String(e && e.message ? e.message : e)), 'INTERNAL');
}

const invalid = (msg) => new CodeWasmError(msg, 'INVALID_OPTIONS');
const badCall = (msg) => new CodeWasmError(msg, 'INVALID_CALL');

function isPlainObject(v) {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return false;
  const p = Object.getPrototypeOf(v);
  return p === Object.prototype || p === null;
}

const IDENT = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
const keyPath = (at, k) => (IDENT.test(k) ? `${at}.${k}` : `${at}[${JSON.stringify(k)}]`);
const shortPath = (at) => (at.length > 90 ? `${at.slice(0, 60)}…${at.slice(-20)}` : at);

// MAX_DEPTH bounds how deep objects and arrays nest in one JSON document
// sent to Go (a call's envelope {name, args} is one level): the same limit
// as Go's internal/jsoncheck.MaxDepth. Deeper values would otherwise end
// in a RangeError (stack overflow) in this file or in JSON.stringify.
const MAX_DEPTH = 100;

// MAX_CALL_BYTES bounds one call's JSON arguments, as Go does
// (internal/hostapi MaxCallBytes): 16 MiB, the write tool's own limit;
// larger files are written in parts (write with mode=append). A string's
// length in UTF-16 units is at most its UTF-8 size, so a longer string is
// refused before anything is serialised.
const MAX_CALL_BYTES = 16 * 1024 * 1024;
const tooBig = (what, n) => `${what} is ${n} characters, over the ${MAX_CALL_BYTES} bytes (16 MiB) one call may carry; write a larger file in parts (write with mode=append)`;

// wellFormed reports whether s is well-formed UTF-16 (no lone surrogate).
// A lone surrogate cannot cross into Go intact: it becomes U+FFFD, so
// "a\ud800" and "a\udc00" would name the same file.
const wellFormed = typeof String.prototype.isWellFormed === 'function'
  ? (s) => s.isWellFormed()
  : (s) => !/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(s);

function notWellFormed(s, what) {
  const i = s.search(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/);
  const u = s.charCodeAt(i).toString(16);
  return `${what} is not well-formed UTF-16: a lone surrogate (\\u${u}) at index ${i}; Go would read it as U+FFFD (another string's character), so it is refused`;
}

// toData checks that v is JSON data (what Go will see) and names the path
// of the first value that is not: a function, a symbol, a BigInt,
// undefined inside an array, NaN or ±Infinity, a class instance, a cycle,
// a string (or key) that is not well-formed UTF-16, nesting past MAX_DEPTH
// (base: the levels of the document above v).
// (JSON.stringify would drop some of these silently, turn others into
// null, and throw a bare TypeError or RangeError on the rest.) undefined
// object values are dropped, as JSON.stringify does: an absent optional
// key. fail makes the error (INVALID_OPTIONS for options, INVALID_CALL for
// call args).
function toData(v, at, fail = invalid, base = 0, stack = []) {
  switch (typeof v) {
    case 'string':
      if (v.length > MAX_CALL_BYTES) throw fail(tooBig(shortPath(at), v.length));
      if (!wellFormed(v)) throw fail(notWellFormed(v, shortPath(at)));
      return v;
    case 'boolean': return v;
    case 'number':
      if (!Number.isFinite(v)) throw fail(`${at} is ${v}, not JSON data (a finite number is)`);
      return v;
    case 'undefined': return undefined;
    case 'bigint': throw fail(`${at} is a BigInt (${v}n), not JSON data; pass a number`);
    case 'function': throw fail(`${at} is a function, not JSON data`);
    case 'symbol': throw fail(`${at} is a symbol, not JSON data`);
    case 'object': {
      if (v === null) return null;
      const seen = stack.findIndex((x) => x.v === v);
      if (seen >= 0) throw fail(`${at} refers back to ${stack[seen].at} (a cycle), not JSON data`);
      if (base + stack.length >= MAX_DEPTH) {
        throw fail(`${shortPath(at)} nests objects and arrays more than ${MAX_DEPTH} levels deep; the limit is ${MAX_DEPTH}`);
      }
      stack.push({ v, at });
      try {
        if (Array.isArray(v)) {
          const out = new Array(v.length);
          for (let i = 0; i < v.length; i++) {
            if (v[i] === undefined) throw fail(`${at}[${i}] is undefined; an array in JSON cannot hold undefined (use null)`);
            out[i] = toData(v[i], `${at}[${i}]`, fail, base, stack);
          }
          return out;
        }
        if (!isPlainObject(v)) throw fail(`${at} must be a plain object, got ${v.constructor?.name ?? 'an object'}`);
        const out = {};
        for (const k of Object.keys(v)) {
          if (!wellFormed(k)) throw fail(notWellFormed(k, `a key of ${shortPath(at)}`));
          const d = toData(v[k], keyPath(at, k), fail, base, stack);
          if (d !== undefined) out[k] = d;
        }
        return out;
      } finally {
        stack.pop();
      }
    }
    default:
      throw fail(`${at} is a ${typeof v}, not JSON data`);
  }
}

function fnOrAbsent(v, at) {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'function') throw invalid(`${at} must be a function, got ${typeof v}`);
  return v;
}

// fnRequired is for a function an object exists to carry: {} is a mistake
// (a guard that guards nothing), not a way to say "none".
function fnRequired(v, at, why) {
  if (v === undefined || v === null) throw invalid(`${at} must be a function (${why}), got ${v}`);
  return fnOrAbsent(v, at);
}

const OPTION_KEYS = new Set([
  'workspace', 'toolTimeoutMs', 'permissionPolicy', 'confirmationPolicy',
  'confirmationHandler', 'hooks', 'budgetGuard', 'securityProvider',
]);

const HOOK_EVENTS = ['pre_tool_use', 'post_tool_use'];

// splitHook validates one hook's shape and returns [wire, handler]; base
// is its depth in the document sent (2 in createSession's options).
function splitHook(h, at, base = 0) {
  if (!isPlainObject(h)) throw invalid(`${at} must be an object {id, event, matcher?, config?, handler?}`);
  const { handler, ...rest } = h;
  const wire = toData(rest, at, invalid, base);
  if (typeof wire.id !== 'string' || wire.id === '') throw invalid(`${at}.id must be a non-empty string`);
  if (!HOOK_EVENTS.includes(wire.event)) throw invalid(`${at}.event must be one of ${HOOK_EVENTS.join(', ')}, got ${JSON.stringify(wire.event)}`);
  const fn = fnRequired(handler, `${at}.handler`, 'the hook runs it when it matches');
  wire.handler = !!fn;
  return [wire, fn];
}

const LLM_BUDGET_KEYS = new Set(['checkBeforeLlm', 'recordAfterLlm']);

function splitBudget(g, at, base = 0) {
  if (!isPlainObject(g)) throw invalid(`${at} must be an object {checkBeforeTool, timeoutMs?}`);
  const { checkBeforeTool, ...rest } = g;
  for (const k of Object.keys(rest)) {
    if (LLM_BUDGET_KEYS.has(k)) {
      throw invalid(`${at}.${k} is not supported here: the tool layer makes no LLM calls to guard (upstream's agent loop does); give checkBeforeTool only`);
    }
    if (k !== 'timeoutMs') throw invalid(`${at}: unknown key "${k}" (known: checkBeforeTool, timeoutMs)`);
  }
  const fn = fnRequired(checkBeforeTool, `${at}.checkBeforeTool`, 'the guard is asked before every side effect');
  const wire = toData(rest, at, invalid, base);
  wire.checkBeforeTool = !!fn;
  return [wire, fn];
}

// splitOptions separates what Go decodes (data, with booleans where
// functions were; PROTOCOL.md §3) from the functions JS keeps.
function splitOptions(options) {
  if (!isPlainObject(options)) throw invalid('createSession: options must be a plain object');
  for (const k of Object.keys(options)) {
    if (!OPTION_KEYS.has(k)) {
      throw invalid(`createSession: unknown option "${k}" (known: ${[...OPTION_KEYS].join(', ')})`);
    }
  }
  const { hooks, budgetGuard, confirmationHandler, securityProvider, ...data } = options;
  const wire = toData(data, 'createSession: options');
  const fns = { hooks: new Map(), budget: undefined, confirm: undefined, sanitize: undefined };
  if (hooks !== undefined) {
    if (!Array.isArray(hooks)) throw invalid('createSession: options.hooks must be an array');
    wire.hooks = hooks.map((h, i) => {
      const [w, fn] = splitHook(h, `createSession: options.hooks[${i}]`, 2);
      if (fn) fns.hooks.set(w.id, fn);
      return w;
    });
  }
  if (budgetGuard !== undefined && budgetGuard !== null) {
    const [w, fn] = splitBudget(budgetGuard, 'createSession: options.budgetGuard', 1);
    wire.budgetGuard = w;
    fns.budget = fn;
  }
  fns.confirm = fnOrAbsent(confirmationHandler, 'createSession: options.confirmationHandler');
  if (fns.confirm) wire.confirmationHandler = true;
  if (securityProvider !== undefined && securityProvider !== null) {
    if (!isPlainObject(securityProvider)) throw invalid('createSession: options.securityProvider must be an object {sanitizeOutput}');
    const { sanitizeOutput, ...rest } = securityProvider;
    for (const k of Object.keys(rest)) throw invalid(`createSession: options.securityProvider: unknown key "${k}" (known: sanitizeOutput)`);
    fns.sanitize = fnRequired(sanitizeOutput, 'createSession: options.securityProvider.sanitizeOutput', 'the provider cleans every output with it');
    wire.securityProvider = { sanitizeOutput: !!fns.sanitize };
  }
  return { wire, fns };
}

// makeHost builds the session's host dispatcher (PROTOCOL.md §2). Every
// user function may be sync or async; its return value goes back as JSON.
function makeHost(fns, hostKinds) {
  return async function host(kind, payloadJSON, signal) {
    // Never run a user function inside the Go -> JS call that asked for
    // it: a hook that calls the session synchronously would re-enter Go
    // on Go's own stack (nested re-entries killed the runtime once).
    await null;
    const payload = JSON.parse(payloadJSON);
    const ctx = { signal };
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

// Sessions a program drops without close() are closed when collected.
const finalizer = typeof FinalizationRegistry === 'function'
  ? new FinalizationRegistry(({ api, id }) => { api.call(id, 'close', '{}').catch(() => {}); })
  : null;

export function makeCreateSession(getApi, { hostKinds = {} } = {}) {
  // Go lists only the tools this host can run: no ptc.* kinds, no program.
  const kinds = JSON.stringify(Object.keys(hostKinds));
  return async function createSession(options = {}) {
    const { wire, fns } = splitOptions(options);
    const api = await getApi();
    let id;
    try {
      id = await api.createSession(JSON.stringify(wire), makeHost(fns, hostKinds), kinds);
    } catch (e) {
      throw asError(e);
    }
    return new Session(api, id, fns);
  };
}

// checkOpts checks a call's options object: only the keys the method
// takes (a misspelt {sginal} or {ofset} must not pass as "no option").
function checkOpts(opts, what, keys = CALL_KEYS) {
  if (opts === undefined || opts === null) return;
  if (typeof opts !== 'object' || Array.isArray(opts)) throw badCall(`${what}: options must be an object`);
  for (const k of Object.keys(opts)) {
    if (!keys.includes(k)) throw badCall(`${what}: unknown option "${k}" (known: ${keys.join(', ')})`);
  }
}
const CALL_KEYS = ['signal'];

// str checks a helper's string argument: a missing or non-string one is
// refused by name, never sent as "" (writeFile(path) must not truncate).
function str(v, name, what) {
  if (typeof v !== 'string') {
    const got = v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v;
    throw badCall(`${what}: ${name} must be a string, got ${got}`);
  }
  if (v.length > MAX_CALL_BYTES) throw badCall(`${what}: ${tooBig(name, v.length)}`);
  if (!wellFormed(v)) throw badCall(`${what}: ${notWellFormed(v, name)}`);
  return v;
}

function checkSignal(opts, what) {
  if (opts === undefined || opts === null) return undefined;
  if (typeof opts !== 'object') throw badCall(`${what}: options must be an object`);
  const s = opts.signal;
  if (s === undefined || s === null) return undefined;
  if (typeof s !== 'object' || typeof s.aborted !== 'boolean' || typeof s.addEventListener !== 'function') {
    throw badCall(`${what}: signal must be an AbortSignal`);
  }
  return s;
}

function abortError(what) {
  return new CodeWasmError(`${what}: the call was aborted`, 'ABORTED');
}

export class Session {
  #api;
  #id;
  #fns;
  #closed = false;

  constructor(api, id, fns) {
    this.#api = api;
    this.#id = id;
    this.#fns = fns;
    finalizer?.register(this, { api, id }, this);
  }

  #sync(method, args) {
    if (this.#closed) throw new CodeWasmError(`${method}: session is closed`, 'SESSION_CLOSED');
    const r = this.#api.callSync(this.#id, method, args === undefined ? '' : JSON.stringify(args));
    if (typeof r !== 'string') throw new CodeWasmError(r.error, r.code);
    return JSON.parse(r);
  }

  // #call crosses once. An aborted signal rejects at once with ABORTED and
  // cancels the Go side, which stops the tool through its context.
  async #call(method, args, opts, keys = CALL_KEYS) {
    checkOpts(opts, method, keys);
    const signal = checkSignal(opts, method);
    if (this.#closed) throw new CodeWasmError(`${method}: session is closed`, 'SESSION_CLOSED');
    if (signal?.aborted) throw abortError(method);
    const json = JSON.stringify(args ?? {});
    if (json.length > MAX_CALL_BYTES) throw badCall(`${method}: ${tooBig("the call's JSON", json.length)}`);
    const p = this.#api.call(this.#id, method, json, signal);
    let onAbort;
    const aborted = signal && new Promise((_, reject) => {
      onAbort = () => reject(abortError(method));
      signal.addEventListener('abort', onAbort, { once: true });
    });
    try {
      const out = await (aborted ? Promise.race([p, aborted]) : p);
      return JSON.parse(out);
    } catch (e) {
      throw asError(e);
    } finally {
      if (onAbort) signal.removeEventListener('abort', onAbort);
      if (aborted) p.catch(() => {}); // the loser of the race must not be unhandled
    }
  }

  // Tool surface (synchronous).
  toolNames() { return this.#sync('toolNames'); }
  toolDefinitions() { return this.#sync('toolDefinitions'); }
  activeTools() { return this.#sync('activeTools'); }
  isClosed() { return this.#closed; }

  // Direct calls. Argument errors reject (never throw synchronously).
  #direct(method, name, args, opts) {
    if (typeof name !== 'string' || name === '') throw badCall(`${method}: name must be a non-empty string`);
    if (args === undefined || args === null) args = {};
    if (!isPlainObject(args)) throw badCall(`${method}: args must be an object, got ${Array.isArray(args) ? 'an array' : typeof args}`);
    return this.#call(method, { name, args: toData(args, 'args', (m) => badCall(`${method}: ${m}`), 1) }, opts);
  }
  async tool(name, args, opts) { return this.#direct('tool', name, args, opts); }
  async governedTool(name, args, opts) { return this.#direct('governedTool', name, args, opts); }
  async readFile(path, opts) {
    const args = { path: str(path, 'path', 'readFile') };
    if (opts?.offset !== undefined) args.offset = opts.offset;
    if (opts?.limit !== undefined) args.limit = opts.limit;
    checkOpts(opts, 'readFile', ['offset', 'limit', 'signal']);
    return this.#call('readFile', toData(args, 'readFile', badCall), opts && { signal: opts.signal });
  }
  async writeFile(path, content, opts) {
    return this.#call('writeFile', { path: str(path, 'path', 'writeFile'), content: str(content, 'content', 'writeFile') }, opts);
  }
  async editFile(path, oldString, newString, replaceAll = false, opts) {
    const w = 'editFile';
    if (typeof replaceAll !== 'boolean') throw badCall(`${w}: replaceAll must be a boolean, got ${typeof replaceAll}`);
    return this.#call(w, { path: str(path, 'path', w), oldString: str(oldString, 'oldString', w), newString: str(newString, 'newString', w), replaceAll }, opts);
  }
  async patchFile(path, diff, opts) {
    return this.#call('patchFile', { path: str(path, 'path', 'patchFile'), diff: str(diff, 'diff', 'patchFile') }, opts);
  }
  // ls(path?, opts?) or ls({path?, signal?}).
  async ls(path, opts) {
    if (path !== null && typeof path === 'object' && !Array.isArray(path) && opts === undefined) {
      checkOpts(path, 'ls', ['path', 'signal']);
      opts = path.signal === undefined ? undefined : { signal: path.signal };
      path = path.path;
    }
    return this.#call('ls', path === undefined ? {} : { path: str(path, 'path', 'ls') }, opts);
  }
  async glob(pattern, opts) { return this.#call('glob', { pattern: str(pattern, 'pattern', 'glob') }, opts); }
  async grep(pattern, opts) { return this.#call('grep', { pattern: str(pattern, 'pattern', 'grep') }, opts); }
  // getArtifact resolves the full output kept behind an a3s://tool-output/
  // URI (a cut output's suffix, metadata.artifact / metadata_artifact), or null.
  async getArtifact(uri, opts) { return this.#call('getArtifact', { uri: str(uri, 'uri', 'getArtifact') }, opts); }
  // program runs a PTC script: session.tool('program', {type: 'script',
  // language: 'javascript', ...}) with SDK naming (allowedTools ->
  // allowed_tools). Added by the PTC engineer (ptc/, npm/src/ptc-*.mjs).
  program(options = {}, opts) {
    if (options === null || typeof options !== 'object' || Array.isArray(options)) {
      return Promise.reject(badCall('program: options must be an object'));
    }
    const known = { source: 'source', path: 'path', inputs: 'inputs', allowedTools: 'allowed_tools', limits: 'limits' };
    const args = { type: 'script', language: 'javascript' };
    for (const [k, v] of Object.entries(options)) {
      if (!(k in known)) return Promise.reject(badCall(`program: unknown option "${k}" (known: ${Object.keys(known).join(', ')})`));
      if (v !== undefined) args[known[k]] = v;
    }
    return this.tool('program', args, opts);
  }

  // Human in the loop.
  pendingConfirmations() { return this.#sync('pendingConfirmations'); }
  async confirmToolUse(toolId, approved, reason, opts) {
    const w = 'confirmToolUse';
    if (typeof approved !== 'boolean') throw badCall(`${w}: approved must be a boolean, got ${typeof approved}`);
    const args = { toolId: str(toolId, 'toolId', w), approved };
    if (reason !== undefined) args.reason = str(reason, 'reason', w);
    return this.#call('confirmToolUse', args, opts);
  }

  // Governance at run time.
  registerHook(id, eventType, matcher, config, handler) {
    if (typeof matcher === 'function' && config === undefined && handler === undefined) { handler = matcher; matcher = undefined; }
    if (typeof config === 'function' && handler === undefined) { handler = config; config = undefined; }
    let wire, fn;
    try {
      [wire, fn] = splitHook({ id, event: eventType, matcher, config, handler }, 'registerHook');
    } catch (e) {
      throw badCall(e.message);
    }
    this.#sync('registerHook', wire);
    if (fn) this.#fns.hooks.set(id, fn);
  }
  unregisterHook(id) {
    const ok = this.#sync('unregisterHook', { id });
    this.#fns.hooks.delete(id);
    return ok;
  }
  setBudgetGuard(guard) {
    if (guard === null || guard === undefined) {
      this.#sync('setBudgetGuard', null);
      this.#fns.budget = undefined;
      return;
    }
    let wire, fn;
    try {
      [wire, fn] = splitBudget(guard, 'setBudgetGuard');
    } catch (e) {
      throw badCall(e.message);
    }
    this.#sync('setBudgetGuard', wire);
    this.#fns.budget = fn;
  }

  // events() subscribes now: every event published after this call is
  // delivered, in order. Iterate with for await, or call next().
  events() {
    const sub = this.#sync('subscribe');
    const api = this.#api;
    const id = this.#id;
    let queue = [];
    let done = false;
    let pulling = null;
    const pull = async () => {
      const r = JSON.parse(await api.nextEvents(id, sub));
      queue = queue.concat(r.events);
      if (r.done) done = true;
    };
    const it = {
      async next() {
        while (queue.length === 0 && !done) {
          pulling ??= pull().finally(() => { pulling = null; });
          await pulling;
        }
        if (queue.length > 0) return { value: queue.shift(), done: false };
        return { value: undefined, done: true };
      },
      async return() {
        done = true;
        queue = [];
        api.unsubscribe(id, sub);
        return { value: undefined, done: true };
      },
      [Symbol.asyncIterator]() { return it; },
    };
    return it;
  }

  // close cancels what is in flight (those calls reject with
  // SESSION_CLOSED), ends event streams, and releases the session.
  async close() {
    if (this.#closed) return;
    this.#closed = true;
    finalizer?.unregister(this);
    await this.#api.call(this.#id, 'close', '{}');
  }
}
