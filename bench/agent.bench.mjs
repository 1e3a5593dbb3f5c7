// The agent loop's own cost per turn (issue 13 goal: <= 2 ms in wasm):
// one send() = two model requests (a read of a 1 KiB file, then the
// answer) against the scripted provider server on 127.0.0.1, minus the
// same two requests replayed by Node's fetch (their exact bodies, from the
// server's log), which is the server's and HTTP's own time.
//   node bench/agent.bench.mjs        (make bench runs it; needs make build and Go)
//   N=200 node bench/agent.bench.mjs
import { startLLMServer } from '../web/test/llmserver.mjs';
import { join, dirname } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..');
const { createSession } = await import(pathToFileURL(join(repo, 'npm/src/entry-node.mjs')).href);
const N = Number(process.env.N || 100);

const server = await startLLMServer();
const url = server.url;

const usage = { promptTokens: 100, completionTokens: 20, totalTokens: 120 };
const turn = [
  { events: [{ tool: { index: 0, id: 'call_1', name: 'read' } }, { args: { index: 0, fragment: '{"file_path":' } }, { args: { index: 0, fragment: '"k.txt"}' } }, { finish: { stop: 'tool_use', usage } }] },
  { events: [{ text: 'The file holds a kilobyte.' }, { finish: { stop: 'stop', usage } }] },
];
async function load(n) {
  const replies = Array.from({ length: n }, () => turn).flat();
  const r = await fetch(`${url}/scripts`, { method: 'POST', body: JSON.stringify({ provider: 'openai', replies }) });
  return r.json();
}
const cpuMs = (u) => (u.user + u.system) / 1000;
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

try {
  const files = { 'k.txt': `${'x'.repeat(63)}\n`.repeat(16) }; // 1 KiB
  const agentScript = await load(N + 5);
  const s = await createSession({
    workspace: { kind: 'memory', files },
    llm: { provider: 'openai', baseURL: agentScript.baseURL, apiKey: 'sk-test', model: 'model-test', maxRetries: 0 },
    permissionPolicy: { allow: ['read'] },
  });
  const sendMs = [];
  let cpu0;
  for (let i = 0; i < N + 5; i++) {
    if (i === 5) cpu0 = process.cpuUsage();
    const t0 = performance.now();
    const r = await s.send('read k.txt', []);
    if (i >= 5) sendMs.push(performance.now() - t0);
    if (r.toolCallsCount !== 1) throw new Error(JSON.stringify(r));
  }
  const sendCPU = cpuMs(process.cpuUsage(cpu0)) / N;
  await s.close();
  const log = await (await fetch(`${url}/scripts/${agentScript.id}/log`)).json();
  const [body1, body2] = [log.requests[0].body, log.requests[1].body];
  const headers = log.requests[0].header;

  // The same two requests, replayed: the server's and HTTP's own time.
  const rawScript = await load(N + 5);
  const rawMs = [];
  for (let i = 0; i < N + 5; i++) {
    if (i === 5) cpu0 = process.cpuUsage();
    const t0 = performance.now();
    for (const body of [body1, body2]) {
      const r = await fetch(`${rawScript.baseURL}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: headers.authorization ?? 'Bearer sk-test' }, body: JSON.stringify(body) });
      await r.text();
      if (r.status !== 200) throw new Error(`replay: ${r.status}`);
    }
    if (i >= 5) rawMs.push(performance.now() - t0);
  }
  const rawCPU = cpuMs(process.cpuUsage(cpu0)) / N;
  const send = median(sendMs);
  const raw = median(rawMs);
  console.log(`agent turn on loopback, js/wasm in Node ${process.version}, N=${N} (median):`);
  console.log('| measure | wall ms (median) | CPU ms of this process (mean) |');
  console.log('|---|---:|---:|');
  console.log(`| send(): 2 model requests + 1 read of 1 KiB | ${send.toFixed(2)} | ${sendCPU.toFixed(2)} |`);
  console.log(`| the same 2 requests replayed by fetch | ${raw.toFixed(2)} | ${rawCPU.toFixed(2)} |`);
  console.log(`| overhead of the loop (goal <= 2 ms) | ${(send - raw).toFixed(2)} | ${(sendCPU - rawCPU).toFixed(2)} |`);
} finally {
  server.stop();
}
