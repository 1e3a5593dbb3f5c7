// The playground when its OPFS root is open in another tab: a clear
// "open in another tab" banner (WORKSPACE_BUSY), a header whose title stays
// on one line with nothing running off-screen, no talk of a missing program
// tool, and "Try again" opening the root once the other tab lets go. Also:
// the tool description box shows whole lines, never a squeezed sliver.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { launch, server, freshProfile, removeProfile, watch, outDir } from './browser.mjs';

const opfsOk = () => /OPFS/.test(document.querySelector('#status').textContent) && document.querySelector('#status').classList.contains('ok');

// layout measures what a person sees in the header and the banner.
const layout = () => {
  const r = (sel) => document.querySelector(sel).getBoundingClientRect();
  const h1 = document.querySelector('h1');
  const lh = parseFloat(getComputedStyle(h1).lineHeight) || parseFloat(getComputedStyle(h1).fontSize) * 1.45;
  const banner = document.querySelector('#banner');
  const vw = document.documentElement.clientWidth;
  const brand = r('.brand');
  const sw = r('.workspace-switch');
  return {
    h1Lines: Math.round(h1.getBoundingClientRect().height / lh),
    bannerVisible: !banner.hidden,
    bannerFits: banner.scrollWidth <= vw && r('#banner').right <= vw + 1,
    headerFits: document.querySelector('header').scrollWidth <= vw,
    overlap: !(brand.right <= sw.left + 1 || sw.top >= brand.bottom - 1),
    pageScrollsSideways: document.documentElement.scrollWidth > vw,
  };
};

for (const width of [1280, 820]) {
  test(`playground, OPFS root busy in another tab (${width}px wide)`, { timeout: 120_000 }, async () => {
    mkdirSync(outDir, { recursive: true });
    const profile = freshProfile();
    const srv = await server();
    const ctx = await launch(profile);
    try {
      const a = await ctx.newPage();
      const b = await ctx.newPage();
      await b.setViewportSize({ width, height: 720 });
      const errors = [...watch(a), ...watch(b)];
      await a.goto(srv.url + '/');
      await a.waitForSelector('#status.ok');
      await a.click('#mode-opfs');
      await a.waitForFunction(opfsOk);

      // The second tab remembers OPFS mode (localStorage) and finds the root held.
      await b.goto(srv.url + '/');
      await b.waitForSelector('#banner:not([hidden])');
      await b.screenshot({ path: join(outDir, `playground-busy-${width}.png`) });
      assert.equal(await b.textContent('#status'), 'OPFS root busy');
      assert.match(await b.textContent('#banner-text'), /The OPFS root “playground” is open in another tab/);
      assert.ok(await b.isVisible('#banner-retry'));
      const scriptText = await b.textContent('#script-missing');
      assert.doesNotMatch(scriptText, /not registered/);
      assert.match(scriptText, /No workspace is open/);
      const l = await b.evaluate(layout);
      assert.deepEqual(l, { h1Lines: 1, bannerVisible: true, bannerFits: true, headerFits: true, overlap: false, pageScrollsSideways: false });

      // The first tab lets go (switches to memory); "Try again" opens the root.
      await a.click('#mode-memory');
      await a.waitForFunction(() => /memory/.test(document.querySelector('#status').textContent));
      await b.click('#banner-retry');
      await b.waitForFunction(opfsOk);
      assert.ok(await b.isHidden('#banner'));
      assert.ok(await b.isVisible('.tree .file[data-path="README.md"]'));
      assert.deepEqual(errors, []);
    } finally {
      await ctx.close();
      await srv.close();
      removeProfile(profile);
    }
  });
}

test('playground: the tool description shows whole lines', { timeout: 60_000 }, async () => {
  const profile = freshProfile();
  const srv = await server();
  const ctx = await launch(profile);
  try {
    const page = await ctx.newPage();
    await page.setViewportSize({ width: 1280, height: 720 });
    await page.goto(srv.url + '/');
    await page.waitForSelector('#status.ok');
    for (const tool of ['grep', 'read', 'edit']) {
      await page.selectOption('#tool', tool);
      const m = await page.$eval('#tool-desc', (el) => {
        const cs = getComputedStyle(el);
        const lh = parseFloat(cs.lineHeight);
        const pad = parseFloat(cs.paddingTop) + parseFloat(cs.paddingBottom);
        return { lines: (el.clientHeight - pad) / lh, full: (el.scrollHeight - pad) / lh };
      });
      // At least the four lines the box allows (or all of a shorter text).
      assert.ok(m.lines >= Math.min(4, m.full) - 0.05, `${tool}: ${JSON.stringify(m)}`);
    }
  } finally {
    await ctx.close();
    await srv.close();
    removeProfile(profile);
  }
});
