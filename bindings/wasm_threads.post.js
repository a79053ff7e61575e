// Appended to the threaded wasm loaders (bindings/CMakeLists.txt; docs/wasm-threads.md section 2).
// Module.onemodelStartWorkers(count) starts `count` Workers and resolves when each has the module loaded, so
// that the engine's thread pool, made later, finds them ready: a pthread whose Worker is still loading starts
// only after the creating thread returns to its event loop. It rejects when a Worker fails to start (its
// script missing, a content security policy); the loader then runs the module on one thread. In Node the
// Workers are unref'd, so that idle threads never keep the process alive.
Module['onemodelStartWorkers'] = function (count) {
  var start = function (worker) {
    return new Promise(function (resolve, reject) {
      if (typeof worker.addEventListener === 'function') worker.addEventListener('error', reject);
      else if (typeof worker.once === 'function') worker.once('error', reject);
      PThread.loadWasmModuleToWorker(worker, function () {
        // Once loaded (while loading, the Worker must keep Node waiting for it).
        if (typeof worker.unref === 'function') worker.unref();
        resolve();
      });
    });
  };
  var loads = [];
  for (var i = 0; i < count; ++i) {
    PThread.allocateUnusedWorker();
    loads.push(start(PThread.unusedWorkers[PThread.unusedWorkers.length - 1]));
  }
  return Promise.all(loads);
};
