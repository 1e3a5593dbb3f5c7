// Building what crosses to Go: the JSON-data checks every value passes
// before the boundary (PROTOCOL.md §1: data only, depth 100, well-formed
// UTF-16, 16 MiB a call), and createSession's options split into the wire
// options Go decodes and the functions JS keeps (PROTOCOL.md §3). Unknown
// keys inside the data are Go's to refuse (it names the full key path); JS
// refuses what never reaches Go (keys beside the functions it keeps) and
// the top-level option names (see OPTION_KEYS).

import { invalid, badCall } from './errors.mjs';

export function isPlainObject(v) {
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
export const MAX_CALL_BYTES = 16 * 1024 * 1024;
export const tooBig = (what, n) => `${what} is ${n} characters, over the ${MAX_CALL_BYTES} bytes (16 MiB) one call may carry; write a larger file in parts (write with mode=append)`;

// wellFormed reports whether s is well-formed UTF-16 (no lone surrogate).
// A lone surrogate cannot cross into Go intact: it becomes U+FFFD, so
// "a\ud800" and "a\udc00" would name the same file.
export const wellFormed = typeof String.prototype.isWellFormed === 'function'
  ? (s) => s.isWellFormed()
  : (s) => !/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(s);

export function notWellFormed(s, what) {
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
export function toData(v, at, fail = invalid, base = 0, stack = []) {
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

// OPTION_KEYS is checked in JS although Go would refuse an unknown key too:
// a misspelt function-valued option ({confirmHandler() {}}) would otherwise
// be reported as "not JSON data" instead of as the unknown key it is.
const OPTION_KEYS = new Set([
  'workspace', 'toolTimeoutMs', 'permissionPolicy', 'confirmationPolicy',
  'confirmationHandler', 'hooks', 'budgetGuard', 'securityProvider',
  // The agent loop.
  'llm', 'systemPrompt', 'maxToolRounds',
  'mcpServers',
  // h-webtools
  'webFetch',
  // h-skills
  'agents', 'maxParallelTasks', 'manualDelegationEnabled', 'skillDirs', 'skills',
  // h-web: web_search providers
  'webSearch',
]);

const HOOK_EVENTS = ['pre_tool_use', 'post_tool_use'];

// splitHook validates one hook's shape and returns [wire, handler]; base
// is its depth in the document sent (2 in createSession's options).
export function splitHook(h, at, base = 0) {
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

export function splitBudget(g, at, base = 0) {
  if (!isPlainObject(g)) throw invalid(`${at} must be an object {checkBeforeTool, timeoutMs?}`);
  const { checkBeforeTool, ...rest } = g;
  // The budget guard's keys stay checked here: its checkBeforeLlm message
  // says why, and its unknown-key message is the one the tests pin (Go's
  // would read "unknown key options.budgetGuard.timeout").
  for (const k of Object.keys(rest)) {
    if (LLM_BUDGET_KEYS.has(k)) {
      throw invalid(`${at}.${k} is not supported yet: the agent loop's model requests are not budget-guarded; give checkBeforeTool only`);
    }
    if (k !== 'timeoutMs') throw invalid(`${at}: unknown key "${k}" (known: checkBeforeTool, timeoutMs)`);
  }
  const fn = fnRequired(checkBeforeTool, `${at}.checkBeforeTool`, 'the guard is asked before every side effect');
  const wire = toData(rest, at, invalid, base);
  wire.checkBeforeTool = !!fn;
  return [wire, fn];
}

// splitLlm checks options.llm: a provider's settings (data, checked in Go:
// an unknown provider or a missing model names the key), or a host-supplied
// client {client: {stream(request, {signal})}, model?, maxTokens?}, which JS
// keeps (Go asks it through the llm.* kinds of the host dispatcher).
export function splitLlm(l, at) {
  if (!isPlainObject(l)) throw invalid(`${at} must be an object {provider, model, apiKey?, baseURL?, …} or {client}`);
  const { client, ...rest } = l;
  const wire = toData(rest, at, invalid, 1);
  if (client === undefined || client === null) return [wire, undefined];
  if (typeof client !== 'object' || typeof client.stream !== 'function') {
    throw invalid(`${at}.client must be an object with a stream(request, {signal}) method returning an async iterable of chunks`);
  }
  wire.client = true;
  return [wire, client];
}

// splitWebSearch checks options.webSearch {providers: [...]}: a provider
// {name, search(query, {limit, signal})} stays in JS (Go gets its name); one
// {name, kind: 'searxng' | 'brave', url?, apiKey?, headers?} is data Go
// checks and reaches over HTTP itself.
export function splitWebSearch(o, at) {
  if (!isPlainObject(o)) throw invalid(`${at} must be an object {providers: [{name, search(query, {limit, signal})} or {name, kind, url?, apiKey?}]}`);
  for (const k of Object.keys(o)) if (k !== 'providers') throw invalid(`${at}: unknown key "${k}" (known: providers)`);
  if (!Array.isArray(o.providers)) throw invalid(`${at}.providers must be an array of {name, search(query, {limit, signal})} or {name, kind, url?, apiKey?}`);
  /** @type {Map<string, Function>} */
  const fns = new Map();
  const providers = o.providers.map((p, i) => {
    const pat = `${at}.providers[${i}]`;
    if (p === null || typeof p !== 'object') throw invalid(`${pat} must be an object {name, search} or {name, kind, url?, apiKey?}`);
    if (typeof p.name !== 'string') throw invalid(`${pat}.name must be a string`);
    if (p.kind !== undefined) {
      if (p.search !== undefined) throw invalid(`${pat}: give search or kind, not both`);
      return toData(p, pat, invalid, 3);
    }
    fns.set(p.name, fnRequired(p.search, `${pat}.search`, 'web_search calls it with (query, {limit, signal}); or give kind: searxng or brave'));
    return { name: p.name };
  });
  return [{ providers }, fns];
}

// splitOptions separates what Go decodes (data, with booleans where
// functions were; PROTOCOL.md §3) from the functions JS keeps.
export function splitOptions(options) {
  if (!isPlainObject(options)) throw invalid('createSession: options must be a plain object');
  for (const k of Object.keys(options)) {
    if (!OPTION_KEYS.has(k)) {
      throw invalid(`createSession: unknown option "${k}" (known: ${[...OPTION_KEYS].join(', ')})`);
    }
  }
  const { hooks, budgetGuard, confirmationHandler, securityProvider, llm, webSearch, ...data } = options;
  const wire = toData(data, 'createSession: options');
  const fns = { hooks: new Map(), budget: undefined, confirm: undefined, sanitize: undefined, llm: undefined, search: undefined };
  if (webSearch !== undefined && webSearch !== null) {
    const [w, providers] = splitWebSearch(webSearch, 'createSession: options.webSearch');
    wire.webSearch = w;
    fns.search = providers;
  }
  if (llm !== undefined && llm !== null) {
    const [w, client] = splitLlm(llm, 'createSession: options.llm');
    wire.llm = w;
    fns.llm = client;
  }
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


// str checks a helper's string argument: a missing or non-string one is
// refused by name, never sent as "" (writeFile(path) must not truncate).
/**
 * @param {unknown} v
 * @param {string} name
 * @param {string} what
 * @returns {string}
 */
export function str(v, name, what) {
  if (typeof v !== 'string') {
    const got = v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v;
    throw badCall(`${what}: ${name} must be a string, got ${got}`);
  }
  if (v.length > MAX_CALL_BYTES) throw badCall(`${what}: ${tooBig(name, v.length)}`);
  if (!wellFormed(v)) throw badCall(`${what}: ${notWellFormed(v, name)}`);
  return v;
}
