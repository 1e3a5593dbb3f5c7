// The scripted provider server (llm/llmtest) for browser and Node tests:
// the helper binary, built and started on 127.0.0.1.
import { execFileSync, spawn } from 'node:child_process';
import { join } from 'node:path';
import { once } from 'node:events';
import { repo } from './browser.mjs';

// startLLMServer builds and starts the helper binary and resolves to its URL
// and a stop function.
export async function startLLMServer(dir) {
  const bin = join(dir, 'llmtestserver');
  execFileSync('go', ['build', '-o', bin, './llm/llmtest/cmd/llmtestserver'], { cwd: repo, stdio: 'inherit' });
  const proc = spawn(bin, [], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  proc.stdout.setEncoding('utf8');
  while (!out.includes('\n')) {
    const [chunk] = await once(proc.stdout, 'data');
    out += chunk;
  }
  return { url: out.trim(), stop: () => proc.kill() };
}
