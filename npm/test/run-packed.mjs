// Runs the package tests as a user gets the package: `npm pack` the built
// package, install the tarball into a scratch project, copy the *.test.mjs
// files there, and run node's test runner. Tests import
// '@a3s-lab/code-wasm', never source paths.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, copyFileSync, writeFileSync, mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const pkgDir = join(here, '..');
const scratch = mkdtempSync(join(tmpdir(), 'code-wasm-packed-'));
const keep = process.env.KEEP_SCRATCH === '1';

try {
  const packOut = execFileSync('npm', ['pack', '--json', '--pack-destination', scratch], { cwd: pkgDir, encoding: 'utf8' });
  const tgz = join(scratch, JSON.parse(packOut)[0].filename);
  const project = join(scratch, 'project');
  mkdirSync(project);
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'scratch', private: true, type: 'module' }));
  execFileSync('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', tgz], { cwd: project, stdio: 'inherit' });
  const tests = readdirSync(here).filter((f) => f.endsWith('.test.mjs')).sort();
  for (const f of tests) copyFileSync(join(here, f), join(project, f));
  for (const f of readdirSync(here).filter((f) => f.endsWith('.fixture.mjs') || f.endsWith('.js'))) copyFileSync(join(here, f), join(project, f));
  const only = process.argv.slice(2);
  // The scripted provider server (llm/llmtest) for the agent tests: its
  // helper binary runs node with LLMTEST_URL set (a test cannot build it
  // from the scratch project). CODE_WASM_REPO: the repository, for tests
  // that open it as a directory workspace.
  const env = { ...process.env, CODE_WASM_REPO: join(pkgDir, '..') };
  // Each file is bounded (NODE_FILE_BOUND ms, the Makefile's; 15 minutes
  // by default) and watched by web/test/watchdog.mjs: a file that hangs or
  // leaves a process running fails, named, instead of hanging the tier.
  const watchdog = pathToFileURL(join(pkgDir, '..', 'web', 'test', 'watchdog.mjs')).href;
  const node = [process.execPath, '--test', '--import', watchdog, `--test-timeout=${process.env.NODE_FILE_BOUND ?? 900000}`, '--test-concurrency=1', ...(only.length ? only : tests)];
  const cmd = process.env.LLMTEST_URL ? node : ['go', 'run', './llm/llmtest/cmd/llmtestserver', '--', 'env', `--chdir=${project}`, ...node];
  const r = spawnSync(cmd[0], cmd.slice(1), { cwd: process.env.LLMTEST_URL ? project : join(pkgDir, '..'), stdio: 'inherit', env });
  process.exitCode = r.status ?? 1;
} finally {
  if (!keep) rmSync(scratch, { recursive: true, force: true });
  else console.log('scratch kept at', scratch);
}
