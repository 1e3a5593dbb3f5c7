// The package as users get it in a browser app: `npm pack` npm/, install
// the tarball into a scratch project, build a page that imports
// '@a3s-lab/code-wasm' with Vite 7, serve the build and run it in Chromium
// (memory and OPFS workspaces, through the package's worker; a program,
// whose QuickJS worker and wasm the build must carry).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, writeFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { launch, server, freshProfile, removeProfile, watch, repo } from './browser.mjs';

const MAIN = `
import { createSession, CodeWasmError } from '@a3s-lab/code-wasm';

async function run() {
  const out = {};
  const mem = await createSession({ workspace: { kind: 'memory', files: { 'src/a.txt': 'hello vite\\n', 'b.txt': 'nothing\\n' } } });
  out.memoryNames = mem.toolNames();
  out.grep = await mem.grep('hello');
  // The program tool: QuickJS's JS and wasm, found in the build's worker.
  const prog = await mem.program({ source: 'async function run(ctx) { return (await ctx.readFile("b.txt")).trim() + " " + typeof fetch }' });
  out.program = [prog.exitCode, JSON.parse(prog.metadataJson).program.runtime, JSON.parse(prog.metadataJson).script_result, prog.output];
  const opfs = await createSession({ workspace: { kind: 'opfs', root: 'vite-app' } });
  out.opfsNames = opfs.toolNames();
  await opfs.writeFile('notes/x.md', '# from the vite page\\n');
  out.opfsRead = await opfs.readFile('notes/x.md');
  try {
    await createSession({ workspace: { kind: 'opfs', root: 'vite-app' } });
    out.second = 'opened';
  } catch (e) {
    out.second = (e instanceof CodeWasmError) + ' ' + e.code + ' ' + e.message;
  }
  await opfs.close();
  const again = await createSession({ workspace: { kind: 'opfs', root: 'vite-app' } });
  out.reopened = await again.readFile('notes/x.md');
  return out;
}
run().then((r) => { window.result = r; }, (e) => { window.result = { error: String(e && e.stack || e) }; });
`;

test('a Vite 7 build of a page importing @a3s-lab/code-wasm runs in Chromium', { timeout: 180_000 }, async () => {
  const scratch = mkdtempSync(join(tmpdir(), 'code-wasm-vite-'));
  const profile = freshProfile();
  let ctx, srv;
  try {
    const packed = JSON.parse(execFileSync('npm', ['pack', '--json', '--pack-destination', scratch], { cwd: join(repo, 'npm'), encoding: 'utf8' }));
    const app = join(scratch, 'app');
    mkdirSync(app);
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'vite-app', private: true, type: 'module' }));
    execFileSync('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', join(scratch, packed[0].filename)], { cwd: app, stdio: 'pipe' });
    writeFileSync(join(app, 'index.html'), '<!doctype html><meta charset="utf-8"><title>vite app</title><script type="module" src="./main.js"></script>\n');
    writeFileSync(join(app, 'main.js'), MAIN);
    execFileSync(join(repo, 'node_modules', '.bin', 'vite'), ['build', '--logLevel', 'warn', '--outDir', 'dist'], { cwd: app, stdio: 'pipe' });
    const assets = readdirSync(join(app, 'dist', 'assets'));
    assert.equal(assets.filter((f) => f.endsWith('.wasm')).length, 2, `the build lacks code.wasm or QuickJS's wasm: ${assets}`);

    srv = await server([['/', join(app, 'dist')]]);
    ctx = await launch(profile);
    const page = await ctx.newPage();
    const errors = watch(page);
    await page.goto(srv.url + '/');
    await page.waitForFunction(() => window.result, null, { timeout: 60_000 });
    const r = await page.evaluate(() => window.result);
    assert.equal(r.error, undefined, r.error);
    for (const names of [r.memoryNames, r.opfsNames]) {
      assert.ok(names.includes('read') && names.includes('write') && names.includes('grep'), `tools: ${names}`);
      assert.ok(!names.includes('bash') && !names.includes('git'), `a browser workspace must hide bash and git: ${names}`);
    }
    assert.match(r.grep, /src\/a\.txt/);
    assert.deepEqual(r.program.slice(0, 3), [0, 'quickjs-web-worker', 'nothing undefined'], r.program[3]);
    assert.match(r.opfsRead, /# from the vite page/);
    assert.match(r.second, /^true WORKSPACE_BUSY .*open in another tab or worker/);
    assert.match(r.reopened, /# from the vite page/);
    assert.deepEqual(errors, []);
  } finally {
    await ctx?.close();
    await srv?.close();
    removeProfile(profile);
    rmSync(scratch, { recursive: true, force: true });
  }
});
