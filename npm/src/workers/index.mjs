// The package's Worker (`@a3s-lab/code-wasm/worker`, API.md "Cloudflare
// Workers deployment"): the HTTP routes, and CodeSession, the Durable
// Object holding one session. Each DO keeps its options and an events
// table in its SQLite storage; the files live in R2 (the WORKSPACE
// binding) under ws/<session id>/, reached from Go through the r2.* host
// kinds (r2host.mjs). The isolate's one Go instance (loader.mjs) serves
// every request and every DO; `program` runs in QuickJS on the calling
// thread (ptc-workerd.mjs).
import { DurableObject } from 'cloudflare:workers';
import wasmModule from '../../dist/code.wasm';
import quickjsModule from '../../dist/quickjs.wasm';
import { loadApi, stats } from '../loader.mjs';
import { makeCreateSession, pacedEvents } from '../session.mjs';
import { workerdPtcHostKinds } from '../ptc-workerd.mjs';
import { r2HostKinds } from '../r2host.mjs';

const getApi = () => loadApi(async () => wasmModule);
const ptcKinds = workerdPtcHostKinds(quickjsModule);

const json = (v, status = 200) => Response.json(v, { status });
const fail = (status, code, error) => json({ error, code }, status);

// FLUSH_MS: how long a session's first unwritten event waits for others
// to share its commit.
const FLUSH_MS = 100;
// PACE_MS: how long the event pump waits, after a batch, before asking Go
// for the next (the latest an SSE subscriber sees an event).
const PACE_MS = 10;

// authorize answers the refusal of a request, or null when it may pass:
// a bearer token equal to the AUTH_TOKEN secret; without the secret, 503
// unless ALLOW_UNAUTHENTICATED is "true".
function authorize(request, env) {
  if (!env.AUTH_TOKEN) {
    return env.ALLOW_UNAUTHENTICATED === 'true' ? null
      : fail(503, 'NOT_CONFIGURED', 'set the AUTH_TOKEN secret (or ALLOW_UNAUTHENTICATED = "true" for local development)');
  }
  const got = request.headers.get('authorization') ?? '';
  return got === `Bearer ${env.AUTH_TOKEN}` ? null : fail(401, 'UNAUTHORIZED', 'Authorization: Bearer <AUTH_TOKEN> is required');
}

export default {
  /** @param {Request} request @param {any} env */
  async fetch(request, env) {
    const denied = authorize(request, env);
    if (denied) return denied;
    const url = new URL(request.url);
    const parts = url.pathname.split('/').filter(Boolean);
    if (parts[0] !== 'v1') return fail(404, 'NOT_FOUND', `no route ${url.pathname}`);
    if (parts[1] === 'stats' && parts.length === 2 && request.method === 'GET') {
      return json({ goInstances: stats.goInstances, goMemoryBytes: stats.goMemory?.buffer.byteLength ?? 0, goEntries: stats.goEntries });
    }
    if (parts[1] !== 'sessions') return fail(404, 'NOT_FOUND', `no route ${url.pathname}`);
    if (parts.length === 2) {
      if (request.method !== 'POST') return fail(405, 'METHOD_NOT_ALLOWED', 'POST /v1/sessions creates a session');
      const id = env.SESSIONS.newUniqueId();
      return env.SESSIONS.get(id).fetch(new Request(`https://do/create/${id}`, { method: 'POST', body: request.body }));
    }
    let id;
    try {
      id = env.SESSIONS.idFromString(parts[2]);
    } catch {
      return fail(404, 'UNKNOWN_SESSION', `no session ${parts[2]}`);
    }
    return env.SESSIONS.get(id).fetch(new Request(`https://do/${parts.slice(3).join('/')}${url.search}`, request));
  },
};

// CodeSession is one session: its options and events in SQLite, its Go
// session opened on first use by each instance of the object.
export class CodeSession extends DurableObject {
  /** @param {any} ctx @param {any} env */
  constructor(ctx, env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    this.session = null;
    this.opening = null; // the session being opened (one per instance)
    this.subscribers = new Set();
    this.ready = false; // the meta table exists (checked once per instance)
    this.eventsReady = false; // the events table exists (checked once per instance)
    this.info = undefined; // the session's {id, createdAt}, read once per instance
    this.rows = []; // the session's events not yet written (open)
    this.seq = undefined; // the last event's seq (read from storage once per instance)
    this.timer = undefined; // the pending flush of rows
  }

  // tables creates the meta table when missing (a new object, or one
  // whose storage a DELETE emptied), once per instance (again after a
  // DELETE); eventsTable the events table, on the first use of events
  // (not in a create's commit, which the create's response waits for).
  tables() {
    if (this.ready) return;
    this.ready = true;
    this.sql.exec('CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v TEXT NOT NULL)');
  }

  eventsTable() {
    if (this.eventsReady) return;
    this.eventsReady = true;
    this.sql.exec('CREATE TABLE IF NOT EXISTS events (seq INTEGER PRIMARY KEY AUTOINCREMENT, type TEXT NOT NULL, data TEXT NOT NULL)');
  }

  meta(k) {
    const rows = this.sql.exec('SELECT v FROM meta WHERE k = ?', k).toArray();
    return rows.length ? JSON.parse(String(rows[0].v)) : undefined;
  }

  // open creates the Go session over this object's R2 prefix and pipes
  // its events to the SSE subscribers at once and into the events table
  // in batches. Each event's seq (its SSE id) is given here, one more than
  // the last, so a subscriber sees it without waiting for storage; the
  // rows are written FLUSH_MS after the first of a batch (or at 64 rows,
  // or before a replay), one commit for many tool calls: a commit holds
  // every response the object sends until SQLite has it on disk (the
  // output gate; RATIONALE.md "Why are a session's events written in
  // batches?").
  // empty: the session's R2 prefix is known to hold nothing (a create).
  async open(options, id, empty = false) {
    const create = makeCreateSession(getApi, { hostKinds: { ...ptcKinds, ...r2HostKinds(this.env.WORKSPACE, { empty }) } });
    const s = await create({ ...options, workspace: { ...(options.workspace ?? {}), kind: 'r2', root: `ws/${id}` } });
    const rows = (this.rows = []);
    if (empty) this.seq = 0; // a new session: nothing was ever given
    (async () => {
      for await (const e of s[pacedEvents](PACE_MS)) {
        if (e.type === 'tool_output_delta' || e.type === 'tool_input_delta') continue;
        this.seq ??= this.lastSeq();
        const row = [++this.seq, e.type, JSON.stringify(e)];
        for (const w of this.subscribers) w(...row);
        const n = rows.push(row);
        if (n === 1) this.timer = setTimeout(() => this.flush(rows), FLUSH_MS);
        else if (n >= 64) this.flush(rows);
      }
    })().catch(() => {});
    return s;
  }

  // lastSeq is where a new instance's seqs start: past the highest the
  // events table holds by the most rows an instance ever leaves unwritten
  // (64), so an id a subscriber saw before the isolate died is never
  // given to another event (ids only rise; a gap is harmless).
  lastSeq() {
    this.eventsTable();
    return Number(this.sql.exec('SELECT MAX(seq) AS m FROM events').one().m ?? 0) + 64;
  }

  // flush writes the events waiting in rows to the table, one statement
  // per 32 (a query binds at most 100 parameters on Workers); rows of a
  // session a DELETE removed are dropped. A row that cannot be stored
  // (storage full, a row over the size limit) loses only itself: its
  // subscribers had it, a replay skips its seq.
  flush(rows) {
    clearTimeout(this.timer);
    if (rows !== this.rows || !rows.length) return;
    try {
      this.eventsTable();
    } catch {
      rows.length = 0; // storage failed whole: these events are lost, never the object nor later events
      return;
    }
    while (rows.length) {
      const batch = rows.splice(0, 32);
      try {
        this.insert(batch);
      } catch {
        for (const row of batch) {
          try {
            this.insert([row]);
          } catch {
            // dropped: see above
          }
        }
      }
    }
  }

  // insert writes rows [seq, type, data] in one statement.
  insert(batch) {
    this.sql.exec(`INSERT INTO events (seq, type, data) VALUES ${batch.map(() => '(?, ?, ?)').join(', ')}`, ...batch.flat());
  }

  /** @param {Request} request */
  async fetch(request) {
    const url = new URL(request.url);
    const [op, arg] = url.pathname.split('/').filter(Boolean);
    try {
      if (op === 'create') return await this.create(request, arg);
      this.tables();
      const info = (this.info ??= this.meta('info'));
      if (!info) return fail(404, 'UNKNOWN_SESSION', `no session ${this.ctx.id}`);
      this.opening ??= this.open(this.meta('options'), info.id);
      this.session = await this.opening;
      if (!op && request.method === 'GET') return json({ id: info.id, toolNames: this.session.toolNames(), createdAt: info.createdAt });
      if (!op && request.method === 'DELETE') return await this.remove(info.id);
      if (op === 'tools' && arg && request.method === 'POST') {
        const args = await body(request);
        if (args instanceof Response) return args;
        return json(await this.session.tool(decodeURIComponent(arg), args));
      }
      if (op === 'program' && request.method === 'POST') {
        const b = await body(request);
        if (b instanceof Response) return b;
        if (typeof b.source !== 'string') return fail(400, 'INVALID_ARGUMENT', 'body.source must be a string: async function run(ctx, inputs) {…}');
        return json(await this.session.program(b));
      }
      if (op === 'events' && request.method === 'GET') return this.events(request);
      return fail(404, 'NOT_FOUND', `no route ${request.method} ${url.pathname}`);
    } catch (e) {
      const code = e?.code ?? 'INTERNAL';
      return fail(code === 'INVALID_OPTIONS' || code === 'INVALID_CALL' ? 400 : 500, code, String(e?.message ?? e));
    }
  }

  async create(request, id) {
    const options = await body(request);
    if (options instanceof Response) return options;
    this.opening = this.open(options, id, true);
    try {
      this.session = await this.opening;
    } catch (e) {
      this.opening = null;
      throw e;
    }
    const { workspace, ...rest } = options;
    const kept = workspace ? { ...rest, workspace: { ...workspace, files: undefined } } : rest;
    const info = { id, createdAt: new Date().toISOString() };
    // The table and the row in one synchronous block: one commit, which
    // the response waits for (the output gate), not two.
    this.tables();
    this.sql.exec('INSERT OR REPLACE INTO meta (k, v) VALUES (?, ?), (?, ?)', 'options', JSON.stringify(kept), 'info', JSON.stringify(info));
    this.info = info;
    return json({ id }, 201);
  }

  async remove(id) {
    await this.session.close();
    this.session = this.opening = null;
    this.rows = [];
    for (let cursor; ;) {
      const l = await this.env.WORKSPACE.list({ prefix: `ws/${id}/`, cursor });
      if (l.objects.length) await this.env.WORKSPACE.delete(l.objects.map((o) => o.key));
      if (!l.truncated) break;
      cursor = l.cursor;
    }
    clearTimeout(this.timer);
    await this.ctx.storage.deleteAll();
    this.seq = undefined;
    this.ready = this.eventsReady = false;
    this.info = undefined;
    return new Response(null, { status: 204 });
  }

  // events streams Server-Sent Events: the rows after Last-Event-ID (or
  // ?after=), then every new one until the client goes away.
  events(request) {
    const after = Number(request.headers.get('last-event-id') ?? new URL(request.url).searchParams.get('after') ?? 0) || 0;
    const { readable, writable } = new TransformStream();
    const writer = writable.getWriter();
    const enc = new TextEncoder();
    const send = (seq, type, data) => writer.write(enc.encode(`id: ${seq}\nevent: ${type}\ndata: ${data}\n\n`)).catch(() => this.subscribers.delete(send));
    this.flush(this.rows);
    this.eventsTable();
    for (const r of this.sql.exec('SELECT seq, type, data FROM events WHERE seq > ? ORDER BY seq', after)) send(r.seq, r.type, r.data);
    this.subscribers.add(send);
    return new Response(readable, { headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-store' } });
  }
}

// body reads a JSON object body, or answers the 400 that names what was wrong.
async function body(request) {
  const text = await request.text();
  if (text === '') return {};
  let v;
  try {
    v = JSON.parse(text);
  } catch (e) {
    return fail(400, 'INVALID_ARGUMENT', `the body is not JSON: ${e.message}`);
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return fail(400, 'INVALID_ARGUMENT', 'the body must be a JSON object');
  return v;
}
