// An MCP echo call through the kernel, wasm in Node, against
// server-everything on loopback, beside the official TypeScript SDK client
// (@modelcontextprotocol/sdk, server-everything's dependency) in the same
// run (issue 15 goal: <= 5 ms per call and <= 1.5x the SDK).
//   make build && node bench/mcp.bench.mjs
// Both clients talk to the same server process, send the same arguments
// and make one POST per call. After their first calls (the "first" rows:
// V8 is still compiling the hot code of both, for the Go wasm on a
// background thread) both warm up alike, then the steady rounds alternate
// between them, ROUNDS x BLOCK calls each, so that a change of the
// machine's load falls on both.
import { spawn } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { echoClients } from './mcp-clients.mjs';

const FIRST = 100;
const WARM = Number(process.env.WARM ?? 500);
const ROUNDS = Number(process.env.ROUNDS ?? 8);
const BLOCK = 50;
const server = spawn(process.execPath, ['--import', './mcp/testdata/loopback.mjs',
  'node_modules/@modelcontextprotocol/server-everything/dist/index.js', 'streamableHttp'],
{ env: { PORT: '0' }, stdio: ['ignore', 'ignore', 'pipe'] });
const url = await new Promise((resolve) => {
  let buf = '';
  server.stderr.on('data', (d) => {
    buf += d;
    const m = buf.match(/LISTENING (\S+)/);
    if (m) resolve(`http://${m[1]}/mcp`);
  });
});

// run makes n calls; it adds their times to t and returns the CPU they took
// in this process (the client: the server is another process; it includes
// V8's background threads).
async function run(call, n, t) {
  const cpu0 = process.cpuUsage();
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await call(i);
    t.push(performance.now() - t0);
  }
  const cpu = process.cpuUsage(cpu0);
  return (cpu.user + cpu.system) / 1000;
}

function figures(t, cpu) {
  t.sort((a, b) => a - b);
  return { p50: t[t.length >> 1], p95: t[Math.floor(t.length * 0.95)], cpu: cpu / t.length };
}

const { clients, close } = await echoClients(url);

const first = {};
for (const k of ['wasm', 'sdk']) {
  const t = [];
  first[k] = figures(t, await run(clients[k], FIRST, t));
}
for (let i = 0; i < WARM; i += BLOCK) for (const k of ['wasm', 'sdk']) await run(clients[k], BLOCK, []);
const times = { wasm: [], sdk: [] };
const cpu = { wasm: 0, sdk: 0 };
for (let r = 0; r < ROUNDS; r++) {
  for (const k of r % 2 ? ['sdk', 'wasm'] : ['wasm', 'sdk']) cpu[k] += await run(clients[k], BLOCK, times[k]);
}
const wasm = figures(times.wasm, cpu.wasm);
const sdk = figures(times.sdk, cpu.sdk);
await close();
server.kill('SIGKILL');

const row = (name, f) => `| ${name} | ${f.p50.toFixed(2)} | ${f.p95.toFixed(2)} | ${f.cpu.toFixed(2)} |`;
console.log(`| MCP echo, sequential calls | p50 ms | p95 ms | client CPU ms per call |`);
console.log('|---|---:|---:|---:|');
console.log(row(`wasm in Node, through the kernel, steady (${ROUNDS * BLOCK} calls)`, wasm));
console.log(row(`@modelcontextprotocol/sdk client, steady (${ROUNDS * BLOCK} calls)`, sdk));
console.log(row(`wasm, first ${FIRST} calls of the session`, first.wasm));
console.log(row(`sdk, first ${FIRST} calls of the client`, first.sdk));
console.log(`ratio wasm/sdk, steady: p50 ${(wasm.p50 / sdk.p50).toFixed(2)}, CPU ${(wasm.cpu / sdk.cpu).toFixed(2)}`);
