// The host side of the `program` engines (PROTOCOL.md §4 "PTC"), shared
// by Node (ptc-node.mjs) and browsers (ptc-browser.mjs): the ptc.* host
// kinds over a worker spawner, the start fields and their defaults, and
// the static source check. The engine itself (QuickJS in the worker) is
// ptc-quickjs.mjs; nothing here loads it.

// The start fields of PROTOCOL.md §4 beyond the script itself, with the
// defaults used when Go does not send them (or sends 0).
export const LIMITS = {
  timeoutMs: 30000,
  maxToolCalls: 20,
  maxInFlight: 16,
  maxResultBytes: 1 << 20,
  memoryBytes: 64 << 20,
};
// The engine's start (a worker booting, QuickJS loading) before timeoutMs
// starts: Go's ptc.EngineStartTimeout.
const ENGINE_START_MS = 60000;
// memoryBytes outside this range is refused: QuickJS needs about 1 MiB
// to start, and the engine is not meant to hold more than 1 GiB.
const MIN_MEMORY = 1 << 20;
const MAX_MEMORY = 1 << 30;

// startLimits reads the limits of a ptc.start payload: a missing, null or
// 0 field takes its default; anything else must be a positive integer.
export function startLimits(p) {
  const out = {};
  for (const [k, def] of Object.entries(LIMITS)) {
    const v = p[k];
    if (v === undefined || v === null || v === 0) { out[k] = def; continue; }
    if (!Number.isSafeInteger(v) || v < 1) throw new Error(`ptc.start: ${k} must be a positive integer, got ${JSON.stringify(v)}`);
    out[k] = v;
  }
  if (out.memoryBytes < MIN_MEMORY || out.memoryBytes > MAX_MEMORY) {
    throw new Error(`ptc.start: memoryBytes must be between ${MIN_MEMORY} and ${MAX_MEMORY}, got ${out.memoryBytes}`);
  }
  return out;
}

// realmArgs are the prelude's arguments beyond its host functions (the
// run's ctx methods and tools as JSON, its script name, maxToolCalls),
// with the key that tells two runs' apart. A program engine's pool calls
// the prelude ahead for the last run's (ptc-quickjs.mjs makeQuickJSPool).
/** @param {any} init @param {number} maxToolCalls */
export function realmArgs(init, maxToolCalls) {
  const a = { methods: JSON.stringify(init.methods ?? []), tools: JSON.stringify(init.tools ?? []), name: String(init.name), maxToolCalls };
  return { ...a, key: JSON.stringify([a.methods, a.tools, a.name, a.maxToolCalls]) };
}

// realmStreak returns note(a), told each run's realmArgs in turn: the
// arguments to call the next realm ahead for, once two runs in a row had
// the same, else null. After a change a realm is left uncalled: one called
// for other arguments is dropped, and its run makes a realm from the
// start, which programs alternating their tools or limits would pay every
// run.
export function realmStreak() {
  let lastKey = '', streak = 0;
  /** @param {ReturnType<typeof realmArgs>} a */
  return (a) => {
    streak = a.key === lastKey ? streak + 1 : 1;
    lastKey = a.key;
    return streak >= 2 ? a : null;
  };
}

// The static check the engines repeat (Go checks first): no `import`
// keyword. QuickJS has no module loader here, so an import() would only
// fail; the check keeps the refusal early and uniform across engines.
export function checkSource(source) {
  if (/\bimport\b/.test(source)) throw new Error('program source may not contain "import"');
}

// makePtcHostKinds builds the ptc.* host kinds (PROTOCOL.md §4) over a
// worker factory: newWorker(events) starts a worker that loads
// ptc-quickjs.mjs and waits, and returns {post(msg, direct?), terminate(),
// ref()} (direct: ptc.start's ctx.extra, Go's direct door, passed beside
// the start message; only a host running QuickJS on Go's thread uses it);
// events.message(m) and events.error(message) are called as they happen.
// Each run takes a fresh worker and posts it {t:'start', init, wasmModule}
// with init = {name, source, inputs (JSON text), methods, tools} and the
// limits of startLimits. The worker posts {t:'running'} once QuickJS is
// loaded and the script starts (timeoutMs counts from then; the poll
// answer says `running: true` once), {t:'call', id, method, args},
// {t:'violation', message}, {t:'done', ok, value | error, timedOut?}
// (timedOut: the worker stopped the script at timeoutMs) and, once,
// {t:'module', module} (the compiled QuickJS wasm, handed to every later
// worker); it receives {t:'reply', id, ok, value | error}.
//
// When a run ends a spare worker is started, so the next program does
// not wait for a worker to boot and load QuickJS: a worker still runs one
// script only, and no script has run in the spare. Once the module is
// known the spare gets {t:'prepare', wasmModule, memoryBytes}: it loads
// QuickJS and makes a runtime and realm ahead, used by its run if that
// run's memoryBytes is the same.
export function makePtcHostKinds(newWorker, runtime) {
  const runs = new Map();
  let next = 0;
  let wasmModule = null;
  let spare = null;
  const start = () => {
    const w = { on: null, failed: null };
    w.handle = newWorker({
      message: (m) => {
        if (m && m.t === 'module') wasmModule ??= m.module;
        else w.on?.message(m);
      },
      error: (message) => {
        w.failed ??= String(message);
        w.on?.error(message);
      },
    });
    return w;
  };
  const spawn = (init, on, direct) => {
    let w = spare;
    spare = null;
    if (!w || w.failed) {
      w?.handle.terminate();
      w = start();
    }
    w.on = on;
    w.handle.ref();
    w.handle.post({ t: 'start', init, wasmModule }, direct);
    return w.handle;
  };
  // refill starts the spare when a run ends: it boots while Go shapes the
  // result and the model thinks, not while a program runs (on a busy
  // machine a booting worker slowed a running program's ctx calls 2.5x).
  // Once the QuickJS module is known, the spare also loads it and makes
  // its realm ahead (workerMain's {t:'prepare'}), for the memoryBytes and
  // the realm arguments of the last run.
  let memoryBytes = LIMITS.memoryBytes;
  // What a spare's realm is called ahead for (realmStreak), if anything.
  const note = realmStreak();
  let realm = null;
  const refill = () => {
    if (spare) return;
    try {
      spare = start();
      if (wasmModule) spare.handle.post({ t: 'prepare', wasmModule, memoryBytes, realm });
    } catch (_) { /* none: the next run starts its own worker, and says why if it cannot */ }
  };
  class Run {
    constructor(p, direct) {
      checkSource(String(p.source));
      const limits = startLimits(p);
      memoryBytes = limits.memoryBytes;
      this.calls = [];
      this.done = null;
      this.settled = false; // the worker reported the script's end: nothing of it runs any more
      this.violation = null; // a limit the script hit, until a poll reports it
      this.running = false; // the script started, until a poll reports it
      this.wake = null;
      const init = { name: String(p.name), source: String(p.source), inputs: JSON.stringify(p.inputs ?? {}),
        methods: (p.methods ?? []).map(String), tools: (p.tools ?? []).map(String), ...limits };
      realm = note(realmArgs(init, limits.maxToolCalls));
      this.w = spawn(init, {
        message: (m) => {
          if (m && m.t === 'running') { this.running = true; this.backstop(limits.timeoutMs + 1000, limits.timeoutMs); }
          else if (m && m.t === 'call') this.calls.push({ id: m.id, method: m.method, args: m.args });
          else if (m && m.t === 'violation' && !this.done) this.violation = String(m.message);
          else if (m && m.t === 'done' && !this.done) {
            this.settled = true;
            this.done = m.ok ? { ok: true, value: m.value } : m.timedOut ? { ok: false, timedOut: true, error: m.error } : { ok: false, error: m.error };
          }
          this.notify();
        },
        error: (message) => {
          if (!this.done) this.done = { ok: false, error: { message: String(message), line: 0 } };
          this.notify();
        },
      }, typeof direct === 'function' ? direct : undefined);
      // Backstop: Go says ptc.stop on timeout (or when the engine does not
      // start in time); if it never does, stop anyway.
      this.backstop(ENGINE_START_MS + limits.timeoutMs + 1000);
    }
    // backstop stops the run after ms. Once the script runs (timeoutMs
    // given), the worker stops it at its deadline itself; this only ends a
    // worker that could not (starved, or stuck in one long native step),
    // and reports a timeout. It first lets the messages already queued be
    // read (a timer runs before them after a stall of this thread), so a
    // script that settled in time is never reported as timed out here.
    backstop(ms, timeoutMs) {
      clearTimeout(this.timer);
      this.timer = setTimeout(() => {
        if (timeoutMs === undefined) { this.stop(); return; }
        this.timer = setTimeout(() => {
          if (!this.done) {
            this.done = { ok: false, timedOut: true, error: { message: `the program worker did not stop at its deadline (${timeoutMs} ms)`, line: 0 } };
          }
          this.stop();
        }, 0);
        this.timer.unref?.();
      }, ms);
      this.timer.unref?.();
    }
    notify() {
      const w = this.wake;
      this.wake = null;
      if (w) w();
    }
    async poll(signal) {
      while (this.calls.length === 0 && !this.done && !this.violation && !this.running) {
        if (signal?.aborted) return { calls: [] };
        await new Promise((resolve) => {
          this.wake = resolve;
          signal?.addEventListener('abort', resolve, { once: true });
        });
      }
      return this.take();
    }
    // take answers what a poll would now (the calls, running, violation, done).
    take() {
      /** @type {{calls: object[], running?: boolean, violation?: string, done?: object}} */
      const out = { calls: this.calls.splice(0) };
      if (this.running) { out.running = true; this.running = false; }
      if (this.violation) { out.violation = this.violation; this.violation = ''; }
      if (this.done) out.done = this.done;
      return out;
    }
    reply(m) {
      if (this.done) return;
      this.w.post(m.ok ? { t: 'reply', id: m.id, ok: true, value: String(m.value) } : { t: 'reply', id: m.id, ok: false, error: String(m.error) });
    }
    stop() {
      clearTimeout(this.timer);
      if (!this.done) this.done = { ok: false, error: { message: 'the program was stopped', line: 0 } };
      this.notify();
      const ended = this.w.terminate();
      refill();
      // A worker whose script ended runs nothing more: its exit is not
      // waited for (a Node worker takes ~2 ms to exit, which every
      // program's result waited on). One that may still spin is.
      return this.settled ? undefined : ended;
    }
  }
  const get = (p) => {
    const r = runs.get(p.run);
    if (!r) throw new Error(`no program run ${p.run}`);
    return r;
  };
  return {
    // A script that settled inside ptc.start (workerd, whose QuickJS runs
    // on this thread) is answered with it: `first` is its one poll, and the
    // run is already stopped and gone (no ptc.poll, no ptc.stop).
    'ptc.start': (p, ctx) => {
      const id = ++next;
      const r = new Run(p, ctx?.extra);
      if (r.settled) {
        const first = r.take();
        r.stop();
        return { run: id, runtime, first };
      }
      runs.set(id, r);
      return { run: id, runtime };
    },
    'ptc.poll': (p, ctx) => get(p).poll(ctx?.signal),
    'ptc.reply': (p) => { runs.get(p.run)?.reply(p); return null; },
    'ptc.stop': async (p) => {
      const r = runs.get(p.run);
      runs.delete(p.run);
      if (r) await r.stop();
      return null;
    },
  };
}
