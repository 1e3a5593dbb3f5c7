// An MCP echo call through the kernel, wasm in Node, against
// server-everything on loopback, beside the official TypeScript SDK client
// (@modelcontextprotocol/sdk, server-everything's dependency) in the same
// run (issue 15 goal: <= 5 ms per call and <= 1.5x the SDK).
//   make build && node bench/mcp.bench.mjs
import { spawn } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { createSession } from '../npm/src/entry-node.mjs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const N = 300;
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

async function measure(call) {
  for (let i = 0; i < 30; i++) await call(i); // warm-up
  const t = [];
  const cpu0 = process.cpuUsage();
  for (let i = 0; i < N; i++) {
    const t0 = performance.now();
    await call(i);
    t.push(performance.now() - t0);
  }
  const cpu = process.cpuUsage(cpu0);
  t.sort((a, b) => a - b);
  // CPU of this process (the client; the server is another process) per
  // call: on a shared machine the wall time is mostly waiting for a core.
  return { p50: t[N >> 1], p95: t[Math.floor(N * 0.95)], cpu: (cpu.user + cpu.system) / 1000 / N };
}

const s = await createSession({ mcpServers: [{ name: 'everything', url }] });
const wasm = await measure(async (i) => {
  const r = await s.tool('mcp__everything__echo', { message: `m${i}` });
  if (r.output !== `Echo: m${i}`) throw new Error(r.output);
});
await s.close();

const client = new Client({ name: 'bench', version: '1' });
await client.connect(new StreamableHTTPClientTransport(new URL(url)));
const sdk = await measure(async (i) => {
  const r = await client.callTool({ name: 'echo', arguments: { message: `m${i}` } });
  if (r.content[0].text !== `Echo: m${i}`) throw new Error(r.content[0].text);
});
await client.close();
server.kill('SIGKILL');

console.log(`| MCP echo, ${N} sequential calls | p50 ms | p95 ms | client CPU ms per call |`);
console.log('|---|---:|---:|---:|');
console.log(`| wasm in Node, through the kernel | ${wasm.p50.toFixed(2)} | ${wasm.p95.toFixed(2)} | ${wasm.cpu.toFixed(2)} |`);
console.log(`| @modelcontextprotocol/sdk client | ${sdk.p50.toFixed(2)} | ${sdk.p95.toFixed(2)} | ${sdk.cpu.toFixed(2)} |`);
console.log(`ratio p50 wasm/sdk: ${(wasm.p50 / sdk.p50).toFixed(2)}`);
