// Types of `@a3s-lab/code-wasm/worker`, the package's Cloudflare Worker
// (API.md "Cloudflare Workers deployment"). An app re-exports both names:
//   export { default, CodeSession } from '@a3s-lab/code-wasm/worker';
// The binding types are the parts the Worker uses, so an app's Env typed
// with @cloudflare/workers-types (DurableObjectNamespace, R2Bucket) fits
// without this package depending on them.

/** A Durable Object id, as the SESSIONS namespace makes and parses them. */
export interface SessionId {
  toString(): string;
}

/** The SESSIONS binding: the Durable Object namespace of CodeSession. */
export interface SessionNamespace {
  newUniqueId(): SessionId;
  idFromString(id: string): SessionId;
  get(id: SessionId): { fetch(request: Request): Promise<Response> };
}

/** The bindings and vars the Worker reads; the names are fixed. */
export interface Env {
  /** Durable Object namespace of class CodeSession: one object per session. */
  SESSIONS: SessionNamespace;
  /** R2 bucket holding each session's files under `ws/<session id>/`. */
  WORKSPACE: unknown;
  /** Secret: every route needs `Authorization: Bearer <AUTH_TOKEN>`. */
  AUTH_TOKEN?: string;
  /** `"true"` lets requests through when AUTH_TOKEN is unset (local development); otherwise 503 NOT_CONFIGURED. */
  ALLOW_UNAUTHENTICATED?: string;
}

/**
 * The fetch handler: the `/v1/sessions` routes, `/v1/stats`
 * (`{goInstances, goMemoryBytes, goEntries}` of this isolate;
 * goEntries counts the entries into Go so far), errors as JSON
 * `{error, code}`.
 */
declare const worker: {
  fetch(request: Request, env: Env): Promise<Response>;
};
export default worker;

/**
 * The Durable Object holding one session: its options and its events
 * (the SSE ids) in the object's SQLite storage, its files in WORKSPACE.
 * Bind it as SESSIONS with a `new_sqlite_classes` migration.
 */
export declare class CodeSession {
  constructor(ctx: any, env: Env);
  fetch(request: Request): Promise<Response>;
}
