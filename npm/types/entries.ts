// Each entry point exports what index.d.ts declares (make test-types).
import type * as Declared from '../index.d.ts';
import * as node from '../src/entry-node.mjs';
import * as browser from '../src/entry-browser.mjs';
import * as workerd from '../src/entry-workerd.mjs';

export const entries: (typeof Declared)[] = [node, browser, workerd];
