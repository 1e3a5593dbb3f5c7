// Test plumbing for ptc's native tests of the Node engine: serves the
// real PTC host kinds of npm/src/ptc-node.mjs over stdio, one JSON object
// a line. In: {id, kind, payload} or {abort: id}. Out: {id, ok, result} or
// {id, ok: false, error}. In the package, the same kinds are reached
// through the wasm host dispatcher instead (PROTOCOL.md §2).
import { createInterface } from 'node:readline';
import { nodePtcHostKinds } from '../../npm/src/ptc-node.mjs';

const kinds = nodePtcHostKinds();
const aborts = new Map();
const out = (m) => process.stdout.write(JSON.stringify(m) + '\n');
createInterface({ input: process.stdin }).on('line', async (line) => {
  const m = JSON.parse(line);
  if (m.abort !== undefined) { aborts.get(m.abort)?.abort(); return; }
  const ac = new AbortController();
  aborts.set(m.id, ac);
  try {
    const fn = kinds[m.kind];
    if (!fn) throw new Error(`no handler for host kind "${m.kind}"`);
    const v = await fn(JSON.parse(m.payload), { signal: ac.signal });
    out({ id: m.id, ok: true, result: JSON.stringify(v === undefined ? null : v) });
  } catch (e) {
    out({ id: m.id, ok: false, error: String(e && e.message ? e.message : e) });
  } finally {
    aborts.delete(m.id);
  }
}).on('close', () => process.exit(0));
