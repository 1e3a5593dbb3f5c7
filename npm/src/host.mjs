// The session's host dispatcher (PROTOCOL.md §2): Go asks JS for a hook's
// answer, the budget guard's, the confirmation handler's, the security
// provider's, or an entry point's extra kind (ptc.*), one JSON payload in
// and one JSON answer out.

/**
 * @typedef {object} SessionFns the user functions a session keeps
 * @property {Map<string, Function>} hooks handler by hook id
 * @property {Function | undefined} budget budgetGuard.checkBeforeTool
 * @property {Function | undefined} confirm confirmationHandler
 * @property {Function | undefined} sanitize securityProvider.sanitizeOutput
 * @property {Map<string, Function>} [tools] host tool handler by name (registerTool)
 */

// makeHost builds the session's host dispatcher (PROTOCOL.md §2). Every
// user function may be sync or async; its return value goes back as JSON.
/**
 * @param {SessionFns} fns
 * @param {Record<string, Function>} hostKinds
 * @returns {(kind: string, payloadJSON: string, signal: AbortSignal) => Promise<string>}
 */
export function makeHost(fns, hostKinds) {
  return async function host(kind, payloadJSON, signal) {
    // Never run a user function inside the Go -> JS call that asked for
    // it: a hook that calls the session synchronously would re-enter Go
    // on Go's own stack (nested re-entries killed the runtime once).
    await null;
    const payload = JSON.parse(payloadJSON);
    const ctx = { signal };
    let v;
    switch (kind) {
      case 'hook': {
        const fn = fns.hooks.get(payload.hookId);
        if (!fn) throw new Error(`no handler for hook "${payload.hookId}"`);
        v = await fn(payload, ctx);
        break;
      }
      case 'budget':
        if (!fns.budget) throw new Error('no budget guard');
        v = await fns.budget(payload, ctx);
        break;
      case 'confirm':
        if (!fns.confirm) throw new Error('no confirmation handler');
        v = await fns.confirm(payload, ctx);
        break;
      case 'security':
        if (!fns.sanitize) throw new Error('no security provider');
        // sanitizeAll: many strings (one result's metadata) in one crossing.
        v = payload.op === 'sanitizeAll'
          ? await Promise.all(payload.texts.map((t) => fns.sanitize(t, ctx)))
          : await fns.sanitize(payload.text, ctx);
        break;
      case 'tool': {
        // A host tool's handler (Session.registerTool wraps it).
        const fn = fns.tools?.get(payload.name);
        if (!fn) throw new Error(`no handler for host tool "${payload.name}"`);
        v = await fn(payload, ctx);
        break;
      }
      default: {
        const fn = hostKinds[kind];
        if (typeof fn !== 'function') throw new Error(`no handler for host kind "${kind}"`);
        v = await fn(payload, ctx);
      }
    }
    try {
      return JSON.stringify(v === undefined ? null : v);
    } catch (e) {
      // A cycle, a BigInt, nesting past the stack: the call fails closed.
      throw new Error(`the ${kind} handler answered with a value that is not JSON data (${e.message})`);
    }
  };
}

