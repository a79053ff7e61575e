// Prepended to the threaded wasm loaders (bindings/CMakeLists.txt; docs/wasm-threads.md section 2). A page that
// is not cross-origin isolated has no global SharedArrayBuffer, but it can still make a shared
// WebAssembly.Memory (whose buffer is one); the glue names SharedArrayBuffer in `instanceof` checks, so it gets
// that buffer's constructor here and the module runs on one thread.
// eslint-disable-next-line no-var, no-redeclare
var SharedArrayBuffer =
  globalThis.SharedArrayBuffer ?? new WebAssembly.Memory({ initial: 0, maximum: 0, shared: true }).buffer.constructor;
