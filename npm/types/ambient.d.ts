// Module kinds the bundlers of the workerd entry resolve (wrangler imports a
// .wasm file as a compiled WebAssembly.Module). Not shipped.
declare module '*.wasm' {
  const mod: WebAssembly.Module;
  export default mod;
}
