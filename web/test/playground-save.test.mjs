// The playground's editor never loses a byte (issue 18): a 2,500-line file
// with 3,000-character lines is opened, edited by typing, saved with
// Ctrl+S, opened again, and its bytes are exactly the original with the
// edit, in a memory workspace and in OPFS across a page reload. A CRLF
// file keeps its CRLF line endings. Every tool's pre-filled arguments run.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { launch, server, freshProfile, removeProfile, watch } from './browser.mjs';

// In the page: the big file's text (non-ASCII and tabs included), and the
// SHA-256 of what the workspace holds.
const helpers = () => {
  window.bigText = (eol, n = 2500) => {
    const lines = [];
    for (let i = 0; i < n; i++) lines.push(`${i}\tαβγ — `.padEnd(3000, `lorem ${i} ipsum `));
    return lines.join(eol) + eol;
  };
  window.sha = async (bytes) => Array.from(new Uint8Array(await crypto.subtle.digest('SHA-256', bytes)), (b) => b.toString(16).padStart(2, '0')).join('');
};

const t0 = Date.now();
const step = (what) => { if (process.env.DEBUG_SAVE) console.log(`${((Date.now() - t0) / 1000).toFixed(1)} s: ${what}`); };

async function editAndCheck(page, path, eol, n = 2500) {
  step(`${path}: write`);
  // The file arrives from elsewhere (the session, as an app would load it);
  // creating another file refreshes the tree.
  await page.evaluate(async ({ path, eol, n }) => {
    await window.playground.session.writeBytes(path, new TextEncoder().encode(window.bigText(eol, n)));
  }, { path, eol, n });
  await page.click('#new-file');
  await page.fill('#new-file-path', `${path}.other`);
  await page.press('#new-file-path', 'Enter');
  await page.waitForSelector(`.tree .file[data-path="${path}.other"].selected`);
  await page.click(`.tree .file[data-path="${path}"]`);
  await page.waitForFunction((p) => document.querySelector('#editor-path').textContent === p, path);
  assert.equal(await page.evaluate(() => document.querySelector('#editor').value.split('\n').length), n + 1);

  step(`${path}: opened`);
  // Insert a word at the start (one input event, as typing or pasting
  // gives: each keystroke in a 7.5 MB textarea costs Chromium seconds
  // under load), then save with Ctrl+S.
  await page.focus('#editor');
  await page.keyboard.press('Control+Home');
  await page.keyboard.insertText('EDIT ');
  assert.equal(await page.textContent('#editor-state'), 'unsaved changes');
  await page.keyboard.press('Control+s');
  await page.waitForFunction(() => document.querySelector('#editor-state').textContent.startsWith('saved'), null, { timeout: 180_000 });

  step(`${path}: saved`);
  const want = await page.evaluate(({ eol, n }) => window.sha(new TextEncoder().encode('EDIT ' + window.bigText(eol, n))), { eol, n });
  const got = await page.evaluate((p) => window.playground.session.readBytes(p).then(window.sha), path);
  assert.equal(got, want, `${path}: the saved bytes are the original with the edit`);

  step(`${path}: checked`);
  // Open another file and this one again: the editor shows the saved text.
  await page.click(`.tree .file[data-path="${path}.other"]`);
  await page.waitForFunction((p) => document.querySelector('#editor-path').textContent === `${p}.other`, path);
  await page.click(`.tree .file[data-path="${path}"]`);
  await page.waitForFunction((p) => document.querySelector('#editor-path').textContent === p, path);
  assert.equal(await page.textContent('#editor-state'), 'saved');
  const shown = await page.evaluate(({ eol, n }) => document.querySelector('#editor').value === ('EDIT ' + window.bigText(eol, n)).replaceAll('\r\n', '\n'), { eol, n });
  assert.ok(shown, `${path}: the editor shows the saved text`);
  return want;
}

test('the playground saves a 2,500 × 3,000-character file exactly (memory and OPFS, LF and CRLF)', { timeout: 1_500_000 }, async () => {
  const profile = freshProfile();
  const srv = await server();
  const ctx = await launch(profile);
  try {
    const page = await ctx.newPage();
    // Laying out a 7.5 MB textarea takes Chromium seconds on a loaded
    // machine: room for it, the outcome is what is asserted.
    page.setDefaultTimeout(180_000);
    const errors = watch(page);
    await page.goto(srv.url + '/');
    await page.waitForSelector('#status.ok');
    await page.evaluate(helpers);

    // Every tool's pre-filled arguments pass its schema (and run).
    const tools = await page.$$eval('#tool option', (os) => os.map((o) => o.value));
    assert.ok(tools.includes('edit') && tools.includes('patch') && tools.includes('batch') && tools.includes('web_fetch'));
    for (const name of tools) {
      await page.selectOption('#tool', name);
      await page.waitForFunction(() => document.querySelector('#args').value !== '');
      await page.evaluate(() => { document.querySelector('#result-exit').textContent = ''; });
      await page.click('#run');
      await page.waitForFunction(() => !document.querySelector('#run').disabled && /exit/.test(document.querySelector('#result-exit').textContent), null, { timeout: 120_000 });
      const out = await page.textContent('#result');
      assert.match(await page.textContent('#result-exit'), /exit 0/, `${name} with its pre-filled arguments: ${out.slice(0, 300)}`);
      await page.fill('#args', '');
    }
    step('pre-filled arguments');
    await editAndCheck(page, 'big-lf.txt', '\n');
    await editAndCheck(page, 'crlf.txt', '\r\n', 200);

    await page.click('#mode-opfs');
    await page.waitForFunction(() => /OPFS/.test(document.querySelector('#status').textContent) && document.querySelector('#status').classList.contains('ok'));
    await page.evaluate(helpers);
    const want = await editAndCheck(page, 'big.txt', '\n');

    // Reload: the OPFS file is still exact, in the workspace and the editor.
    await page.reload();
    await page.waitForFunction(() => /OPFS/.test(document.querySelector('#status').textContent) && document.querySelector('#status').classList.contains('ok'));
    await page.evaluate(helpers);
    assert.equal(await page.evaluate(() => window.playground.session.readBytes('big.txt').then(window.sha)), want);
    await page.click('.tree .file[data-path="big.txt"]');
    await page.waitForFunction(() => document.querySelector('#editor-path').textContent === 'big.txt');
    assert.ok(await page.evaluate(() => document.querySelector('#editor').value === 'EDIT ' + window.bigText('\n')));
    assert.deepEqual(errors, []);
  } finally {
    await ctx.close();
    await srv.close();
    removeProfile(profile);
  }
});
