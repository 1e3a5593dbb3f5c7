// The OPFS driver in Chromium: compiles workspace/opfs's tests for
// GOOS=js GOARCH=wasm and runs the binary in a dedicated Worker, where the
// shared conformance suite (workspacetest.Run) runs over real OPFS roots.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { launch, server, freshProfile, removeProfile, repo } from './browser.mjs';

test('workspace/opfs passes the conformance suite on real OPFS in Chromium', { timeout: 240_000 }, async () => {
  const bin = mkdtempSync(join(tmpdir(), 'code-wasm-gotest-'));
  const profile = freshProfile();
  let ctx, srv;
  try {
    execFileSync('go', ['test', '-c', '-o', join(bin, 'opfs.test.wasm'), './workspace/opfs'], {
      cwd: repo, stdio: 'inherit', env: { ...process.env, GOOS: 'js', GOARCH: 'wasm' },
    });
    srv = await server([['/gotest/', bin]]);
    ctx = await launch(profile);
    const page = await ctx.newPage();
    await page.goto(`${srv.url}/test/gotest.html?bin=/gotest/opfs.test.wasm&arg=-test.v&arg=-opfs.required`);
    await page.waitForFunction(() => window.goTest.exit !== null, null, { timeout: 200_000 });
    const { out, exit } = await page.evaluate(() => window.goTest);
    const failed = out.split('\n').filter((l) => /--- FAIL/.test(l));
    assert.equal(exit, 0, `go test in Chromium exited ${exit}; failures:\n${failed.join('\n')}\n\n${out.slice(-4000)}`);
    // The OPFS tests ran (not skipped) and the suite's subtests passed.
    for (const name of ['TestOPFSConformance', 'TestOPFSOneSessionPerRoot', 'TestConformance', 'TestCrashAtEveryByte']) {
      assert.match(out, new RegExp(`--- PASS: ${name} `), `${name} did not pass:\n${out.slice(-3000)}`);
    }
    assert.match(out, /--- PASS: TestOPFSConformance\/Concurrent\/WritersAndWalkers/);
    // Every extra the driver implements agreed with its fallback, and what
    // was written survived closing and reopening the root.
    for (const sub of ['Reopen', 'Extras/LineReader', 'Extras/Appender', 'Extras/Putter', 'Extras/Walker', 'Extras/RunWalker', 'Extras/FileLister', 'Extras/DataReader', 'Walk/AfterEveryChange', 'Concurrent/WalkWhileRenaming']) {
      assert.match(out, new RegExp(`--- PASS: TestOPFSConformance/${sub} `), `TestOPFSConformance/${sub} did not pass`);
    }
    assert.doesNotMatch(out, /--- SKIP: TestOPFS/);
  } finally {
    await ctx?.close();
    await srv?.close();
    removeProfile(profile);
    rmSync(bin, { recursive: true, force: true });
  }
});
