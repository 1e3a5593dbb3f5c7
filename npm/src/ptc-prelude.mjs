// The PTC sandbox prelude, shared by the Node (ptc-node.mjs) and browser
// (ptc-browser.mjs) engines. PRELUDE is the source of one function that
// runs INSIDE the sandbox realm before the user's script:
//
//   (send, finish, methodsJSON, toolsJSON, scriptName, lineOffset) => { deliver, start }
//
// send(id, method, argsJSON) and finish(ok, text, line) are the host's two
// functions; they only ever receive primitives and are kept in this
// closure, never on an object the script can reach. Everything the script
// sees (ctx, its methods, results, errors) is created in its own realm.
// The intrinsics the bridge uses are captured here, before any user code,
// so a script that pollutes JSON, Promise or Array breaks only itself.
// Keep it ES2020 and free of imports: it is evaluated as plain source.
export const PRELUDE = String.raw`(function (send, finish, methodsJSON, toolsJSON, scriptName, lineOffset) {
  'use strict';
  var stringify = JSON.stringify, parse = JSON.parse, freeze = Object.freeze, create = Object.create;
  var apply = Reflect.apply, P = Promise, then = P.prototype.then, presolve = P.resolve, preject = P.reject;
  var E = Error, S = String, exec = RegExp.prototype.exec, replace = String.prototype.replace;
  var lineRe = new RegExp(apply(replace, scriptName, [/[.*+?^(){}$|[\]\\]/g, '\\$&']) + ':(\\d+):\\d+');
  var pending = create(null), next = 0, finished = false;

  function call(method, args) {
    if (finished) return apply(preject, P, [new E('the program has finished; ctx calls are closed')]);
    var json;
    try { json = stringify(args); } catch (e) { return apply(preject, P, [e]); }
    var id = ++next;
    return new P(function (resolve, reject) {
      pending[id] = { resolve: resolve, reject: reject };
      var ok = true;
      try { send(id, method, json); } catch (_) { ok = false; }
      if (!ok) { delete pending[id]; reject(new E('the ctx bridge failed')); }
    });
  }
  function deliver(id, ok, text) {
    var p = pending[id];
    if (!p) return;
    delete pending[id];
    if (!ok) { p.reject(new E(S(text))); return; }
    var v;
    try { v = parse(text); } catch (_) { p.reject(new E('ctx result is not JSON')); return; }
    p.resolve(v);
  }
  var methods = parse(methodsJSON), tools = parse(toolsJSON), ctx = create(Object.prototype), t = create(Object.prototype);
  for (var i = 0; i < methods.length; i++) (function (m) {
    ctx[m] = freeze(function () { return call(m, apply(Array.prototype.slice, arguments, [])); });
  })(methods[i]);
  for (var j = 0; j < tools.length; j++) (function (n) {
    t[n] = freeze(function (args) { return call('tool', [n, args]); });
  })(tools[j]);
  ctx.tools = freeze(t);
  freeze(ctx);

  function describe(e) {
    try {
      if (e instanceof E) {
        var name = S(e.name), msg = S(e.message), m = apply(exec, lineRe, [S(e.stack)]);
        return [name && name !== 'Error' ? name + ': ' + msg : msg, m ? +m[1] - (lineOffset || 0) : 0];
      }
      return [typeof e === 'object' && e !== null ? '[object]' : S(e), 0];
    } catch (_) {
      return ['uncaught exception', 0];
    }
  }
  function settleOk(v) {
    finished = true;
    var out;
    try { out = stringify(v); } catch (e) { finish(false, 'the result is not JSON-serialisable: ' + describe(e)[0], 0); return; }
    finish(true, out === undefined ? 'null' : out, 0);
  }
  function settleErr(e) {
    finished = true;
    var d = describe(e);
    finish(false, d[0], d[1]);
  }
  function start(run, inputsJSON) {
    var p;
    try {
      if (typeof run !== 'function') throw new E('the script does not define async function run(ctx, inputs)');
      p = apply(presolve, P, [run(ctx, parse(inputsJSON))]);
    } catch (e) {
      p = apply(preject, P, [e]);
    }
    apply(then, p, [settleOk, settleErr]);
  }
  return freeze({ deliver: deliver, start: start });
})`;

// The static check the engines repeat (Go checks first): no `import`
// keyword, since code generation from strings is off in the sandbox and a
// dynamic import is the one way left to load code.
export function checkSource(source) {
  if (/\bimport\b/.test(source)) throw new Error('program source may not contain "import"');
}

// makePtcHostKinds builds the ptc.* host kinds (PROTOCOL.md §4) over a
// worker spawner: spawn(init) starts a worker running the engine with init
// = {name, source, inputs (JSON text), methods, tools} and returns
// {post(msg), terminate()}, calling on.message(m), on.error(message) and
// on.exit() as they happen. The worker posts {t:'call', id, method, args}
// and {t:'done', ok, value | error}; it receives {t:'reply', id, ok,
// value | error}.
export function makePtcHostKinds(spawn, runtime) {
  const runs = new Map();
  let next = 0;
  class Run {
    constructor(p) {
      checkSource(String(p.source));
      this.calls = [];
      this.done = null;
      this.wake = null;
      const init = { name: String(p.name), source: String(p.source), inputs: JSON.stringify(p.inputs ?? {}),
        methods: (p.methods ?? []).map(String), tools: (p.tools ?? []).map(String) };
      this.w = spawn(init, {
        message: (m) => {
          if (m && m.t === 'call') this.calls.push({ id: m.id, method: m.method, args: m.args });
          else if (m && m.t === 'done' && !this.done) this.done = m.ok ? { ok: true, value: m.value } : { ok: false, error: m.error };
          this.notify();
        },
        error: (message) => {
          if (!this.done) this.done = { ok: false, error: { message: String(message), line: 0 } };
          this.notify();
        },
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
      this.w.post(m.ok ? { t: 'reply', id: m.id, ok: true, value: String(m.value) } : { t: 'reply', id: m.id, ok: false, error: String(m.error) });
    }
    stop() {
      clearTimeout(this.timer);
      if (!this.done) this.done = { ok: false, error: { message: 'the program was stopped', line: 0 } };
      this.notify();
      return this.w.terminate();
    }
  }
  const get = (p) => {
    const r = runs.get(p.run);
    if (!r) throw new Error(`no program run ${p.run}`);
    return r;
  };
  return {
    'ptc.start': (p) => {
      const id = ++next;
      runs.set(id, new Run(p));
      return { run: id, runtime };
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
