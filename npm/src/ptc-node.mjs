// The Node engine for the `program` tool (PROTOCOL.md "PTC"): each script
// runs in a fresh worker thread, inside an empty vm context (ECMAScript
// globals only) with code generation from strings and wasm turned off,
// 64 MiB of heap, an empty environment, and no objects of the worker's own
// realm in reach. ctx calls leave as messages and come back as JSON text,
// parsed inside the sandbox realm. ptc.stop (timeout, cancellation, end
// of the program) terminates the worker, which pre-empts `for(;;){}` and
// drops every pending promise of the script.
import { Worker } from 'node:worker_threads';
import { PRELUDE, checkSource } from './ptc-prelude.mjs';

// Runs in the worker thread (CommonJS, strict). Only primitives cross
// into the sandbox's prelude; the vm context object is never exposed.
const WORKER_SOURCE = `'use strict';
const { parentPort, workerData } = require('node:worker_threads');
const vm = require('node:vm');
const PRELUDE = ${JSON.stringify(PRELUDE)};
(function main(d) {
  const post = (m) => parentPort.postMessage(m);
  function send(id, method, json) { post({ t: 'call', id: Number(id), method: String(method), args: String(json) }); }
  function finish(ok, text, line) {
    post(ok ? { t: 'done', ok: true, value: String(text) } : { t: 'done', ok: false, error: { message: String(text), line: Number(line) || 0 } });
  }
  const context = vm.createContext({}, { name: 'ptc', codeGeneration: { strings: false, wasm: false } });
  const kit = vm.runInContext(PRELUDE, context, { filename: 'ptc-prelude.js' })(send, finish, JSON.stringify(d.methods), JSON.stringify(d.tools), d.name);
  parentPort.on('message', (m) => { if (m && m.t === 'reply') kit.deliver(Number(m.id), !!m.ok, String(m.ok ? m.value : m.error)); });
  let script;
  try {
    script = new vm.Script(d.source, { filename: d.name });
  } catch (e) {
    const m = /:(\\d+)\\n/.exec(String(e.stack));
    finish(false, 'SyntaxError: ' + e.message, m ? Number(m[1]) : 0);
    return;
  }
  let run;
  try {
    script.runInContext(context);
    run = vm.runInContext('typeof run === "function" ? run : undefined', context);
  } catch (e) {
    kit.start(() => { throw e; }, d.inputs);
    return;
  }
  kit.start(run, d.inputs);
})(workerData);
`;

// REFERENCE.md §2.13: 64 MiB of VM memory. The stack is V8's (1 MiB here);
// deep recursion throws a catchable RangeError inside the sandbox.
const RESOURCE_LIMITS = { maxOldGenerationSizeMb: 64, maxYoungGenerationSizeMb: 16, codeRangeSizeMb: 16, stackSizeMb: 1 };

class Run {
  constructor(p) {
    this.calls = [];
    this.done = null;
    this.wake = null;
    checkSource(p.source);
    this.worker = new Worker(WORKER_SOURCE, {
      eval: true,
      env: {},
      argv: [],
      execArgv: [],
      stdout: true,
      stderr: true,
      resourceLimits: RESOURCE_LIMITS,
      workerData: { name: String(p.name), source: String(p.source), inputs: JSON.stringify(p.inputs ?? {}), methods: p.methods ?? [], tools: p.tools ?? [] },
    });
    this.worker.stdout.resume();
    this.worker.stderr.resume();
    this.worker.on('message', (m) => {
      if (m.t === 'call') this.calls.push({ id: m.id, method: m.method, args: m.args });
      else if (m.t === 'done' && !this.done) this.done = m.ok ? { ok: true, value: m.value } : { ok: false, error: m.error };
      this.notify();
    });
    this.worker.on('error', (e) => {
      const message = e && e.code === 'ERR_WORKER_OUT_OF_MEMORY'
        ? 'RangeError: the program ran out of memory (64 MiB)'
        : String(e && e.message ? e.message : e);
      if (!this.done) this.done = { ok: false, error: { message, line: 0 } };
      this.notify();
    });
    this.worker.on('exit', (code) => {
      if (!this.done) this.done = { ok: false, error: { message: `the program worker exited (code ${code})`, line: 0 } };
      this.notify();
    });
    // Backstop: Go says ptc.stop on timeout; if it never does, stop anyway.
    this.timer = setTimeout(() => this.stop(), Math.max(1, Number(p.timeoutMs) || 30000) + 1000);
    this.timer.unref?.();
  }
  notify() {
    const w = this.wake;
    this.wake = null;
    if (w) w();
  }
  async poll(signal) {
    while (this.calls.length === 0 && !this.done) {
      if (signal?.aborted) return { calls: [] };
      await new Promise((resolve) => {
        this.wake = resolve;
        signal?.addEventListener('abort', resolve, { once: true });
      });
    }
    const calls = this.calls.splice(0);
    return this.done ? { calls, done: this.done } : { calls };
  }
  reply(m) {
    if (this.done) return;
    this.worker.postMessage(m.ok ? { t: 'reply', id: m.id, ok: true, value: m.value } : { t: 'reply', id: m.id, ok: false, error: m.error });
  }
  stop() {
    clearTimeout(this.timer);
    if (!this.done) this.done = { ok: false, error: { message: 'the program was stopped', line: 0 } };
    this.notify();
    return this.worker.terminate();
  }
}

// nodePtcHostKinds returns the PTC handlers for makeCreateSession's
// hostKinds (one table per process is enough; runs are keyed by id).
export function nodePtcHostKinds() {
  const runs = new Map();
  let next = 0;
  const get = (p) => {
    const r = runs.get(p.run);
    if (!r) throw new Error(`no program run ${p.run}`);
    return r;
  };
  return {
    'ptc.start': (p) => {
      const id = ++next;
      runs.set(id, new Run(p));
      return { run: id, runtime: 'node-worker' };
    },
    'ptc.poll': (p, { signal } = {}) => get(p).poll(signal),
    'ptc.reply': (p) => { runs.get(p.run)?.reply(p); return null; },
    'ptc.stop': async (p) => {
      const r = runs.get(p.run);
      runs.delete(p.run);
      if (r) await r.stop();
      return null;
    },
  };
}
