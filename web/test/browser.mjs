// Shared helpers of the browser tier: Debian's chromium through
// playwright-core (FIELD-NOTES.md Task 4: a persistent context on a fresh
// profile directory, never --user-data-dir in args) and web/serve.mjs on
// 127.0.0.1 with a random port.
import { chromium } from 'playwright-core';
import { after } from 'node:test';
import { mkdtempSync, rmSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { serve } from '../serve.mjs';

// A test file whose tests are over but which something it started (a
// browser, a server, a child process) keeps alive would hang the whole tier:
// node --test waits for every file to exit and for every process holding
// its output pipes. Ten seconds after its last test such a file kills what
// it started and fails.
after(() => {
  setTimeout(() => {
    console.error('browser tier: this test file was still running 10 s after its tests ended (a leaked process or handle); killing its children and failing it');
    for (const p of descendants(process.pid)) { try { process.kill(p, 'SIGKILL'); } catch (_) { /* gone */ } }
    process.exit(1);
  }, 10_000).unref();
});

export const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const outDir = join(repo, 'test-output');

const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync'];

export function freshProfile() {
  return mkdtempSync(join(tmpdir(), 'code-wasm-chromium-'));
}

export async function launch(profile) {
  return chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    headless: true,
    args: ARGS,
    viewport: { width: 1360, height: 860 },
  });
}

export async function server(extra = []) {
  const s = await serve({ port: 0, extra });
  return { url: `http://127.0.0.1:${s.address().port}`, close: () => new Promise((r) => s.close(r)) };
}

// pageErrors collects uncaught page errors and console errors, so a test can
// fail on them with the message.
export function watch(page) {
  const errors = [];
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  page.on('console', (m) => {
    // Failed loads are reported below with their URL.
    if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) errors.push(`console: ${m.text()}`);
  });
  page.on('response', (r) => {
    if (r.status() >= 400 && !r.url().endsWith('/favicon.ico')) errors.push(`HTTP ${r.status()}: ${r.url()}`);
  });
  return errors;
}

// chromiumPids lists the processes whose command line names profile: the
// browser this test launched, so a test can kill exactly it (a crash).
export function chromiumPids(profile) {
  const pids = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const cmd = readFileSync(`/proc/${d}/cmdline`, 'utf8');
      if (cmd.includes(profile)) pids.push(Number(d));
    } catch (_) { /* gone */ }
  }
  return pids;
}

// killTree SIGKILLs pid and every descendant (found through /proc), as a
// power cut or an OS kill would end the browser, and waits until they are
// gone.
export async function killTree(pid) {
  const all = [pid, ...descendants(pid)];
  for (const p of all) { try { process.kill(p, 'SIGKILL'); } catch (_) { /* gone */ } }
  for (let i = 0; i < 100 && all.some((p) => { try { process.kill(p, 0); return true; } catch (_) { return false; } }); i++) {
    await new Promise((r) => setTimeout(r, 50));
  }
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

export function removeProfile(profile) {
  rmSync(profile, { recursive: true, force: true });
}
