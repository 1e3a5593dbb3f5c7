// The spec's TypeScript examples run unchanged (as .mjs) against the
// installed package: spec-direct-tool-calls.fixture.mjs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

test('tools.en.md "Direct Tool Calls" runs against a memory workspace', () => {
  const script = fileURLToPath(new URL('./spec-direct-tool-calls.fixture.mjs', import.meta.url));
  const out = execFileSync(process.execPath, [script], { encoding: 'utf8' });
  const lines = out.trimEnd().split('\n');
  const summary = JSON.parse(lines.at(-1));
  // console.log(raw.output): the numbered README.
  assert.match(out, /^\s+1\t# auth service$/m);
  assert.match(out, /^\s+3\tSee src\/policy\.rs for PermissionPolicy\.$/m);
  assert.deepEqual([...summary.files].sort(), ['src/auth/token.rs', 'src/main.rs', 'src/policy.rs']);
  // grep reports every file that mentions the name, outside src/ too.
  for (const f of ['README.md', 'src/main.rs', 'src/policy.rs', 'docs/notes.md']) assert.match(summary.hits, new RegExp(f.replace('.', '\\.')));
  assert.doesNotMatch(summary.hits, /token\.rs/);
  assert.ok(summary.hitLines >= 4, `hitLines ${summary.hitLines}`);
  assert.ok(summary.schemas.includes('glob') && summary.schemas.includes('grep') && summary.schemas.includes('read'));
  assert.ok(!summary.schemas.includes('bash') && !summary.schemas.includes('git'));
});
