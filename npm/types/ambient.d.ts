// Module kinds the bundlers of the workerd entry resolve (wrangler imports a
// .wasm file as a compiled WebAssembly.Module). Not shipped.
declare module '*.wasm' {
  const mod: WebAssembly.Module;
  export default mod;
}

// The Workers runtime module the Worker entry (src/workers/) imports: only
// what it uses (the app's bundler and workerd supply the real one).
declare module 'cloudflare:workers' {
  export class DurableObject {
    constructor(ctx: any, env: any);
    ctx: any;
    env: any;
  }
}
