// Where the agent turn's time goes (issue 13), by phase, against the same
// two requests replayed by Node's fetch in the same round (interleaved, so
// both see the same load). Phases of one send(): start -> first fetch call
// (g0), its headers (h1), its body to the end (b1), the tool round -> the
// second fetch call (g1), headers (h2), body (b2), the end -> send resolved
// (g2), and from each fetch call to Go's yield (y1, y2); the replay: headers (h)
// and body (b) per request. Medians in ms, after WARM sends and replays.
// Also counted per send (independent of load): Go<->JS crossings (calls of
// go.importObject.gojs) and resumes of the Go scheduler from JS.
//   N=100 WARM=200 node bench/agent-phases.mjs     (needs make build and Go)
import { join, dirname } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
const repo = join(dirname(fileURLToPath(import.meta.url)), '..');
const N = Number(process.env.N || 100);
const WARM = Number(process.env.WARM || 200); // both sides warmed alike (V8 tiers the wasm up for hundreds of sends)
await import(pathToFileURL(join(repo, 'npm/src/wasm_exec.js')).href);
let counting = false, resumes = 0;
const crossings = new Map();
const Go = globalThis.Go;
globalThis.Go = class extends Go {
  constructor() {
    super();
    const g = this.importObject.gojs;
    for (const [k, f] of Object.entries(g)) g[k] = (sp) => { if (counting) crossings.set(k, (crossings.get(k) || 0) + 1); return f(sp); };
  }
  _resume() { if (counting) resumes++; const r = super._resume(); if (callAt !== undefined) { yields.push(performance.now() - callAt); callAt = undefined; } return r; }
};
// The Go work between calling fetch and yielding to the event loop (y1, y2:
// fetch's own synchronous part included, which the replay pays too) delays
// the request: it leaves only when Go yields.
let callAt; const yields = [];
const marks = []; const realFetch = globalThis.fetch;
globalThis.fetch = (...a) => { marks.push(['call', performance.now()]); callAt = performance.now(); return realFetch(...a).then((r) => { marks.push(['head', performance.now()]); if (r.body) { const rd = r.body.getReader.bind(r.body); r.body.getReader = () => { const x = rd(); const rr = x.read.bind(x); x.read = () => rr().then((v) => { if (v.done) marks.push(['end', performance.now()]); return v; }); return x; }; } return r; }); };
const { startLLMServer } = await import(pathToFileURL(join(repo, 'web/test/llmserver.mjs')).href);
const { createSession } = await import(pathToFileURL(join(repo, 'npm/src/entry-node.mjs')).href);
const server = await startLLMServer();
const usage = { promptTokens: 100, completionTokens: 20, totalTokens: 120 };
const turn = [
  { events: [{ tool: { index: 0, id: 'call_1', name: 'read' } }, { args: { index: 0, fragment: '{"file_path":' } }, { args: { index: 0, fragment: '"k.txt"}' } }, { finish: { stop: 'tool_use', usage } }] },
  { events: [{ text: 'The file holds a kilobyte.' }, { finish: { stop: 'stop', usage } }] },
];
const load = async () => (await realFetch(`${server.url}/scripts`, { method: 'POST', body: JSON.stringify({ provider: 'openai', replies: Array.from({ length: N + WARM + 10 }, () => turn).flat() }) })).json();
const script = await load();
const s = await createSession({
  workspace: { kind: 'memory', files: { 'k.txt': `${'x'.repeat(63)}\n`.repeat(16) } },
  llm: { provider: 'openai', baseURL: script.baseURL, apiKey: 'sk-test', model: 'model-test', maxRetries: 0 },
  permissionPolicy: { allow: ['read'] },
});
for (let i = 0; i < 5; i++) await s.send('read k.txt', []);
const log = await (await realFetch(`${server.url}/scripts/${script.id}/log`)).json();
const bodies = [log.requests[0].body, log.requests[1].body];
const raw = await load();
const med = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const A = { send: [], h1: [], b1: [], h2: [], b2: [], g0: [], g1: [], g2: [], y1: [], y2: [] }, B = { send: [], h: [], b: [] };
const replay = async (rec) => {
  const r0 = performance.now();
  for (const body of bodies) { const a = performance.now(); const r = await realFetch(`${raw.baseURL}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer sk-test' }, body: JSON.stringify(body) }); const b = performance.now(); await r.text(); if (rec) { B.h.push(b - a); B.b.push(performance.now() - b); } }
  if (rec) B.send.push(performance.now() - r0);
};
for (let i = 0; i < WARM; i++) { await s.send('read k.txt', []); await replay(false); }
for (let i = 0; i < N; i++) {
  marks.length = 0; yields.length = 0; counting = true; const t0 = performance.now(); await s.send('read k.txt', []); const t1 = performance.now(); counting = false;
  const T = marks.map(([, t]) => t);
  if (marks.map(([k]) => k).join() === 'call,head,end,call,head,end') { A.send.push(t1 - t0); A.g0.push(T[0] - t0); A.h1.push(T[1] - T[0]); A.b1.push(T[2] - T[1]); A.g1.push(T[3] - T[2]); A.h2.push(T[4] - T[3]); A.b2.push(T[5] - T[4]); A.g2.push(t1 - T[5]); if (yields.length === 2) { A.y1.push(yields[0]); A.y2.push(yields[1]); } }
  await replay(true);
}
const f = (o) => Object.fromEntries(Object.entries(o).map(([k, v]) => [k, +med(v).toFixed(3)]));
console.log(`agent turn by phase, js/wasm in Node ${process.version}, N=${N} (median ms)`);
console.log('send()  ', JSON.stringify(f(A)));
console.log('replayed', JSON.stringify(f(B)));
const total = [...crossings.values()].reduce((a, b) => a + b, 0);
console.log(`per send: ${(total / N).toFixed(1)} crossings, ${(resumes / N).toFixed(1)} resumes;`, Object.fromEntries([...crossings].sort((a, b) => b[1] - a[1]).slice(0, 8).map(([k, v]) => [k.replace(/^(syscall\/js|runtime)\./, ''), +(v / N).toFixed(1)])));
await s.close(); server.stop();
