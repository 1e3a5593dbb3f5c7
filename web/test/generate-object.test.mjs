// generate_object in Chromium: compiles the tools package's GenerateObject
// tests for GOOS=js GOARCH=wasm and runs them in a dedicated Worker of a
// page against the scripted provider server (cmd/llmtestserver) on another
// 127.0.0.1 origin (real cross-origin fetches, both wire formats).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { launch, server, freshProfile, removeProfile, repo } from './browser.mjs';
import { startLLMServer } from './llmserver.mjs';

const names = ['TestGenerateObjectServerRepairs', 'TestGenerateObjectServerStreamsPartials', 'TestGenerateObjectServerCancel',
  'TestGenerateObjectServerBadArguments', 'TestGenerateObjectServerThatNeverFinishes'];

test('generate_object passes its scripted-server tests in Chromium', { timeout: 300_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'code-wasm-genobj-'));
  const profile = freshProfile();
  let ctx, srv, llm;
  try {
    execFileSync('go', ['test', '-c', '-o', join(dir, 'pkg.test.wasm'), './tools'], {
      cwd: repo, stdio: 'inherit', env: { ...process.env, GOOS: 'js', GOARCH: 'wasm' },
    });
    llm = await startLLMServer(dir);
    srv = await server([['/gotest/', dir]]);
    ctx = await launch(profile);
    const page = await ctx.newPage();
    await page.goto(`${srv.url}/test/gotest.html?bin=/gotest/pkg.test.wasm&arg=-test.v&arg=-test.run=GenerateObject&arg=-test.skip=^Fuzz&env=LLMTEST_URL=${encodeURIComponent(llm.url)}`);
    await page.waitForFunction(() => window.goTest.exit !== null, null, { timeout: 240_000 });
    const { out, exit } = await page.evaluate(() => window.goTest);
    const failed = out.split('\n').filter((l) => /--- FAIL/.test(l));
    assert.equal(exit, 0, `go test in Chromium exited ${exit}; failures:\n${failed.join('\n')}\n\n${out.slice(-4000)}`);
    for (const name of names) assert.match(out, new RegExp(`--- PASS: ${name} `), `${name} did not pass:\n${out.slice(-3000)}`);
  } finally {
    await ctx?.close();
    await srv?.close();
    llm?.stop();
    removeProfile(profile);
    rmSync(dir, { recursive: true, force: true });
  }
});
