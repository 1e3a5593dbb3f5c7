// The PTC sandbox prelude, shared by the Node (ptc-node.mjs) and browser
// (ptc-browser.mjs) engines. PRELUDE is the source of one function that
// runs INSIDE the sandbox realm before the user's script:
//
//   (send, finish, methodsJSON, toolsJSON, scriptName) => { deliver, start }
//
// send(id, method, argsJSON) and finish(ok, text, line) are the host's two
// functions; they only ever receive primitives and are kept in this
// closure, never on an object the script can reach. Everything the script
// sees (ctx, its methods, results, errors) is created in its own realm.
// The intrinsics the bridge uses are captured here, before any user code,
// so a script that pollutes JSON, Promise or Array breaks only itself.
// Keep it ES2020 and free of imports: it is evaluated as plain source.
export const PRELUDE = String.raw`(function (send, finish, methodsJSON, toolsJSON, scriptName) {
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
        return [name && name !== 'Error' ? name + ': ' + msg : msg, m ? +m[1] : 0];
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
