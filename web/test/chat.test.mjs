// Drives the playground's chat pane like a person, in headless Chromium,
// against the scripted provider server (llm/llmtest's helper binary on
// 127.0.0.1, another origin: CORS): connect an endpoint, ask, watch the
// model's tool calls (a write waits for the person's OK) and its answer.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { launch, server, freshProfile, removeProfile, watch, outDir } from './browser.mjs';
import { startLLMServer } from './llmserver.mjs';


test('the playground chat: connect, ask, confirm a write, read the answer', { timeout: 180_000 }, async () => {
  mkdirSync(outDir, { recursive: true });
  const llm = await startLLMServer();
  const profile = freshProfile();
  const srv = await server();
  const ctx = await launch(profile);
  try {
    const usage = { promptTokens: 10, completionTokens: 5, totalTokens: 15 };
    const base = llm.url;
    const script = await (await fetch(`${base}/scripts`, { method: 'POST', body: JSON.stringify({ provider: 'openai', replies: [
      { events: [
        { tool: { index: 0, id: 'call_1', name: 'ls' } }, { args: { index: 0, fragment: '{}' } },
        { tool: { index: 1, id: 'call_2', name: 'write' } }, { args: { index: 1, fragment: '{"file_path":"notes.md",' } }, { args: { index: 1, fragment: '"content":"from the model\\n"}' } },
        { finish: { stop: 'tool_use', usage } }] },
      { events: [{ text: 'I listed the files ' }, { text: 'and wrote notes.md.' }, { finish: { stop: 'stop', usage } }] },
    ] }) })).json();

    const page = await ctx.newPage();
    const errors = watch(page);
    const dialogs = [];
    page.on('dialog', (d) => { dialogs.push(d.message()); d.accept(); });
    await page.goto(srv.url + '/');
    await page.waitForSelector('#status.ok');
    assert.equal(await page.isDisabled('#chat-prompt'), true, 'no chat before an endpoint is connected');

    await page.fill('#chat-url', script.baseURL);
    await page.fill('#chat-key', 'sk-test-key');
    await page.fill('#chat-model', 'model-test');
    await page.click('#chat-connect-btn');
    await page.waitForSelector('#chat-state.ok');
    // The memory workspace kept its files across the reopened session.
    await page.waitForSelector('.tree .file[data-path="src/main.js"]');

    await page.fill('#chat-prompt', 'List the files and leave a note');
    await page.click('#chat-send');
    await page.waitForFunction(() => /wrote notes\.md/.test(document.querySelector('#chat-log').textContent));
    await page.screenshot({ path: join(outDir, 'chat-1-answer.png') });

    const lines = await page.$$eval('#chat-log .msg', (els) => els.map((e) => `${e.className}: ${e.textContent}`));
    assert.match(lines[0], /user: List the files/);
    assert.ok(lines.some((l) => /tool: ls .* exit 0/.test(l)), lines.join('\n'));
    assert.ok(lines.some((l) => /tool: write .* exit 0/.test(l)), lines.join('\n'));
    assert.match(lines.at(-1), /assistant: I listed the files and wrote notes\.md\./);
    assert.equal(dialogs.length, 1, 'the write asked for confirmation, ls did not');
    assert.match(dialogs[0], /wants to run write/);
    await page.waitForSelector('.tree .file[data-path="notes.md"]');

    const log = await (await fetch(`${base}/scripts/${script.id}/log`)).json();
    assert.equal(log.requests.length, 2);
    assert.equal(log.requests[0].header.authorization, 'Bearer sk-test-key');
    assert.deepEqual(log.requests[1].body.messages.filter((m) => m.role === 'tool').map((m) => m.tool_call_id), ['call_1', 'call_2']);
    assert.equal(await page.evaluate(() => JSON.stringify(localStorage).includes('sk-test-key')), false, 'the key is never stored');
    assert.deepEqual(errors, []);
  } finally {
    await ctx.close();
    await srv.close();
    removeProfile(profile);
    llm.stop();
  }
});
