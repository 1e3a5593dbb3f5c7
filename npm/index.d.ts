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
  /** addMcp could not connect to the server or list its tools (it shows in mcpStatus()). */
  | 'MCP_FAILED'
  | 'INTERNAL'
  /** send/stream on a session created without the llm option. */
  | 'NO_LLM'
  /** The agent run started and did not finish; `result` is the AgentResult so far with its errorKind. */
  | 'AGENT_FAILED'
  /** task/tasks on a session created with manualDelegationEnabled: false. */
  | 'NO_DELEGATION';

/** Every rejection is a CodeWasmError (npm/src/errors.mjs). */
export class CodeWasmError extends Error {
  constructor(message: string, code: ErrorCode, extra?: { result?: ToolResult | AgentResult });
  readonly code: ErrorCode;
  /**
   * The failed tool's result, for code TOOL_FAILED (readFile, glob, grep); the run's AgentResult
   * so far (with errorKind) when send/run rejects after the run started (AGENT_FAILED, ABORTED, SESSION_CLOSED).
   */
  readonly result?: ToolResult | AgentResult;
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
  /** The model-visible JSON Schema of the arguments: always an object schema. */
  parameters: ToolParameters;
}

/**
 * A tool's argument schema: a JSON Schema object with `type: 'object'`, the shape LLM SDKs take
 * as a tool's input schema (Anthropic's `input_schema`, OpenAI's `parameters`) without a cast.
 */
export interface ToolParameters {
  type: 'object';
  properties?: Record<string, unknown>;
  required?: string[];
  [key: string]: unknown;
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
  /** tool_request_bound, tool_execution_start, tool_output_delta, tool_end, permission_denied, confirmation_required, confirmation_received, confirmation_timeout, budget_threshold_hit, error, dropped (payload.count: events a full subscription dropped); of an agent run: agent_start, turn_start, text_delta, reasoning_delta, tool_start, tool_input_delta, turn_end, agent_end; of task and parallel_task: subagent_start, subagent_progress (payload.status tool_completed or turn_completed, payload.metadata), subagent_end. … */
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
  /** The delta of tool_output_delta and tool_input_delta, the text of text_delta, reasoning_delta and agent_end, the output of tool_end, the reason of permission_denied, the message of error. */
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
  /** 'directory': real files on disk, Node.js on Linux only (refused in browsers and Workers). */
  kind: 'memory' | 'opfs' | 'directory';
  /** Initial files, path → content: a string (written as UTF-8) or exact bytes; they cross as bytes, not JSON (written into the directory for 'directory'). */
  files?: Record<string, string | Uint8Array>;
  /** The OPFS directory (opfs); the path of an existing directory (directory, required). */
  root?: string;
  /**
   * directory only: how bash and git run. 'auto' (default): inside bubblewrap when it is installed (read-only
   * system, the root the only writable place, private /tmp, no network, every process killed with the command);
   * without it, commands the model or governedTool chose are refused (unsupported). 'none': never sandbox, and
   * such commands run unconfined (the host opts in).
   */
  sandbox?: 'auto' | 'none';
  /** directory only: sandboxed commands may use the network (default false). */
  network?: boolean;
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

/**
 * The model of the agent loop: an OpenAI-compatible or Anthropic endpoint. Go: internal/hostapi/llm.go
 * LLMOptions (llm/llm.go Config). An unknown provider or a missing model rejects INVALID_OPTIONS naming
 * the key. In a browser the key is visible to the page's users: prefer a same-origin proxy
 * (`baseURL: '/api/llm'`) that adds the key on the server.
 */
export interface LlmProviderOptions {
  provider: 'openai' | 'anthropic';
  /** openai: POST `${baseURL}/chat/completions` (default https://api.openai.com/v1); anthropic: POST `${baseURL}/v1/messages` (default https://api.anthropic.com). */
  baseURL?: string;
  apiKey?: string;
  model: string;
  /** Extra request headers. */
  headers?: Record<string, string>;
  /** Retries of a request that failed before any stream byte (408, 429, 5xx, 529, network); default 2. */
  maxRetries?: number;
  /** Bounds the wait for the response and each silence of the stream; default 120000. */
  timeoutMs?: number;
  /** The output limit (Anthropic requires one: default 8192 there). */
  maxTokens?: number;
}

/** A message of the conversation (the history of send/stream). Go: llm/llm.go Message */
export interface LlmMessage {
  role: 'user' | 'assistant';
  text?: string;
  toolCalls?: { id: string; name: string; arguments: string }[];
  toolResults?: { callId: string; content: string; isError?: boolean }[];
}

/** What a host-supplied client's stream() receives. Go: llm/llm.go Request */
export interface LlmRequest {
  model?: string;
  system?: string;
  messages: LlmMessage[];
  tools?: { name: string; description?: string; parameters: Record<string, unknown> }[];
  toolChoice?: { type: 'auto' | 'none' | 'required' | 'tool'; name?: string };
  maxTokens?: number;
  temperature?: number;
}

/**
 * One chunk of the normalized stream a host-supplied client yields (llm/doc.go). Tool calls are
 * numbered by index from 0 in the order they start; a turn ends with one `finish`.
 */
export type LlmChunk =
  | { type: 'text_delta'; text: string }
  | { type: 'reasoning_delta'; text: string }
  | { type: 'tool_call_start'; index: number; id: string; name: string }
  | { type: 'tool_call_delta'; index: number; fragment: string }
  | { type: 'tool_call_end'; index: number }
  | { type: 'finish'; stopReason: 'stop' | 'tool_use' | 'max_tokens' | 'content_filter' | 'other'; usage?: Usage };

/** A host-supplied model client: the app's own transport (a proxy, a local model, a test). */
export interface LlmClientOptions {
  client: {
    stream(request: LlmRequest, ctx: CallbackContext): AsyncIterable<LlmChunk> | Iterable<LlmChunk> | Promise<AsyncIterable<LlmChunk> | Iterable<LlmChunk>>;
  };
  /** Sent as request.model when the loop sets none. */
  model?: string;
  maxTokens?: number;
}

/** Go: llm/llm.go Usage */
export interface Usage {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
  /** The part of promptTokens read from the provider's prompt cache (absent when none). */
  cacheReadTokens?: number;
  /** The part of promptTokens written to the provider's prompt cache (Anthropic; absent when none). */
  cacheWriteTokens?: number;
}

/** What send/run resolve to. Go: internal/hostapi/llm.go AgentResult */
export interface AgentResult {
  /** The model's last answer. */
  text: string;
  /** The tool calls the model made, refused ones included. */
  toolCallsCount: number;
  usage: Usage;
  /** Only in a rejection's `result`: why the run stopped. */
  errorKind?: { type: string; message: string };
}

/** send/run/stream's request object form. */
export interface SendRequest {
  prompt: string;
  /** Replaces the session's history for this run (which then leaves the session's as it was). */
  history?: LlmMessage[];
}

/** A tool call exactly as a provider sent it (session.runToolCall). */
export type ProviderToolCall =
  | { id: string; type: 'function'; function: { name: string; arguments: string } }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> };

/** What runToolCall resolves to: the provider's tool-result message. */
export type ProviderToolResult =
  | { role: 'tool'; tool_call_id: string; content: string }
  | { role: 'user'; content: { type: 'tool_result'; tool_use_id: string; content: string; is_error?: boolean }[] };

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
  /** The model of send/run/stream (and the LLM tools); without it they reject NO_LLM. */
  llm?: LlmProviderOptions | LlmClientOptions;
  /** The agent loop's system prompt. */
  systemPrompt?: string;
  /** The agent loop's tool rounds before it stops (1–10000); default 50. */
  maxToolRounds?: number;
  /** MCP servers connected at start; one that cannot be reached registers nothing and shows in mcpStatus(). */
  mcpServers?: McpServer[];
  /** web_fetch's reach: public addresses only, except allowOrigins. */
  webFetch?: WebFetchOptions;
  /** web_search's engines; without providers web_search is not listed. */
  webSearch?: WebSearchOptions;
  /** Custom agents for task/parallel_task, after the built-ins and the workspace's .a3s/agents files (same name: replaces). */
  agents?: AgentDefinition[];
  /** Delegated agents running at once across the session (1–32); default 8. */
  maxParallelTasks?: number;
  /** false leaves task and parallel_task out (task/tasks reject NO_DELEGATION). Default true with llm. */
  manualDelegationEnabled?: boolean;
  /** Workspace directories SKILL.md files load from (name.md or name/SKILL.md, recursive); default ['.a3s/skills']. A file that does not parse is skipped. */
  skillDirs?: string[];
  /** Skills added after those of skillDirs. */
  skills?: SkillDefinition[];
}

/** A skill (session.addSkill, options.skills). Go: agent/skills.go Skill */
export interface SkillDefinition {
  /** No spaces or slashes. */
  name: string;
  description?: string;
  /** The instructions. */
  content?: string;
  /** Permission rules (`read(*)`, `grep`, `bash(command:gh *)`, `*`); inside the skill every other call is denied, and the session's policy still applies. */
  allowedTools?: string[];
  /** Skill refuses it; search_skills leaves it out. */
  disableModelInvocation?: boolean;
  kind?: 'instruction' | 'persona' | 'tool';
  tags?: string[];
  version?: string;
}

/** A custom agent. Go: agent/catalog.go Def */
export interface AgentDefinition {
  name: string;
  description?: string;
  /** The agent's system prompt. */
  prompt: string;
  /** Its tool rounds; default 50. */
  maxSteps?: number;
  /** Narrows the session's policy inside the agent (default decision deny); task and parallel_task are always denied there. */
  permissions?: { allow?: string[]; deny?: string[]; ask?: string[]; defaultDecision?: 'allow' | 'deny' | 'ask' };
  /** What the agent's own ask means: auto_approve (the session's policy decides) or deny. Default: auto_approve when permissions are given, else deny. */
  confirmationInheritance?: 'auto_approve' | 'deny';
  /** Left out of the catalog the model reads. */
  hidden?: boolean;
}

/** One delegated task (session.task, session.tasks). Go: agent/delegate.go TaskSpec */
export interface TaskSpec {
  /** explore, general, plan, verification, review (or an alias), or a custom agent. */
  agent: string;
  description: string;
  prompt: string;
  /** Resolves at once with the task id (metadata.task_ids); read the result with taskResult. */
  background?: boolean;
  maxSteps?: number;
  /** A JSON Schema the answer must follow; the parsed answer is metadata.structured. */
  outputSchema?: Record<string, unknown>;
}

/** A background task's state (session.taskResult). */
export interface BackgroundTask {
  taskId: string;
  agent: string;
  done: boolean;
  /** The task's ToolResult once done. */
  result?: ToolResult;
}

/** An MCP server (Streamable HTTP). Go: mcp/servers.go Config */
export interface McpServer {
  /** [A-Za-z0-9-]+ without "__"; its tools become mcp__<name>__<tool>. */
  name: string;
  url: string;
  /** Sent with every request (e.g. Authorization). */
  headers?: Record<string, string>;
  /** Bounds connecting and listing; default 30,000. */
  timeoutMs?: number;
}

/** A host tool (Session.registerTool). Go: tools/host.go NewHostTool */
export interface HostTool {
  /** 1–64 characters of [A-Za-z0-9_-]. */
  name: string;
  description?: string;
  /** A JSON Schema of the arguments; default {type: 'object'}. */
  parameters?: Record<string, unknown>;
  /**
   * Runs the tool with the validated arguments. invoke makes nested calls, always as plain nested calls
   * under the full policy. Answers a string (the output) or {output, metadata?}.
   */
  handler: (args: any, ctx: { signal: AbortSignal; invoke: (name: string, args?: Record<string, unknown>) => Promise<ToolResult> }) =>
    string | { output: string; metadata?: Record<string, unknown> } | Promise<string | { output: string; metadata?: Record<string, unknown> }>;
}

/** One MCP server as mcpStatus() shows it. Go: mcp/servers.go Status */
export interface McpStatus {
  name: string;
  url: string;
  state: 'connecting' | 'connected' | 'failed';
  toolCount: number;
  error?: string;
  /** The tools left out and why (task support required, name over 64 characters, collision). */
  warnings?: string[];
}

/** createSession({ webFetch }): web_fetch reaches public addresses only, except these exact origins. */
export interface WebFetchOptions {
  /** Exact origins such as 'http://127.0.0.1:8787' (scheme://host[:port]). */
  allowOrigins?: string[];
}

/** createSession({ webSearch }): the engines web_search asks. Go: tools/web_search.go NewWebSearch */
export interface WebSearchOptions {
  providers: (WebSearchProvider | WebSearchEndpoint)[];
}

/**
 * One web_search engine run by the app. search resolves to at most limit results; a rate limit is
 * signalled by throwing an error whose code is 'rate_limited' (optionally with retryAfterMs), a
 * timeout with code 'timeout'; anything else counts as a failure of this engine. Go: tools.SearchProvider
 */
export interface WebSearchProvider {
  /** 1–64 characters of [A-Za-z0-9_-], unique; the name web_search's engines argument uses. */
  name: string;
  search(query: string, opts: { limit: number; signal: AbortSignal }): Promise<WebSearchHit[]> | WebSearchHit[];
}

/**
 * One web_search engine the session reaches itself over HTTP (public addresses only, unless the
 * origin is in webFetch.allowOrigins). Go: tools.HTTPSearchConfig
 */
export interface WebSearchEndpoint {
  name: string;
  /** searxng: a SearXNG instance's search URL, asked with format=json; brave: the Brave Search API. */
  kind: 'searxng' | 'brave';
  /** Required for searxng (https://searx.example/search); brave defaults to its public API URL. */
  url?: string;
  /** Required for brave (X-Subscription-Token). Visible to a page's users in a browser. */
  apiKey?: string;
  /** Sent with every request. */
  headers?: Record<string, string>;
}

export interface WebSearchHit {
  title: string;
  url: string;
  snippet?: string;
}

/** session.webSearch(args): web_search's arguments. */
export interface WebSearchArgs {
  query: string;
  /** Engine names, an array or a comma-separated string; default all. */
  engines?: string[] | string;
  /** Default 10, maximum 50. */
  limit?: number;
  /** Seconds; default 20, maximum 60. */
  timeout?: number;
  format?: 'text' | 'json';
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

/** session.bash options. */
export interface BashOptions extends CallOptions {
  /** Deadline in ms (default 120000; values below 1000 are raised to 1000). */
  timeoutMs?: number;
}

export type GitCommand = 'status' | 'log' | 'branch' | 'checkout' | 'diff' | 'stash' | 'remote' | 'worktree';

/** session.git options (upstream's GitCommandOptions, plus the paging keys). */
export interface GitCommandOptions extends CallOptions {
  command: GitCommand;
  /** worktree: list (default), create or remove. */
  subcommand?: 'list' | 'create' | 'remove';
  name?: string;
  path?: string;
  newBranch?: boolean;
  base?: string;
  force?: boolean;
  maxCount?: number;
  message?: string;
  includeUntracked?: boolean;
  target?: string;
  ref?: string;
  /** Alias of ref. */
  reference?: string;
  limit?: number;
  cursor?: string;
  byteOffset?: number;
  maxBytes?: number;
}

/** One verifyCommands check. */
export interface VerificationCommand {
  id: string;
  kind: string;
  description: string;
  command: string;
  required?: boolean;
  timeoutMs?: number;
}

export interface VerificationCheck {
  id: string;
  kind: string;
  description: string;
  status: 'passed' | 'failed' | 'needs_review' | 'skipped';
  required: boolean;
  suggested_tools: string[];
  evidence_uris?: string[];
  residual_risk?: string;
}

/** a3s.verification_report.v1 */
export interface VerificationReport {
  schema: 'a3s.verification_report.v1';
  subject: string;
  status: 'passed' | 'failed' | 'needs_review' | 'skipped';
  checks: VerificationCheck[];
  residual_risks?: string[];
}

/** What exportFiles returns. */
export interface ExportOptions extends CallOptions {
  /** The directory exported; default the whole workspace. Keys stay workspace paths. */
  under?: string;
  /** A glob pattern (the glob tool's syntax) matched against each path relative to `under`. */
  include?: string;
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

  /**
   * `bash` on a directory workspace: the output (stdout and stderr interleaved; "[exit code N]" after a
   * failing command). Rejects TOOL_FAILED when the command timed out, was refused or could not start.
   */
  bash(command: string, opts?: BashOptions): Promise<string>;
  /** `git`: git('status'), git('log', {signal}), git({command: 'diff', target: 'HEAD~1', maxBytes: 4096}). */
  git(command: GitCommand, ...positional: unknown[]): Promise<ToolResult>;
  git(options: GitCommandOptions): Promise<ToolResult>;
  /** Runs each command through `bash` and reports (status: failed > needs_review > skipped > passed). */
  verifyCommands(subject: string, commands: VerificationCommand[], opts?: CallOptions): Promise<VerificationReport>;
  /** Checks derived from the workspace root: go.mod, package.json scripts, Cargo.toml, pyproject.toml. */
  verifyPresets(opts?: CallOptions): Promise<VerificationCommand[]>;


  /**
   * Runs the agent loop: the model's tool calls go through the kernel with origin "agent"
   * (permission policy, confirmation, hooks, budget, timeouts and sanitising apply: with no
   * permissionPolicy and no confirmation the default "ask" denies every call). Without history the
   * session's history is continued and kept. Rejects NO_LLM without the llm option; AGENT_FAILED
   * (max tool rounds, the duplicate guard, the model's client failed), ABORTED, SESSION_CLOSED with
   * the run so far in `result`.
   */
  send(prompt: string | SendRequest, history?: LlmMessage[], opts?: CallOptions): Promise<AgentResult>;
  send(request: SendRequest, opts?: CallOptions): Promise<AgentResult>;
  /** The same function as send (upstream's alias). */
  run: Session['send'];
  /**
   * Runs the agent loop and iterates its events: agent_start, turn_start, text_delta,
   * reasoning_delta, tool_start, tool_input_delta, the kernel's tool events, turn_end, then
   * agent_end or error (the last one). Leaving the loop or aborting signal cancels the run.
   */
  stream(prompt: string | SendRequest, history?: LlmMessage[], opts?: CallOptions): AsyncIterableIterator<AgentEvent>;
  stream(request: SendRequest, opts?: CallOptions): AsyncIterableIterator<AgentEvent>;
  /**
   * The session's tools as a provider's `tools` array, for apps that run their own model loop;
   * `{strict: true}` (openai): strict-mode schemas (objects closed, every property required,
   * optional ones nullable).
   */
  toolsFor(provider: 'openai' | 'anthropic', opts?: { strict?: boolean }): Record<string, unknown>[];
  /**
   * Runs one tool call exactly as the provider sent it, governed (as governedTool), and resolves to
   * that provider's tool-result message. An unknown tool or unparseable arguments are answered as a
   * failed result; a call of neither shape rejects INVALID_CALL.
   */
  runToolCall(call: ProviderToolCall, opts?: CallOptions): Promise<ProviderToolResult>;

  /**
   * Subscribes to the event stream from now on. Each subscription buffers at most 10,000 unread
   * progress events (tool_execution_start, tool_output_delta, …); past that the oldest are dropped
   * and the next event read is `{type: 'dropped', payload: {count}}` (how many were dropped since
   * the last one). tool_end, permission_denied, confirmation_required and error are never dropped.
   */
  events(): EventStream;

  // ---- Workspace content (API.md "Workspace content"): exact bytes for the application. ----
  /** A file's exact content as text (UTF-8, BOM kept). Rejects TOOL_FAILED for a missing file, or one that is not UTF-8 (read it with readBytes). */
  readText(path: string, opts?: CallOptions): Promise<string>;
  /** A file's exact bytes. Rejects TOOL_FAILED for a missing file. */
  readBytes(path: string, opts?: CallOptions): Promise<Uint8Array>;
  /** Replaces (or creates) a file with exactly these bytes; like writeFile, the ToolResult. */
  writeBytes(path: string, bytes: Uint8Array, opts?: CallOptions): Promise<ToolResult>;
  /** Every file's exact content, read in pages of about 8 MiB: a string for UTF-8 text without NUL bytes, else a Uint8Array. */
  exportFiles(options?: ExportOptions): Promise<Record<string, string | Uint8Array>>;
  /** Writes many files, in chunks of about 8 MiB. Every path is checked first: a bad one rejects TOOL_FAILED naming it, and nothing is written. */
  importFiles(files: Record<string, string | Uint8Array>, opts?: CallOptions): Promise<void>;

  pendingConfirmations(): PendingConfirmation[];
  /** Resolves true when a call with that id was waiting (it is now approved or denied), false when none was. */
  confirmToolUse(toolId: string, approved: boolean, reason?: string, opts?: CallOptions): Promise<boolean>;

  /** Adds (or, with the same id, replaces) a hook. */
  registerHook(id: string, eventType: 'pre_tool_use' | 'post_tool_use', matcher?: HookMatcher, config?: HookConfig, handler?: HookHandler): void;
  registerHook(id: string, eventType: 'pre_tool_use' | 'post_tool_use', handler: HookHandler): void;
  unregisterHook(id: string): boolean;
  /** Installs, or with null removes, the budget guard. */
  setBudgetGuard(guard: BudgetGuard | null): void;

  /**
   * Connects an MCP server and registers each tool as mcp__<name>__<tool>; every call goes through the
   * kernel like any tool. Rejects MCP_FAILED when the server cannot be reached (nothing registered).
   */
  addMcp(server: McpServer, opts?: CallOptions): Promise<McpStatus>;
  /** The MCP servers, sorted by name. */
  mcpStatus(): McpStatus[];
  /** Unregisters the server's tools and ends its MCP session (DELETE). */
  removeMcp(name: string, opts?: CallOptions): Promise<void>;

  /**
   * Registers a host tool. The name must not shadow a built-in or start with mcp__; parameters must
   * compile as a JSON Schema. A throw or rejection is exit 1 with its message. Throws INVALID_CALL.
   * In the browser build (Go runs in a Worker) it returns a Promise, rejected with that error.
   */
  registerTool(tool: HostTool): void | Promise<void>;
  /** Removes a host tool; false when there was none (a Promise of it in the browser build). */
  unregisterTool(name: string): boolean | Promise<boolean>;

  /**
   * Runs one delegated agent (the task tool, trusted; the agent's own calls are governed and can only
   * narrow the session's policy). Metadata: {task_id, session_id, agent, success, output_bytes,
   * truncated_for_context, artifact_id, artifact_uri, structured, source_anchors}. Rejects NO_LLM
   * without llm; a failed agent is exit 1 with errorKind partial_failure.
   */
  task(task: TaskSpec, opts?: CallOptions): Promise<ToolResult>;
  /** Runs 1–32 delegated agents concurrently; metadata lists their results in order (task_count, success_count, results, …). */
  tasks(tasks: TaskSpec[], opts?: CallOptions & { allowPartialFailure?: boolean; timeoutMs?: number; minSuccessCount?: number }): Promise<ToolResult>;
  /** A background task's state; `wait: true` resolves once it finished. Rejects INVALID_CALL for an unknown id. */
  taskResult(taskId: string, opts?: CallOptions & { wait?: boolean }): Promise<BackgroundTask>;

  /** Adds (or, with the same name, replaces) a skill; throws INVALID_CALL naming what is wrong (in the browser build: a Promise, rejected with it). */
  addSkill(skill: SkillDefinition): void | Promise<void>;
  /** Removes a skill; false when there was none (a Promise of it in the browser build). */
  removeSkill(name: string): boolean | Promise<boolean>;
  /** The loaded skills, sorted. */
  skillNames(): string[];

  /**
   * Runs web_search (listed only with options.webSearch providers). metadata.status is complete, partial
   * or failed; failed (no results and an engine failed) is exitCode 1 with errorKind rate_limited,
   * timeout or transport.
   */
  webSearch(args: WebSearchArgs, opts?: CallOptions): Promise<ToolResult>;

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
