// The r2.* host kinds (workspace/r2's HostBucket, one per operation) over
// a Cloudflare R2 binding: Go's r2 workspace driver asks, this answers.
// The binding is the one of the session's Worker or Durable Object,
// closed over here per session; Go never holds it. Bytes cross as base64.
// An object crosses as {key, size, etag, uploaded (Unix ms)}.

const wire = (o) => ({ key: o.key, size: o.size, etag: o.etag, uploaded: o.uploaded.getTime() });

function toBase64(bytes) {
  let s = '';
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
  return btoa(s);
}
const fromBase64 = (b64) => Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));

// r2HostKinds returns the r2.* handlers for makeCreateSession's hostKinds
// over bucket (an R2Bucket binding). With empty true the caller knows the
// session's prefix holds no object (a session just created under a new
// unique id): until its first put or delete, head, get and list are
// answered here as R2 would answer them (nothing there) without a round
// trip (a create asked R2 three times, in two rounds, about .a3s). Only
// this session writes under its prefix, so nothing can appear there
// unseen; a put or delete ends it before it is sent.
/** @param {any} bucket @param {{empty?: boolean}} [o] */
export function r2HostKinds(bucket, { empty = false } = {}) {
  const none = async () => ({ object: null });
  return {
    'r2.head': async ({ key }) => {
      if (empty) return none();
      const o = await bucket.head(key);
      return { object: o ? wire(o) : null };
    },
    'r2.get': async ({ key }) => {
      if (empty) return none();
      const o = await bucket.get(key);
      if (!o) return { object: null };
      return { object: wire(o), data: toBase64(new Uint8Array(await o.arrayBuffer())) };
    },
    // put answers object null when the ETag condition fails (R2's put
    // resolves to null then).
    'r2.put': async ({ key, data, ifMatch }) => {
      empty = false;
      const o = await bucket.put(key, fromBase64(data ?? ''), ifMatch ? { onlyIf: { etagMatches: ifMatch } } : undefined);
      return { object: o ? wire(o) : null };
    },
    'r2.list': async ({ prefix, delimiter, cursor, limit }) => {
      if (empty) return { objects: [], delimitedPrefixes: [], truncated: false, cursor: '' };
      const l = await bucket.list({ prefix, limit, ...(delimiter ? { delimiter } : {}), ...(cursor ? { cursor } : {}) });
      return { objects: l.objects.map(wire), delimitedPrefixes: l.delimitedPrefixes ?? [], truncated: l.truncated, cursor: l.truncated ? l.cursor : '' };
    },
    'r2.delete': async ({ keys }) => {
      empty = false;
      await bucket.delete(keys);
      return null;
    },
  };
}
