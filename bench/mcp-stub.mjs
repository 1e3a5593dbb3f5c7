// The client's own CPU per MCP echo call, without a server: the wasm
// session (through the kernel) and the official TypeScript SDK client
// against one in-process fetch that answers like server-everything (an
// empty priming event, then the answer, as a text/event-stream). No
// socket and no server process share the cores, so the figure moves less
// with the machine's load than bench/mcp.bench.mjs's; blocks of 100 calls
// alternate, and the median block is reported.
//   make build && node bench/mcp-stub.mjs
//   PROF=/tmp/stub.cpuprofile node bench/mcp-stub.mjs   (a CPU profile of 2000 wasm calls)
import { Session } from 'node:inspector/promises';
import { writeFileSync } from 'node:fs';

const enc = new TextEncoder();
const realFetch = globalThis.fetch;
const tools = [{ name: 'echo', description: 'Echoes back the input', inputSchema: { type: 'object', properties: { message: { type: 'string', description: 'Message to echo' } }, required: ['message'] } }];
let sessions = 0;
globalThis.fetch = async (url, init = {}) => {
  if (!String(url).startsWith('http://stub/')) return realFetch(url, init);
  const method = init.method ?? 'GET';
  if (method !== 'POST') return new Response(null, { status: method === 'DELETE' ? 200 : 405 });
  const msg = JSON.parse(typeof init.body === 'string' ? init.body : new TextDecoder().decode(init.body));
  if (msg.id === undefined) return new Response(null, { status: 202 });
  let result;
  if (msg.method === 'initialize') result = { protocolVersion: msg.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'stub', version: '1' } };
  else if (msg.method === 'tools/list') result = { tools };
  else if (msg.method === 'tools/call') result = { content: [{ type: 'text', text: `Echo: ${msg.params.arguments.message}` }] };
  const chunks = [`id: ${crypto.randomUUID()}\ndata: \n\n`, `event: message\nid: x\ndata: ${JSON.stringify({ result, jsonrpc: '2.0', id: msg.id })}\n\n`];
  const body = new ReadableStream({ pull(c) { const x = chunks.shift(); if (x === undefined) c.close(); else c.enqueue(enc.encode(x)); } });
  return new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream', 'mcp-session-id': `s${++sessions}` } });
};
const { echoClients } = await import('./mcp-clients.mjs');

const url = 'http://stub/mcp';
const { clients, close } = await echoClients(url);
// run makes n calls and returns the CPU per call of this process.
async function run(call, n) {
  const c0 = process.cpuUsage();
  for (let i = 0; i < n; i++) await call(i);
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / 1000 / n;
}
// Warm-up past V8's tier-up of both (bench/mcp.bench.mjs).
for (let i = 0; i < Number(process.env.WARM ?? 1500); i += 100) for (const k of ['wasm', 'sdk']) await run(clients[k], 100);
const cpu = { wasm: [], sdk: [] };
for (let r = 0; r < Number(process.env.ROUNDS ?? 30); r++) {
  for (const k of r % 2 ? ['sdk', 'wasm'] : ['wasm', 'sdk']) cpu[k].push(await run(clients[k], 100));
}
if (process.env.PROF) {
  const prof = new Session();
  prof.connect();
  await prof.post('Profiler.enable');
  await prof.post('Profiler.start');
  await run(clients.wasm, 2000);
  const { profile } = await prof.post('Profiler.stop');
  writeFileSync(process.env.PROF, JSON.stringify(profile));
}
await close();
const median = (a) => a.sort((x, y) => x - y)[a.length >> 1];
console.log('| MCP echo against an in-process stub, client CPU | median ms per call (blocks of 100) |');
console.log('|---|---:|');
console.log(`| wasm in Node, through the kernel | ${median(cpu.wasm).toFixed(3)} |`);
console.log(`| @modelcontextprotocol/sdk client | ${median(cpu.sdk).toFixed(3)} |`);
