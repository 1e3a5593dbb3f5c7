// One version: `make build` stamps npm/package.json's version into the wasm
// (-ldflags -X main.version), so the running Go reports the version of the
// package it shipped in.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const pkgJson = require.resolve('@a3s-lab/code-wasm/package.json');
const pkg = JSON.parse(readFileSync(pkgJson, 'utf8'));

test('the wasm reports the package.json version', async () => {
  // loader.mjs is not exported: reach it by file, as the entry points do.
  const { loadApi } = await import(new URL('src/loader.mjs', `file://${pkgJson}`).href);
  const api = await loadApi(() => WebAssembly.compile(readFileSync(new URL('dist/code.wasm', `file://${pkgJson}`))));
  assert.match(pkg.version, /^\d+\.\d+\.\d+/);
  assert.equal(api.version, pkg.version);
});
