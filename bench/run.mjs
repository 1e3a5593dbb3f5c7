// `make bench`: runs every bench/*.bench.mjs in name order (each prints its
// own table), or only those whose name contains an argument:
//   node bench/run.mjs            # all
//   node bench/run.mjs memfs grep # a subset
// Figures go in BENCHMARKS.md with the command that made them.
import { readdirSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const want = process.argv.slice(2);
const files = readdirSync(here).filter((f) => f.endsWith('.bench.mjs')).sort()
  .filter((f) => want.length === 0 || want.some((w) => f.includes(w)));
let failed = 0;
for (const f of files) {
  console.log(`\n=== ${f} ===`);
  const r = spawnSync(process.execPath, [join(here, f)], { stdio: 'inherit', cwd: join(here, '..') });
  if (r.status !== 0) { failed++; console.log(`(${f} failed with ${r.status})`); }
}
if (files.length === 0) console.log('no benchmarks matched');
process.exitCode = failed ? 1 : 0;
