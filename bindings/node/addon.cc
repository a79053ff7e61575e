// The Node-API addon of the npm package (bindings/README.md): the native engine, with its AVX-512/AVX2/SSE4
// kernels and thread pool, behind the same NativeSession interface as the wasm binding (web/src/native.ts).
//
// The thin-binding rule holds here as in embind.cc: values are converted, nothing is defaulted, only the
// checks that keep memory safe are made (bindings/core.h holds them, shared with the wasm binding), and every
// C++ exception becomes the plain JS error object {kind, message, operators, node, source, offset, fieldPath}.
//
// Loading and running happen off the JS thread: create() and run() copy their arguments out of JS values on
// the JS thread, do the engine work on a libuv worker (napi_async_work; a session's runs on the session's own
// thread, bindings/run_thread.h), and settle a promise back on the JS thread, where the results become typed
// arrays. Each job holds its own Session handle, so a session released or garbage-collected while a run is
// pending stays alive until that run ends (the engine frees the model once no run uses it: Session::release).
#define NAPI_VERSION 8
#include <node_api.h>

#include <malloc.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstring>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "../core.h"
#include "../ctc.h"
#include "../run_thread.h"
#include "onemodel/onemodel.h"

namespace {

namespace binding = onemodel::binding;
using onemodel::DType;
using onemodel::Error;
using onemodel::ErrorKind;
using onemodel::Session;
using onemodel::Tensor;

// A Node-API call that did not return napi_ok. When it left a JS exception pending, that exception is what
// JS sees; otherwise the failure becomes an Internal error.
struct NapiFailure {
  std::string message;
};

void check(napi_env env, napi_status status) {
  if (status == napi_ok) return;
  const napi_extended_error_info* info = nullptr;
  napi_get_last_error_info(env, &info);
  throw NapiFailure{info != nullptr && info->error_message != nullptr ? info->error_message : "unknown failure"};
}

// Small typed wrappers over the Node-API calls this file uses; every one throws NapiFailure on failure.
struct Js {
  napi_env env;

  napi_value str(const std::string& s) const {
    napi_value v;
    check(env, napi_create_string_utf8(env, s.data(), s.size(), &v));
    return v;
  }
  napi_value num(double d) const {
    napi_value v;
    check(env, napi_create_double(env, d, &v));
    return v;
  }
  napi_value boolean(bool b) const {
    napi_value v;
    check(env, napi_get_boolean(env, b, &v));
    return v;
  }
  napi_value null() const {
    napi_value v;
    check(env, napi_get_null(env, &v));
    return v;
  }
  napi_value undefined() const {
    napi_value v;
    check(env, napi_get_undefined(env, &v));
    return v;
  }
  napi_value object() const {
    napi_value v;
    check(env, napi_create_object(env, &v));
    return v;
  }
  napi_value array(size_t n) const {
    napi_value v;
    check(env, napi_create_array_with_length(env, n, &v));
    return v;
  }
  void set(napi_value obj, const char* key, napi_value value) const {
    check(env, napi_set_named_property(env, obj, key, value));
  }
  void set_at(napi_value arr, uint32_t i, napi_value value) const { check(env, napi_set_element(env, arr, i, value)); }
  napi_value get(napi_value obj, const char* key) const {
    napi_value v;
    check(env, napi_get_named_property(env, obj, key, &v));
    return v;
  }
  napi_value at(napi_value arr, uint32_t i) const {
    napi_value v;
    check(env, napi_get_element(env, arr, i, &v));
    return v;
  }
  uint32_t length(napi_value arr, const char* what) const {
    bool is_array = false;
    check(env, napi_is_array(env, arr, &is_array));
    if (!is_array) throw Error(ErrorKind::InvalidArgument, std::string(what) + " must be an array");
    uint32_t n = 0;
    check(env, napi_get_array_length(env, arr, &n));
    return n;
  }
  std::string string_of(napi_value v, const char* what) const {
    napi_valuetype type;
    check(env, napi_typeof(env, v, &type));
    if (type != napi_string) throw Error(ErrorKind::InvalidArgument, std::string(what) + " must be a string");
    size_t n = 0;
    check(env, napi_get_value_string_utf8(env, v, nullptr, 0, &n));
    std::string s(n, '\0');
    check(env, napi_get_value_string_utf8(env, v, s.data(), n + 1, &n));
    return s;
  }
  double number_of(napi_value v, const char* what) const {
    napi_valuetype type;
    check(env, napi_typeof(env, v, &type));
    if (type != napi_number) throw Error(ErrorKind::InvalidArgument, std::string(what) + " must be a number");
    double d = 0;
    check(env, napi_get_value_double(env, v, &d));
    return d;
  }
  int int_of(napi_value v, const char* what) const {
    const double d = number_of(v, what);
    if (!(d >= -2147483648.0 && d <= 2147483647.0) || d != static_cast<double>(static_cast<int>(d))) {
      throw Error(ErrorKind::InvalidArgument, std::string(what) + " must be a 32-bit integer");
    }
    return static_cast<int>(d);
  }
  std::vector<std::string> strings_of(napi_value arr, const char* what) const {
    const uint32_t n = length(arr, what);
    std::vector<std::string> out;
    out.reserve(n);
    for (uint32_t i = 0; i < n; ++i) out.push_back(string_of(at(arr, i), what));
    return out;
  }
  // The bytes a typed array views (any element type, ArrayBuffer or SharedArrayBuffer behind it).
  std::pair<const void*, size_t> bytes_of(napi_value v, const std::string& what) const {
    bool is_typed = false;
    check(env, napi_is_typedarray(env, v, &is_typed));
    if (!is_typed) throw Error(ErrorKind::InvalidInput, what + " is not a typed array");
    napi_typedarray_type type;
    size_t length = 0;
    void* data = nullptr;
    check(env, napi_get_typedarray_info(env, v, &type, &length, &data, nullptr, nullptr));
    return {data, length * element_size(type)};
  }
  static size_t element_size(napi_typedarray_type t) {
    switch (t) {
      case napi_int8_array:
      case napi_uint8_array:
      case napi_uint8_clamped_array: return 1;
      case napi_int16_array:
      case napi_uint16_array: return 2;
      case napi_int32_array:
      case napi_uint32_array:
      case napi_float32_array: return 4;
      default: return 8;  // float64, bigint64, biguint64
    }
  }

  // A typed array over a contiguous engine tensor's bytes. From kExternalOutputBytes up, the tensor's buffer
  // itself becomes the ArrayBuffer (an external one, which keeps a reference to the buffer until V8 collects it):
  // copying a 3 MiB output into a fresh ArrayBuffer cost more than the convolution that made it (ResNet-50's 1x1
  // 64->256 at 56x56: 1.26 ms in the engine, 2.7 ms per call with the copy). Smaller outputs are copied into an
  // ArrayBuffer of V8's own and the engine's buffer goes back at once: external buffers wait for a collection and
  // then for their finalizers, so the process heap grew with every call (Silero VAD: 14 MB over 5000 calls, 0.79
  // fresh-page faults per call, each tens of microseconds on the virtual machines we measure on), and the run
  // took 0.13 ms in the engine against 0.09 in the CLI; copied, 0.29 faults and 0.10 ms per call, 0.106 ms
  // wall against onnxruntime-node's 0.124 (session 43, 5 x 1000 calls). Not higher: copied, MiniLM b1's 196 KB
  // output took 49 faults per call instead of 31 (an ArrayBuffer that size is a fresh mapping of V8's allocator
  // every time). Where the runtime refuses external buffers (a V8 sandbox), the bytes are copied whatever their
  // size.
  // The bytes are reported to V8 (napi_adjust_external_memory), as Node's own Buffers are, so that the outputs
  // of finished runs count towards its next collection (measured alone, det's peak RSS moved 404 -> 394 MB:
  // what had grown with the calls was per-thread scratch, bindings/run_thread.h). The whole buffer is
  // reported, not the tensor's bytes: an output of 1 MiB or more fills whole 2 MiB huge pages (Session::run),
  // and reporting PP-OCRv4 rec's 1.06 MB let V8 keep twice the memory it was told of (peak RSS: session 34).
  static constexpr size_t kExternalOutputBytes = size_t{64} * 1024;
  napi_value typed_array(const Tensor& t) const {
    const binding::JsArray kind = binding::js_array_of(t.dtype());
    const size_t nbytes = t.nbytes();
    napi_value buffer = nullptr;
    if (nbytes >= kExternalOutputBytes) {
      auto* owner = new Tensor(t);
      const napi_status status = napi_create_external_arraybuffer(
          env, const_cast<void*>(owner->raw()), nbytes,
          [](napi_env e, void*, void* hint) {
            auto* held = static_cast<Tensor*>(hint);
            int64_t ignored = 0;
            napi_adjust_external_memory(e, -static_cast<int64_t>(held->storage().bytes), &ignored);
            delete held;
          },
          owner, &buffer);
      if (status != napi_ok) {
        delete owner;
        buffer = nullptr;
      } else {
        int64_t ignored = 0;
        napi_adjust_external_memory(env, static_cast<int64_t>(owner->storage().bytes), &ignored);
      }
    }
    if (buffer == nullptr) {
      void* data = nullptr;
      check(env, napi_create_arraybuffer(env, nbytes, &data, &buffer));
      if (nbytes > 0) std::memcpy(data, t.raw(), nbytes);
    }
    napi_value array;
    check(env, napi_create_typedarray(env, napi_type(kind), static_cast<size_t>(t.numel()), buffer, 0, &array));
    return array;
  }
  static napi_typedarray_type napi_type(binding::JsArray a) {
    switch (a) {
      case binding::JsArray::Float32: return napi_float32_array;
      case binding::JsArray::Float64: return napi_float64_array;
      case binding::JsArray::Int8: return napi_int8_array;
      case binding::JsArray::Uint8: return napi_uint8_array;
      case binding::JsArray::Int16: return napi_int16_array;
      case binding::JsArray::Uint16: return napi_uint16_array;
      case binding::JsArray::Int32: return napi_int32_array;
      case binding::JsArray::Uint32: return napi_uint32_array;
      case binding::JsArray::BigInt64: return napi_bigint64_array;
      case binding::JsArray::BigUint64: return napi_biguint64_array;
    }
    return napi_uint8_array;
  }

  // A new typed array of `type` holding a copy of `v` (small results: no external buffer).
  template <class T>
  napi_value typed_copy(napi_typedarray_type type, const std::vector<T>& v) const {
    void* data = nullptr;
    napi_value buffer, array;
    check(env, napi_create_arraybuffer(env, v.size() * sizeof(T), &data, &buffer));
    if (!v.empty()) std::memcpy(data, v.data(), v.size() * sizeof(T));
    check(env, napi_create_typedarray(env, type, v.size(), buffer, 0, &array));
    return array;
  }

  // {dtype, dims, data} of an engine tensor.
  napi_value tensor(const Tensor& t) const {
    const Tensor c = t.contiguous();
    napi_value obj = object();
    set(obj, "dtype", num(static_cast<double>(static_cast<int>(c.dtype()))));
    const auto& dims = c.shape().dims();
    napi_value shape = array(dims.size());
    for (size_t d = 0; d < dims.size(); ++d) set_at(shape, static_cast<uint32_t>(d), num(static_cast<double>(dims[d])));
    set(obj, "dims", shape);
    set(obj, "data", typed_array(c));
    return obj;
  }

  // An engine tensor from a {dtype code, dims, typed array} triple: checked and copied on the JS thread.
  Tensor tensor_from(const std::string& name, napi_value code, napi_value dims_js, napi_value data) const {
    const uint32_t rank = length(dims_js, "dims");
    std::vector<double> dims(rank);
    for (uint32_t d = 0; d < rank; ++d) dims[d] = number_of(at(dims_js, d), "a dimension");
    const binding::InputSpec spec = binding::input_spec(name, int_of(code, "an element type code"), dims);
    const auto [bytes, nbytes] = bytes_of(data, "input '" + name + "' data");
    binding::check_byte_length(name, static_cast<double>(nbytes), spec.nbytes);
    return Tensor::copy_of(spec.dtype, spec.shape, bytes, nbytes);
  }
};

// The JS error object of an exception (never throws: a failure while building it gives a plain Error).
napi_value error_value(napi_env env, std::exception_ptr e) {
  const binding::ErrorInfo info = binding::error_info(std::move(e), "out of memory");
  try {
    const Js js{env};
    napi_value obj = js.object();
    js.set(obj, "kind", js.str(info.kind));
    js.set(obj, "message", js.str(info.message));
    napi_value ops = js.array(info.operators.size());
    for (size_t i = 0; i < info.operators.size(); ++i)
      js.set_at(ops, static_cast<uint32_t>(i), js.str(info.operators[i]));
    js.set(obj, "operators", ops);
    js.set(obj, "node", js.str(info.node));
    js.set(obj, "source", js.str(info.source));
    js.set(obj, "fieldPath", js.str(info.field_path));
    js.set(obj, "offset", info.offset >= 0 ? js.num(static_cast<double>(info.offset)) : js.null());
    return obj;
  } catch (...) {
    napi_value message, err;
    napi_create_string_utf8(env, info.message.data(), info.message.size(), &message);
    napi_create_error(env, nullptr, message, &err);
    return err;
  }
}

// The exception a failed callback leaves for JS: a pending JS exception as it is, else the error object.
napi_value pending_or(napi_env env, std::exception_ptr e) {
  bool pending = false;
  napi_is_exception_pending(env, &pending);
  if (pending) {
    napi_value exc;
    napi_get_and_clear_last_exception(env, &exc);
    return exc;
  }
  return error_value(env, std::move(e));
}

// Runs a callback body; any exception is thrown into JS once the C++ handler has ended.
template <class F>
napi_value guarded(napi_env env, F&& f) {
  std::exception_ptr failure;
  try {
    return f();
  } catch (const NapiFailure& n) {
    failure = std::make_exception_ptr(Error(ErrorKind::Internal, "Node-API call failed: " + n.message));
  } catch (...) {
    failure = std::current_exception();
  }
  napi_throw(env, pending_or(env, std::move(failure)));
  return nullptr;
}

struct Args {
  napi_value self = nullptr;
  std::vector<napi_value> argv;
  void* data = nullptr;
};

Args args_of(napi_env env, napi_callback_info info, size_t expected) {
  Args a;
  size_t argc = expected;
  a.argv.resize(expected);
  check(env, napi_get_cb_info(env, info, &argc, a.argv.data(), &a.self, &a.data));
  if (argc < expected) {
    throw Error(ErrorKind::InvalidArgument,
                "expected " + std::to_string(expected) + " arguments, got " + std::to_string(argc));
  }
  return a;
}

// How a run posted to its session's RunThread comes back to the JS thread: a thread-safe function whose
// callback settles the run's promise. It does not keep Node's event loop alive while no posted run is pending
// (an idle session must not keep a script from ending) and does while one is.
//
// Node deletes a thread-safe function when its environment is torn down (a worker thread ending, the process
// exiting), whoever still holds it: calling or releasing it after that touches freed memory (a worker ending
// with a posted run pending crashed). Its finalizer clears `live` under the gate's mutex, and both are done
// only while `live`, under that mutex; a run finishing after the teardown is dropped with its environment.
struct CompletionGate {
  std::mutex mutex;
  bool live = true;
};

struct Completion {
  napi_threadsafe_function tsfn = nullptr;
  int pending = 0;  // posted runs whose promise is not settled yet (read and written on the JS thread only)
  std::shared_ptr<CompletionGate> gate = std::make_shared<CompletionGate>();
  Completion() = default;
  Completion(const Completion&) = delete;
  Completion& operator=(const Completion&) = delete;
  ~Completion() {
    std::lock_guard<std::mutex> lock(gate->mutex);
    if (tsfn != nullptr && gate->live) napi_release_threadsafe_function(tsfn, napi_tsfn_release);
  }
};

// The thread-safe function's finalizer: `data` is a heap copy of its Completion's gate.
void completion_finalized(napi_env, void* data, void*) {
  auto* gate = static_cast<std::shared_ptr<CompletionGate>*>(data);
  {
    std::lock_guard<std::mutex> lock((*gate)->mutex);
    (*gate)->live = false;
  }
  delete gate;
}

// One promise settled by work done off the JS thread (a libuv worker, or a session's RunThread for a posted
// run). `execute` runs there and must not touch JS; `finish` runs on the JS thread afterwards and builds the
// value the promise resolves to.
struct Job {
  napi_async_work work = nullptr;
  napi_deferred deferred = nullptr;
  std::function<void()> execute;
  std::function<napi_value(napi_env)> finish;
  std::exception_ptr error;
  // JS values `execute` reads in place (a model's bytes), kept alive until the job completes.
  std::vector<napi_ref> keep;
  std::shared_ptr<Completion> posted;  // set for a run posted to a RunThread
};

void job_execute(napi_env, void* data) {
  Job* job = static_cast<Job*>(data);
  try {
    job->execute();
  } catch (...) {
    job->error = std::current_exception();
  }
}

void job_complete(napi_env env, napi_status status, void* data) {
  std::unique_ptr<Job> job(static_cast<Job*>(data));
  if (job->work != nullptr) napi_delete_async_work(env, job->work);
  for (napi_ref r : job->keep) napi_delete_reference(env, r);
  if (status != napi_ok && job->error == nullptr) {
    job->error = std::make_exception_ptr(Error(ErrorKind::Internal, "the run was cancelled"));
  }
  if (job->error == nullptr) {
    try {
      napi_value result = job->finish(env);
      job->finish = nullptr;  // drops the job's session handle before the promise settles
      napi_resolve_deferred(env, job->deferred, result);
      return;
    } catch (const NapiFailure& n) {
      job->error = std::make_exception_ptr(Error(ErrorKind::Internal, "Node-API call failed: " + n.message));
    } catch (...) {
      job->error = std::current_exception();
    }
  }
  napi_reject_deferred(env, job->deferred, pending_or(env, job->error));
}

// The JS-thread callback of a Completion: settles a posted run's promise.
void settle_posted(napi_env env, napi_value, void*, void* data) {
  if (env == nullptr) return;  // Node is tearing the environment down: the job goes with it
  Job* job = static_cast<Job*>(data);
  Completion& c = *job->posted;
  if (--c.pending == 0) napi_unref_threadsafe_function(env, c.tsfn);
  job_complete(env, napi_ok, job);
}

// Queues `job` (its promise made) on a libuv worker.
void queue_job(napi_env env, std::unique_ptr<Job> job, const char* name) {
  const Js js{env};
  check(env, napi_create_async_work(env, nullptr, js.str(name), job_execute, job_complete, job.get(), &job->work));
  check(env, napi_queue_async_work(env, job->work));
  job.release();  // owned by job_complete from here
}

// Starts `job` and returns its promise. With `on_js_thread` the work runs right here and the promise is
// settled before this returns (its callbacks still run later, as for any promise).
napi_value start_job(napi_env env, std::unique_ptr<Job> job, const char* name, bool on_js_thread = false) {
  napi_value promise;
  check(env, napi_create_promise(env, &job->deferred, &promise));
  if (on_js_thread) {
    Job* j = job.release();
    job_execute(env, j);
    job_complete(env, napi_ok, j);
    return promise;
  }
  queue_job(env, std::move(job), name);
  return promise;
}

// Per-addon-instance data: the NativeSession constructor (instances are made only by create()).
struct AddonData {
  napi_ref session_class = nullptr;
};

// What a NativeSession JS object wraps. release() frees the model for every holder; delete() drops this
// handle (the garbage collector would do the same later).
//
// `last_run_us` is the engine time of the session's latest run. A run expected to be shorter than
// kInlineRunUs runs on the JS thread: handing it off costs thread wakes, which cost more than the run (Silero
// VAD, 0.13 ms in the engine, took 0.26 ms per call through a libuv worker and 0.18 ms inline) or a large share
// of it; blocking the event loop for a few milliseconds at most is what onnxruntime-node does for every run
// (and for as long as the run takes). 1 ms, then 2 ms (session 34), then 5 ms: openWakeWord's embedding (1.4-1.8
// ms in the engine) crossed 2 ms and switched between the paths, wall minus engine time per call 0.04-0.23 ms
// posted (below) against 0.04-0.07 inline (400 back-to-back calls, 3 sets, each path 3 times). Longer runs, and
// the first run of a session (its plan may be built then), are posted to the session's RunThread (start_run).
constexpr double kInlineRunUs = 5000.0;

struct Handle {
  std::optional<Session> session;
  // Made at the first run that leaves the JS thread; a pending job holds it too, and the last holder (a job
  // ending, or the handle's deletion: on the JS thread, with the thread idle) stops and joins it.
  std::shared_ptr<binding::RunThread> runner;
  const std::shared_ptr<binding::RunThread>& run_thread() {
    if (!runner) runner = std::make_shared<binding::RunThread>();
    return runner;
  }
  // Made with the runner; a posted job holds it too.
  std::shared_ptr<Completion> completion;
  const std::shared_ptr<Completion>& completion_of(napi_env env) {
    if (completion) return completion;
    auto c = std::make_shared<Completion>();
    auto gate = std::make_unique<std::shared_ptr<CompletionGate>>(c->gate);
    check(env, napi_create_threadsafe_function(env, nullptr, nullptr, Js{env}.str("onemodel.run"), 0, 1, gate.get(),
                                               completion_finalized, nullptr, settle_posted, &c->tsfn));
    gate.release();  // the finalizer's now
    check(env, napi_unref_threadsafe_function(env, c->tsfn));
    completion = std::move(c);
    return completion;
  }
  std::shared_ptr<std::atomic<double>> last_run_us = std::make_shared<std::atomic<double>>(1e30);
  bool run_inline() const { return last_run_us->load() < kInlineRunUs; }
  const Session& get() const {
    if (!session) throw Error(ErrorKind::Disposed, "the session was released");
    return *session;
  }
};

// Starts a run's job: on the JS thread (`inline_run`), else posted to the session's RunThread, which settles it
// through the session's Completion: one thread wake there and one back, where a libuv worker handing the run to
// the RunThread and waiting for it took four (MobileNetV3, about 10 ms in the engine: wall time per call minus
// engine time 0.52-0.63 -> 0.45-0.57 ms, bindings/README.md). A run posted while another holds the RunThread goes to
// a libuv worker.
napi_value start_run(napi_env env, Handle& handle, std::unique_ptr<Job> job, const char* name, bool inline_run) {
  if (inline_run) return start_job(env, std::move(job), name, true);
  const std::shared_ptr<binding::RunThread>& runner = handle.run_thread();
  const std::shared_ptr<Completion>& completion = handle.completion_of(env);
  napi_value promise;
  check(env, napi_create_promise(env, &job->deferred, &promise));
  job->posted = completion;
  Job* j = job.get();
  const napi_threadsafe_function tsfn = completion->tsfn;
  // The job is settled (and deleted) on the JS thread, after `then` queued it; neither closure uses it after
  // that. Once the environment is torn down (the gate closed) the job is dropped with it.
  if (runner->post([j] { job_execute(nullptr, j); },
                   [j, tsfn, gate = completion->gate] {
                     std::lock_guard<std::mutex> lock(gate->mutex);
                     if (gate->live) napi_call_threadsafe_function(tsfn, j, napi_tsfn_nonblocking);
                   })) {
    job.release();
    if (completion->pending++ == 0) check(env, napi_ref_threadsafe_function(env, tsfn));
    return promise;
  }
  job->posted = nullptr;
  queue_job(env, std::move(job), name);
  return promise;
}

// Gives the freed pages of a released model back to the system. glibc raises its mmap threshold after the
// first large free, so later weights come from the heap, where freed blocks stay resident: without this, 100
// garbage-collected sessions of a 4 MiB model left RSS 170 MiB higher; with it, RSS returns to where it was
// (tests/js/engines.test.mjs). A model is freed rarely, so the trim's cost (a walk of the free lists) is small.
void return_freed_memory() {
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

Handle& handle_of(napi_env env, napi_value self) {
  void* p = nullptr;
  check(env, napi_unwrap(env, self, &p));
  return *static_cast<Handle*>(p);
}

// Calls f() and records its wall time in `last` (Handle::last_run_us).
template <class F>
auto timed_run(std::atomic<double>& last, F&& f) {
  const auto t0 = std::chrono::steady_clock::now();
  auto result = f();
  last.store(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
  return result;
}

napi_value value_infos(const Js& js, const std::vector<onemodel::ValueInfo>& infos) {
  napi_value out = js.array(infos.size());
  for (size_t i = 0; i < infos.size(); ++i) {
    const auto& info = infos[i];
    napi_value obj = js.object();
    js.set(obj, "name", js.str(info.name));
    js.set(obj, "dtype", js.num(static_cast<int>(info.dtype)));
    js.set(obj, "hasShape", js.boolean(info.has_shape));
    js.set(obj, "kind", js.str(binding::kind_name(info.kind)));
    js.set(obj, "elementKind", js.str(binding::kind_name(info.element_kind)));
    napi_value dims = js.array(info.dims.size());
    for (size_t d = 0; d < info.dims.size(); ++d) {
      const auto& dim = info.dims[d];
      js.set_at(dims, static_cast<uint32_t>(d),
                dim.is_fixed()       ? js.num(static_cast<double>(dim.value))
                : !dim.param.empty() ? js.str(dim.param)
                                     : js.null());
    }
    js.set(obj, "dims", dims);
    js.set_at(out, static_cast<uint32_t>(i), obj);
  }
  return out;
}

// new NativeSession(external Session*): only create() calls it.
napi_value session_construct(napi_env env, napi_callback_info info) {
  return guarded(env, [&]() {
    Args a = args_of(env, info, 1);
    napi_valuetype type;
    check(env, napi_typeof(env, a.argv[0], &type));
    if (type != napi_external) throw Error(ErrorKind::InvalidArgument, "NativeSession is made by create(), not new");
    void* p = nullptr;
    check(env, napi_get_value_external(env, a.argv[0], &p));
    auto handle = std::make_unique<Handle>();
    handle->session = std::move(*static_cast<Session*>(p));
    check(env, napi_wrap(
                   env, a.self, handle.get(),
                   [](napi_env, void* data, void*) {
                     delete static_cast<Handle*>(data);
                     return_freed_memory();
                   },
                   nullptr, nullptr));
    handle.release();
    return a.self;
  });
}

napi_value session_inputs(napi_env env, napi_callback_info info) {
  return guarded(env, [&]() {
    Args a = args_of(env, info, 0);
    return value_infos(Js{env}, handle_of(env, a.self).get().inputs());
  });
}

napi_value session_outputs(napi_env env, napi_callback_info info) {
  return guarded(env, [&]() {
    Args a = args_of(env, info, 0);
    return value_infos(Js{env}, handle_of(env, a.self).get().outputs());
  });
}

napi_value session_kernel_path(napi_env env, napi_callback_info info) {
  return guarded(env, [&]() {
    Args a = args_of(env, info, 0);
    return Js{env}.str(std::string(handle_of(env, a.self).get().kernel_path()));
  });
}

napi_value session_threads(napi_env env, napi_callback_info info) {
  return guarded(env, [&]() {
    Args a = args_of(env, info, 0);
    return Js{env}.num(handle_of(env, a.self).get().threads());
  });
}

napi_value session_opsets(napi_env env, napi_callback_info info) {
  return guarded(env, [&]() {
    Args a = args_of(env, info, 0);
    const Js js{env};
    const auto& opsets = handle_of(env, a.self).get().opsets();
    napi_value out = js.array(opsets.size());
    for (size_t i = 0; i < opsets.size(); ++i) {
      napi_value obj = js.object();
      js.set(obj, "domain", js.str(opsets[i].first));
      js.set(obj, "version", js.num(static_cast<double>(opsets[i].second)));
      js.set_at(out, static_cast<uint32_t>(i), obj);
    }
    return out;
  });
}

// The feed names of run and runValues (argument 0), checked against the three arrays beside them (arguments
// 1-3, one entry per name; `what` names them in errors).
std::vector<std::string> feed_names(const Js& js, const Args& a, const std::array<const char*, 3>& what) {
  std::vector<std::string> names = js.strings_of(a.argv[0], "input names");
  for (size_t i = 0; i < 3; ++i)
    if (js.length(a.argv[i + 1], what[i]) != names.size())
      throw Error(ErrorKind::InvalidArgument,
                  std::string("names, ") + what[0] + ", " + what[1] + " and " + what[2] + " differ in length");
  return names;
}

// run(names, dtypeCodes, dims, data, outputNames) -> Promise<[{name, dtype, dims, data}]>.
napi_value session_run(napi_env env, napi_callback_info info) {
  return guarded(env, [&]() {
    Args a = args_of(env, info, 5);
    const Js js{env};
    Handle& handle = handle_of(env, a.self);
    const Session session = handle.get();
    const std::vector<std::string> names = feed_names(js, a, {"type codes", "dims", "data"});
    auto feeds = std::make_shared<std::vector<onemodel::NamedTensor>>();
    feeds->reserve(names.size());
    for (uint32_t i = 0; i < names.size(); ++i) {
      feeds->push_back(
          {names[i], js.tensor_from(names[i], js.at(a.argv[1], i), js.at(a.argv[2], i), js.at(a.argv[3], i))});
    }
    const std::vector<std::string> wanted = js.strings_of(a.argv[4], "output names");
    auto results = std::make_shared<std::vector<Tensor>>();
    auto result_names = std::make_shared<std::vector<std::string>>();
    auto job = std::make_unique<Job>();
    const bool inline_run = handle.run_inline();
    std::shared_ptr<binding::RunThread> runner = inline_run ? nullptr : handle.run_thread();
    job->execute = [session, feeds, wanted, results, result_names, last = handle.last_run_us, runner]() {
      binding::on_run_thread(runner.get(),
                             [&] { *results = timed_run(*last, [&] { return session.run(*feeds, wanted); }); });
      feeds->clear();  // the inputs' memory goes back before the JS thread takes the results
      *result_names = binding::result_names(session, wanted, results->size());
    };
    job->finish = [results, result_names](napi_env e) {
      const Js j{e};
      napi_value out = j.array(results->size());
      for (size_t k = 0; k < results->size(); ++k) {
        napi_value obj = j.tensor((*results)[k]);
        j.set(obj, "name", j.str((*result_names)[k]));
        j.set_at(out, static_cast<uint32_t>(k), obj);
      }
      return out;
    };
    return start_run(env, handle, std::move(job), "onemodel.run", inline_run);
  });
}

// runValues(names, kinds, elemCodes, items, outputNames) -> Promise<[{name, kind, contentKind?, present,
// elemType, items}]> (the value form: sequences and optionals; kinds are binding::InputKind codes).
napi_value session_run_values(napi_env env, napi_callback_info info) {
  return guarded(env, [&]() {
    Args a = args_of(env, info, 5);
    const Js js{env};
    Handle& handle = handle_of(env, a.self);
    const Session session = handle.get();
    const std::vector<std::string> names = feed_names(js, a, {"kinds", "element codes", "items"});
    auto feeds = std::make_shared<std::vector<onemodel::NamedValue>>();
    for (uint32_t i = 0; i < names.size(); ++i) {
      const napi_value list = js.at(a.argv[3], i);
      const uint32_t n = js.length(list, "items");
      std::vector<Tensor> tensors;
      for (uint32_t k = 0; k < n; ++k) {
        const napi_value item = js.at(list, k);
        tensors.push_back(js.tensor_from(names[i], js.get(item, "dtype"), js.get(item, "dims"), js.get(item, "data")));
      }
      feeds->push_back(
          {names[i], binding::input_value(names[i], js.int_of(js.at(a.argv[1], i), "a kind code"),
                                          static_cast<DType>(js.int_of(js.at(a.argv[2], i), "an element code")),
                                          std::move(tensors))});
    }
    const std::vector<std::string> wanted = js.strings_of(a.argv[4], "output names");
    auto results = std::make_shared<std::vector<binding::ValueResult>>();
    auto result_names = std::make_shared<std::vector<std::string>>();
    auto job = std::make_unique<Job>();
    const bool inline_run = handle.run_inline();
    std::shared_ptr<binding::RunThread> runner = inline_run ? nullptr : handle.run_thread();
    job->execute = [session, feeds, wanted, results, result_names, last = handle.last_run_us, runner]() {
      std::vector<onemodel::Value> values;
      binding::on_run_thread(runner.get(),
                             [&] { values = timed_run(*last, [&] { return session.run_values(*feeds, wanted); }); });
      feeds->clear();
      *result_names = binding::result_names(session, wanted, values.size());
      for (const onemodel::Value& v : values) results->push_back(binding::value_result(v));
    };
    job->finish = [results, result_names](napi_env e) {
      const Js j{e};
      napi_value out = j.array(results->size());
      for (size_t k = 0; k < results->size(); ++k) {
        const binding::ValueResult& r = (*results)[k];
        napi_value obj = j.object();
        j.set(obj, "name", j.str((*result_names)[k]));
        j.set(obj, "kind", j.str(r.kind));
        if (r.content_kind != nullptr) j.set(obj, "contentKind", j.str(r.content_kind));
        j.set(obj, "present", j.boolean(r.present));
        j.set(obj, "elemType", j.num(static_cast<int>(r.elem)));
        napi_value list = j.array(r.items.size());
        for (size_t t = 0; t < r.items.size(); ++t) j.set_at(list, static_cast<uint32_t>(t), j.tensor(r.items[t]));
        j.set(obj, "items", list);
        j.set_at(out, static_cast<uint32_t>(k), obj);
      }
      return out;
    };
    return start_run(env, handle, std::move(job), "onemodel.runValues", inline_run);
  });
}

napi_value session_start_profiling(napi_env env, napi_callback_info info) {
  return guarded(env, [&]() {
    Args a = args_of(env, info, 0);
    handle_of(env, a.self).get().start_profiling();
    return Js{env}.undefined();
  });
}

// The Profile as a plain object (docs/profiling.md); web/src shapes it into the JS API's type.
napi_value session_end_profiling(napi_env env, napi_callback_info info) {
  return guarded(env, [&]() {
    Args a = args_of(env, info, 0);
    const Js js{env};
    const onemodel::Profile p = handle_of(env, a.self).get().end_profiling();
    napi_value out = js.object();
    js.set(out, "runs", js.num(static_cast<double>(p.runs)));
    js.set(out, "runMs", js.num(p.run_ms));
    js.set(out, "nodesMs", js.num(p.nodes_ms));
    js.set(out, "overheadMs", js.num(p.overhead_ms));
    napi_value nodes = js.array(p.nodes.size());
    for (size_t i = 0; i < p.nodes.size(); ++i) {
      const onemodel::NodeProfile& n = p.nodes[i];
      napi_value o = js.object();
      js.set(o, "node", js.str(n.node));
      js.set(o, "opType", js.str(n.op_type));
      js.set(o, "depth", js.num(n.depth));
      js.set(o, "calls", js.num(static_cast<double>(n.calls)));
      js.set(o, "totalMs", js.num(n.total_ms));
      js.set(o, "selfMs", js.num(n.self_ms));
      js.set(o, "share", js.num(n.share));
      js.set_at(nodes, static_cast<uint32_t>(i), o);
    }
    js.set(out, "nodes", nodes);
    napi_value types = js.array(p.op_types.size());
    for (size_t i = 0; i < p.op_types.size(); ++i) {
      const onemodel::OpTypeProfile& t = p.op_types[i];
      napi_value o = js.object();
      js.set(o, "opType", js.str(t.op_type));
      js.set(o, "calls", js.num(static_cast<double>(t.calls)));
      js.set(o, "selfMs", js.num(t.self_ms));
      js.set(o, "share", js.num(t.share));
      js.set_at(types, static_cast<uint32_t>(i), o);
    }
    js.set(out, "opTypes", types);
    js.set(out, "text", js.str(p.to_text(0)));
    return out;
  });
}

napi_value session_release(napi_env env, napi_callback_info info) {
  return guarded(env, [&]() {
    Args a = args_of(env, info, 0);
    Handle& h = handle_of(env, a.self);
    if (h.session) h.session->release();
    return_freed_memory();
    return Js{env}.undefined();
  });
}

napi_value session_delete(napi_env env, napi_callback_info info) {
  return guarded(env, [&]() {
    Args a = args_of(env, info, 0);
    Handle& h = handle_of(env, a.self);
    h.session.reset();
    h.runner.reset();
    return Js{env}.undefined();
  });
}

// create(model, sourceName, mode, threads, level, maxCachedPlans, externalDataDir, weightStorage)
//   -> Promise<NativeSession>.
// `model` is the model's bytes (a typed array, read in place on the worker: a reference keeps it alive until
// the session is made, and the engine copies what it keeps) or a file path, which the engine reads itself (its
// directory then holds any external data). A copy of the bytes here had raised the peak RSS of loading the
// MiniLM-shaped encoder (90 MB) by its size.
napi_value create_session(napi_env env, napi_callback_info info) {
  return guarded(env, [&]() {
    Args a = args_of(env, info, 8);
    const Js js{env};
    napi_valuetype model_type;
    check(env, napi_typeof(env, a.argv[0], &model_type));
    std::string path;
    std::span<const std::byte> bytes;
    auto job = std::make_unique<Job>();
    if (model_type == napi_string) {
      path = js.string_of(a.argv[0], "the model path");
    } else {
      const auto [data, n] = js.bytes_of(a.argv[0], "the model");
      bytes = {static_cast<const std::byte*>(data), n};
      napi_ref ref;
      check(env, napi_create_reference(env, a.argv[0], 1, &ref));
      job->keep.push_back(ref);
    }
    const std::string source = js.string_of(a.argv[1], "the source name");
    const onemodel::SessionOptions options =
        binding::session_options(js.int_of(a.argv[2], "mode"), js.int_of(a.argv[3], "threads"),
                                 js.int_of(a.argv[4], "level"), js.int_of(a.argv[5], "maxCachedPlans"),
                                 js.string_of(a.argv[6], "externalDataDir"), js.int_of(a.argv[7], "weightStorage"));
    auto* addon = static_cast<AddonData*>(a.data);
    auto session = std::make_shared<std::optional<Session>>();
    job->execute = [path, bytes, source, options, session]() {
      if (!path.empty()) {
        session->emplace(Session::load(path, options));
      } else {
        session->emplace(Session::load_bytes(bytes, options, source));
      }
    };
    job->finish = [addon, session](napi_env e) {
      napi_value ctor, external, instance;
      check(e, napi_get_reference_value(e, addon->session_class, &ctor));
      check(e, napi_create_external(e, &session->value(), nullptr, nullptr, &external));
      check(e, napi_new_instance(e, ctor, 1, &external, &instance));
      return instance;
    };
    return start_job(env, std::move(job), "onemodel.create");
  });
}

// The arguments every CTC call starts with: data, dims, kind, blank.
struct CtcArgs {
  Args a;
  int kind;
  double blank;
};
CtcArgs ctc_args(napi_env env, napi_callback_info info, size_t count) {
  Args a = args_of(env, info, count);
  const Js js{env};
  const int kind = js.int_of(a.argv[2], "the scores kind");
  const double blank = js.number_of(a.argv[3], "blank");
  return {std::move(a), kind, blank};
}

// CTC decoding (docs/ctc.md; shapes in bindings/ctc.h), on a worker like a run. The scores are copied here;
// `decode` runs on the worker and returns one Item per batch item, which `to_js` turns into a JS value on the
// JS thread.
template <class Item, class Decode, class ToJs>
napi_value start_ctc(napi_env env, const CtcArgs& c, const char* name, Decode decode, ToJs to_js) {
  const Js js{env};
  auto scores =
      std::make_shared<Tensor>(js.tensor_from("scores", js.num(binding::kCtcScoresCode), c.a.argv[1], c.a.argv[0]));
  auto items = std::make_shared<std::vector<Item>>();
  auto job = std::make_unique<Job>();
  job->execute = [scores, items, decode]() { *items = decode(*scores); };
  job->finish = [items, to_js](napi_env e) {
    const Js j{e};
    napi_value out = j.array(items->size());
    for (size_t b = 0; b < items->size(); ++b) j.set_at(out, static_cast<uint32_t>(b), to_js(j, (*items)[b]));
    return out;
  };
  return start_job(env, std::move(job), name);
}

// ctcGreedy(data, dims, kind, blank) -> Promise<[{labels, firstSteps, lastSteps, runConfidences,
// stepProbabilities, confidence}]>.
napi_value ctc_greedy(napi_env env, napi_callback_info info) {
  return guarded(env, [&]() {
    const CtcArgs c = ctc_args(env, info, 4);
    return start_ctc<binding::CtcGreedyItem>(
        env, c, "onemodel.ctcGreedy",
        [kind = c.kind, blank = c.blank](const Tensor& s) { return binding::ctc_greedy(s, kind, blank); },
        [](const Js& j, const binding::CtcGreedyItem& r) {
          napi_value obj = j.object();
          j.set(obj, "labels", j.typed_copy(napi_int32_array, r.labels));
          j.set(obj, "firstSteps", j.typed_copy(napi_int32_array, r.first_steps));
          j.set(obj, "lastSteps", j.typed_copy(napi_int32_array, r.last_steps));
          j.set(obj, "runConfidences", j.typed_copy(napi_float32_array, r.run_confidences));
          j.set(obj, "stepProbabilities", j.typed_copy(napi_float32_array, r.step_probabilities));
          j.set(obj, "confidence", j.num(static_cast<double>(r.confidence)));
          return obj;
        });
  });
}

// ctcBeamSearch(data, dims, kind, blank, beamWidth, topN) -> Promise<[[{labels, logProbability, confidence}]]>.
napi_value ctc_beam_search(napi_env env, napi_callback_info info) {
  return guarded(env, [&]() {
    const CtcArgs c = ctc_args(env, info, 6);
    const Js js{env};
    const double width = js.number_of(c.a.argv[4], "beam width");
    const double top_n = js.number_of(c.a.argv[5], "top N");
    return start_ctc<std::vector<binding::CtcHypothesis>>(
        env, c, "onemodel.ctcBeamSearch",
        [kind = c.kind, blank = c.blank, width, top_n](const Tensor& s) {
          return binding::ctc_beam_search(s, kind, blank, width, top_n);
        },
        [](const Js& j, const std::vector<binding::CtcHypothesis>& item) {
          napi_value list = j.array(item.size());
          for (size_t i = 0; i < item.size(); ++i) {
            napi_value obj = j.object();
            j.set(obj, "labels", j.typed_copy(napi_int32_array, item[i].labels));
            j.set(obj, "logProbability", j.num(item[i].log_probability));
            j.set(obj, "confidence", j.num(item[i].confidence));
            j.set_at(list, static_cast<uint32_t>(i), obj);
          }
          return list;
        });
  });
}

// convert(bytes, sourceName, weightStorage, externalDataDir) -> Promise<Uint8Array>: the model in the OneModel
// format (docs/format.md), converted on a worker; the bytes are copied here, as for create.
napi_value convert_model(napi_env env, napi_callback_info info) {
  return guarded(env, [&]() {
    Args a = args_of(env, info, 4);
    const Js js{env};
    const auto [data, n] = js.bytes_of(a.argv[0], "the model");
    auto bytes = std::make_shared<std::vector<std::byte>>(static_cast<const std::byte*>(data),
                                                          static_cast<const std::byte*>(data) + n);
    const std::string source = js.string_of(a.argv[1], "the source name");
    const int weight_storage = js.int_of(a.argv[2], "weightStorage");
    const std::string dir = js.string_of(a.argv[3], "externalDataDir");
    auto out = std::make_shared<std::vector<std::byte>>();
    auto job = std::make_unique<Job>();
    job->execute = [bytes, source, weight_storage, dir, out]() {
      *out = binding::convert_model(*bytes, weight_storage, source, dir);
    };
    job->finish = [out](napi_env e) { return Js{e}.typed_copy(napi_uint8_array, *out); };
    return start_job(env, std::move(job), "onemodel.convert");
  });
}

napi_value engine_version(napi_env env, napi_callback_info info) {
  return guarded(env, [&]() { return Js{env}.str(onemodel::version()); });
}

napi_value init(napi_env env, napi_value exports) {
  return guarded(env, [&]() {
    auto addon = std::make_unique<AddonData>();
    const napi_property_descriptor methods[] = {
        {"inputs", nullptr, session_inputs, nullptr, nullptr, nullptr, napi_default, nullptr},
        {"outputs", nullptr, session_outputs, nullptr, nullptr, nullptr, napi_default, nullptr},
        {"kernelPath", nullptr, session_kernel_path, nullptr, nullptr, nullptr, napi_default, nullptr},
        {"threads", nullptr, session_threads, nullptr, nullptr, nullptr, napi_default, nullptr},
        {"opsets", nullptr, session_opsets, nullptr, nullptr, nullptr, napi_default, nullptr},
        {"run", nullptr, session_run, nullptr, nullptr, nullptr, napi_default, nullptr},
        {"runValues", nullptr, session_run_values, nullptr, nullptr, nullptr, napi_default, nullptr},
        {"startProfiling", nullptr, session_start_profiling, nullptr, nullptr, nullptr, napi_default, nullptr},
        {"endProfiling", nullptr, session_end_profiling, nullptr, nullptr, nullptr, napi_default, nullptr},
        {"release", nullptr, session_release, nullptr, nullptr, nullptr, napi_default, nullptr},
        {"delete", nullptr, session_delete, nullptr, nullptr, nullptr, napi_default, nullptr},
    };
    napi_value session_class;
    check(env, napi_define_class(env, "NativeSession", NAPI_AUTO_LENGTH, session_construct, nullptr,
                                 sizeof(methods) / sizeof(methods[0]), methods, &session_class));
    check(env, napi_create_reference(env, session_class, 1, &addon->session_class));
    const Js js{env};
    napi_value create, version, greedy, beam, convert;
    check(env, napi_create_function(env, "create", NAPI_AUTO_LENGTH, create_session, addon.get(), &create));
    check(env, napi_create_function(env, "version", NAPI_AUTO_LENGTH, engine_version, nullptr, &version));
    check(env, napi_create_function(env, "ctcGreedy", NAPI_AUTO_LENGTH, ctc_greedy, nullptr, &greedy));
    check(env, napi_create_function(env, "ctcBeamSearch", NAPI_AUTO_LENGTH, ctc_beam_search, nullptr, &beam));
    check(env, napi_create_function(env, "convert", NAPI_AUTO_LENGTH, convert_model, nullptr, &convert));
    js.set(exports, "create", create);
    js.set(exports, "version", version);
    js.set(exports, "ctcGreedy", greedy);
    js.set(exports, "ctcBeamSearch", beam);
    js.set(exports, "convert", convert);
    check(env, napi_set_instance_data(
                   env, addon.get(),
                   [](napi_env e, void* data, void*) {
                     auto* d = static_cast<AddonData*>(data);
                     napi_delete_reference(e, d->session_class);
                     delete d;
                   },
                   nullptr));
    addon.release();
    return exports;
  });
}

}  // namespace

NAPI_MODULE_INIT() { return init(env, exports); }
