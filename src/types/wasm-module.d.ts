// A `.wasm` the worker entry imports is a compiled module (wrangler's default rules; scripts/build-worker.mjs
// for the tests' bundle): the item scanner's WebAssembly lane (src/merge/jsonsplit/wasm/lane.ts).
declare module '*.wasm' {
  const module: WebAssembly.Module;
  export default module;
}
