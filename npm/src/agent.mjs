// The agent loop's JS side (API.md "LLM, the agent loop and structured
// output"): the arguments of send/run/stream, stream() as an async iterator
// over the session's events picked by the run's id, and toolsFor (the
// session's tools in a provider's format, built from toolDefinitions so
// every host answers it synchronously). Go: agent/ (the loop, and
// agent.ToolsFor, which this mirrors), internal/hostapi/llm.go.

import { CodeWasmError, asError, badCall } from './errors.mjs';
import { isPlainObject, str, toData } from './options.mjs';

/**
 * sendArgs reads send(prompt, history?) and send({prompt, history?}).
 * @param {unknown} request
 * @param {unknown} history
 * @param {string} what
 * @returns {{prompt: string, history?: any[], runId?: string}}
 */
export function sendArgs(request, history, what) {
  let prompt = request;
  if (isPlainObject(request)) {
    const { prompt: p, history: h, ...rest } = /** @type {any} */ (request);
    for (const k of Object.keys(rest)) throw badCall(`${what}: unknown request key "${k}" (known: prompt, history)`);
    if (h !== undefined && history !== undefined) throw badCall(`${what}: history is given twice (in the request and as the second argument)`);
    prompt = p;
    history = h;
  }
  const args = /** @type {{prompt: string, history?: any[]}} */ ({ prompt: str(prompt, 'prompt', what) });
  if (history !== undefined && history !== null) {
    if (!Array.isArray(history)) throw badCall(`${what}: history must be an array of messages {role, text?, toolCalls?, toolResults?}`);
    args.history = /** @type {any[]} */ (toData(history, 'history', (m) => badCall(`${what}: ${m}`), 1));
  }
  return args;
}

let runSeq = 0;

/**
 * runStream starts one run and returns its events as an async iterator:
 * agent_start … agent_end or error, and the kernel's events of the
 * model's calls (parentId: the run, or a call of the run). It subscribes
 * to the session's events before the run starts, so nothing is missed.
 * An error before the run starts (NO_LLM, a closed session, bad
 * arguments) rejects the first next(); a run that fails ends with its
 * error event. Leaving the loop (return()) or aborting signal cancels the
 * run.
 * @param {{events: () => AsyncIterableIterator<any>, send: (json: string, signal: AbortSignal) => Promise<string>} | null} s (null: argsOf throws)
 * @param {() => {prompt: string, history?: any[]}} argsOf
 * @param {AbortSignal | undefined} signal
 */
export function runStream(s, argsOf, signal) {
  const controller = new AbortController();
  /** @type {any} */
  let failed = null;
  /** @type {AsyncIterableIterator<any> | null} */
  let events = null;
  const runId = `stream-${++runSeq}-${Math.random().toString(36).slice(2, 10)}`;
  /** @type {Promise<any>} */
  let noRun = new Promise(() => {});
  try {
    if (signal?.aborted) throw new CodeWasmError('stream: the call was aborted', 'ABORTED');
    const args = { ...argsOf(), runId };
    if (!s) throw new Error('stream: no session');
    events = s.events();
    signal?.addEventListener('abort', () => controller.abort(signal.reason), { once: true });
    // The send call settles after the run's terminal event is published;
    // a rejection without a result (detail) means no run started.
    const send = s.send;
    noRun = send(JSON.stringify(args), controller.signal).then(
      () => new Promise(() => {}),
      (e) => { const err = /** @type {any} */ (asError(e)); return err.result === undefined ? err : new Promise(() => {}); });
  } catch (e) {
    failed = e;
  }
  const ids = new Set([runId]);
  let ended = false;
  /** @type {Promise<IteratorResult<any>> | null} */
  let pending = null;
  const end = () => {
    ended = true;
    controller.abort();
    events?.return?.();
  };
  const it = {
    async next() {
      if (failed) {
        const e = failed;
        failed = null;
        ended = true;
        throw e;
      }
      while (!ended && events) {
        pending ??= events.next();
        const r = await Promise.race([pending, noRun.then((e) => ({ noRun: e }))]);
        if ('noRun' in r) {
          end();
          throw r.noRun;
        }
        pending = null;
        if (r.done) break;
        const e = r.value;
        if (e.invocationId === runId) {
          if (e.type === 'agent_end' || e.type === 'error') end();
          return { value: e, done: false };
        }
        if (ids.has(e.parentId)) {
          if (e.invocationId) ids.add(e.invocationId);
          return { value: e, done: false };
        }
        if (ids.has(e.invocationId)) return { value: e, done: false };
      }
      ended = true;
      return { value: undefined, done: true };
    },
    async return() {
      if (!ended) end();
      return { value: undefined, done: true };
    },
    [Symbol.asyncIterator]() { return it; },
  };
  return it;
}

// strictRefused are the JSON Schema keywords OpenAI's strict mode does not
// accept (agent/glue.go strictRefused).
const STRICT_REFUSED = ['default', 'minLength', 'maxLength', 'pattern', 'format', 'minimum', 'maximum',
  'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf', 'patternProperties', 'unevaluatedProperties',
  'propertyNames', 'minProperties', 'maxProperties', 'unevaluatedItems', 'contains', 'minContains',
  'maxContains', 'minItems', 'maxItems', 'uniqueItems', 'oneOf', 'not', 'if', 'then', 'else'];

/**
 * strictSchema rewrites a schema for OpenAI's strict mode: every object
 * closed with every property required, an optional property nullable.
 * @param {any} s
 * @returns {any}
 */
function strictSchema(s) {
  if (!isPlainObject(s)) return s;
  const out = { ...s };
  for (const k of STRICT_REFUSED) delete out[k];
  if (isPlainObject(s.properties)) {
    const required = new Set(Array.isArray(s.required) ? s.required : []);
    /** @type {Record<string, any>} */
    const props = {};
    for (const name of Object.keys(s.properties).sort()) {
      const p = strictSchema(s.properties[name]);
      props[name] = required.has(name) ? p : nullable(p);
    }
    Object.assign(out, { properties: props, required: Object.keys(props), additionalProperties: false });
  } else if (s.type === 'object') {
    Object.assign(out, { properties: {}, required: [], additionalProperties: false });
  }
  if ('items' in s) out.items = strictSchema(s.items);
  for (const k of ['anyOf', 'allOf']) if (Array.isArray(s[k])) out[k] = s[k].map(strictSchema);
  for (const k of ['$defs', 'definitions']) {
    if (isPlainObject(s[k])) out[k] = Object.fromEntries(Object.entries(s[k]).map(([n, d]) => [n, strictSchema(d)]));
  }
  return out;
}

/** @param {any} s */
function nullable(s) {
  if (!isPlainObject(s)) return s;
  if (typeof s.type === 'string') {
    const out = { ...s, type: [s.type, 'null'] };
    if (Array.isArray(s.enum)) out.enum = [...s.enum, null];
    return out;
  }
  if (Array.isArray(s.type)) return s.type.includes('null') ? s : { ...s, type: [...s.type, 'null'] };
  return { anyOf: [s, { type: 'null' }] };
}

/**
 * toolsFor lists tool definitions as a provider's `tools` array.
 * @param {{name: string, description: string, parameters: any}[]} defs
 * @param {unknown} provider
 * @param {unknown} opts
 */
export function toolsFor(defs, provider, opts) {
  const what = 'toolsFor';
  if (provider !== 'openai' && provider !== 'anthropic') {
    throw badCall(`${what}: provider must be "openai" or "anthropic", got ${JSON.stringify(provider)}`);
  }
  let strict = false;
  if (opts !== undefined && opts !== null) {
    if (!isPlainObject(opts)) throw badCall(`${what}: options must be an object {strict?}`);
    for (const k of Object.keys(/** @type {object} */ (opts))) if (k !== 'strict') throw badCall(`${what}: unknown option "${k}" (known: strict)`);
    strict = /** @type {any} */ (opts).strict ?? false;
    if (typeof strict !== 'boolean') throw badCall(`${what}: strict must be a boolean`);
    if (strict && provider !== 'openai') throw badCall(`${what}: strict is an OpenAI option; Anthropic has no strict tool schemas`);
  }
  if (provider === 'anthropic') {
    return defs.map((d) => ({ name: d.name, description: d.description, input_schema: d.parameters }));
  }
  return defs.map((d) => ({
    type: 'function',
    function: strict
      ? { name: d.name, description: d.description, parameters: strictSchema(d.parameters), strict: true }
      : { name: d.name, description: d.description, parameters: d.parameters },
  }));
}
