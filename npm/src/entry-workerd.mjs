// Cloudflare Workers: the .wasm files are imported as modules (no runtime
// compilation there), and the Go runtime is started lazily on first use,
// because it cannot start at global scope (FIELD-NOTES.md). `program`
// runs in QuickJS on the calling thread (ptc-workerd.mjs); quickjs.wasm
// is the QuickJS variant's wasm, copied beside code.wasm by make build.
import wasmModule from '../dist/code.wasm';
import quickjsModule from '../dist/quickjs.wasm';
import { loadApi } from './loader.mjs';
import { makeCreateSession } from './session.mjs';
import { workerdPtcHostKinds } from './ptc-workerd.mjs';

export const createSession = makeCreateSession(() => loadApi(async () => wasmModule), {
  hostKinds: workerdPtcHostKinds(quickjsModule),
});
export { CodeWasmError } from './session.mjs';
