// Counts per MCP echo call through the kernel (wasm in Node, against
// server-everything on loopback): Go<->JS crossings by import, scheduler
// resumes, and with PROF=file a CPU profile of the loop.
//   make build && node bench/mcp-count.mjs
//   PROF=/tmp/mcp.cpuprofile node bench/mcp-count.mjs
//   SDK=1 node bench/mcp-count.mjs   (the TypeScript SDK client instead)
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import '../npm/src/wasm_exec.js';

const counts = new Map();
let resumes = 0;
const Base = globalThis.Go;
globalThis.Go = class extends Base {
  constructor() {
    super();
    const gojs = this.importObject.gojs;
    for (const [k, f] of Object.entries(gojs)) {
      const name = k.replace(/^.*\./, '');
      gojs[k] = (sp) => { counts.set(name, (counts.get(name) ?? 0) + 1); return f(sp); };
    }
  }
  _resume() { resumes++; return super._resume(); }
};
const { createSession } = await import('../npm/src/entry-node.mjs');

const N = Number(process.env.N ?? 300);
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
let s, call;
if (process.env.SDK) { // the same loop through the official TypeScript SDK client
  const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
  const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
  s = new Client({ name: 'bench', version: '1' });
  await s.connect(new StreamableHTTPClientTransport(new URL(url)));
  call = async (i) => {
    const r = await s.callTool({ name: 'echo', arguments: { message: `m${i}` } });
    if (r.content[0].text !== `Echo: m${i}`) throw new Error(r.content[0].text);
  };
} else {
  s = await createSession({ mcpServers: [{ name: 'everything', url }] });
  call = async (i) => {
    const r = await s.tool('mcp__everything__echo', { message: `m${i}` });
    if (r.output !== `Echo: m${i}`) throw new Error(r.output);
  };
}
// Warm-up past V8's tier-up of the hot code (bench/mcp.bench.mjs).
for (let i = 0; i < Number(process.env.WARM ?? 600); i++) await call(i);
const prof = process.env.PROF ? new Session() : null;
if (prof) {
  prof.connect();
  await prof.post('Profiler.enable');
  await prof.post('Profiler.setSamplingInterval', { interval: 100 });
  await prof.post('Profiler.start');
}
// CPU ms of each thread of this process by name (/proc, Linux).
function threads() {
  const m = new Map();
  for (const t of readdirSync('/proc/self/task')) {
    try {
      const st = readFileSync(`/proc/self/task/${t}/stat`, 'utf8');
      const name = st.slice(st.indexOf('(') + 1, st.lastIndexOf(')'))+ '#' + t;
      const f = st.slice(st.lastIndexOf(')') + 2).split(' ');
      m.set(name, (m.get(name) ?? 0) + (Number(f[11]) + Number(f[12])) * 10);
    } catch {}
  }
  return m;
}
const th0 = threads();
counts.clear();
resumes = 0;
const cpu0 = process.cpuUsage();
for (let i = 0; i < N; i++) await call(i);
const cpu = process.cpuUsage(cpu0);
if (prof) {
  const { profile } = await prof.post('Profiler.stop');
  writeFileSync(process.env.PROF, JSON.stringify(profile));
}
await s.close();
server.kill('SIGKILL');
const th1 = threads();
console.log('thread CPU ms per call:', [...th1].map(([k, v]) => `${k} ${((v - (th0.get(k) ?? 0)) / N).toFixed(2)}`).join(', '));
let total = 0;
for (const v of counts.values()) total += v;
console.log(`per call: crossings ${(total / N).toFixed(1)}, resumes ${(resumes / N).toFixed(1)}, client CPU ${((cpu.user + cpu.system) / 1000 / N).toFixed(2)} ms`);
console.log([...counts].sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k} ${(v / N).toFixed(1)}`).join(', '));
