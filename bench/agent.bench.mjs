// The agent loop's own cost per turn (issue 13 goal: <= 2 ms in wasm):
// one send() = two model requests (a read of a 1 KiB file, then the
// answer) against the scripted provider server on 127.0.0.1, minus the
// same two requests replayed by Node's fetch (their exact bodies, from the
// server's log), which is the server's and HTTP's own time.
//   node bench/agent.bench.mjs        (make bench runs it; needs make build and Go)
//   N=400 WARM=300 TIERED=1200 node bench/agent.bench.mjs
// The session's first sends run while V8 still compiles the Go wasm's hot
// code in the background (seconds of CPU on this 2-core machine): they get
// their own row; the goal row is the steady state, both sides warmed alike
// and measured in alternating rounds (as bench/mcp.bench.mjs does).
import { startLLMServer } from '../web/test/llmserver.mjs';
import { join, dirname } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..');
const { createSession } = await import(pathToFileURL(join(repo, 'npm/src/entry-node.mjs')).href);
const N = Number(process.env.N || 200); // steady sends (and replays) measured
const FIRST = Number(process.env.FIRST || 100);
const WARM = Number(process.env.WARM || 300);
const ROUNDS = Number(process.env.ROUNDS || 8);
// TIERED: more sends of each before a second measurement. V8 keeps
// compiling the Go wasm's hot functions with TurboFan well past the first
// WARM sends (node bench/agent-tierup.mjs counts them): the second
// measurement is the loop's cost once that is done.
const TIERED = Number(process.env.TIERED || 1200);

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
  const total = FIRST + WARM + N + TIERED + N;
  const agentScript = await load(total);
  const s = await createSession({
    workspace: { kind: 'memory', files },
    llm: { provider: 'openai', baseURL: agentScript.baseURL, apiKey: 'sk-test', model: 'model-test', maxRetries: 0 },
    permissionPolicy: { allow: ['read'] },
  });
  const sendOnce = async () => {
    const t0 = performance.now();
    const r = await s.send('read k.txt', []);
    if (r.toolCallsCount !== 1) throw new Error(JSON.stringify(r));
    return performance.now() - t0;
  };
  // The session's first sends, while V8 still compiles the Go wasm's hot
  // code on background threads: the cold cost, reported on its own row.
  const firstMs = [];
  let cpu0 = process.cpuUsage();
  for (let i = 0; i < FIRST; i++) firstMs.push(await sendOnce());
  const firstCPU = cpuMs(process.cpuUsage(cpu0)) / FIRST;
  const log = await (await fetch(`${url}/scripts/${agentScript.id}/log`)).json();
  const [body1, body2] = [log.requests[0].body, log.requests[1].body];
  const headers = log.requests[0].header;
  const rawScript = await load(total);
  const replayOnce = async () => {
    const t0 = performance.now();
    for (const body of [body1, body2]) {
      const r = await fetch(`${rawScript.baseURL}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: headers.authorization ?? 'Bearer sk-test' }, body: JSON.stringify(body) });
      await r.text();
      if (r.status !== 200) throw new Error(`replay: ${r.status}`);
    }
    return performance.now() - t0;
  };
  const firstRaw = [];
  for (let i = 0; i < FIRST; i++) firstRaw.push(await replayOnce());
  // Warm-up of both alike, then ROUNDS alternating blocks (the order flips
  // each round), so both are measured in the same state of the machine.
  for (let i = 0; i < WARM; i++) { await sendOnce(); await replayOnce(); }
  const block = Math.max(1, Math.floor(N / ROUNDS));
  const measure = async () => {
    const sendMs = [], rawMs = [];
    let sendCPU = 0, rawCPU = 0;
    for (let r = 0; r < ROUNDS; r++) {
      for (const which of r % 2 ? ['raw', 'send'] : ['send', 'raw']) {
        const c0 = process.cpuUsage();
        for (let i = 0; i < block; i++) (which === 'send' ? sendMs : rawMs).push(await (which === 'send' ? sendOnce() : replayOnce()));
        const c = cpuMs(process.cpuUsage(c0));
        if (which === 'send') sendCPU += c; else rawCPU += c;
      }
    }
    return { send: median(sendMs), raw: median(rawMs), sendCPU: sendCPU / sendMs.length, rawCPU: rawCPU / rawMs.length };
  };
  const steady = await measure();
  for (let i = 0; i < TIERED; i++) { await sendOnce(); await replayOnce(); }
  const tiered = await measure();
  await s.close();
  console.log(`agent turn on loopback, js/wasm in Node ${process.version}; first ${FIRST} sends, then ${WARM} of each to warm up, then ${ROUNDS} alternating rounds of ${block} (median); then ${TIERED} more of each and the same again:`);
  console.log('| measure | wall ms (median) | CPU ms of this process (mean) |');
  console.log('|---|---:|---:|');
  for (const [m, when, goal] of [[steady, `steady after ${FIRST + WARM} sends`, ''], [tiered, `after V8's tier-up (${FIRST + WARM + N + TIERED} sends)`, ' (goal <= 2 ms)']]) {
    console.log(`| send(): 2 model requests + 1 read of 1 KiB, ${when} | ${m.send.toFixed(2)} | ${m.sendCPU.toFixed(2)} |`);
    console.log(`| the same 2 requests replayed by fetch, ${when} | ${m.raw.toFixed(2)} | ${m.rawCPU.toFixed(2)} |`);
    console.log(`| overhead of the loop, ${when}${goal} | ${(m.send - m.raw).toFixed(2)} | ${(m.sendCPU - m.rawCPU).toFixed(2)} |`);
  }
  console.log(`| send(), the session's first ${FIRST} (V8 still compiling the wasm) | ${median(firstMs).toFixed(2)} | ${firstCPU.toFixed(2)} |`);
  console.log(`| replay, its first ${FIRST} | ${median(firstRaw).toFixed(2)} | |`);
} finally {
  server.stop();
}
