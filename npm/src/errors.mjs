// The errors a Session rejects with (PROTOCOL.md §1's codes): one class,
// CodeWasmError, and the constructors the other modules use.

export class CodeWasmError extends Error {
  /**
   * @param {string} message
   * @param {import("../index.d.ts").ErrorCode} code
   * @param {{result?: import("../index.d.ts").ToolResult}} [extra] fields copied onto the error
   */
  constructor(message, code, extra) {
    super(message);
    this.name = 'CodeWasmError';
    /** @type {any} */
    this.code = code;
    if (extra) Object.assign(this, extra);
  }
}

// shortMessage keeps a Go stack trace out of an error message (the Go side
// logs it to the console; this is the belt to its braces).
/** @param {string} m */
function shortMessage(m) {
  const i = m.indexOf('\ngoroutine ');
  return i < 0 ? m : m.slice(0, i);
}

/**
 * asError turns what the api rejected with ({message, code, detail?} from
 * Go, or anything else) into a CodeWasmError.
 * @param {any} e
 * @returns {CodeWasmError}
 */
export function asError(e) {
  if (e instanceof CodeWasmError) return e;
  if (e && typeof e === 'object' && typeof e.code === 'string') {
    /** @type {{result?: any}} the failed tool's ToolResult (TOOL_FAILED) */
    const extra = {};
    if (typeof e.detail === 'string' && e.detail) {
      try { extra.result = JSON.parse(e.detail); } catch { /* keep the message */ }
    }
    return new CodeWasmError(shortMessage(String(e.message)), e.code, extra);
  }
  return new CodeWasmError(shortMessage(String(e && e.message ? e.message : e)), 'INTERNAL');
}

/** @param {string} msg */
export const invalid = (msg) => new CodeWasmError(msg, 'INVALID_OPTIONS');
/** @param {string} msg */
export const badCall = (msg) => new CodeWasmError(msg, 'INVALID_CALL');
/** @param {string} what */
export const abortError = (what) => new CodeWasmError(`${what}: the call was aborted`, 'ABORTED');
/** @param {string} what */
export const closedError = (what) => new CodeWasmError(`${what}: session is closed`, 'SESSION_CLOSED');
