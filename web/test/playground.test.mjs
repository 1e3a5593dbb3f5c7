// Drives the playground like a person: switch to OPFS, create a file, type
// into it, save, edit again, grep for the edit in the tool console, watch
// the events, reload and find the file again. Screenshots go to
// test-output/ (gitignored) so a person can look at each step.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { launch, server, freshProfile, removeProfile, watch, outDir } from './browser.mjs';

test('the playground: create, edit, grep, events, reload in OPFS mode', { timeout: 120_000 }, async () => {
  mkdirSync(outDir, { recursive: true });
  const shot = (page, name) => page.screenshot({ path: join(outDir, `playground-${name}.png`) });
  const profile = freshProfile();
  const srv = await server();
  const ctx = await launch(profile);
  try {
    const page = await ctx.newPage();
    const errors = watch(page);
    await page.goto(srv.url + '/');
    await page.waitForSelector('#status.ok');
    assert.match(await page.textContent('#status'), /memory/);
    await shot(page, '1-memory');

    // Switch to OPFS.
    await page.click('#mode-opfs');
    await page.waitForFunction(() => /OPFS/.test(document.querySelector('#status').textContent) && document.querySelector('#status').classList.contains('ok'));

    // Create a file.
    await page.click('#new-file');
    await page.fill('#new-file-path', 'notes/todo.md');
    await page.press('#new-file-path', 'Enter');
    await page.waitForSelector('.tree .file[data-path="notes/todo.md"].selected');
    assert.equal(await page.textContent('#editor-path'), 'notes/todo.md');

    // Type into it and save.
    await page.click('#editor');
    await page.keyboard.type('remember the milk\n');
    assert.equal(await page.textContent('#editor-state'), 'unsaved changes');
    await page.click('#save');
    await page.waitForFunction(() => document.querySelector('#editor-state').textContent.startsWith('saved'));

    // Edit it again (Ctrl+S saves).
    await page.fill('#editor', 'remember the oat milk\nand the bread\n');
    await page.keyboard.press('Control+s');
    await page.waitForFunction(() => document.querySelector('#editor-state').textContent.startsWith('saved'));
    await shot(page, '2-edited');

    // Grep from the tool console, with the schema shown.
    await page.selectOption('#tool', 'grep');
    assert.match(await page.textContent('#schema'), /"pattern"/);
    await page.fill('#args', JSON.stringify({ pattern: 'oat milk' }));
    await page.click('#run');
    await page.waitForFunction(() => /exit 0/.test(document.querySelector('#result-exit').textContent));
    const out = await page.textContent('#result');
    assert.match(out, /notes\/todo\.md:1:\s*remember the oat milk/);

    // The events show the writes and the grep.
    await page.waitForSelector('#event-list li[data-type="tool_end"]');
    const events = await page.$$eval('#event-list li[data-type]', (lis) => lis.map((li) => `${li.dataset.type} ${li.querySelector('.what').textContent}`));
    assert.ok(events.some((e) => /^tool_end grep · exit 0/.test(e)), `no grep tool_end in ${events.slice(0, 10)}`);
    assert.ok(events.some((e) => /^tool_end write · exit 0/.test(e)), `no write tool_end in ${events.slice(0, 10)}`);
    await shot(page, '3-grep-and-events');

    // The script runner, when the program tool is registered.
    if (await page.isVisible('#script-ui')) {
      await page.click('#run-script');
      await page.waitForFunction(() => /exit/.test(document.querySelector('#script-state').textContent));
      assert.equal(await page.textContent('#script-state'), 'exit 0');
      assert.match(await page.textContent('#script-result'), /"src\/greet\.js"/);
    }

    // A bad JSON argument is explained, not thrown.
    await page.fill('#args', '{pattern: oops');
    await page.click('#run');
    assert.match(await page.textContent('#result'), /not valid JSON/);

    // Reload: OPFS mode is remembered and the file is still there.
    await page.reload();
    await page.waitForFunction(() => /OPFS/.test(document.querySelector('#status').textContent) && document.querySelector('#status').classList.contains('ok'));
    await page.click('.tree .file[data-path="notes/todo.md"]');
    await page.waitForFunction(() => document.querySelector('#editor-path').textContent === 'notes/todo.md');
    assert.equal(await page.inputValue('#editor'), 'remember the oat milk\nand the bread\n');
    await shot(page, '4-after-reload');
    assert.deepEqual(errors, []);
  } finally {
    await ctx.close();
    await srv.close();
    removeProfile(profile);
  }
});
