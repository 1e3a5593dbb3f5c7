// Runs a GOOS=js GOARCH=wasm Go test binary inside a dedicated Worker
// (where OPFS sync access handles exist) and posts its output and exit
// code to the page. Used by opfs.test.mjs.
importScripts('/npm/src/wasm_exec.js');

const decoder = new TextDecoder();
globalThis.fs.writeSync = (fd, buf) => {
  self.postMessage({ out: decoder.decode(buf) });
  return buf.length;
};

self.onmessage = async (ev) => {
  const { url, args, env } = ev.data;
  try {
    const go = new Go();
    go.argv = ['test.wasm', ...args];
    go.env = env ?? {};
    let code = 0;
    go.exit = (c) => { code = c; };
    const { instance } = await WebAssembly.instantiateStreaming(fetch(url), go.importObject);
    await go.run(instance);
    self.postMessage({ exit: code });
  } catch (e) {
    self.postMessage({ out: `runner error: ${e?.stack ?? e}\n`, exit: 99 });
  }
};
