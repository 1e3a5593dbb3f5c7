// Workspace content as bytes (API.md "Workspace content"): the packing of
// files into the chunks api.callBytes and createSession carry, and the
// unpacking of exported pages. A chunk is {index: JSON {paths, sizes},
// data: Uint8Array}: the content of paths[i] is the next sizes[i] bytes of
// data. No file's content is ever a JSON string, and no transfer is one
// giant buffer: chunks hold about CHUNK_BYTES (a larger file goes alone).

import { isPlainObject, wellFormed, notWellFormed } from './options.mjs';

export const CHUNK_BYTES = 8 * 1024 * 1024;

const encoder = new TextEncoder();
// fatal: a file that is not UTF-8 is an error, never U+FFFD; ignoreBOM: a
// BOM is content and stays.
const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

const got = (v) => (typeof v === 'number' ? String(v) : v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v);

/**
 * checkFiles checks a {path: string | Uint8Array} map and returns its
 * entries; fail makes the error (naming at[key]).
 * @param {unknown} files
 * @param {string} at
 * @param {(msg: string) => Error} fail
 * @returns {[string, string | Uint8Array][]}
 */
export function checkFiles(files, at, fail) {
  if (!isPlainObject(files)) throw fail(`${at} must be an object {path: string | Uint8Array}, got ${got(files)}`);
  const entries = Object.entries(/** @type {Record<string, unknown>} */ (files));
  for (const [k, v] of entries) {
    const where = `${at}[${JSON.stringify(k)}]`;
    if (!wellFormed(k)) throw fail(notWellFormed(k, `a key of ${at}`));
    if (typeof v === 'string') {
      if (!wellFormed(v)) throw fail(`${notWellFormed(v, where)}; pass a Uint8Array for exact bytes`);
    } else if (!(v instanceof Uint8Array)) {
      throw fail(`${where} must be a string or a Uint8Array, got ${got(v)}`);
    }
  }
  return /** @type {[string, string | Uint8Array][]} */ (entries);
}

/**
 * packFiles yields the checked entries in chunks. With reuse, every chunk
 * shares one buffer (the caller sends each before asking for the next).
 * @param {[string, string | Uint8Array][]} entries
 * @param {boolean} reuse
 * @returns {Generator<{paths: string[], sizes: number[], data: Uint8Array}>}
 */
export function* packFiles(entries, reuse) {
  let buf = null;
  let off = 0;
  let paths = [];
  let sizes = [];
  const flush = () => {
    const c = { paths, sizes, data: buf.subarray(0, off) };
    if (!reuse) buf = null; // the chunk keeps its buffer
    paths = [];
    sizes = [];
    off = 0;
    return c;
  };
  for (const [p, v] of entries) {
    // The most a string can take in UTF-8: 3 bytes per UTF-16 unit.
    const most = typeof v === 'string' ? v.length * 3 : v.length;
    if (most > CHUNK_BYTES) {
      if (paths.length > 0) yield flush();
      const data = typeof v === 'string' ? encoder.encode(v) : v;
      yield { paths: [p], sizes: [data.length], data };
      continue;
    }
    if (paths.length > 0 && off + most > CHUNK_BYTES) yield flush();
    buf ??= new Uint8Array(CHUNK_BYTES);
    let n;
    if (typeof v === 'string') {
      n = encoder.encodeInto(v, buf.subarray(off)).written;
    } else {
      buf.set(v, off);
      n = v.length;
    }
    paths.push(p);
    sizes.push(n);
    off += n;
  }
  if (paths.length > 0) yield flush();
}

/**
 * unpackPage adds an exported page's files to out: text as strings, the
 * rest as Uint8Array copies.
 * @param {{paths: string[], sizes: number[], text: boolean[]}} meta
 * @param {Uint8Array | undefined} data
 * @param {Record<string, string | Uint8Array>} out
 */
export function unpackPage(meta, data, out) {
  let off = 0;
  for (let i = 0; i < meta.paths.length; i++) {
    const n = meta.sizes[i];
    const b = data.subarray(off, off + n);
    off += n;
    const v = meta.text[i] ? decoder.decode(b) : b.slice();
    if (meta.paths[i] === '__proto__') Object.defineProperty(out, '__proto__', { value: v, enumerable: true, writable: true, configurable: true });
    else out[meta.paths[i]] = v;
  }
}

/** @param {Uint8Array} b */
export function decodeText(b) { return decoder.decode(b); }
