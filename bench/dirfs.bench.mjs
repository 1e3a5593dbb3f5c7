// grep over this repository as a directory workspace (workspace/dirfs),
// the same files loaded into a memory workspace, and ripgrep over the same
// tree, in one run: natively (os.Root) and as js/wasm in this Node (the
// npm package's host object, npm/src/dirhost.mjs), with the ratios.
//   node bench/dirfs.bench.mjs            (make bench runs it)
//   BENCHTIME=1s COUNT=5 node bench/dirfs.bench.mjs
// The tree is `git archive HEAD` (tracked files only), extracted to a
// temporary directory; ripgrep runs with --no-ignore --hidden so it reads
// every file the workspaces read.
import { execSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const benchtime = process.env.BENCHTIME || '400ms';
const count = process.env.COUNT || '3';
const goroot = spawnSync('go', ['env', 'GOROOT'], { encoding: 'utf8' }).stdout.trim();
const tree = mkdtempSync(join(tmpdir(), 'dirfs-bench-'));
try {
  execSync(`git archive HEAD | tar -x -C ${JSON.stringify(tree)}`);
  const files = Number(execSync(`find ${JSON.stringify(tree)} -type f | wc -l`, { encoding: 'utf8' }));
  const bytes = Number(execSync(`du -sb ${JSON.stringify(tree)}`, { encoding: 'utf8' }).split('\t')[0]);

  const runGo = (label, extra, env) => {
    const t0 = Date.now();
    const r = spawnSync('go', ['test', '-run', '^$', '-bench', '^BenchmarkGrepTree$', '-benchtime', benchtime, '-count', count, ...extra, './workspace/dirfs/'],
      { encoding: 'utf8', env: { ...process.env, DIRFS_BENCH_TREE: tree, ...env }, maxBuffer: 64 << 20 });
    if (r.status !== 0) {
      console.log(`${label} failed:\n${r.stdout}\n${r.stderr}`);
      process.exit(1);
    }
    const out = {};
    for (const line of r.stdout.split('\n')) {
      const m = /^BenchmarkGrepTree\/(\S+?)(?:-\d+)?\s+\d+\s+([\d.]+) ns\/op/.exec(line);
      if (m) out[m[1]] = Math.min(out[m[1]] ?? Infinity, Number(m[2]) / 1e6);
    }
    console.log(`${label}: ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    return out;
  };
  // ripgrep: the fastest of 10 runs of the same searches.
  const rg = (args) => {
    let best = Infinity;
    for (let i = 0; i < 10; i++) {
      const t0 = process.hrtime.bigint();
      const r = spawnSync('rg', ['--no-ignore', '--hidden', ...args, tree], { encoding: 'utf8', maxBuffer: 64 << 20 });
      if (r.status !== 0 && r.status !== 1) throw new Error(`rg failed: ${r.stderr}`);
      best = Math.min(best, Number(process.hrtime.bigint() - t0) / 1e6);
    }
    return best;
  };
  const native = runGo('native -cpu 1', ['-cpu', '1'], {});
  const wasm = runGo(`js/wasm (Node ${process.version})`, [], { GOOS: 'js', GOARCH: 'wasm', PATH: `${goroot}/lib/wasm:${process.env.PATH}` });
  const ripgrep = {
    'count/literal': rg(['-c', '-F', 'workspace.Entry']),
    'content/regex': rg(['-n', 'func \\(\\w+ \\*?\\w+\\) Close\\(']),
  };

  const ms = (v) => `${v.toFixed(v < 10 ? 2 : 1)} ms`.padStart(10);
  console.log(`\ntree: ${files} files, ${(bytes / 1048576).toFixed(1)} MiB (git archive HEAD); ${new Date().toISOString().slice(0, 16)}Z`);
  console.log(`${'search'.padEnd(15)} ${'host'.padEnd(7)} ${'directory'.padStart(10)} ${'memory'.padStart(10)} ${'ripgrep'.padStart(10)}  dir/memory  dir/ripgrep`);
  for (const c of Object.keys(ripgrep)) {
    for (const [host, r] of [['native', native], ['js/wasm', wasm]]) {
      const d = r[`directory/${c}`], m = r[`memory/${c}`];
      console.log(`${c.padEnd(15)} ${host.padEnd(7)} ${ms(d)} ${ms(m)} ${ms(ripgrep[c])}  ${(d / m).toFixed(1).padStart(9)}x  ${(d / ripgrep[c]).toFixed(1).padStart(10)}x`);
    }
  }
} finally {
  rmSync(tree, { recursive: true, force: true });
}
