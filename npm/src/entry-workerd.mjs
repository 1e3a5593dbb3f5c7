// Cloudflare Workers: the .wasm is imported as a module (no runtime
// compilation there), and the Go runtime is started lazily on first use,
// because it cannot start at global scope (FIELD-NOTES.md).
import wasmModule from '../dist/code.wasm';
import { loadApi } from './loader.mjs';
import { makeCreateSession } from './session.mjs';

export const createSession = makeCreateSession(() => loadApi(async () => wasmModule));
export { CodeWasmError } from './session.mjs';
