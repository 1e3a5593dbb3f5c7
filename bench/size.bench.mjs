// wasm size (issue 18's goal: <= 2.0 MiB gzip -9 "for what exists today",
// the file-tool half). Builds the wasm main twice the way BENCHMARKS.md
// measures it (GOOS=js GOARCH=wasm go build -trimpath -ldflags="-s -w"
// ./wasm, then gzip -9): the full build, as shipped, and the
// codewasm_core build, which leaves out the wiring of issues 13-17 (agent
// loop, LLM, MCP, host tools, delegation, skills, web_fetch, web_search,
// bash/git, the directory and R2 workspaces; core/later.go,
// internal/hostapi/later.go). Then the code bytes per Go package of the
// full build, from an unstripped build's name section (code only: data,
// pclntab and type metadata are not attributed).
//   node bench/size.bench.mjs          (make bench runs it)
//   TOP=60 node bench/size.bench.mjs   (more packages)
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..');
const tmp = mkdtempSync(join(tmpdir(), 'code-wasm-size-'));
const TOP = Number(process.env.TOP || 25);
const GOAL = 2 * 1024 * 1024;
const env = { ...process.env, GOOS: 'js', GOARCH: 'wasm' };

function build(name, flags) {
  const out = join(tmp, name + '.wasm');
  execFileSync('go', ['build', ...flags, '-o', out, './wasm'], { cwd: repo, env, stdio: 'inherit' });
  return out;
}
// From stdin: no file name in the header, so the count does not depend on it.
const gzip9 = (f) => execFileSync('gzip', ['-9'], { input: readFileSync(f), maxBuffer: 1 << 30 }).length;

try {
  const rows = [
    ['full (shipped)', build('full', ['-trimpath', '-ldflags=-s -w'])],
    ['core (-tags codewasm_core)', build('core', ['-tags', 'codewasm_core', '-trimpath', '-ldflags=-s -w'])],
  ];
  const go = execFileSync('go', ['env', 'GOVERSION'], { encoding: 'utf8' }).trim();
  console.log(`wasm size, ${go}, go build -trimpath -ldflags="-s -w" ./wasm, gzip -9; goal: core <= 2.0 MiB (${GOAL} B)\n`);
  console.log('| build | raw B | gzip -9 B | gzip MiB | goal |');
  console.log('|---|---:|---:|---:|---|');
  for (const [name, f] of rows) {
    const gz = gzip9(f);
    const goal = name.startsWith('core') ? (gz <= GOAL ? 'met' : `missed (+${gz - GOAL} B)`) : '';
    console.log(`| ${name} | ${statSync(f).size.toLocaleString('en')} | ${gz.toLocaleString('en')} | ${(gz / 2 ** 20).toFixed(3)} | ${goal} |`);
  }

  const code = packageCode(readFileSync(build('full-names', ['-trimpath'])));
  const total = [...code.values()].reduce((a, b) => a + b, 0);
  console.log(`\ncode bytes per package, full build (${total.toLocaleString('en')} B of function bodies; top ${TOP})\n`);
  console.log('| package | code B | % |');
  console.log('|---|---:|---:|');
  for (const [p, n] of [...code].sort((a, b) => b[1] - a[1]).slice(0, TOP)) {
    console.log(`| ${p} | ${n.toLocaleString('en')} | ${(100 * n / total).toFixed(1)} |`);
  }
} finally {
  rmSync(tmp, { recursive: true, force: true });
}

// packageCode sums the function bodies of a wasm's code section by the Go
// package of each function's name (the name section spells a/b.F as
// a_b.F, and keeps the dot of a domain).
function packageCode(b) {
  let p = 8;
  const u = () => { let r = 0, s = 0, x; do { x = b[p++]; r += (x & 0x7f) * 2 ** s; s += 7; } while (x & 0x80); return r; };
  let imports = 0;
  const bodies = [], names = new Map();
  while (p < b.length) {
    const id = b[p++], len = u(), end = p + len;
    if (id === 2) { // imports: functions only take an index
      for (let i = 0, n = u(); i < n; i++) {
        p += u(); p += u();
        const k = b[p++];
        if (k === 0) { u(); imports++; } else if (k === 1) { p++; if (b[p++] & 1) { u(); } u(); } else if (k === 2) { if (b[p++] & 1) { u(); } u(); } else { p += 2; }
      }
    } else if (id === 10) {
      for (let i = 0, n = u(); i < n; i++) { const l = u(); bodies.push([imports + i, l]); p += l; }
    } else if (id === 0) {
      const nl = u(), nm = b.subarray(p, p + nl).toString(); p += nl;
      while (nm === 'name' && p < end) {
        const sub = b[p++], sl = u(), se = p + sl;
        if (sub === 1) for (let i = 0, n = u(); i < n; i++) { const idx = u(), l = u(); names.set(idx, b.subarray(p, p + l).toString()); p += l; }
        p = se;
      }
    }
    p = end;
  }
  const out = new Map();
  for (const [idx, l] of bodies) {
    const name = names.get(idx) ?? '?';
    const pkg = /^((?:github\.com|golang\.org)_)?[^.]*/.exec(name)[0]
      .replace(/^github\.com_a3s_lab_code_wasm_/, '').replace(/^github\.com_santhosh_tekuri_jsonschema_v6/, 'jsonschema')
      .replaceAll('_', '/').replace(/^type\/$/, '(type equality and hash)');
    out.set(pkg, (out.get(pkg) ?? 0) + l);
  }
  return out;
}
