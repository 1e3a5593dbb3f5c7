// `@a3s-lab/code-wasm/worker` (make test-types): the package's exports map
// gives the name worker.d.ts, the Worker's module exports what it
// declares, and API.md's one-line app type-checks against it.
import type * as Declared from '@a3s-lab/code-wasm/worker';
import worker, { CodeSession, type Env } from '@a3s-lab/code-wasm/worker';
import * as impl from '../src/workers/index.mjs';

export const exported: typeof Declared = impl;

export function serve(request: Request, env: Env): Promise<Response> {
  return worker.fetch(request, env);
}

export const sessionClass: new (ctx: any, env: Env) => { fetch(request: Request): Promise<Response> } = CodeSession;
