// The TypeScript declarations shipped in the package declare every key the
// running wasm emits (internal/hostapi/hostapi_dts_test.go checks the Go structs;
// this checks the real JSON, as installed from the tarball).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createSession } from '@a3s-lab/code-wasm';

const require = createRequire(import.meta.url);
const pkgJson = require.resolve('@a3s-lab/code-wasm/package.json');
const pkg = JSON.parse(readFileSync(pkgJson, 'utf8'));
const dts = readFileSync(new URL(pkg.types, `file://${pkgJson}`), 'utf8');

function iface(name) {
  const m = dts.match(new RegExp(`^export interface ${name}(?: extends [^{]+)? \\{\\n([\\s\\S]*?)^\\}`, 'm'));
  assert.ok(m, `index.d.ts declares ${name}`);
  const fields = new Map();
  for (const [, k, opt] of m[1].matchAll(/^ {2}(\w+)(\??):/gm)) fields.set(k, opt === '?');
  return fields;
}

function checkKeys(name, obj) {
  const fields = iface(name);
  for (const k of Object.keys(obj)) assert.ok(fields.has(k), `${name} declares "${k}" (emitted: ${JSON.stringify(obj).slice(0, 200)})`);
  for (const [k, optional] of fields) if (!optional) assert.ok(k in obj, `${name}.${k} is required but was not emitted`);
}

test('package.json points types at the shipped index.d.ts', () => {
  assert.equal(pkg.exports['.'].types, pkg.types);
  assert.match(dts, /export function createSession\(options\?: SessionOptions\): Promise<Session>;/);
});

test('package.json points ./worker types at the shipped worker.d.ts', () => {
  const wdts = readFileSync(new URL(pkg.exports['./worker'].types, `file://${pkgJson}`), 'utf8');
  assert.match(wdts, /export declare class CodeSession \{/);
  assert.match(wdts, /export default worker;/);
});

test('every emitted object matches its declaration', async () => {
  let hookEvent;
  const s = await createSession({
    workspace: { kind: 'memory', files: { 'a.txt': 'a\n' } },
    permissionPolicy: { ask: ['write'], defaultDecision: 'allow' },
    confirmationPolicy: { enabled: true },
    hooks: [{ id: 'post', event: 'post_tool_use', matcher: { tool: 'read' }, handler: (ev) => { hookEvent = ev; } }],
  });
  const events = s.events();
  const ok = await s.tool('read', { file_path: 'a.txt' });
  checkKeys('ToolResult', ok);
  checkKeys('ToolResult', await s.tool('read', { file_path: 'missing' }));
  checkKeys('HookEvent', hookEvent);
  for (const d of s.toolDefinitions()) checkKeys('ToolDefinition', d);

  const pendingWrite = s.governedTool('write', { file_path: 'b.txt', content: 'b' });
  let pending = [];
  while (pending.length === 0) { await new Promise((r) => setTimeout(r, 5)); pending = s.pendingConfirmations(); }
  checkKeys('PendingConfirmation', pending[0]);
  await s.confirmToolUse(pending[0].toolId, true);
  await pendingWrite;

  const types = new Set();
  for (let i = 0; i < 30; i++) {
    const { value } = await events.next();
    checkKeys('AgentEvent', value);
    types.add(value.type);
    if (types.has('confirmation_received') && value.type === 'tool_end' && value.toolName === 'write') break;
  }
  assert.ok(types.has('tool_end') && types.has('confirmation_required'), [...types].join());
  await s.close();
});

test('activeTools entries match ActiveTool', async () => {
  let release;
  let started;
  const running = new Promise((r) => { started = r; });
  const s = await createSession({
    hooks: [{ id: 'hold', event: 'post_tool_use', handler: () => { started(); return new Promise((r) => { release = r; }); } }],
  });
  const p = s.ls();
  await running;
  const active = s.activeTools();
  assert.equal(active.length, 1);
  checkKeys('ActiveTool', active[0]);
  assert.equal(active[0].name, 'ls');
  release();
  await p;
  await s.close();
});
