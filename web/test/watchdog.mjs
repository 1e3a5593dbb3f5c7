// The test watchdog, preloaded into every file of the node test tiers
// (`node --test --import ./web/test/watchdog.mjs`: the Makefile, and
// npm/test/run-packed.mjs; web/test/browser.mjs imports it too). node --test
// waits for each file's process to exit and for every process holding its
// output pipes, so a file that leaves a server, a browser or a `go run`
// child behind hangs the whole tier (CI hung 90 minutes on one). Here:
//   - a file still running 5 minutes after its last test fails, naming
//     itself (a note at 30 s);
//   - when a file's process exits, or is stopped by SIGTERM (what
//     --test-timeout sends when a file runs over its bound), every process
//     it started that still runs is killed and the file fails, naming them.
// "Started by the file": its descendants, and any process carrying the
// file's tag in its environment (children inherit it, and keep it when a
// dead parent leaves them to init).
import { after } from 'node:test';
import { readdirSync, readFileSync } from 'node:fs';

const file = process.argv[1];
const TAG = 'CODE_WASM_TEST_FILE';
const tag = `${TAG}=${process.pid}:${file}`;
process.env[TAG] = tag.slice(TAG.length + 1);

// Some files take a while to exit (mcp/test/everything.test.mjs ~30 s,
// npm/test/agent-wire.test.mjs over 60 s: slow, not hung): a note at 30 s,
// a failure at 5 minutes (the file's --test-timeout bound is 15).
after(() => {
  setTimeout(() => {
    console.error(`test watchdog: ${file} is still running 30 s after its tests ended (an open handle or process delays its exit; active: ${process.getActiveResourcesInfo().join(", ")})`);
  }, 30_000).unref();
  setTimeout(() => {
    console.error(`test watchdog: ${file} was still running 5 minutes after its tests ended (a leaked process or handle); failing it`);
    process.exit(1);
  }, 300_000).unref();
});

process.on('SIGTERM', () => {
  console.error(`test watchdog: ${file} was stopped by SIGTERM (over its --test-timeout bound?)`);
  process.exit(1);
});

process.on('exit', () => {
  const left = leftovers();
  if (left.length === 0) return;
  for (const p of left) { try { process.kill(p.pid, 'SIGKILL'); } catch (_) { /* gone */ } }
  console.error(`test watchdog: ${file} left ${left.length} process(es) running; killed them and failed the file:\n` +
    left.map((p) => `  ${p.pid} ${p.cmd.slice(0, 200)}`).join('\n'));
  process.exitCode = 1;
});

// leftovers lists the live processes this file started.
function leftovers() {
  const mine = new Set(descendants(process.pid));
  const out = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d) || Number(d) === process.pid) continue;
    const pid = Number(d);
    let env = '';
    try { env = readFileSync(`/proc/${d}/environ`, 'latin1'); } catch (_) { /* another user's, or gone */ }
    if (!mine.has(pid) && !env.split('\0').includes(tag)) continue;
    let cmd = '';
    try { cmd = readFileSync(`/proc/${d}/cmdline`, 'latin1').replaceAll('\0', ' ').trim(); } catch (_) { continue; }
    if (cmd === '') continue; // a zombie: already dead, only not yet reaped
    out.push({ pid, cmd });
  }
  return out;
}

// descendants lists every process below pid (through /proc).
export function descendants(pid) {
  const children = new Map();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (!children.has(ppid)) children.set(ppid, []);
      children.get(ppid).push(Number(d));
    } catch (_) { /* gone */ }
  }
  const out = [];
  const walk = (p) => { for (const c of children.get(p) ?? []) { out.push(c); walk(c); } };
  walk(pid);
  return out;
}
