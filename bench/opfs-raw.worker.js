// The raw OPFS floor for bench/opfs.bench.mjs, in a dedicated worker:
// the same 2,000 small payloads written and read (a) through ONE sync access
// handle at offsets (the floor the driver's log builds on), (b) the same with
// a flush after every write (what a durable-per-call log pays), and (c) one
// OPFS file per payload with its own handle (the layout the driver avoids).
self.onmessage = async (ev) => {
  const { n, sizes } = ev.data;
  const enc = new TextEncoder();
  const payloads = sizes.map((s, i) => enc.encode(`file ${i} `.padEnd(s, 'x')));
  const root = await navigator.storage.getDirectory();
  const dir = await root.getDirectoryHandle(`raw-${Date.now()}`, { create: true });
  const out = {};
  const time = async (name, fn) => { const t0 = performance.now(); await fn(); out[name] = performance.now() - t0; };

  const one = await (await dir.getFileHandle('pack', { create: true })).createSyncAccessHandle();
  const offs = [];
  await time('oneHandleWrite', () => {
    let at = 0;
    for (const p of payloads) { offs.push(at); one.write(p, { at }); at += p.length; }
    one.flush();
  });
  await time('oneHandleRead', () => {
    payloads.forEach((p, i) => { const b = new Uint8Array(p.length); one.read(b, { at: offs[i] }); });
  });
  one.truncate(0);
  await time('oneHandleWriteFlushEach', () => {
    let at = 0;
    for (const p of payloads) { one.write(p, { at }); one.flush(); at += p.length; }
  });
  one.close();

  await time('filePerPayloadWrite', async () => {
    for (let i = 0; i < n; i++) {
      const h = await (await dir.getFileHandle(`f${i}`, { create: true })).createSyncAccessHandle();
      h.truncate(0); h.write(payloads[i], { at: 0 }); h.flush(); h.close();
    }
  });
  await time('filePerPayloadRead', async () => {
    for (let i = 0; i < n; i++) {
      const h = await (await dir.getFileHandle(`f${i}`)).createSyncAccessHandle();
      const b = new Uint8Array(h.getSize()); h.read(b, { at: 0 }); h.close();
    }
  });
  await root.removeEntry(dir.name, { recursive: true });
  self.postMessage(out);
};
