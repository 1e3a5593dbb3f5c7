// How long V8 keeps tiering the Go wasm up during a session's sends (issue
// 13): sends in blocks, and per block the wasm functions V8 compiled with
// TurboFan (counted from --trace-wasm-compilation-times, independent of
// load) beside the CPU per send. Liftoff code still running after the
// bench's warm-up means its "steady" row is not yet V8's steady state.
//   node bench/agent-tierup.mjs                   (needs make build and Go)
//   N=1000 FLAGS='--wasm-tiering-budget=200000' node bench/agent-tierup.mjs
import { spawnSync } from 'node:child_process';
import { join, dirname } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const N = Number(process.env.N || 800);
const STOPS = [1, 10, 50, 100, 200, 300, 400, 600, 800, 1200, 1600, 2000].filter((n) => n <= N);

if (!process.env.TIERUP_CHILD) {
  const flags = (process.env.FLAGS || '').split(' ').filter(Boolean);
  const r = spawnSync(process.execPath, ['--trace-wasm-compilation-times', ...flags, fileURLToPath(import.meta.url)],
    { env: { ...process.env, TIERUP_CHILD: '1' }, encoding: 'utf8', maxBuffer: 1 << 28, stdio: ['ignore', 'pipe', 'inherit'] });
  if (r.status !== 0) throw new Error(`child exited with ${r.status}`);
  let tf = 0, tfMs = 0;
  console.log(`TurboFan tier-up of the Go wasm over ${N} sends, Node ${process.version}${flags.length ? ` ${flags.join(' ')}` : ''}:`);
  console.log('| sends | TurboFan compiles in the block | their compile ms | CPU ms per send in the block |');
  console.log('|---|---:|---:|---:|');
  for (const line of r.stdout.split('\n')) {
    const m = /using TurboFan, took (\d+) ms/.exec(line);
    if (m) { tf++; tfMs += Number(m[1]); continue; }
    const b = /^BLOCK (\S+) (\S+)$/.exec(line);
    if (b) { console.log(`| ${b[1]} | ${tf} | ${tfMs} | ${b[2]} |`); tf = 0; tfMs = 0; }
  }
} else {
  const repo = join(dirname(fileURLToPath(import.meta.url)), '..');
  const { startLLMServer } = await import(pathToFileURL(join(repo, 'web/test/llmserver.mjs')).href);
  const { createSession } = await import(pathToFileURL(join(repo, 'npm/src/entry-node.mjs')).href);
  const server = await startLLMServer();
  try {
    const usage = { promptTokens: 100, completionTokens: 20, totalTokens: 120 };
    const turn = [
      { events: [{ tool: { index: 0, id: 'call_1', name: 'read' } }, { args: { index: 0, fragment: '{"file_path":' } }, { args: { index: 0, fragment: '"k.txt"}' } }, { finish: { stop: 'tool_use', usage } }] },
      { events: [{ text: 'The file holds a kilobyte.' }, { finish: { stop: 'stop', usage } }] },
    ];
    const script = await (await fetch(`${server.url}/scripts`, { method: 'POST', body: JSON.stringify({ provider: 'openai', replies: Array.from({ length: N }, () => turn).flat() }) })).json();
    const s = await createSession({
      workspace: { kind: 'memory', files: { 'k.txt': `${'x'.repeat(63)}\n`.repeat(16) } },
      llm: { provider: 'openai', baseURL: script.baseURL, apiKey: 'sk-test', model: 'model-test', maxRetries: 0 },
      permissionPolicy: { allow: ['read'] },
    });
    console.log('BLOCK start -');
    let c0 = process.cpuUsage(), from = 0;
    for (let i = 1; i <= N; i++) {
      const r = await s.send('read k.txt', []);
      if (r.toolCallsCount !== 1) throw new Error(JSON.stringify(r));
      if (STOPS.includes(i)) {
        const c = process.cpuUsage(c0);
        console.log(`BLOCK ${from + 1}-${i} ${((c.user + c.system) / 1000 / (i - from)).toFixed(2)}`);
        c0 = process.cpuUsage(); from = i;
      }
    }
    await s.close();
  } finally {
    server.stop();
  }
}
