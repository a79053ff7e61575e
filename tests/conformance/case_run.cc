// Runs one backend-test case in one mode and classifies the outcome (docs/conformance.md, "Method").
//
// Classification, in the order things can go wrong:
//   - load: UnsupportedOperator -> unsupported-op; ExactModeUnavailable -> not-exact; Unsupported naming an
//     element type, a string or a non-tensor value -> unsupported-type; any other Unsupported (an attribute
//     value, a rank the operator refuses) -> unsupported-op; anything else -> fail.
//   - declared inputs/outputs that are maps or sparse tensors -> unsupported-type. Sequences and optionals are
//     read from their SequenceProto / OptionalProto files and compared item by item (an empty optional
//     equals an empty optional); the run uses Session::run_values.
//   - run: the same mapping of typed refusals; every other error is a fail.
//   - comparison: shapes and element types equal; floats within |got - want| <= 1e-7 + 1e-3 * |want| (or both
//     NaN, or equal, which covers infinities); integers and booleans equal.
//
// Data format: ONNX 1.12 writes bfloat16 test data as uint16 bit patterns (numpy has no bfloat16). When the
// model declares a bfloat16 input or output and the .pb holds uint16 of the same shape, the bits are read
// as bfloat16: that is what the data means, not a tolerance.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <optional>
#include <string>
#include <vector>

#include "base/fp16.h"
#include "base/sha256.h"
#include "conformance.h"
#include "format/format.h"
#include "onnx/import.h"
#include "onnx/wire.h"
#include "onemodel/value.h"
#include <fstream>
#include "tensor/hash.h"

namespace fs = std::filesystem;

namespace onemodel::conformance {

const char* status_name(Status s) {
  switch (s) {
    case Status::Pass: return "pass";
    case Status::Fail: return "fail";
    case Status::UnsupportedOp: return "unsupported-op";
    case Status::UnsupportedType: return "unsupported-type";
    case Status::NotExact: return "not-exact";
    case Status::KnownDiff: return "known-diff";
  }
  return "?";
}

namespace {

std::string join(const std::vector<std::string>& v, const char* sep = ", ") {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? sep : "") + v[i];
  return s;
}

bool mentions_type(const std::string& m) {
  for (const char* w : {"element type", "not a tensor", "string", "cast from", "cast to", "sequence", "optional"})
    if (m.find(w) != std::string::npos) return true;
  return false;
}

ModeResult classify(const Error& e) {
  ModeResult r;
  switch (e.kind()) {
    case ErrorKind::UnsupportedOperator:
      r.status = Status::UnsupportedOp;
      r.detail = "no kernel: " + join(e.operators());
      break;
    case ErrorKind::ExactModeUnavailable:
      r.status = Status::NotExact;
      r.detail = "no exact kernel: " + join(e.operators());
      break;
    case ErrorKind::Unsupported:
      r.status = mentions_type(e.message()) ? Status::UnsupportedType : Status::UnsupportedOp;
      r.detail = e.message();
      break;
    default:
      r.status = Status::Fail;
      r.detail = std::string(error_kind_name(e.kind())) + ": " + e.message();
      if (!e.node().empty()) r.detail += " (node '" + e.node() + "')";
      break;
  }
  return r;
}

ModeResult failed(std::string detail) {
  ModeResult r;
  r.status = Status::Fail;
  r.detail = std::move(detail);
  return r;
}

const char* kind_name(ValueKind k) {
  switch (k) {
    case ValueKind::Tensor: return "tensor";
    case ValueKind::Sequence: return "sequence";
    case ValueKind::Optional: return "optional";
    case ValueKind::Map: return "map";
    case ValueKind::SparseTensor: return "sparse tensor";
    case ValueKind::Opaque: return "opaque";
    case ValueKind::Unknown: return "unknown";
  }
  return "?";
}

// Reads one .pb as the tensor the model declares at that position. Throws Error; returns an empty optional
// with `why` set for element types the engine does not store.
std::optional<Tensor> read_value(const fs::path& file, const ValueInfo& declared, std::string& why) {
  ir::TensorValue tv = onnx::read_tensor_proto_file(file);
  DType t = tv.dtype;
  if (!dtype_is_stored(t)) {
    why = "value '" + declared.name + "' has element type " + std::string(dtype_name(t));
    return std::nullopt;
  }
  Shape shape{std::span<const int64_t>(tv.dims)};
  Tensor data = tv.data.empty() ? Tensor::zeros(t, shape) : tv.data.contiguous();
  if (declared.dtype == DType::BF16 && t == DType::U16)  // ONNX 1.12's uint16 spelling of bfloat16 data
    return Tensor::copy_of(DType::BF16, shape, data.raw(), data.nbytes());
  return data;
}

Tensor tensor_from(const ir::TensorValue& tv, const ValueInfo& declared, std::string& why, bool& ok) {
  DType t = tv.dtype;
  ok = dtype_is_stored(t);
  if (!ok) {
    why = "value '" + declared.name + "' has element type " + std::string(dtype_name(t));
    return {};
  }
  Shape shape{std::span<const int64_t>(tv.dims)};
  Tensor data = tv.data.empty() ? Tensor::zeros(t, shape) : tv.data.contiguous();
  if (declared.dtype == DType::BF16 && t == DType::U16)
    return Tensor::copy_of(DType::BF16, shape, data.raw(), data.nbytes());
  return data;
}

// SequenceProto / OptionalProto reading (onnx.proto: name 1, elem_type 2, tensor_value(s) 3,
// sparse 4, sequence_value(s) 5, map 6, optional_value(s) 7), over the engine's bounds-checked wire reader.
// Nested tensors are handed to the engine's TensorProto reader as their own byte range.
struct ProtoFile {
  Storage bytes;
  std::string name;
};

ProtoFile load_file(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw Error(ErrorKind::Io, "cannot open " + file.string());
  std::vector<char> buf((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  Storage st = allocate_storage(buf.size());
  if (!buf.empty()) std::memcpy(st.data.get(), buf.data(), buf.size());
  return {st, file.string()};
}

std::optional<Value> parse_value_proto(const ProtoFile& f, onnx::Context& c, size_t begin, size_t end, bool sequence,
                                       const ValueInfo& declared, std::string& why, int depth);

std::optional<Value> parse_field_value(const ProtoFile& f, onnx::Context& c, const onnx::Field& fl,
                                       const ValueInfo& declared, std::string& why, int depth, Tensor* tensor_out) {
  if (fl.number == 3) {
    Storage slice = allocate_storage(fl.end - fl.begin);
    if (fl.end > fl.begin) std::memcpy(slice.data.get(), f.bytes.data.get() + fl.begin, fl.end - fl.begin);
    bool ok = true;
    *tensor_out = tensor_from(onnx::read_tensor_proto(slice, f.name), declared, why, ok);
    if (!ok) return std::nullopt;
    return Value(*tensor_out);
  }
  if (fl.number == 5) return parse_value_proto(f, c, fl.begin, fl.end, true, declared, why, depth + 1);
  if (fl.number == 7) return parse_value_proto(f, c, fl.begin, fl.end, false, declared, why, depth + 1);
  why = "value '" + declared.name + "' holds a map or sparse tensor";
  return std::nullopt;
}

std::optional<Value> parse_value_proto(const ProtoFile& f, onnx::Context& c, size_t begin, size_t end, bool sequence,
                                       const ValueInfo& declared, std::string& why, int depth) {
  if (depth > 8) throw Error(ErrorKind::Malformed, f.name + ": sequences nested too deeply");
  onnx::Reader r(c, begin, end);
  onnx::Field fl;
  std::vector<Tensor> items;
  std::optional<Value> content;
  while (r.next(fl)) {
    if (fl.number < 3 || fl.number > 7 || !onnx::Reader::is(fl, onnx::WireType::Len)) continue;
    Tensor t;
    std::optional<Value> v = parse_field_value(f, c, fl, declared, why, depth, &t);
    if (!v) return std::nullopt;
    if (sequence) {
      if (!v->is_tensor()) {
        why = "value '" + declared.name + "' is a sequence of non-tensors";
        return std::nullopt;
      }
      items.push_back(v->tensor());
    } else {
      content = std::move(v);
    }
  }
  if (sequence) {
    const DType elem = items.empty() ? declared.dtype : DType::Undefined;
    return Value::sequence(std::move(items), elem);
  }
  if (!content) return Value::none(declared.element_kind, declared.dtype);
  return Value::optional(std::move(*content));
}

// Reads one .pb as the value the model declares at that position. Returns an empty optional with `why` set
// for element types and kinds the engine does not handle.
std::optional<Value> read_any_value(const fs::path& file, const ValueInfo& declared, std::string& why) {
  if (declared.kind != ValueKind::Sequence && declared.kind != ValueKind::Optional) {
    auto t = read_value(file, declared, why);
    if (!t) return std::nullopt;
    return Value(*t);
  }
  ProtoFile f = load_file(file);
  onnx::Context c(f.bytes.data.get(), f.bytes.bytes, f.name, 64);
  return parse_value_proto(f, c, 0, f.bytes.bytes, declared.kind == ValueKind::Sequence, declared, why, 0);
}

double float_at(const Tensor& t, int64_t i) {
  const auto* p = static_cast<const std::byte*>(t.raw());
  switch (t.dtype()) {
    case DType::F32: {
      float v;
      std::memcpy(&v, p + i * 4, 4);
      return v;
    }
    case DType::F64: {
      double v;
      std::memcpy(&v, p + i * 8, 8);
      return v;
    }
    case DType::F16: {
      uint16_t v;
      std::memcpy(&v, p + i * 2, 2);
      return half_to_float(v);
    }
    case DType::BF16: {
      uint16_t v;
      std::memcpy(&v, p + i * 2, 2);
      return bf16_to_float(v);
    }
    default: return 0;
  }
}

std::string int_text(const Tensor& t, int64_t i) {
  size_t es = dtype_size(t.dtype());
  const auto* p = static_cast<const std::byte*>(t.raw()) + i * static_cast<int64_t>(es);
  uint64_t u = 0;
  std::memcpy(&u, p, es);  // little-endian hosts only (x86-64, wasm32)
  if (dtype_is_signed(t.dtype()) && es < 8 && (u >> (es * 8 - 1)) & 1) u |= ~uint64_t{0} << (es * 8);
  return dtype_is_signed(t.dtype()) ? std::to_string(static_cast<int64_t>(u)) : std::to_string(u);
}

std::string num(double v) {
  char b[40];
  std::snprintf(b, sizeof b, "%.9g", v);
  return b;
}

// Empty when `got` matches `want`, else a short description of the first difference.
std::string compare(const Tensor& got_in, const Tensor& want_in) {
  if (got_in.dtype() != want_in.dtype())
    return "element type " + std::string(dtype_short_name(got_in.dtype())) + ", want " +
           std::string(dtype_short_name(want_in.dtype()));
  if (got_in.shape() != want_in.shape())
    return "shape " + got_in.shape().to_string() + ", want " + want_in.shape().to_string();
  Tensor got = got_in.contiguous(), want = want_in.contiguous();
  int64_t n = got.numel(), bad = 0, first = -1;
  if (dtype_is_float(got.dtype())) {
    for (int64_t i = 0; i < n; ++i) {
      double g = float_at(got, i), w = float_at(want, i);
      bool ok = g == w || (std::isnan(g) && std::isnan(w)) || std::fabs(g - w) <= 1e-7 + 1e-3 * std::fabs(w);
      if (!ok && bad++ == 0) first = i;
    }
    if (bad)
      return std::to_string(bad) + " of " + std::to_string(n) + " elements differ; [" + std::to_string(first) +
             "] got " + num(float_at(got, first)) + ", want " + num(float_at(want, first));
    return {};
  }
  size_t es = dtype_size(got.dtype());
  const auto* g = static_cast<const std::byte*>(got.raw());
  const auto* w = static_cast<const std::byte*>(want.raw());
  for (int64_t i = 0; i < n; ++i)
    if (std::memcmp(g + i * static_cast<int64_t>(es), w + i * static_cast<int64_t>(es), es) != 0 && bad++ == 0)
      first = i;
  if (bad)
    return std::to_string(bad) + " of " + std::to_string(n) + " elements differ; [" + std::to_string(first) + "] got " +
           int_text(got, first) + ", want " + int_text(want, first);
  return {};
}

// compare() for Values: same kind, same number of items, each item equal; two empty optionals are equal.
std::string compare_values(const Value& got, const Value& want) {
  if (got.kind() != want.kind())
    return std::string("kind ") + kind_name(got.kind()) + ", want " + kind_name(want.kind());
  switch (got.kind()) {
    case ValueKind::Tensor: return compare(got.tensor(), want.tensor());
    case ValueKind::Sequence: {
      if (got.items().size() != want.items().size())
        return std::to_string(got.items().size()) + " items, want " + std::to_string(want.items().size());
      for (size_t k = 0; k < got.items().size(); ++k) {
        std::string d = compare(got.items()[k], want.items()[k]);
        if (!d.empty()) return "item " + std::to_string(k) + ": " + d;
      }
      return {};
    }
    case ValueKind::Optional:
      if (got.has_element() != want.has_element())
        return got.has_element() ? "an element, want none" : "no element, want one";
      return got.has_element() ? compare_values(got.element(), want.element()) : std::string();
    default: return "unexpected kind";
  }
}

// Hash lines of one output: a tensor is its tensor hash (as before sequences existed); a sequence is
// "sequence <n>" then one line per item; an optional is "none" or "some" then its content.
std::string hash_lines(const Value& v) {
  switch (v.kind()) {
    case ValueKind::Tensor: return tensor_sha256_hex(v.tensor()) + "\n";
    case ValueKind::Sequence: {
      std::string s = "sequence " + std::to_string(v.items().size()) + "\n";
      for (const Tensor& t : v.items()) s += tensor_sha256_hex(t) + "\n";
      return s;
    }
    case ValueKind::Optional: return v.has_element() ? "some\n" + hash_lines(v.element()) : std::string("none\n");
    default: return "?\n";
  }
}

std::vector<fs::path> data_sets(const fs::path& dir) {
  std::vector<fs::path> sets;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0) sets.push_back(e.path());
  std::sort(sets.begin(), sets.end());
  return sets;
}

size_t count_files(const fs::path& dir, const std::string& prefix) {
  size_t n = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    std::string f = e.path().filename().string();
    if (f.rfind(prefix, 0) == 0 && f.size() > 3 && f.compare(f.size() - 3, 3, ".pb") == 0) ++n;
  }
  return n;
}

// `twin`, when given, is the same model loaded from the OneModel format: it runs on the same feed and must
// give the same bits.
ModeResult run_loaded(const Session& session, const fs::path& dir, Mode mode, const Session* twin) {
  for (const auto* list : {&session.inputs(), &session.outputs()})
    for (const ValueInfo& v : *list)
      if (v.kind != ValueKind::Tensor && v.kind != ValueKind::Sequence && v.kind != ValueKind::Optional) {
        ModeResult r;
        r.status = Status::UnsupportedType;
        r.detail = "value '" + v.name + "' is a " + kind_name(v.kind);
        return r;
      }
  const auto& ins = session.inputs();
  const auto& outs = session.outputs();
  std::vector<fs::path> sets = data_sets(dir);
  if (sets.empty()) return failed("no test_data_set_* directory");
  Sha256 hash;
  for (const fs::path& set : sets) {
    std::string set_name = set.filename().string();
    if (count_files(set, "input_") != ins.size())
      return failed(set_name + ": " + std::to_string(count_files(set, "input_")) + " input files for " +
                    std::to_string(ins.size()) + " model inputs");
    if (count_files(set, "output_") != outs.size())
      return failed(set_name + ": " + std::to_string(count_files(set, "output_")) + " output files for " +
                    std::to_string(outs.size()) + " model outputs");
    std::vector<NamedValue> feed;
    std::vector<Value> want;
    std::string why;
    try {
      for (size_t i = 0; i < ins.size(); ++i) {
        auto v = read_any_value(set / ("input_" + std::to_string(i) + ".pb"), ins[i], why);
        if (!v) return ModeResult{Status::UnsupportedType, why, {}};
        feed.push_back({ins[i].name, *v});
      }
      for (size_t i = 0; i < outs.size(); ++i) {
        auto v = read_any_value(set / ("output_" + std::to_string(i) + ".pb"), outs[i], why);
        if (!v) return ModeResult{Status::UnsupportedType, why, {}};
        want.push_back(*v);
      }
    } catch (const Error& e) {
      ModeResult r = classify(e);
      r.detail = set_name + " data: " + r.detail;
      return r;
    }
    std::vector<Value> got;
    try {
      got = session.run_values(feed);
    } catch (const Error& e) {
      return classify(e);
    }
    if (twin) {
      std::vector<Value> again;
      try {
        again = twin->run_values(feed);
      } catch (const Error& e) {
        return failed(std::string("OneModel format run: ") + e.what());
      }
      for (size_t i = 0; i < got.size(); ++i)
        if (i >= again.size() || hash_lines(got[i]) != hash_lines(again[i]))
          return failed(set_name + " output '" + outs[i].name + "' from the OneModel format differs from ONNX's");
    }
    if (got.size() != want.size())
      return failed(std::to_string(got.size()) + " outputs, want " + std::to_string(want.size()));
    for (size_t i = 0; i < got.size(); ++i) {
      std::string diff = compare_values(got[i], want[i]);
      if (!diff.empty()) return failed(set_name + " output '" + outs[i].name + "': " + diff);
      hash.update(hash_lines(got[i]));
    }
  }
  ModeResult r;
  r.status = Status::Pass;
  if (mode == Mode::Exact) r.hash = hash.hex_digest();
  return r;
}

}  // namespace

// The exact-mode hash is SHA-256 over the lines "<tensor_sha256_hex of output k>\n", outputs in model order,
// data sets in name order. It is recorded for passing cases, so the wasm build can be compared bit for bit.
ModeResult run_case(const fs::path& dir, Mode mode, bool via_format) {
  try {
    SessionOptions options;
    options.mode = mode;
    options.intra_op_threads = 1;
    Session session = Session::load(dir / "model.onnx", options);
    if (!via_format) return run_loaded(session, dir, mode, nullptr);
    std::vector<std::byte> converted;
    std::optional<Session> twin;
    try {
      converted = format::write_bytes(onnx::import_file(dir / "model.onnx"));
      twin.emplace(Session::load_bytes(converted, options, "<converted>"));
    } catch (const Error& e) {
      return failed(std::string("OneModel format: ") + e.what());
    }
    return run_loaded(session, dir, mode, &*twin);
  } catch (const Error& e) {
    return classify(e);
  } catch (const std::exception& e) {
    return failed(std::string("exception: ") + e.what());
  }
}

void describe_case(const fs::path& dir, CaseResult& c) {
  try {
    ir::Model m = onnx::import_file(dir / "model.onnx");
    for (const ir::Node& n : m.graph->nodes) {
      std::string op = n.domain.empty() ? n.op_type : n.domain + "." + n.op_type;
      bool seen = false;
      for (const OpUse& u : c.ops) seen = seen || u.op == op;
      if (!seen) c.ops.push_back({op, static_cast<long long>(n.opset)});
    }
  } catch (const std::exception&) {
    c.ops.clear();
  }
  // A node case with several operators (an _expanded function body) counts under the longest operator name
  // its case name starts with, compared without underscores and case.
  auto squash = [](std::string s) {
    std::string o;
    for (char ch : s)
      if (ch != '_' && ch != '.') o += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    return o;
  };
  std::string key = squash(c.name.rfind("test_", 0) == 0 ? c.name.substr(5) : c.name);
  size_t best = 0;
  for (const OpUse& u : c.ops) {
    std::string s = squash(u.op);
    if (s.size() > best && key.rfind(s, 0) == 0) {
      best = s.size();
      c.attributed_op = u.op;
    }
  }
  if (c.attributed_op.empty()) c.attributed_op = c.ops.empty() ? "(unreadable model)" : c.ops.front().op;
  for (const OpUse& u : c.ops)
    if (u.op == c.attributed_op) c.attributed_opset = u.opset;
}

}  // namespace onemodel::conformance
