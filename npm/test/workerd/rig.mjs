// The start-up code the workerd tier (run.mjs, entry.mjs) and the
// workerd benchmark (bench/workerd.bench.mjs) share: a free loopback port,
// the package packed and installed into a scratch app as a user would,
// and that app served either by `wrangler dev` (workerd, with local R2 and
// SQLite Durable Objects persisted to a directory) or by plain `workerd
// serve` (the bundle wrangler emits, Durable Objects on local disk, R2
// through r2gateway.mjs), started and stopped as one process group.
import { execFileSync, spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

export const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
export const bin = (name) => join(repo, 'node_modules', '.bin', name);

/** freePort answers a TCP port free on 127.0.0.1 now. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

/** wranglerEnv is the environment wrangler runs in here: no metrics, no prompts, logs under scratch. */
export const wranglerEnv = (scratch) => ({ ...process.env, WRANGLER_SEND_METRICS: 'false', CI: '1', WRANGLER_LOG_PATH: join(scratch, 'wrangler-logs') });

/**
 * installApp packs the package (npm/) into scratch and installs the
 * tarball into scratch/<name>, a Worker project whose own code is API.md's
 * one line re-exporting `@a3s-lab/code-wasm/worker`, with its wrangler.jsonc
 * (SESSIONS, WORKSPACE). Answers the project directory.
 */
export function installApp(scratch, name = 'app') {
  const packOut = execFileSync('npm', ['pack', '--json', '--pack-destination', scratch], { cwd: join(repo, 'npm'), encoding: 'utf8' });
  const project = join(scratch, name);
  mkdirSync(join(project, 'src'), { recursive: true });
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'code-wasm-app', private: true, type: 'module' }));
  execFileSync('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', join(scratch, JSON.parse(packOut)[0].filename)], { cwd: project, stdio: 'ignore' });
  writeFileSync(join(project, 'src', 'index.js'), "export { default, CodeSession } from '@a3s-lab/code-wasm/worker';\n");
  writeFileSync(join(project, 'wrangler.jsonc'), `{
  "name": "code-wasm",
  "main": "src/index.js",
  "compatibility_date": "2026-04-26",
  "durable_objects": { "bindings": [{ "name": "SESSIONS", "class_name": "CodeSession" }] },
  "migrations": [{ "tag": "v1", "new_sqlite_classes": ["CodeSession"] }],
  "r2_buckets": [{ "binding": "WORKSPACE", "bucket_name": "code-workspaces" }]
}
`);
  return project;
}

/**
 * startWranglerDev runs `wrangler dev` in project on a free port (and a
 * free inspector port) with its state persisted to state, and waits (up to
 * 90 s) until ready(base) answers true. A wrangler dev that exits before it
 * is ready is started again on new ports, up to three times: a port that
 * freePort found free can be taken before wrangler binds it when two test
 * runs share the machine ("The Workers runtime failed to start"). Answers
 * {base, stop}; stop ends the process group and waits for it.
 * @param {{project: string, state: string, env: NodeJS.ProcessEnv, ready: (base: string) => Promise<boolean>, out?: boolean}} o
 */
export async function startWranglerDev({ project, state, env, ready, out = false }) {
  for (let attempt = 1; ; attempt++) {
    const [port, inspector] = [await freePort(), await freePort()];
    const dev = spawn(bin('wrangler'), ['dev', '--ip', '127.0.0.1', '--port', String(port), '--inspector-port', String(inspector),
      '--persist-to', state, '--show-interactive-dev-session=false'],
    { cwd: project, env, stdio: ['ignore', out ? 'inherit' : 'ignore', 'inherit'], detached: true });
    const exited = new Promise((r) => dev.on('exit', r));
    const stop = async () => {
      if (dev.exitCode === null && dev.signalCode === null) process.kill(-dev.pid, 'SIGTERM');
      await exited;
    };
    const base = `http://127.0.0.1:${port}`;
    try {
      await waitReady(dev, base, ready, stop, 'wrangler dev');
      return { base, stop };
    } catch (e) {
      if (attempt >= 3 || dev.exitCode === null) throw e; // a deadline, or the last try
      console.log(`wrangler dev exited before it was ready (${e.message}); starting it again on new ports`);
    }
  }
}

// waitReady polls ready(base) every 250 ms until it answers true; it gives
// up after 90 s or when proc exits, stopping it.
async function waitReady(proc, base, ready, stop, what) {
  const deadline = Date.now() + 90000;
  for (;;) {
    let why = 'not ready';
    try {
      if (await ready(base)) return;
    } catch (e) {
      why = e.message;
    }
    if (Date.now() > deadline || proc.exitCode !== null) {
      await stop();
      throw new Error(`${what} did not answer at ${base}: ${why}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
}

/**
 * bundleApp runs `wrangler deploy --dry-run --outdir dist` in project
 * (installApp's) and writes config.capnp for plain `workerd serve`: the
 * bundle and its wasm modules, SESSIONS as SQLite Durable Objects on local
 * disk under state, WORKSPACE an r2Bucket answered by r2gateway.mjs (its
 * objects in a Durable Object there too), vars as text bindings. Answers
 * wrangler's output.
 * @param {{project: string, state: string, env: NodeJS.ProcessEnv, vars?: Record<string, string>}} o
 */
export function bundleApp({ project, state, env, vars = {} }) {
  const out = execFileSync(bin('wrangler'), ['deploy', '--dry-run', '--outdir', 'dist'], { cwd: project, env, encoding: 'utf8' });
  const files = readdirSync(join(project, 'dist'));
  const main = files.find((f) => f.endsWith('.js'));
  const modules = [`(name = "${main}", esModule = embed "dist/${main}")`, ...files.filter((f) => f.endsWith('.wasm')).map((f) => `(name = "${f}", wasm = embed "dist/${f}")`)];
  copyFileSync(join(dirname(fileURLToPath(import.meta.url)), 'r2gateway.mjs'), join(project, 'r2gateway.mjs'));
  mkdirSync(state, { recursive: true });
  const bindings = ['(name = "SESSIONS", durableObjectNamespace = "CodeSession")', '(name = "WORKSPACE", r2Bucket = "r2")',
    ...Object.entries(vars).map(([k, v]) => `(name = ${JSON.stringify(k)}, text = ${JSON.stringify(v)})`)];
  writeFileSync(join(project, 'config.capnp'), `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [
    (name = "main", worker = .app),
    (name = "r2", worker = .gateway),
    (name = "state", disk = (path = ${JSON.stringify(state)}, writable = true)),
  ],
  sockets = [ (name = "http", address = "*:0", http = (), service = "main") ],
);
const app :Workerd.Worker = (
  modules = [ ${modules.join(', ')} ],
  compatibilityDate = "2026-04-26",
  bindings = [ ${bindings.join(', ')} ],
  durableObjectNamespaces = [ (className = "CodeSession", uniqueKey = "code-wasm-CodeSession", enableSql = true) ],
  durableObjectStorage = (localDisk = "state"),
);
const gateway :Workerd.Worker = (
  modules = [ (name = "r2gateway.mjs", esModule = embed "r2gateway.mjs") ],
  compatibilityDate = "2026-04-26",
  bindings = [ (name = "BUCKET", durableObjectNamespace = "Bucket") ],
  durableObjectNamespaces = [ (className = "Bucket", uniqueKey = "code-wasm-r2-gateway", enableSql = true) ],
  durableObjectStorage = (localDisk = "state"),
);
`);
  return out;
}

/**
 * startWorkerd runs `workerd serve config.capnp` (bundleApp's) in project
 * on a free port of 127.0.0.1 and waits until ready(base) answers true.
 * Answers {base, stop}.
 * @param {{project: string, ready: (base: string) => Promise<boolean>}} o
 */
export async function startWorkerd({ project, ready }) {
  const port = await freePort();
  const proc = spawn(bin('workerd'), ['serve', 'config.capnp', `--socket-addr=http=127.0.0.1:${port}`], { cwd: project, stdio: ['ignore', 'ignore', 'inherit'], detached: true });
  const exited = new Promise((r) => proc.on('exit', r));
  const stop = async () => {
    if (proc.exitCode === null && proc.signalCode === null) process.kill(-proc.pid, 'SIGTERM');
    await exited;
  };
  const base = `http://127.0.0.1:${port}`;
  await waitReady(proc, base, ready, stop, 'workerd serve');
  return { base, stop };
}
