// The spec's "Direct Tool Calls" example (tools.en.md), run as an .mjs
// against a memory workspace. The example's lines are copied unchanged;
// the lines that call or print bash and git (hidden on a memory
// workspace) are left out, commented, as the issue asks.
import { createSession } from '@a3s-lab/code-wasm';

const session = await createSession({
  workspace: {
    kind: 'memory',
    files: {
      'README.md': '# auth service\n\nSee src/policy.rs for PermissionPolicy.\n',
      'src/main.rs': 'mod policy;\nfn main() {\n    let p = policy::PermissionPolicy::default();\n}\n',
      'src/policy.rs': '#[derive(Default)]\npub struct PermissionPolicy {\n    pub deny: Vec<String>,\n}\n',
      'src/auth/token.rs': 'pub fn check() -> bool { true }\n',
      'docs/notes.md': 'PermissionPolicy is documented here.\n',
    },
  },
});

// ---- begin: tools.en.md "Direct Tool Calls" ----
const files = await session.glob('src/**/*.rs');
const hits = await session.grep('PermissionPolicy');
// const status = await session.git('status');                       (git: hidden on memory)
// const output = await session.bash('cargo test -p a3s-code-core'); (bash: hidden on memory)
const raw = await session.tool('read', { file_path: 'README.md' });
const schemas = session.toolDefinitions();
const hitLines = hits.split('\n').filter(Boolean).length;

// console.log(files.length, hitLines, output.length, schemas.length); (prints bash output)
// console.log(status.output);                                         (prints git output)
console.log(raw.output);
// ---- end ----

// What the test checks, beyond the example's own output.
console.log(JSON.stringify({ files, hits, hitLines, schemas: schemas.map((s) => s.name) }));
await session.close();
