// The program tool in Chromium (npm/src/ptc-browser.mjs: QuickJS in a
// dedicated Web Worker per script), through the package as a page imports
// it (the session's Go runs in the package's own worker): the conformance
// cases, the spec's search-auth example (inline and from a workspace
// path), the red-team pack (npm/test/ptc-redteam.fixture.mjs), a 1 GiB
// allocation in every form, 1,000 concurrent ctx calls, a flood of refused
// calls and a 20 MB result, each leaving the page and the session healthy,
// and the engine-level bounds on the page's own PTC kinds; run by
// ptc-runner.mjs in the page.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { launch, server, freshProfile, removeProfile, watch } from './browser.mjs';

test('PTC in Chromium: conformance, search-auth, red-team pack, bounds', { timeout: 900_000 }, async () => {
  const profile = freshProfile();
  let ctx, srv;
  try {
    srv = await server();
    ctx = await launch(profile);
    const page = await ctx.newPage();
    const errors = watch(page);
    await page.goto(`${srv.url}/test/blank.html`);
    const results = await page.evaluate(async () => {
      const { createSession } = await import('/npm/src/entry-browser.mjs');
      const { browserPtcHostKinds } = await import('/npm/src/ptc-browser.mjs');
      const { runPtcSuite } = await import('/test/ptc-runner.mjs');
      const pack = (await import('/npm/test/ptc-redteam.fixture.mjs')).default;
      return runPtcSuite(createSession, pack, 'browser', { runtime: 'quickjs-web-worker', kinds: browserPtcHostKinds() });
    });
    const failed = results.filter((r) => !r.ok);
    assert.deepEqual(failed, [], failed.map((f) => `${f.name}: ${f.detail}`).join('\n'));
    assert.ok(results.filter((r) => r.name.startsWith('redteam/')).length >= 30, `${results.length} cases`);
    for (const n of ['search_auth_path', 'search_auth_inline', 'promise_all_fanout_16', 'timeout_stops_for_loop', 'alloc_1gib_pushBuffers_fails_only_the_program',
      'concurrent_1000_results_or_clear_errors', 'flood_and_20mb_result_do_not_stall_the_page', 'engine_in_flight_bounded_1000_complete']) {
      assert.ok(results.some((r) => r.name === n && r.ok), n);
    }
    // The page itself is healthy afterwards.
    assert.equal(await page.evaluate(() => typeof fetch), 'function');
    assert.deepEqual(errors, []);
  } finally {
    await ctx?.close();
    await srv?.close();
    removeProfile(profile);
  }
});
