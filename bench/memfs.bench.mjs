// memfs write, read and walk over the Go source tree ($(go env GOROOT)/src,
// about 11k files) loaded into memory, natively and under GOOS=js
// GOARCH=wasm in Node, in one run, side by side (the ratio is what to
// compare: the machine is shared and noisy). Drives
// `go test -bench GoSrc/memfs ./workspace/memfs/` twice.
//   node bench/run.mjs memfs
//   BENCHTIME=5x CODE_WASM_BENCH_TREE=/some/tree node bench/memfs.bench.mjs
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

const sh = (cmd, args, opts = {}) => spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 64 << 20, ...opts });
const goroot = sh('go', ['env', 'GOROOT']).stdout.trim();
const tree = process.env.CODE_WASM_BENCH_TREE || join(goroot, 'src');
const benchtime = process.env.BENCHTIME || '3x';
const args = ['test', '-run', '^$', '-bench', '^Benchmark(GoSrc|Memory)$/^memfs(-shared)?$',
  '-benchtime', benchtime, '-count', '1', './workspace/memfs/'];

// "BenchmarkGoSrc/memfs/write-2  3  458401191 ns/op  278.28 MB/s ..." ->
// { 'GoSrc/memfs/write': { 'ns/op': 458401191, 'MB/s': 278.28, ... } }
function parse(out) {
  const res = {};
  for (const line of out.split('\n')) {
    const m = /^Benchmark(\S+?)(-\d+)?\s+\d+\s+(.*)$/.exec(line);
    if (!m) continue;
    const f = m[3].trim().split(/\s+/);
    const row = {};
    for (let i = 0; i + 1 < f.length; i += 2) row[f[i + 1]] = Number(f[i]);
    res[m[1]] = row;
  }
  return res;
}

function run(label, env) {
  const t0 = Date.now();
  const r = sh('go', args, { env: { ...process.env, CODE_WASM_BENCH_TREE: tree, ...env } });
  if (r.status !== 0 || /\bSKIP\b|--- FAIL/.test(r.stdout)) {
    console.error(`${label} run failed (exit ${r.status}):\n${r.stdout}\n${r.stderr}`);
    process.exit(1);
  }
  console.log(`${label}: ${((Date.now() - t0) / 1000).toFixed(1)} s including build and tree load`);
  const res = parse(r.stdout);
  const want = ['GoSrc/memfs/write', 'GoSrc/memfs/put', 'GoSrc/memfs/read', 'GoSrc/memfs/walk', 'Memory/memfs-shared'];
  const lost = want.filter((k) => !res[k]);
  if (lost.length) {
    console.error(`${label} run printed no figures for ${lost.join(', ')}:\n${r.stdout}`);
    process.exit(1);
  }
  return res;
}

const native = run('native', {});
const wasm = run('js/wasm (Node)', {
  GOOS: 'js', GOARCH: 'wasm', PATH: `${join(goroot, 'lib', 'wasm')}:${process.env.PATH}`,
});

const fmt = (n, d = 0) => (n === undefined || Number.isNaN(n) ? '-' : n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d }));
console.log(`\nmemfs through workspace.Workspace, tree ${tree}, benchtime ${benchtime}, ${sh('node', ['--version']).stdout.trim()}`);
const head = ['op', 'native ms/op', 'native MB/s', 'native ns/file', 'wasm ms/op', 'wasm MB/s', 'wasm ns/file', 'wasm/native'];
const rows = ['write', 'put', 'read', 'walk'].map((op) => {
  const n = native[`GoSrc/memfs/${op}`] || {}, w = wasm[`GoSrc/memfs/${op}`] || {};
  return [op, fmt(n['ns/op'] / 1e6, 1), fmt(n['MB/s']), fmt(n['ns/file']), fmt(w['ns/op'] / 1e6, 1), fmt(w['MB/s']), fmt(w['ns/file']),
    fmt(w['ns/op'] / n['ns/op'], 2) + 'x'];
});
const mn = native['Memory/memfs-shared'] || {}, mw = wasm['Memory/memfs-shared'] || {};
rows.push(['heap B/file', fmt(mn['overhead-B/file']), '', '', fmt(mw['overhead-B/file']), '', '', fmt(mw['overhead-B/file'] / mn['overhead-B/file'], 2) + 'x']);
const width = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
const line = (r) => '| ' + r.map((c, i) => (i === 0 ? c.padEnd(width[i]) : c.padStart(width[i]))).join(' | ') + ' |';
console.log(line(head));
console.log('|' + width.map((w, i) => (i === 0 ? '-'.repeat(w + 2) : '-'.repeat(w + 1) + ':')).join('|') + '|');
for (const r of rows) console.log(line(r));
console.log('write = WriteFile of every file (sha256 version computed), put = PutFile (version hashed on first use),');
console.log('read = ReadFile of every file, walk = Walk of every entry; MB/s is tree bytes per op;');
console.log('"heap B/file" is memfs metadata per stored file (payload shared with the caller).');
