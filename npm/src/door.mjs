// The program engine's direct doors over Go's exported functions
// (PROTOCOL.md §4 "PTC", the direct door). A host that runs QuickJS on
// Go's own thread (workerd) hands each ctx call to Go through ptc.start's
// ctx.extra, direct(id, method + ' ' + argsJSON). A js.FuncOf door costs
// an event of Go's scheduler per call: the arguments and the result
// crossing as JS values (a finalizer each), the event object read
// property by property, a resume; ~25–50 µs of a crossing under js/wasm.
// Here a door calls three functions Go exports (//go:wasmexport, ptc's
// direct_js.go) with the call's bytes in Go's memory: codeWasmDoorIn(n)
// gives a buffer of n bytes for the call's UTF-8, codeWasmDoor(run, id,
// len) runs the call and answers the length of its answer (-1: the call
// waits on the event loop; settle answers it later), codeWasmDoorOut()
// where that answer is. The loader hands makeDoors(exports) to Go at start
// (globalThis.__a3sCodeWasmDoor, read once); without it (go test's
// wasm_exec) there is no door, and ctx calls go through ptc.poll.

/**
 * @param {any} exports the Go instance's exports (mem and the three door functions)
 * @param {() => void} [onEntry] counts an entry into Go (the loader's stats)
 */
export function makeDoors(exports, onEntry = () => {}) {
  const enc = new TextEncoder();
  const dec = new TextDecoder();
  /** @type {Map<number, (id: number, ok: boolean, text: string) => void>} */
  const settles = new Map();
  return {
    // make returns run's door, the direct function of PROTOCOL.md §4:
    // direct(settle) once, then direct(id, call) per ctx call.
    /** @param {number} run */
    make(run) {
      return (/** @type {any[]} */ ...a) => {
        if (a.length === 1 && typeof a[0] === 'function') {
          settles.set(run, a[0]);
          return undefined;
        }
        const [id, call] = a;
        if (!Number.isInteger(id) || id < 0 || id > 0x7fffffff || typeof call !== 'string') return '!direct(id, call): expected a number and a string';
        if (!settles.has(run)) return '!direct(settle) was not called';
        onEntry();
        // encodeInto writes at most 3 bytes per UTF-16 unit.
        const max = call.length * 3;
        const at = exports.codeWasmDoorIn(max);
        const { written } = enc.encodeInto(call, new Uint8Array(exports.mem.buffer, at, max));
        const n = exports.codeWasmDoor(run, id, written);
        if (n < 0) return undefined;
        return dec.decode(new Uint8Array(exports.mem.buffer, exports.codeWasmDoorOut(), n));
      };
    },
    // settle answers a call of run that waited on the event loop.
    /** @param {number} run @param {number} id @param {boolean} ok @param {string} text */
    settle(run, id, ok, text) {
      settles.get(run)?.(id, ok, text);
    },
    // drop forgets run's settle once Go released its door.
    /** @param {number} run */
    drop(run) {
      settles.delete(run);
    },
  };
}
