// bash and git on a directory workspace through the package in Node (the
// exec host kind, npm/src/exec-node.mjs), median of RUNS timed loops:
//   bash true, unconfined and inside bubblewrap (its added cost);
//   a 10 MiB capture (5 MiB on each stream);
//   a git log page at offset 1,990 (cursor pinned to HEAD);
//   git status over 200 changed files.
// Goals (issue 16): bash true <= 8 ms through the Node host; 10 MiB
// <= 150 ms; log page <= 40 ms; status <= 30 ms. Native figures:
//   go test -run '^$' -bench 'Bash|Git' ./core/
//   node bench/exec.bench.mjs      (make bench runs it; needs make build)
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..');
const { createSession } = await import(pathToFileURL(join(repo, 'npm/src/entry-node.mjs')).href);
const RUNS = Number(process.env.RUNS || 5);
const hasBwrap = spawnSync('sh', ['-c', 'command -v bwrap']).status === 0;

async function median(n, fn) {
  const per = [];
  for (let r = 0; r < RUNS; r++) {
    const t0 = performance.now();
    for (let i = 0; i < n; i++) await fn();
    per.push((performance.now() - t0) / n);
  }
  per.sort((a, b) => a - b);
  return per[Math.floor(per.length / 2)];
}

const rows = [];
const dir = realpathSync(mkdtempSync(join(tmpdir(), 'exec-bench-')));
try {
  for (const sandbox of hasBwrap ? ['none', 'auto'] : ['none']) {
    const s = await createSession({ workspace: { kind: 'directory', root: dir, sandbox } });
    await s.bash('true');
    rows.push([`bash true (sandbox ${sandbox})`, await median(10, () => s.bash('true'))]);
    if (sandbox === 'none') {
      rows.push(['bash 10 MiB capture', await median(3, () => s.bash('head -c 5242880 /dev/zero; head -c 5242880 /dev/zero >&2'))]);
    }
    await s.close();
  }

  // A repository of 2,000 commits over 200 files, then all 200 changed.
  const env = { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' };
  const g = join(dir, 'repo');
  execFileSync('git', ['init', '-q', '-b', 'main', g], { env });
  let fi = '';
  for (let i = 1; i <= 2000; i++) {
    const body = `commit ${i}\n`.repeat(50);
    fi += `commit refs/heads/main\nmark :${i}\ncommitter T <t@e> ${1700000000 + i} +0000\ndata 2\nc\n${i > 1 ? `from :${i - 1}\n` : ''}`;
    fi += `M 100644 inline src/f${String(i % 200).padStart(3, '0')}.txt\ndata ${body.length}\n${body}\n`;
  }
  execFileSync('git', ['fast-import', '--quiet'], { cwd: g, env, input: fi });
  execFileSync('git', ['checkout', '-q', 'main'], { cwd: g, env });
  for (let i = 0; i < 200; i++) writeFileSync(join(g, 'src', `f${String(i).padStart(3, '0')}.txt`), 'changed\n');
  const s = await createSession({ workspace: { kind: 'directory', root: g, sandbox: 'none' } });
  const head = JSON.parse((await s.git({ command: 'log', limit: 10 })).metadataJson).page.next_cursor.split(':')[0];
  rows.push(['git log page at offset 1,990', await median(5, () => s.git({ command: 'log', limit: 10, cursor: `${head}:1990` }))]);
  rows.push(['git status, 200 changed files', await median(5, () => s.git('status'))]);
  await s.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
console.log('| what (Node host) | ms per call, median of ' + RUNS + ' |');
console.log('|---|---:|');
for (const [w, ms] of rows) console.log(`| ${w} | ${ms.toFixed(2)} |`);
