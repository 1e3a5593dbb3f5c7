// The Session wrapper: one JS->Go crossing per call, JSON in and out.

export class CodeWasmError extends Error {
  constructor(message, code) {
    super(message);
    this.name = 'CodeWasmError';
    this.code = code;
  }
}

function asError(e) {
  if (e instanceof CodeWasmError) return e;
  if (e && typeof e === 'object' && typeof e.code === 'string') {
    return new CodeWasmError(e.message, e.code);
  }
  return new CodeWasmError(String(e && e.message ? e.message : e), 'INTERNAL');
}

const SESSION_OPTION_KEYS = new Set(['workspace', 'toolTimeoutMs']);

export function makeCreateSession(getApi) {
  return async function createSession(options = {}) {
    if (options === null || typeof options !== 'object' || Array.isArray(options)) {
      throw new CodeWasmError('createSession: options must be an object', 'INVALID_OPTIONS');
    }
    for (const k of Object.keys(options)) {
      if (!SESSION_OPTION_KEYS.has(k)) {
        throw new CodeWasmError(`createSession: unknown option "${k}"`, 'INVALID_OPTIONS');
      }
    }
    const api = await getApi();
    let id;
    try {
      id = await api.createSession(JSON.stringify(options));
    } catch (e) {
      throw asError(e);
    }
    return new Session(api, id);
  };
}

export class Session {
  #api;
  #id;
  #closed = false;

  constructor(api, id) {
    this.#api = api;
    this.#id = id;
  }

  #sync(method) {
    if (this.#closed) throw new CodeWasmError('session is closed', 'SESSION_CLOSED');
    const r = this.#api.callSync(this.#id, method);
    if (typeof r !== 'string') throw new CodeWasmError(r.error, r.code);
    return JSON.parse(r);
  }

  async #call(method, args, opts) {
    if (this.#closed && method !== 'close') {
      throw new CodeWasmError('session is closed', 'SESSION_CLOSED');
    }
    try {
      const out = await this.#api.call(this.#id, method, JSON.stringify(args ?? {}), opts?.signal);
      return JSON.parse(out);
    } catch (e) {
      throw asError(e);
    }
  }

  toolNames() { return this.#sync('toolNames'); }
  toolDefinitions() { return this.#sync('toolDefinitions'); }
  activeTools() { return this.#sync('activeTools'); }
  isClosed() { return this.#closed; }

  tool(name, args = {}, opts) { return this.#call('tool', { name, args }, opts); }
  governedTool(name, args = {}, opts) { return this.#call('governedTool', { name, args }, opts); }

  async #text(name, args, opts) {
    const r = await this.tool(name, args, opts);
    if (r.exitCode !== 0) {
      const e = new CodeWasmError(r.output, 'TOOL_FAILED');
      e.result = r;
      throw e;
    }
    return r.output;
  }

  readFile(path, opts = {}) {
    const args = { file_path: path };
    if (opts.offset !== undefined) args.offset = opts.offset;
    if (opts.limit !== undefined) args.limit = opts.limit;
    return this.#text('read', args, opts);
  }
  writeFile(path, content, opts) { return this.tool('write', { file_path: path, content }, opts); }

  async close() {
    if (this.#closed) return;
    this.#closed = true;
    await this.#api.call(this.#id, 'close', '{}');
  }
}
