// A local R2 for plain `workerd serve` (the rig in rig.mjs): workerd's
// r2Bucket binding turns each call into an HTTP request to a service;
// this Worker is that service and keeps the objects in a SQLite Durable
// Object on local disk, so they outlive a restart. The protocol is the
// one workerd speaks (as miniflare's R2 answers it): GET / with the call
// in the cf-r2-request header (head, get, list); PUT / with a body of
// cf-r2-metadata-size bytes of JSON (put, delete) followed by the value;
// answers are that JSON then the value; errors a status and cf-r2-error.
// Enough for the r2 workspace: whole-object get and put (with onlyIf
// ETag conditions), list with prefix, delimiter, cursor and limit, and
// delete. Not: ranges, multipart uploads, stored HTTP or custom metadata.
import { DurableObject } from 'cloudflare:workers';

const CHUNK = 1 << 20; // SQLite values stay under the Durable Object's 2 MB

export default {
  /** @param {Request} request @param {any} env */
  fetch(request, env) {
    return env.BUCKET.get(env.BUCKET.idFromName('bucket')).fetch(request);
  },
};

const enc = new TextEncoder();
const fail = (status, v4code, message) => new Response(null, { status, headers: { 'cf-r2-error': JSON.stringify({ message, version: 1, v4code }) } });

// reply answers metadata JSON, then bytes if any.
function reply(meta, bytes) {
  const head = enc.encode(JSON.stringify(meta));
  const body = new Uint8Array(head.length + (bytes?.length ?? 0));
  body.set(head);
  if (bytes) body.set(bytes, head.length);
  return new Response(body, { headers: { 'cf-r2-metadata-size': String(head.length), 'content-type': 'application/json' } });
}

const wire = (r) => ({
  name: r.key, version: r.version, size: r.size, etag: r.etag, uploaded: r.uploaded,
  httpFields: {}, customFields: [], range: { offset: 0, length: r.size }, checksums: { 0: r.etag },
});

// holds reports whether the onlyIf conditions allow a write over row.
function holds(onlyIf, row) {
  const match = (list) => list.some((e) => e.type === 'wildcard' || e.value === row?.etag);
  if (onlyIf?.etagMatches && !(row && match(onlyIf.etagMatches))) return false;
  if (onlyIf?.etagDoesNotMatch && row && match(onlyIf.etagDoesNotMatch)) return false;
  return true;
}

export class Bucket extends DurableObject {
  /** @param {any} ctx @param {any} env */
  constructor(ctx, env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    this.sql.exec('CREATE TABLE IF NOT EXISTS objects (key TEXT PRIMARY KEY, version TEXT, size INTEGER, etag TEXT, uploaded INTEGER)');
    this.sql.exec('CREATE TABLE IF NOT EXISTS chunks (key TEXT, n INTEGER, data BLOB, PRIMARY KEY (key, n))');
  }

  row(key) {
    return this.sql.exec('SELECT * FROM objects WHERE key = ?', key).toArray()[0];
  }

  /** @param {Request} request */
  async fetch(request) {
    if (request.method === 'GET') {
      const m = JSON.parse(request.headers.get('cf-r2-request') ?? '{}');
      if (m.method === 'list') return reply(this.list(m));
      const r = this.row(m.object);
      if (!r) return fail(404, 10007, 'The specified key does not exist.');
      if (m.method === 'head') return reply(wire(r));
      const bytes = new Uint8Array(r.size);
      for (const c of this.sql.exec('SELECT n, data FROM chunks WHERE key = ? ORDER BY n', m.object)) bytes.set(new Uint8Array(c.data), c.n * CHUNK);
      return reply(wire(r), bytes);
    }
    const all = new Uint8Array(await request.arrayBuffer());
    const size = Number(request.headers.get('cf-r2-metadata-size'));
    const m = JSON.parse(new TextDecoder().decode(all.subarray(0, size)));
    if (m.method === 'delete') {
      for (const k of m.objects ?? [m.object]) {
        this.sql.exec('DELETE FROM objects WHERE key = ?', k);
        this.sql.exec('DELETE FROM chunks WHERE key = ?', k);
      }
      return new Response(null);
    }
    if (m.method !== 'put') return fail(501, 10001, `the local R2 gateway does not do ${m.method}`);
    if (!holds(m.onlyIf, this.row(m.object))) return fail(412, 10031, 'At least one of the pre-conditions you specified did not hold.');
    const value = all.subarray(size);
    const etag = [...new Uint8Array(await crypto.subtle.digest('MD5', value))].map((b) => b.toString(16).padStart(2, '0')).join('');
    const r = { key: m.object, version: crypto.randomUUID().replaceAll('-', ''), size: value.length, etag, uploaded: Date.now() };
    this.sql.exec('INSERT OR REPLACE INTO objects VALUES (?, ?, ?, ?, ?)', r.key, r.version, r.size, r.etag, r.uploaded);
    this.sql.exec('DELETE FROM chunks WHERE key = ?', r.key);
    for (let n = 0; n * CHUNK < value.length; n++) this.sql.exec('INSERT INTO chunks VALUES (?, ?, ?)', r.key, n, value.slice(n * CHUNK, (n + 1) * CHUNK).buffer);
    return reply(wire(r));
  }

  // list: keys after the cursor (the last key or delimited prefix
  // answered) in key order; with a delimiter, keys sharing a prefix up to
  // it are one entry of delimitedPrefixes.
  list({ prefix = '', delimiter, cursor = '', limit = 1000 }) {
    const objects = [], prefixes = [];
    let last = cursor, truncated = false;
    for (const r of this.sql.exec('SELECT * FROM objects WHERE key > ? AND substr(key, 1, ?) = ? ORDER BY key', cursor, prefix.length, prefix)) {
      if (last.endsWith(delimiter ?? '\0') && last.length > prefix.length && r.key.startsWith(last)) continue; // inside the prefix answered last
      if (objects.length + prefixes.length === limit) {
        truncated = true;
        break;
      }
      const at = delimiter ? r.key.indexOf(delimiter, prefix.length) : -1;
      if (at >= 0) {
        last = r.key.slice(0, at + delimiter.length);
        prefixes.push(last);
      } else {
        last = r.key;
        objects.push(wire(r));
      }
    }
    return { objects, truncated, ...(truncated ? { cursor: last } : {}), delimitedPrefixes: prefixes };
  }
}
