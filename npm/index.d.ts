// Type declarations for @a3s-lab/code-wasm.
//
// The wire types below mirror Go structs by hand; each cites its Go source.
// Two tests keep them in step: internal/hostapi/dts_test.go (every JSON
// field of the Go structs is declared here, and nothing else) and
// npm/test/types.test.mjs (every key the running wasm emits is declared).
// A field marked `?` is omitted from the JSON when empty.

/** Error codes of rejected calls (internal/hostapi/hostapi.go Code*). */
export type ErrorCode =
  | 'SESSION_CLOSED'
  | 'INVALID_OPTIONS'
  | 'INVALID_CALL'
  | 'TOOL_NOT_REGISTERED'
  | 'TOOL_FAILED'
  /** The workspace is held elsewhere: an OPFS root open in another tab or worker. */
  | 'WORKSPACE_BUSY'
  | 'ABORTED'
  | 'UNKNOWN_SESSION'
  | 'PANIC'
  | 'INTERNAL';

/** Every rejection is a CodeWasmError (npm/src/errors.mjs). */
export class CodeWasmError extends Error {
  constructor(message: string, code: ErrorCode, extra?: { result?: ToolResult });
  readonly code: ErrorCode;
  /** The failed tool's result, for code TOOL_FAILED (readFile, glob, grep). */
  readonly result?: ToolResult;
}

/** Go: internal/hostapi/wire.go ToolResult */
export interface ToolResult {
  name: string;
  output: string;
  /** 0 = success, 1 = failure. */
  exitCode: number;
  /** The tool's metadata, JSON-encoded. */
  metadataJson?: string;
  /** A structured error kind with a `type` tag, JSON-encoded (ErrorKind). */
  errorKindJson?: string;
}

/** The decoded form of ToolResult.errorKindJson. Go: kernel/errors.go ErrorKind (MarshalJSON). */
export type ErrorKind =
  | { type: 'version_conflict'; path: string; expected: string; actual: string }
  | { type: 'remote_git_conflict'; code: string; message: string }
  | { type: 'not_found'; path: string }
  | { type: 'invalid_argument'; message: string }
  | { type: 'hook_denied'; reason: string; retryable: boolean; retry_after_ms: number | null }
  | { type: 'unsupported'; message: string }
  | { type: 'timeout'; op: string; duration_ms: number }
  | { type: 'transport'; op: string }
  | { type: 'cancelled'; op: string }
  | { type: 'partial_failure'; failed: number; total: number }
  | { type: 'rate_limited'; retry_after_ms: number | null };

/** Invocation origins. Go: kernel/event.go Origin */
export type Origin =
  | 'agent'
  | 'nested'
  | 'host_direct_trusted'
  | 'host_direct_governed'
  | 'host_direct_nested_trusted'
  | 'host_direct_nested_governed';

/** Go: kernel/registry.go Definition */
export interface ToolDefinition {
  name: string;
  description: string;
  /** The model-visible JSON Schema of the arguments. */
  parameters: Record<string, unknown>;
}

/** Go: kernel/event.go ActiveTool */
export interface ActiveTool {
  id: string;
  name: string;
  startedAtMs: number;
  parentId?: string;
  origin: Origin;
}

/** Go: kernel/governance.go PendingConfirmation */
export interface PendingConfirmation {
  toolId: string;
  toolName: string;
  args: Record<string, unknown>;
  remainingMs: number;
}

/** A cut output kept whole (Session.getArtifact). Go: kernel/governance.go Artifact */
export interface Artifact {
  artifact_id: string;
  artifact_uri: string;
  tool_name: string;
  content: string;
  original_bytes: number;
  shown_bytes: number;
}

/**
 * One event of the session stream: the v1 envelope and the convenience
 * fields derived centrally in Go. Go: internal/hostapi/wire.go WireEvent
 */
export interface AgentEvent {
  version: 1;
  /** tool_request_bound, tool_execution_start, tool_output_delta, tool_end, permission_denied, confirmation_required, confirmation_received, confirmation_timeout, budget_threshold_hit, error, … */
  type: string;
  /** Upstream's snake_case payload, e.g. {id, name, output, exit_code} for tool_end. */
  payload: Record<string, any>;
  invocationId?: string;
  parentId?: string;
  origin?: Origin;
  timeMs: number;
  /** payload.name or payload.tool_name. */
  toolName?: string;
  /** payload.id or payload.tool_id (else the invocation id). */
  toolId?: string;
  /** The delta of tool_output_delta, the output of tool_end, the reason of permission_denied, the message of error. */
  text?: string;
  /** payload.exit_code of tool_end. */
  exitCode?: number;
  /** payload.output of tool_end. */
  toolOutput?: string;
  /** payload.error_kind, JSON-encoded. */
  errorKindJson?: string;
}

/** What session.events() returns: an async iterator that also has next(). */
export interface EventStream extends AsyncIterableIterator<AgentEvent> {
  next(): Promise<IteratorResult<AgentEvent, undefined>>;
  /** Ends the subscription. */
  return(): Promise<IteratorResult<AgentEvent, undefined>>;
}

/**
 * Options every call accepts. Any other key is refused (INVALID_CALL), so a
 * misspelt `sginal` is not silently ignored.
 */
export interface CallOptions {
  signal?: AbortSignal;
}

/** The second argument every host callback receives. */
export interface CallbackContext {
  /** Aborted when Go stops waiting (timeout, cancellation, session close). */
  signal: AbortSignal;
}

type MaybePromise<T> = T | Promise<T>;

/** Go: internal/hostapi/options.go WorkspaceOptions */
export interface WorkspaceOptions {
  kind: 'memory' | 'opfs';
  /** Initial files, path → UTF-8 content. */
  files?: Record<string, string>;
  /** The OPFS directory (opfs only). */
  root?: string;
}

/**
 * Go: internal/hostapi/options.go PermissionPolicy (rules: kernel/governance.go PermissionPolicy)
 *
 * Applies to governedTool() and to the nested calls of a program or batch
 * run by one; tool() and the typed helpers are trusted and skip it. With no
 * policy at all the default decision is "ask", and with no confirmation
 * manager (no confirmationHandler, confirmationPolicy not enabled) ask
 * means deny: governedTool() fails with permission denied until a rule
 * allows the call.
 */
export interface PermissionPolicy {
  /** Default true; false allows every call. */
  enabled?: boolean;
  /**
   * Rules such as `write`, `write(path:src/**)`, `mcp__*`, or the class `@mutating` (every call
   * that may change something: `deny: ['@mutating']` is a read-only session; `write` names the
   * write tool only). A path-scoped `read` rule also keeps that content out of every other tool's
   * results. deny > allow > ask.
   */
  deny?: string[];
  allow?: string[];
  ask?: string[];
  /** For calls no rule matches; default "ask". */
  defaultDecision?: 'allow' | 'deny' | 'ask';
}

/**
 * Go: internal/hostapi/options.go ConfirmationPolicy
 *
 * Enabled (or with a confirmationHandler), calls whose permission decision is
 * "ask" wait for an answer: from the handler, or, without one, in
 * pendingConfirmations() until confirmToolUse(); after defaultTimeoutMs the
 * timeoutAction applies.
 */
export interface ConfirmationPolicy {
  /** Default true when a policy is given. */
  enabled?: boolean;
  /** Default 30000. */
  defaultTimeoutMs?: number;
  /** Default "reject". */
  timeoutAction?: 'reject' | 'auto_approve';
}

/** Go: internal/hostapi/options.go HookMatcher */
export interface HookMatcher {
  /** A glob over tool names. */
  tool?: string;
  /** A doublestar glob over the file_path/path argument. */
  pathPattern?: string;
  /** A `*` wildcard over the command argument. */
  commandPattern?: string;
}

/** Go: internal/hostapi/options.go HookConfig */
export interface HookConfig {
  /** Default 5000; a handler that does not answer in time denies. */
  timeoutMs?: number;
}

/** What a hook handler receives. Go: internal/hostapi/governance.go hookPayload */
export interface HookEvent {
  hookId: string;
  event: 'pre_tool_use' | 'post_tool_use';
  toolId: string;
  toolName: string;
  args: Record<string, unknown>;
  origin: Origin;
  parentId?: string;
  /** post_tool_use only. */
  output?: string;
  exitCode?: number;
  metadataJson?: string;
  errorKindJson?: string;
}

/**
 * What a hook handler returns; undefined (or null) continues.
 * Go: internal/hostapi/governance.go hookAnswer; kernel/kernel.go preHooks/postHooks
 *
 * pre_tool_use: `continue` runs the call (with `modified` arguments if
 * given); `skip` continues and skips the remaining pre_tool_use hooks of
 * this call; `block` denies it (hook_denied, nothing runs); `retry` denies
 * it as retryable after `delayMs`.
 * post_tool_use: the call has already run. `continue` keeps its result;
 * `skip` keeps it and skips the remaining post hooks; `block` (or `retry`)
 * cannot undo the call's side effect but withholds its result: the call
 * ends as a hook_denied failure whose output says the tool ran, and the
 * metadata is replaced by `{post_hook_blocked: {hook_id, reason, tool_exit_code}}`.
 */
export interface HookResponse {
  action?: 'continue' | 'block' | 'skip' | 'retry';
  reason?: string;
  delayMs?: number;
  retryable?: boolean;
  /** Replacement arguments (pre_tool_use); validated again. */
  modified?: Record<string, unknown>;
}

export type HookHandler = (event: HookEvent, ctx: CallbackContext) => MaybePromise<HookResponse | undefined | null | void>;

/** Go: internal/hostapi/options.go HookSpec (handler: a boolean there) */
export interface Hook {
  id: string;
  event: 'pre_tool_use' | 'post_tool_use';
  matcher?: HookMatcher;
  config?: HookConfig;
  /** Required: a hook without a handler is refused (INVALID_OPTIONS). */
  handler: HookHandler;
}

/** What a budget guard receives. Go: internal/hostapi/governance.go checkBudget */
export interface BudgetRequest {
  check: 'checkBeforeTool';
  toolId: string;
  toolName: string;
  args: Record<string, unknown>;
  origin: Origin;
}

/** Go: internal/hostapi/governance.go budgetAnswer */
export type BudgetAnswer =
  | boolean
  | { allow: boolean; reason?: string }
  | { action: 'allow' | 'soft' | 'hard' | 'deny'; resource?: string; consumed?: number; limit?: number; message?: string };

/** Go: internal/hostapi/options.go BudgetSpec (checkBeforeTool: a boolean there) */
export interface BudgetGuard {
  /** Asked before every side effect; fails closed (a throw, silence or anything but an answer denies). */
  checkBeforeTool: (req: BudgetRequest, ctx: CallbackContext) => MaybePromise<BudgetAnswer>;
  /** Default 5000. */
  timeoutMs?: number;
}

/** What a confirmation handler receives. Go: internal/hostapi/governance.go confirmer.Confirm */
export interface ConfirmationRequest {
  toolId: string;
  toolName: string;
  args: Record<string, unknown>;
  origin: Origin;
  parentId?: string;
  timeoutMs: number;
}

export type ConfirmationHandler = (req: ConfirmationRequest, ctx: CallbackContext) => MaybePromise<boolean | { approved: boolean; reason?: string }>;

/** Go: internal/hostapi/options.go SecuritySpec (sanitizeOutput: a boolean there) */
export interface SecurityProvider {
  /** Cleans every output, streamed delta and error reason; a failure withholds the text. */
  sanitizeOutput: (text: string, ctx: CallbackContext) => MaybePromise<string | { text: string }>;
}

/** Go: internal/hostapi/options.go Options */
export interface SessionOptions {
  workspace?: WorkspaceOptions;
  /** Bounds every tool execution; 0 or absent: no timeout. */
  toolTimeoutMs?: number;
  permissionPolicy?: PermissionPolicy;
  confirmationPolicy?: ConfirmationPolicy;
  /** Answers confirmations; without it, pendingConfirmations()/confirmToolUse() do. */
  confirmationHandler?: ConfirmationHandler;
  hooks?: Hook[];
  budgetGuard?: BudgetGuard;
  securityProvider?: SecurityProvider;
  webFetch?: WebFetchOptions;
}

/** createSession({ webFetch }): web_fetch reaches public addresses only, except these exact origins. */
export interface WebFetchOptions {
  /** Exact origins such as 'http://127.0.0.1:8787' (scheme://host[:port]). */
  allowOrigins?: string[];
}

export interface ReadFileOptions extends CallOptions {
  /** 0-based line offset. */
  offset?: number;
  /** 1–2000 lines. */
  limit?: number;
}

/** ls({path, signal}): the one-object form of ls(path, {signal}). */
export interface LsOptions extends CallOptions {
  path?: string;
}

/** session.program options; mapped to the `program` tool's arguments (allowedTools → allowed_tools). */
export interface ProgramOptions {
  /** Inline source, or */
  source?: string;
  /** a workspace-relative .js/.mjs file. */
  path?: string;
  /** run's second argument: a JSON object (an array or other value is refused). */
  inputs?: Record<string, unknown>;
  /** Default: every registered tool except program. */
  allowedTools?: string[];
  limits?: { timeoutMs?: number; maxToolCalls?: number; maxOutputBytes?: number };
}

export interface Session {
  /** The model-visible tools, sorted. */
  toolNames(): string[];
  toolDefinitions(): ToolDefinition[];
  /** The invocations executing now. */
  activeTools(): ActiveTool[];
  isClosed(): boolean;

  /**
   * A trusted host-direct call: permission and confirmation are skipped; hooks, budget, timeouts and sanitisation apply.
   * args must be JSON data: a function, symbol, BigInt, NaN/Infinity, undefined inside an array or a cycle
   * rejects INVALID_CALL naming its path (e.g. "tool: args.limit is a BigInt").
   */
  tool(name: string, args?: Record<string, unknown>, opts?: CallOptions): Promise<ToolResult>;
  /** A call with the full policy, as a model-selected call. */
  governedTool(name: string, args?: Record<string, unknown>, opts?: CallOptions): Promise<ToolResult>;
  /** `read`: the numbered lines. Rejects TOOL_FAILED when the read fails. */
  readFile(path: string, opts?: ReadFileOptions): Promise<string>;
  writeFile(path: string, content: string, opts?: CallOptions): Promise<ToolResult>;
  editFile(path: string, oldString: string, newString: string, replaceAll?: boolean, opts?: CallOptions): Promise<ToolResult>;
  /** `patch` with a unified diff. */
  patchFile(path: string, diff: string, opts?: CallOptions): Promise<ToolResult>;
  ls(path?: string, opts?: CallOptions): Promise<ToolResult>;
  ls(opts: LsOptions): Promise<ToolResult>;
  /** `glob`: every matching path, sorted, up to 10,000 (more rejects TOOL_FAILED; page with tool('glob', {pattern, cursor}) instead). */
  glob(pattern: string, opts?: CallOptions): Promise<string[]>;
  /** `grep` (content mode): its output. */
  grep(pattern: string, opts?: CallOptions): Promise<string>;
  /**
   * The full output kept when a result was cut (output over 100 KiB, metadata over 64 KiB), by the
   * `a3s://tool-output/<tool>/<sha256>` URI found in the output's suffix or in metadata `artifact` /
   * `metadata_artifact`; null when the store has no such artifact (never kept, or evicted).
   */
  getArtifact(uri: string, opts?: CallOptions): Promise<Artifact | null>;

  /**
   * `program`: runs a PTC script (`async function run(ctx, inputs)`) in QuickJS (WebAssembly) in a fresh
   * worker; metadata.program.runtime is "quickjs-node-worker" or "quickjs-web-worker".
   */
  program(options: ProgramOptions, opts?: CallOptions): Promise<ToolResult>;

  events(): EventStream;

  pendingConfirmations(): PendingConfirmation[];
  /** Resolves true when a call with that id was waiting (it is now approved or denied), false when none was. */
  confirmToolUse(toolId: string, approved: boolean, reason?: string, opts?: CallOptions): Promise<boolean>;

  /** Adds (or, with the same id, replaces) a hook. */
  registerHook(id: string, eventType: 'pre_tool_use' | 'post_tool_use', matcher?: HookMatcher, config?: HookConfig, handler?: HookHandler): void;
  registerHook(id: string, eventType: 'pre_tool_use' | 'post_tool_use', handler: HookHandler): void;
  unregisterHook(id: string): boolean;
  /** Installs, or with null removes, the budget guard. */
  setBudgetGuard(guard: BudgetGuard | null): void;

  /** Cancels in-flight calls (they reject SESSION_CLOSED), ends event streams, releases the session. */
  close(): Promise<void>;
  /**
   * close(): `await using s = await createSession()` closes s when the block ends.
   * Present where the runtime has Symbol.asyncDispose (Node 20, current browsers, workerd).
   */
  [Symbol.asyncDispose](): Promise<void>;
}

// Symbol.asyncDispose for projects whose TypeScript lib predates it (as @types/node declares it).
declare global {
  interface SymbolConstructor {
    readonly asyncDispose: unique symbol;
  }
}

/**
 * Creates a session; rejects INVALID_OPTIONS naming the full key path
 * (`options.hooks[0].matcher.tools`, `options.workspace.files["a.txt"]`), or
 * WORKSPACE_BUSY when an OPFS root is open in another tab or worker.
 */
export function createSession(options?: SessionOptions): Promise<Session>;
