import { readFile } from 'node:fs/promises';
import { loadApi } from './loader.mjs';
import { makeCreateSession } from './session.mjs';
import { nodePtcHostKinds } from './ptc-node.mjs';
import { openDirHost } from './dirhost.mjs';
import { execHost } from './exec-node.mjs';

async function getModule() {
  const bytes = await readFile(new URL('../dist/code.wasm', import.meta.url));
  return WebAssembly.compile(bytes);
}

export const createSession = makeCreateSession(() => loadApi(getModule), {
  hostKinds: { ...nodePtcHostKinds(), exec: execHost }, // exec: bash and git on a directory workspace
  services: { directory: openDirHost }, // { kind: 'directory', root }: real files
});
export { CodeWasmError } from './session.mjs';
