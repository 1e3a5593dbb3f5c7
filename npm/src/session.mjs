// The public Session: one JS->Go crossing per call, JSON in and out, over
// the `api` object of PROTOCOL.md §1. JS functions in the options (hooks,
// budget guard, confirmation handler, security provider) stay here; Go
// reaches them through the one host dispatcher of PROTOCOL.md §2 (host.mjs).
// Errors live in errors.mjs, the checks before the boundary and the options
// split in options.mjs.

import { CodeWasmError, asError, badCall, abortError, closedError, invalid } from './errors.mjs';
import { MAX_CALL_BYTES, isPlainObject, splitBudget, splitHook, splitOptions, str, toData, tooBig } from './options.mjs';
import { makeHost } from './host.mjs';
import { runStream, sendArgs, toolsFor } from './agent.mjs';
import { CHUNK_BYTES, checkFiles, packFiles, unpackPage, decodeText } from './content.mjs';

export { CodeWasmError };

// pacedEvents names Session's events() for a reader that persists them
// (not part of the public API).
export const pacedEvents = Symbol('pacedEvents');

// Sessions a program drops without close() are closed when collected.
const finalizer = typeof FinalizationRegistry === 'function'
  ? new FinalizationRegistry(({ api, id }) => { api.call(id, 'close', '{}').catch(() => {}); })
  : null;

/**
 * makeCreateSession makes an entry point's createSession: getApi yields the
 * api object of PROTOCOL.md §1; hostKinds are the extra dispatcher kinds;
 * services is what else the host offers Go (PROTOCOL.md §1:
 * services.directory opens a directory workspace, Node only).
 * @param {() => Promise<any>} getApi
 * @param {{hostKinds?: Record<string, Function>, services?: {directory?: (root: string) => object}}} [host]
 * @returns {typeof import('../index.d.ts').createSession}
 */
export function makeCreateSession(getApi, { hostKinds = {}, services = undefined } = {}) {
  // Go lists only the tools this host can run: no ptc.* kinds, no program.
  const kinds = JSON.stringify(Object.keys(hostKinds));
  return async function createSession(options = {}) {
    // options.workspace.files cross as bytes in chunks (content.mjs), not
    // as JSON strings: Go pulls them one by one through chunks(), copying
    // each before it asks for the next, so they all share one buffer.
    let chunks;
    const files = isPlainObject(options) && isPlainObject(options.workspace) ? options.workspace.files : undefined;
    if (isPlainObject(files)) {
      const it = packFiles(checkFiles(files, 'createSession: options.workspace.files', invalid), true);
      chunks = () => {
        const c = it.next();
        return c.done ? undefined : { index: JSON.stringify({ paths: c.value.paths, sizes: c.value.sizes }), data: c.value.data };
      };
      options = { ...options, workspace: { ...options.workspace, files: undefined } };
    }
    const { wire, fns } = splitOptions(options);
    const api = await getApi();
    let id;
    try {
      id = await api.createSession(JSON.stringify(wire), makeHost(fns, hostKinds), kinds, services, chunks);
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

// git's positional form: git(command, subcommand, name, path, newBranch,
// base, force, maxCount, message, includeUntracked, target, reference).
const GIT_POSITIONAL = ['subcommand', 'name', 'path', 'newBranch', 'base', 'force', 'maxCount', 'message', 'includeUntracked', 'target', 'reference'];
const GIT_KEYS = ['command', ...GIT_POSITIONAL, 'ref', 'limit', 'cursor', 'byteOffset', 'maxBytes'];

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

/** @typedef {import('../index.d.ts').Session} DeclaredSession */

/** @implements {DeclaredSession} */
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

  // In the browser build the registrations (registerTool, addSkill, …)
  // answer a Promise of the JSON: Go runs in a Worker.
  #sync(method, args) {
    if (this.#closed) throw closedError(method);
    const r = this.#api.callSync(this.#id, method, args === undefined ? '' : JSON.stringify(args));
    if (typeof r?.then === 'function') return r.then((v) => JSON.parse(v));
    if (typeof r !== 'string') throw new CodeWasmError(r.error, r.code);
    return JSON.parse(r);
  }

  // #call crosses once. An aborted signal rejects at once with ABORTED and
  // cancels the Go side, which stops the tool through its context.
  async #call(method, args, opts, keys = CALL_KEYS) {
    checkOpts(opts, method, keys);
    const signal = checkSignal(opts, method);
    if (this.#closed) throw closedError(method);
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

  // #callBytes is #call through api.callBytes: bytes (or null) cross
  // beside the JSON, and the answer is {json?, bytes?}; the answer's bytes
  // may be a view of into (a buffer the caller reuses), if given.
  async #callBytes(method, args, bytes, opts, keys = CALL_KEYS, into = undefined) {
    checkOpts(opts, method, keys);
    const signal = checkSignal(opts, method);
    if (this.#closed) throw closedError(method);
    if (signal?.aborted) throw abortError(method);
    const json = JSON.stringify(args ?? {});
    if (json.length > MAX_CALL_BYTES) throw badCall(`${method}: ${tooBig("the call's JSON", json.length)}`);
    const p = this.#api.callBytes(this.#id, method, json, bytes, signal, into);
    let onAbort;
    const aborted = signal && new Promise((_, reject) => {
      onAbort = () => reject(abortError(method));
      signal.addEventListener('abort', onAbort, { once: true });
    });
    try {
      const out = await (aborted ? Promise.race([p, aborted]) : p);
      return { meta: out.json === undefined ? undefined : JSON.parse(out.json), bytes: out.bytes };
    } catch (e) {
      throw asError(e);
    } finally {
      if (onAbort) signal.removeEventListener('abort', onAbort);
      if (aborted) p.catch(() => {}); // the loser of the race must not be unhandled
    }
  }

  // ---- Workspace content (API.md "Workspace content"): exact bytes. ----
  async readText(path, opts) {
    const { bytes } = await this.#callBytes('readText', { path: str(path, 'path', 'readText') }, null, opts);
    return decodeText(bytes);
  }
  async readBytes(path, opts) {
    return (await this.#callBytes('readBytes', { path: str(path, 'path', 'readBytes') }, null, opts)).bytes;
  }
  async writeBytes(path, bytes, opts) {
    const p = str(path, 'path', 'writeBytes');
    if (!(bytes instanceof Uint8Array)) throw badCall(`writeBytes: bytes must be a Uint8Array, got ${bytes === null ? 'null' : typeof bytes}`);
    return (await this.#callBytes('writeBytes', { path: p }, bytes, opts)).meta;
  }
  // exportFiles({under?, include?, signal?}): every file's exact content,
  // read in pages of about 8 MiB, each copied into one reused page (text
  // is decoded from it, binary copied out of it).
  async exportFiles(options) {
    checkOpts(options, 'exportFiles', ['under', 'include', 'signal']);
    const args = {};
    if (options?.under !== undefined) args.under = str(options.under, 'under', 'exportFiles');
    if (options?.include !== undefined) args.include = str(options.include, 'include', 'exportFiles');
    const opts = options?.signal === undefined ? undefined : { signal: options.signal };
    /** @type {Record<string, string | Uint8Array>} */
    const out = {};
    const page = new Uint8Array(CHUNK_BYTES);
    for (;;) {
      const { meta, bytes } = await this.#callBytes('exportFiles', args, null, opts, CALL_KEYS, page);
      unpackPage(meta, bytes, out);
      if (!meta.next) return out;
      args.cursor = meta.next;
    }
  }
  // importFiles(files): every path is checked first (nothing is written
  // if one is wrong), then the files cross in chunks of about 8 MiB.
  async importFiles(files, opts) {
    const entries = checkFiles(files, 'importFiles: files', badCall);
    checkOpts(opts, 'importFiles');
    await this.#callBytes('importFiles', { check: true, paths: entries.map((e) => e[0]) }, null, opts);
    for (const c of packFiles(entries, true)) {
      await this.#callBytes('importFiles', { paths: c.paths, sizes: c.sizes }, c.data, opts);
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

  // The agent loop (agent.mjs; Go: agent/, internal/hostapi/llm.go).
  // send(prompt, history?, opts?) or send({prompt, history?}, opts?);
  // without history the session's history is continued and kept.
  async send(request, history, opts) {
    if (isPlainObject(request) && opts === undefined && !Array.isArray(history)) { opts = history; history = undefined; }
    return this.#call('send', sendArgs(request, history, 'send'), opts);
  }
  // run is send, as upstream (session.run === session.send).
  run = this.send;
  stream(request, history, opts) {
    if (isPlainObject(request) && opts === undefined && !Array.isArray(history)) { opts = history; history = undefined; }
    let signal;
    try {
      checkOpts(opts, 'stream');
      signal = checkSignal(opts, 'stream');
      if (this.#closed) throw closedError('stream');
    } catch (e) {
      return runStream(null, () => { throw e; }, undefined);
    }
    const api = this.#api;
    const id = this.#id;
    return runStream({ events: () => this.events(), send: (json, sig) => api.call(id, 'send', json, sig) },
      () => sendArgs(request, history, 'stream'), signal);
  }
  toolsFor(provider, opts) { return toolsFor(this.toolDefinitions(), provider, opts); }
  async runToolCall(call, opts) {
    if (!isPlainObject(call)) throw badCall('runToolCall: call must be a provider\'s tool call object');
    return this.#call('runToolCall', { call: toData(call, 'call', badCall, 1) }, opts);
  }

  // Shell, git and verification (a directory workspace: core/exec.go).
  // bash(command, {timeoutMs?, signal?}) resolves to the output.
  async bash(command, opts) {
    const args = { command: str(command, 'command', 'bash') };
    checkOpts(opts, 'bash', ['timeoutMs', 'signal']);
    if (opts?.timeoutMs !== undefined) args.timeoutMs = opts.timeoutMs;
    return this.#call('bash', toData(args, 'bash', badCall), opts && { signal: opts.signal });
  }
  // git('status'), git('worktree', 'create', 'feature', 'wt/feature'), or
  // git({command, ...GitCommandOptions, signal?}); positional values follow
  // GIT_POSITIONAL (then an optional {signal}); `reference` is `ref`.
  async git(command, ...rest) {
    let args;
    let opts;
    if (command !== null && typeof command === 'object' && !Array.isArray(command)) {
      const { signal, ...o } = command;
      args = o;
      opts = signal === undefined ? rest[0] : { signal };
    } else {
      args = { command: str(command, 'command', 'git') };
      if (isPlainObject(rest[rest.length - 1])) opts = rest.pop(); // {signal}
      if (rest.length > GIT_POSITIONAL.length) throw badCall(`git: at most ${GIT_POSITIONAL.length} positional values follow the command`);
      rest.forEach((v, i) => { if (v !== undefined) args[GIT_POSITIONAL[i]] = v; });
    }
    for (const k of Object.keys(args)) {
      if (!GIT_KEYS.includes(k)) throw badCall(`git: unknown option "${k}" (known: ${GIT_KEYS.join(', ')})`);
    }
    return this.#call('git', toData(args, 'git', badCall), opts);
  }
  async verifyCommands(subject, commands, opts) {
    if (!Array.isArray(commands)) throw badCall('verifyCommands: commands must be an array');
    const args = { subject: str(subject, 'subject', 'verifyCommands'), commands };
    return this.#call('verifyCommands', toData(args, 'verifyCommands', badCall), opts);
  }
  async verifyPresets(opts) { return this.#call('verifyPresets', {}, opts); }

  // MCP servers (mcp/, internal/hostapi/mcp.go).
  async addMcp(server, opts) {
    if (!isPlainObject(server)) throw badCall('addMcp: server must be an object {name, url, headers?, timeoutMs?}');
    return this.#call('addMcp', toData(server, 'addMcp', badCall), opts);
  }
  mcpStatus() { return this.#sync('mcpStatus'); }
  async removeMcp(name, opts) { await this.#call('removeMcp', { name: str(name, 'name', 'removeMcp') }, opts); }

  // Host tools: the handler runs as (args, {signal, invoke}); invoke makes
  // nested calls through the running call's governed invoker only.
  registerTool(spec) {
    if (!isPlainObject(spec)) throw badCall('registerTool: the tool must be an object {name, description, parameters, handler}');
    const { handler, ...rest } = spec;
    if (typeof handler !== 'function') throw badCall('registerTool: handler must be a function (args, {signal, invoke}) => result');
    const wire = toData(rest, 'registerTool', badCall);
    const fn = (payload, ctx) => handler(payload.args, {
      signal: ctx.signal,
      invoke: (name, args) => this.#call('hostToolInvoke', { callId: payload.callId, name, args: args ?? {} }),
    });
    this.#fns.tools ??= new Map();
    const before = this.#fns.tools.get(wire.name);
    this.#fns.tools.set(wire.name, fn); // in place before Go lists the tool
    let r;
    try {
      r = this.#sync('registerTool', wire);
    } catch (e) {
      this.#restoreTool(wire.name, before);
      throw e;
    }
    if (typeof r?.then === 'function') return r.then(() => {}, (e) => { this.#restoreTool(wire.name, before); throw e; });
  }
  #restoreTool(name, before) {
    if (before) this.#fns.tools.set(name, before);
    else this.#fns.tools.delete(name);
  }
  unregisterTool(name) {
    const r = this.#sync('unregisterTool', { name: str(name, 'name', 'unregisterTool') });
    const done = (ok) => { if (ok) this.#fns.tools?.delete(name); return ok; };
    return typeof r?.then === 'function' ? r.then(done) : done(r);
  }

  // web_search over options.webSearch's providers (tools/web_search.go).
  async webSearch(args, opts) { return this.#direct('tool', 'web_search', args, opts); }

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
  // delivered, in order. Iterate with for await, or call next(). Go keeps
  // at most 10,000 unread progress events per subscription (core.MaxQueued):
  // past that the oldest are dropped and the next read starts with
  // {type: 'dropped', payload: {count}}; tool_end, permission_denied,
  // confirmation_required and error are never dropped. This side holds at
  // most one batch (256) beyond what the reader took.
  events() { return this[pacedEvents](0); }

  // [pacedEvents](ms) is events() for a reader that persists them (the
  // Workers Durable Object): it waits ms before each ask of Go (the first
  // too: the subscription is made now), so the events of many calls cross
  // in one entry into Go, and that entry is not made inside the call that
  // emitted them, nor inside the session's create (on the way to their
  // responses).
  [pacedEvents](ms) {
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
          if (ms > 0 && !pulling) await new Promise((r) => setTimeout(r, ms));
          if (done) break;
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

  // Delegation (h-skills; Go: agent/delegate.go, internal/hostapi/delegation.go).
  // task({agent, description, prompt, background?, maxSteps?, outputSchema?})
  // and tasks([...], {allowPartialFailure?, timeoutMs?, minSuccessCount?})
  // run the task tool as a trusted host call and resolve to its ToolResult.
  async task(spec, opts) {
    if (!isPlainObject(spec)) throw badCall('task: the task must be an object {agent, description, prompt}');
    return this.#call('task', toData(spec, 'task', badCall), opts);
  }
  async tasks(specs, opts) {
    if (!Array.isArray(specs)) throw badCall('tasks: the tasks must be an array of {agent, description, prompt}');
    checkOpts(opts, 'tasks', ['allowPartialFailure', 'timeoutMs', 'minSuccessCount', 'signal']);
    const { signal, ...rest } = opts ?? {};
    return this.#call('tasks', toData({ tasks: specs, ...rest }, 'tasks', badCall), signal === undefined ? undefined : { signal });
  }
  // taskResult(taskId, {wait?}) is a background task's state {taskId,
  // agent, done, result?}; wait: true resolves once it finished.
  async taskResult(taskId, opts) {
    checkOpts(opts, 'taskResult', ['wait', 'signal']);
    const args = { taskId: str(taskId, 'taskId', 'taskResult') };
    if (opts?.wait !== undefined) args.wait = opts.wait;
    return this.#call('taskResult', toData(args, 'taskResult', badCall), opts?.signal === undefined ? undefined : { signal: opts.signal });
  }

  // Skills (h-skills; Go: agent/skills.go). addSkill({name, description?,
  // content?, allowedTools?, disableModelInvocation?, kind?, tags?,
  // version?}) adds or replaces one; search_skills and Skill are listed
  // while at least one is loaded.
  addSkill(skill) {
    if (!isPlainObject(skill)) throw badCall('addSkill: the skill must be an object {name, description, allowedTools?, content}');
    const r = this.#sync('addSkill', toData(skill, 'addSkill', badCall));
    if (typeof r?.then === 'function') return r.then(() => {});
  }
  removeSkill(name) { return this.#sync('removeSkill', { name: str(name, 'name', 'removeSkill') }); }
  skillNames() { return this.#sync('skillNames'); }

  // close cancels what is in flight (those calls reject with
  // SESSION_CLOSED), ends event streams, and releases the session.
  async close() {
    if (this.#closed) return;
    this.#closed = true;
    finalizer?.unregister(this);
    await this.#api.call(this.#id, 'close', '{}');
  }

  // `await using s = await createSession(...)` closes s when the block
  // ends (Symbol.asyncDispose: Node 20.4 on, current browsers, workerd).
  async [Symbol.asyncDispose]() {
    await this.close();
  }
}
