// The operator contract (graph-runtime.md section 2). One operator = one small Kernel subclass plus one line
// in ops/op_table.cc. Contexts are plain structs so kernels can be unit-tested without a session.
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/thread_pool.h"
#include "ir/graph.h"
#include "kernels/isa.h"
#include "onemodel/error.h"
#include "onemodel/tensor.h"
#include "onemodel/value.h"

namespace onemodel::rt {

class Arena;
struct OpDef;
struct ProfileScope;  // runtime/profiler.h

// How operators are found: find_op (the static table) normally; tests pass their own table.
using OpLookup = const OpDef* (*)(std::string_view domain, std::string_view op_type, int64_t opset);

// What a factory needs to compile a node's subgraphs (graph-runtime.md section 8): the graph the node lives
// in (to match a body's captures to the node's subgraph reads by name), the operator lookup, and the
// session's target and pool, which nested graphs share. Owned by the CompiledGraph that creates the kernel.
struct CompileScope {
  const ir::Graph* graph = nullptr;
  OpLookup lookup = nullptr;
  kern::Isa isa = kern::Isa::Scalar;
  ThreadPool* pool = nullptr;
  // Per value id of `graph`: its value when it is known before any input is (an initializer, the output of
  // an input-less node such as Constant, or a constant the enclosing graph passed down), else empty. A body
  // that captures one gets it as a weight of its own, so the body's plans fold and prepare what depends on it
  // once instead of receiving it as a run-time input (graph-runtime.md). Filled in graph order, so a node's
  // factory sees every constant defined before it.
  const std::vector<Tensor>* constants = nullptr;
  // The graph stores values in half precision (docs/fp16.md section 1): its bodies wrap their kernels too,
  // since what they capture or are fed may be float16 or bfloat16 even when they declare nothing.
  bool half = false;
};

// What a factory sees: the node, its opset and typed attribute readers. Readers throw Error(InvalidModel)
// naming the node when an attribute has the wrong type.
class NodeInfo {
 public:
  NodeInfo(const ir::Node& node, bool exact, const CompileScope* scope = nullptr)
      : node_(&node), exact_(exact), scope_(scope) {}
  // Null when the kernel is made outside a CompiledGraph (unit tests); subgraph kernels then refuse.
  const CompileScope* scope() const { return scope_; }
  const ir::Node& node() const { return *node_; }
  const std::string& name() const { return node_->name; }
  const std::string& op_type() const { return node_->op_type; }
  int64_t opset() const { return node_->opset; }
  bool exact() const { return exact_; }
  size_t num_inputs() const { return node_->inputs.size(); }
  size_t num_outputs() const { return node_->outputs.size(); }

  bool has(std::string_view attr) const { return node_->find_attribute(attr) != nullptr; }
  int64_t get_int(std::string_view attr, int64_t dflt) const;
  float get_float(std::string_view attr, float dflt) const;
  std::string get_string(std::string_view attr, std::string_view dflt) const;
  std::vector<int64_t> get_ints(std::string_view attr) const;      // empty if absent
  std::vector<float> get_floats(std::string_view attr) const;      // empty if absent
  const ir::TensorValue* get_tensor(std::string_view attr) const;  // null if absent
  const ir::Attribute* find(std::string_view attr) const { return node_->find_attribute(attr); }

  // Error(kind) naming this node: "<op_type> node '<name>': <message>".
  [[noreturn]] void fail(ErrorKind kind, const std::string& message) const;

 private:
  const ir::Node* node_;
  bool exact_;
  const CompileScope* scope_;
};

// Plan-time knowledge of one input.
struct InputMeta {
  bool present = false;  // false: omitted optional input
  DType dtype = DType::Undefined;
  Shape shape;
  const Tensor* value = nullptr;  // known constant value, or null
  // `value` is a plan constant (lives as long as the plan), not a run-time value a dynamic step sees: the
  // half-precision adapter keeps the float32 form of such values only (docs/fp16.md section 3).
  bool constant = false;
  // Compact weights (docs/fp16.md section 6), offered to prepare() of a kernel with KernelFlags::compact_weights
  // only: `value` is then the exact widening of this 16-bit constant, valid during prepare() only (key a
  // SharedPack by this tensor's storage, not value's). See PrepareContext::took_compact.
  const Tensor* compact = nullptr;
};

// What Infer states about one output.
struct OutputMeta {
  DType dtype = DType::Undefined;
  Shape shape;
  Tensor constant;  // non-empty: the output is a constant for these shapes; the node is not scheduled
};

struct InferContext {
  const NodeInfo& info;
  std::span<const InputMeta> inputs;
  std::span<OutputMeta> outputs;
  bool exact = false;
  bool needs_runtime_values = false;  // set by require_runtime_values()

  bool has_input(size_t i) const { return i < inputs.size() && inputs[i].present; }
  // Input i, or an absent one past the node's inputs (a hostile node may have fewer than its operator takes:
  // fuzz_load_run's HammingWindow without inputs read past the span). Required inputs: has_input or value_of
  // (ops/index_util.h) first.
  const InputMeta& input(size_t i) const {
    static const InputMeta kAbsent{};
    return i < inputs.size() ? inputs[i] : kAbsent;
  }
  void set_output(size_t i, DType t, const Shape& s) {
    outputs[i].dtype = t;
    outputs[i].shape = s;
  }
  void set_constant_output(size_t i, Tensor value) {
    outputs[i].dtype = value.dtype();
    outputs[i].shape = value.shape();
    outputs[i].constant = std::move(value);
  }
  // The node needs an input value that is not known at plan time: it is shaped again in every run.
  void require_runtime_values() { needs_runtime_values = true; }
  [[noreturn]] void fail(ErrorKind kind, const std::string& message) const { info.fail(kind, message); }
};

struct PrepareContext {
  const NodeInfo& info;
  std::span<const InputMeta> inputs;
  std::span<const OutputMeta> outputs;
  bool exact = false;
  kern::Isa isa = kern::Isa::Scalar;  // packed layouts may depend on the target's vector width
  // Set by prepare() when it took the compact weights offered as an input's InputMeta::compact: the state it
  // returns serves every run of the plan without that input's float32 values, so the plan does not widen
  // them; run() then sees the 16-bit constant as that input (same shape). Left false, the plan widens them at
  // every run (onemodel.WidenWeight) and run() sees float32 as usual.
  bool took_compact = false;
  // The session's packing of input 1 (Kernel::pack_weight), or null. When set, the weight's values are gone: input
  // 1's InputMeta::value (and run()'s input 1) is a placeholder of its type and shape that cannot be read, and
  // prepare() returns this packing.
  std::shared_ptr<const void> packed_weight = nullptr;
};

// Scratch memory for one run: bump allocation, 64-byte aligned, reset at the start of every run.
class Arena {
 public:
  virtual ~Arena() = default;
  virtual Tensor allocate(DType dtype, const Shape& shape) = 0;
  // Like allocate, without the zero fill: for a kernel's workspace that it writes before it reads, on every
  // path (graph-runtime.md section 5). By default the same as allocate.
  virtual Tensor allocate_workspace(DType dtype, const Shape& shape) { return allocate(dtype, shape); }
};

struct RunContext {
  const NodeInfo& info;
  std::span<const Tensor> inputs;  // empty Tensor for omitted optional inputs; contiguous
  std::span<Tensor> outputs;       // allocated for the shapes Infer stated (empty for data-dependent outputs)
  bool exact = false;
  const void* state = nullptr;  // what prepare() returned
  Arena* arena = nullptr;
  ThreadPool* pool = nullptr;         // may be null: run on the calling thread
  kern::Isa isa = kern::Isa::Scalar;  // the session's target (kernels/isa.h)
  // Kernels with KernelFlags::on_values only: every input as a Value (an omitted input is an empty Value), and
  // the outputs to fill. Tensors a kernel keeps inside a sequence or optional must not be slab views (the
  // slab is reused once the planner thinks a value died): copy them (copy_to_arena in ops/value_kernel.h).
  std::span<const Value> value_inputs = {};
  std::span<Value> value_outputs = {};
  // Set while the session profiles (runtime/profiler.h): kernels that run a body pass it on.
  const ProfileScope* profile = nullptr;

  bool has_input(size_t i) const { return i < inputs.size() && !inputs[i].empty(); }
  // Input i, or an empty Tensor (an omitted input) past the node's inputs, as InferContext::input does: the
  // kernels that skip infer() (outputs_data_dependent) meet a hostile node's missing inputs here first.
  const Tensor& input(size_t i) const {
    static const Tensor kAbsent;
    return i < inputs.size() ? inputs[i] : kAbsent;
  }
  Tensor& output(size_t i) const { return outputs[i]; }
  Tensor scratch(DType t, const Shape& s) const { return arena->allocate(t, s); }
  // Uninitialized scratch (Arena::allocate_workspace): only for memory every path writes before reading it.
  Tensor workspace(DType t, const Shape& s) const { return arena->allocate_workspace(t, s); }
  // For OutputsDataDependent kernels: allocates output i from the run's arena.
  Tensor& allocate_output(size_t i, DType t, const Shape& s) const {
    outputs[i] = arena->allocate(t, s);
    return outputs[i];
  }
  // Value kernels: input i, or an empty Value when the node has fewer inputs (a missing input then reads as an
  // omitted one: the operator's default, or a typed error naming it; indexing value_inputs past a hostile node's
  // inputs was undefined behaviour found by fuzz_load_run). Output i, or Error(InvalidModel) naming the node.
  const Value& value_input(size_t i) const {
    static const Value kNone;
    return i < value_inputs.size() ? value_inputs[i] : kNone;
  }
  Value& value_output(size_t i) const {
    if (i >= value_outputs.size())
      fail(ErrorKind::InvalidModel, "output " + std::to_string(i) + " is missing (the node declares " +
                                        std::to_string(value_outputs.size()) + ")");
    return value_outputs[i];
  }
  [[noreturn]] void fail(ErrorKind kind, const std::string& message) const { info.fail(kind, message); }
};

struct KernelFlags {
  bool exact = false;                   // has an exact flavour (exact-mode.md)
  int in_place_input = -1;              // output 0 may reuse this input's storage
  bool view_of_input = false;           // output 0 is input 0 reshaped to what Infer stated; run() is never called
  bool outputs_data_dependent = false;  // infer() is not called; run() allocates outputs
  // Works on Values (tensors, sequences, optionals; graph-runtime.md section 8): the node always runs at
  // run time (never folded), infer() is not called, run() reads value_inputs and fills value_outputs.
  bool on_values = false;
  // For a tensor kernel (Identity): when input 0 is a sequence or optional, output 0 is that same value.
  bool passes_values = false;
  // Runs at run time even when every input is a constant: WidenWeight, whose point is that the plan does not
  // hold its float32 result (docs/fp16.md, compact weights).
  bool never_folded = false;
  // prepare() may take compact weights as input 1 (InputMeta::compact, PrepareContext::took_compact): the
  // matrix products, which keep their packing of them in 16 bits.
  bool compact_weights = false;
};

class Kernel {
 public:
  explicit Kernel(KernelFlags flags) : flags_(flags) {}
  virtual ~Kernel() = default;
  const KernelFlags& flags() const { return flags_; }

  virtual void infer(InferContext& ctx) const = 0;
  // Optional: turns constant inputs into a faster form; the result comes back as RunContext::state.
  virtual std::shared_ptr<const void> prepare(PrepareContext&) const { return nullptr; }
  // Optional, for kernels with KernelFlags::compact_weights: a packing of the float32 weight `w` (input 1, read by
  // this node only) that is a valid RunContext::state for every run, whatever the shapes of the other inputs, and
  // never needs w's values again. The session then keeps it and frees w (graph-runtime.md section 4, "Weights the
  // packing keeps"); prepare() gets it as PrepareContext::packed_weight. Null: w is kept.
  virtual std::shared_ptr<const void> pack_weight(const Tensor& /*w*/, kern::Isa /*isa*/) const { return nullptr; }
  virtual void run(RunContext& ctx) const = 0;

 private:
  KernelFlags flags_;
};

// A kernel's packing of a constant weight, shared by every plan of its session. A new input shape makes a new
// plan (OCR's recogniser meets a new width per text line), and packing every weight again made the first call
// there cost 1.5x a warm one. The kernel keeps the last kVariants packings it made, keyed by the weight's
// storage: a packing can depend on the shape too (a convolution with few output positions packs its weights
// transposed), and PP-OCRv4 rec's 1x3 and 1x1 convolutions switched between two packings at every line whose
// width crossed that bound when only the last one was kept. The weight's storage outlives the packing (the
// graph owns initialisers; a folded weight and its packing belong to the same plan), so while the packing lives
// an address seen again is the same weight.
template <class T>
class SharedPack {
 public:
  static constexpr size_t kVariants = 4;
  // A kept packing of `weight` that `matches`, else make()'s (which may be null: nothing kept), kept in place
  // of the oldest.
  template <class Matches, class Make>
  std::shared_ptr<const T> get(const void* weight, Matches&& matches, Make&& make) const {
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto p = find_locked(weight, matches)) return p;
    std::shared_ptr<const T> p = make();
    kept_[next_] = Kept{p, weight};
    next_ = (next_ + 1) % kVariants;
    return p;
  }
  // A kept packing of `weight` that `matches`, or null (a kernel that prefers one of several packings that
  // would do asks for it first).
  template <class Matches>
  std::shared_ptr<const T> find(const void* weight, Matches&& matches) const {
    std::lock_guard<std::mutex> lock(mutex_);
    return find_locked(weight, matches);
  }

 private:
  template <class Matches>
  std::shared_ptr<const T> find_locked(const void* weight, Matches& matches) const {
    for (const Kept& k : kept_)
      if (k.from == weight)
        if (auto p = k.pack.lock(); p && matches(*p)) return p;
    return nullptr;
  }
  struct Kept {
    std::weak_ptr<const T> pack;
    const void* from = nullptr;
  };
  mutable std::mutex mutex_;
  mutable std::array<Kept, kVariants> kept_{};
  mutable size_t next_ = 0;
};

using KernelFactory = std::unique_ptr<Kernel> (*)(const NodeInfo& info);

struct OpDef {
  std::string_view domain;  // "" = ai.onnx
  std::string_view op_type;
  int min_opset;
  int max_opset;  // inclusive
  KernelFactory factory;
};

// The static operator table (ops/op_table.cc).
std::span<const OpDef> op_table();
// The definition whose opset range contains `opset`, or null.
const OpDef* find_op(std::string_view domain, std::string_view op_type, int64_t opset);

}  // namespace onemodel::rt
