// Shared helpers of the browser tier: Debian's chromium through
// playwright-core (FIELD-NOTES.md Task 4: a persistent context on a fresh
// profile directory, never --user-data-dir in args) and web/serve.mjs on
// 127.0.0.1 with a random port.
import { chromium } from 'playwright-core';
import { mkdtempSync, rmSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { serve } from '../serve.mjs';
// The watchdog (also preloaded by the Makefile): a file that hangs or leaves
// a browser, server or child process behind fails, named, instead of
// hanging the tier.
import { descendants } from './watchdog.mjs';

export const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const outDir = join(repo, 'test-output');

const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync'];

export function freshProfile() {
  return mkdtempSync(join(tmpdir(), 'code-wasm-chromium-'));
}

export async function launch(profile) {
  const ctx = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    headless: true,
    args: ARGS,
    viewport: { width: 1360, height: 860 },
  });
  // Playwright's 30 s default for a click or a wait is short for a page
  // that starts the wasm on a machine at load 25; each test keeps its own
  // overall bound.
  ctx.setDefaultTimeout(60_000);
  return ctx;
}

export async function server(extra = []) {
  const s = await serve({ port: 0, extra });
  return { url: `http://127.0.0.1:${s.address().port}`, close: () => new Promise((r) => s.close(r)) };
}

// onBlankPage runs fn({page, errors, url, ctx}) on test/blank.html of a
// fresh server (extra: more routes) in a fresh Chromium profile, and closes
// the browser, the server and the profile whatever fn does.
export async function onBlankPage(fn, extra = []) {
  const profile = freshProfile();
  const srv = await server(extra);
  const ctx = await launch(profile);
  try {
    const page = await ctx.newPage();
    const errors = watch(page);
    await page.goto(`${srv.url}/test/blank.html`);
    return await fn({ page, errors, url: srv.url, ctx });
  } finally {
    await ctx.close();
    await srv.close();
    removeProfile(profile);
  }
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

export function removeProfile(profile) {
  rmSync(profile, { recursive: true, force: true });
}
