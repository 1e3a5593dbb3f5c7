// How Go's fetch (internal/fetch) reads a response: in batches. Every time
// JS resumes Go costs its event, the Go scheduler and the crossings (~50–
// 150 µs under js/wasm in Node), and a streamed response cost three: the
// headers, each chunk, the end. Here open resolves when the headers are in,
// with the body's first chunks if they came in the same socket read (undici
// hands them over a few promise turns after the headers), and read resolves
// to the next chunk with every chunk that followed it by the next turn of
// the event loop, marked `end` when the stream ended too. A model's short
// streamed answer on loopback then takes two resumes of Go (its headers;
// its chunks and end), where it took three (RATIONALE.md "Why does a js
// fetch read its body through a helper of the npm loader?"). The loader
// hands this object to Go at start (globalThis.__a3sCodeWasmFetch, read
// once); without it Go reads the stream a chunk at a time.

const NOT_YET = Symbol('not yet');

// soon settles with NOT_YET after a few promise turns: what undici hands
// over from the socket read that brought the headers is there by then.
function soon() {
  let p = Promise.resolve(NOT_YET);
  for (let i = 0; i < 8; i++) p = p.then((v) => v);
  return p;
}

// later settles with NOT_YET after the promise turns and the process.nextTick
// callbacks already due (undici ends a body from one), and before new I/O is
// read: setImmediate under Node. Elsewhere a browser's or workerd's body
// arrives in tasks of its own, and soon catches what is there.
const later = typeof globalThis.setImmediate === 'function'
  ? () => new Promise((resolve) => globalThis.setImmediate(resolve, NOT_YET))
  : soon;

/**
 * @typedef {{res: Response, reader: ReadableStreamDefaultReader<Uint8Array> | undefined,
 *   pending: Promise<ReadableStreamReadResult<Uint8Array>> | undefined,
 *   batch: Uint8Array | null | undefined}} Opened
 */

/**
 * keep holds a read that was not done by the next turn for the next batch;
 * its failure is seen there (and is not unhandled meanwhile).
 * @param {Opened} st
 * @param {Promise<ReadableStreamReadResult<Uint8Array>>} p
 */
function keep(st, p) {
  p.catch(() => {});
  st.pending = p;
}

/**
 * take is the next batch: the next chunk (awaited when wait, else only if
 * it is there soon: undefined if not), with the chunks that are
 * there by the next turn after it, as one array marked end when the stream
 * ended as well; null at the end of the stream.
 * @param {Opened} st
 * @param {boolean} wait
 * @returns {Promise<Uint8Array | null | undefined>}
 */
async function take(st, wait) {
  const reader = /** @type {ReadableStreamDefaultReader<Uint8Array>} */ (st.reader);
  const first = st.pending ?? reader.read();
  st.pending = undefined;
  let r;
  if (wait) {
    r = await first;
  } else {
    try {
      r = await Promise.race([first, soon()]);
    } catch {
      r = NOT_YET; // the response stands; its first read fails with it
    }
    if (r === NOT_YET) {
      keep(st, first);
      return undefined;
    }
  }
  if (r.done) return null;
  const parts = [r.value];
  let size = r.value.byteLength;
  let end = false;
  for (;;) {
    const p = reader.read();
    let s;
    try {
      s = await Promise.race([p, later()]);
    } catch {
      keep(st, p); // the next read fails with it, after these bytes
      break;
    }
    if (s === NOT_YET) {
      keep(st, p);
      break;
    }
    if (s.done) {
      end = true;
      break;
    }
    parts.push(s.value);
    size += s.value.byteLength;
  }
  let out = parts[0];
  if (parts.length > 1) {
    out = new Uint8Array(size);
    let at = 0;
    for (const b of parts) {
      out.set(b, at);
      at += b.byteLength;
    }
  }
  if (end) /** @type {any} */ (out).end = true;
  return out;
}

export const fetchBody = {
  /**
   * open calls the global fetch (looked up per call: a host may wrap it)
   * and resolves with the response, its reader and its first batch.
   * @param {string} url
   * @param {RequestInit} init
   * @returns {Promise<Opened>}
   */
  async open(url, init) {
    const res = await globalThis.fetch(url, init);
    /** @type {Opened} */
    const st = { res, reader: undefined, pending: undefined, batch: undefined };
    if (res.body) {
      st.reader = res.body.getReader();
      st.batch = await take(st, false);
    }
    return st;
  },
  /**
   * read resolves with the next batch: a Uint8Array (marked end when the
   * stream ended after it) or null at the end.
   * @param {Opened} st
   */
  read(st) {
    return take(st, true);
  },
};
