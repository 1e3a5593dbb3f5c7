// The engine figures of bench/ptc.bench.mjs, shared by Node and the
// Chromium page it drives (plain ES, no Node imports).
export const CALLS = 1000;
export const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

// drive runs one script on a kinds table as Go's HostEngine does, answering
// every ctx call at once. Returns {total, calls, value}: calls is the time
// from the first ctx call to the end, so the start does not leak into the
// per-call figure.
async function drive(kinds, source) {
  const t0 = performance.now();
  const { run } = await kinds['ptc.start']({ name: 'bench.js', source, inputs: {}, methods: ['tool'], tools: ['read'], timeoutMs: 600000, maxToolCalls: 100000 });
  let first = 0;
  for (;;) {
    const p = await kinds['ptc.poll']({ run });
    if (!first) first = performance.now();
    for (const c of p.calls) kinds['ptc.reply']({ run, id: c.id, ok: true, value: '{"output":"x","exitCode":0}' });
    if (p.done) {
      if (!p.done.ok) throw new Error(p.done.error.message);
      const end = performance.now();
      await kinds['ptc.stop']({ run });
      return { total: end - t0, calls: end - first, value: p.done.value };
    }
  }
}
export const TRIVIAL = 'async function run(ctx, inputs) { return 1 }';
const LOOP = `async function run(ctx) { for (let i = 0; i < ${CALLS}; i++) await ctx.tool('read', { i }); }`;
// Compute: a million iterations of arithmetic and a 10,000-entry object.
const COMPUTE = 'async function run() { let s = 0; const o = {}; for (let i = 0; i < 1e6; i++) { s = (s + i * 7) % 1000003; if (i % 100 === 0) o["k" + (i % 10000)] = s; } return s + Object.keys(o).length }';

export async function engineFigures(kinds) {
  const cold = (await drive(kinds, TRIVIAL)).total;
  const starts = [];
  for (let i = 0; i < 15; i++) starts.push((await drive(kinds, TRIVIAL)).total);
  const loops = [];
  for (let i = 0; i < 5; i++) loops.push((await drive(kinds, LOOP)).calls / CALLS);
  const compute = [];
  for (let i = 0; i < 3; i++) compute.push((await drive(kinds, COMPUTE)).total);
  return { cold, start: median(starts), call: median(loops), compute: median(compute) };
}

