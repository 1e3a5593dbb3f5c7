// The scripted provider server (llm/llmtest) for browser, workerd and bench
// runs: the helper binary, built with `go build` and started directly on
// 127.0.0.1. Never through `go run`: a signal to `go run` leaves its child
// running, holding the test's stdout pipe, and the test file never exits
// (that hung CI for 90 minutes).
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { once } from 'node:events';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

// startLLMServer builds and starts the helper binary and resolves to its URL
// and a stop function (which also removes the binary when startLLMServer
// made the directory).
export async function startLLMServer(dir) {
  const own = dir === undefined;
  if (own) dir = mkdtempSync(join(tmpdir(), 'code-wasm-llmtest-'));
  const bin = join(dir, 'llmtestserver');
  execFileSync('go', ['build', '-o', bin, './llm/llmtest/cmd/llmtestserver'], { cwd: repo, stdio: 'inherit' });
  const proc = spawn(bin, [], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  proc.stdout.setEncoding('utf8');
  const exited = once(proc, 'exit').then(([code]) => { throw new Error(`llmtestserver exited with ${code}`); });
  while (!out.includes('\n')) {
    const [chunk] = await Promise.race([once(proc.stdout, 'data'), exited]);
    out += chunk;
  }
  exited.catch(() => {});
  const stop = () => {
    proc.stdout.destroy();
    if (proc.exitCode === null) proc.kill('SIGKILL');
    if (own) rmSync(dir, { recursive: true, force: true });
  };
  return { url: out.trim(), stop };
}
