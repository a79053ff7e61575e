// Helpers of the CLI that do not depend on a loaded model (see cli/cli.h).
#include <cinttypes>
#include <cstdio>
#include <cstring>

#include "base/fp16.h"
#include "cli/cli.h"

namespace onemodel::cli {

std::string sanitize_output_name(const std::string& name) {
  if (name.empty()) return "_";
  std::string out = name;
  for (char& c : out) {
    bool ok =
        (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
    if (!ok) c = '_';
  }
  return out;
}

namespace {

// splitmix64: tiny, well-mixed and fully specified, so random inputs are the same everywhere (the
// standard library's distributions are not portable across implementations).
struct Rng {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
};

}  // namespace

Tensor random_input(const ValueInfo& info, uint64_t seed) {
  if (info.kind != ValueKind::Tensor)
    throw Error(ErrorKind::Unsupported,
                "input '" + info.name + "' is not a tensor; random values are made only for tensors");
  if (!dtype_is_stored(info.dtype))
    throw Error(ErrorKind::Unsupported, "input '" + info.name + "' has element type " +
                                            std::string(dtype_name(info.dtype)) + ", which the engine does not store");
  if (!info.has_shape)
    throw Error(ErrorKind::InvalidArgument,
                "input '" + info.name + "' has no declared shape; give it with --input " + info.name + "=FILE.npy");
  std::vector<int64_t> dims;
  for (const Dim& d : info.dims) dims.push_back(d.is_fixed() ? d.value : 1);
  Tensor t = Tensor::zeros(info.dtype, Shape(std::span<const int64_t>(dims)));
  Rng rng{seed};
  const int64_t n = t.numel();
  auto* p = static_cast<std::byte*>(t.raw_mut());
  for (int64_t i = 0; i < n; ++i) {
    uint64_t r = rng.next();
    size_t k = static_cast<size_t>(i);
    switch (info.dtype) {
      case DType::F32: {
        float v = static_cast<float>(static_cast<int32_t>(r >> 40) - (1 << 23)) * (1.0f / 8388608.0f);
        std::memcpy(p + 4 * k, &v, 4);
        break;
      }
      case DType::F64: {
        double v = static_cast<double>(static_cast<int32_t>(r >> 40) - (1 << 23)) / 8388608.0;
        std::memcpy(p + 8 * k, &v, 8);
        break;
      }
      case DType::F16: {
        uint16_t h = float_to_half(static_cast<float>(static_cast<int32_t>(r >> 53) - 1024) / 1024.0f);  // exact
        std::memcpy(p + 2 * k, &h, 2);
        break;
      }
      case DType::BF16: {
        float v = static_cast<float>(static_cast<int32_t>(r >> 56) - 128) / 128.0f;
        uint16_t h = float_to_bf16(v);  // exact: v has 8 significant bits
        std::memcpy(p + 2 * k, &h, 2);
        break;
      }
      case DType::Bool: p[k] = static_cast<std::byte>(r >> 63); break;
      default: {
        // Integers: [0, 4) in the low byte, the remaining bytes zero (little-endian).
        size_t es = dtype_size(info.dtype);
        p[k * es] = static_cast<std::byte>(r >> 62);
        break;
      }
    }
  }
  return t;
}

std::string format_values(const Tensor& t, int max_values) {
  Tensor c = t.contiguous();
  const auto* p = static_cast<const std::byte*>(c.raw());
  int64_t n = std::min<int64_t>(c.numel(), max_values);
  std::string out;
  char buf[64];
  for (int64_t i = 0; i < n; ++i) {
    size_t k = static_cast<size_t>(i);
    auto load = [&](auto v) {
      std::memcpy(&v, p + k * sizeof(v), sizeof(v));
      return v;
    };
    switch (c.dtype()) {
      case DType::F32: std::snprintf(buf, sizeof buf, "%.6g", static_cast<double>(load(float{}))); break;
      case DType::F64: std::snprintf(buf, sizeof buf, "%.6g", load(double{})); break;
      case DType::F16:
        std::snprintf(buf, sizeof buf, "%.6g", static_cast<double>(half_to_float(load(uint16_t{}))));
        break;
      case DType::BF16:
        std::snprintf(buf, sizeof buf, "%.6g", static_cast<double>(bf16_to_float(load(uint16_t{}))));
        break;
      case DType::I8: std::snprintf(buf, sizeof buf, "%d", load(int8_t{})); break;
      case DType::I16: std::snprintf(buf, sizeof buf, "%d", load(int16_t{})); break;
      case DType::I32: std::snprintf(buf, sizeof buf, "%" PRId32, load(int32_t{})); break;
      case DType::I64: std::snprintf(buf, sizeof buf, "%" PRId64, load(int64_t{})); break;
      case DType::U8: std::snprintf(buf, sizeof buf, "%u", load(uint8_t{})); break;
      case DType::U16: std::snprintf(buf, sizeof buf, "%u", load(uint16_t{})); break;
      case DType::U32: std::snprintf(buf, sizeof buf, "%" PRIu32, load(uint32_t{})); break;
      case DType::U64: std::snprintf(buf, sizeof buf, "%" PRIu64, load(uint64_t{})); break;
      case DType::Bool: std::snprintf(buf, sizeof buf, "%s", load(uint8_t{}) ? "true" : "false"); break;
      default: std::snprintf(buf, sizeof buf, "?"); break;
    }
    if (i) out += ' ';
    out += buf;
  }
  if (c.numel() > n) out += " ...";
  return out;
}

std::string describe_value(const ValueInfo& info) {
  std::string s;
  switch (info.kind) {
    case ValueKind::Tensor: s = std::string(dtype_short_name(info.dtype)); break;
    case ValueKind::Sequence: return "sequence";
    case ValueKind::Optional: return "optional";
    case ValueKind::Map: return "map";
    case ValueKind::SparseTensor: s = "sparse " + std::string(dtype_short_name(info.dtype)); break;
    case ValueKind::Opaque: return "opaque";
    case ValueKind::Unknown: return "unknown type";
  }
  if (!info.has_shape) return s + " [...]";
  s += " [";
  for (size_t i = 0; i < info.dims.size(); ++i) {
    if (i) s += ',';
    const Dim& d = info.dims[i];
    s += d.is_fixed() ? std::to_string(d.value) : d.param.empty() ? "?" : d.param;
  }
  return s + "]";
}

WeightStorage parse_weight_storage(const std::string& v) {
  if (v == "float32") return WeightStorage::Float32;
  if (v == "float16") return WeightStorage::Float16;
  if (v == "bfloat16") return WeightStorage::BFloat16;
  throw UsageError("--weight-storage must be float32, float16 or bfloat16, not '" + v + "'");
}

int64_t parse_int(const std::string& opt, const std::string& v, int64_t lo, int64_t hi) {
  size_t used = 0;
  long long n = 0;
  try {
    n = std::stoll(v, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (v.empty() || used != v.size() || n < lo || n > hi)
    throw UsageError(opt + " expects a whole number from " + std::to_string(lo) + " to " + std::to_string(hi) +
                     ", got '" + v + "'");
  return n;
}

void parse_common_args(const std::vector<std::string>& args, const std::string& command, CommonArgs& r,
                       const std::function<bool(const std::string&, const OptionValue&)>& extra) {
  for (size_t i = 0; i < args.size(); ++i) {
    std::string a = args[i], value;
    bool has_value = false;
    // Accept both "--opt value" and "--opt=value".
    if (a.rfind("--", 0) == 0) {
      size_t eq = a.find('=');
      if (eq != std::string::npos) {
        value = a.substr(eq + 1);
        a = a.substr(0, eq);
        has_value = true;
      }
    }
    const OptionValue take = [&]() -> std::string {
      if (has_value) return value;
      if (i + 1 >= args.size()) throw UsageError(a + " needs a value");
      return args[++i];
    };
    if (a == "--input") {
      std::string v = take();
      size_t eq = v.find('=');
      if (eq == std::string::npos || eq == 0 || eq + 1 == v.size())
        throw UsageError("--input expects NAME=FILE.npy, got '" + v + "'");
      r.inputs.emplace_back(v.substr(0, eq), v.substr(eq + 1));
    } else if (a == "--mode") {
      std::string v = take();
      if (v == "fast")
        r.mode = Mode::Fast;
      else if (v == "exact")
        r.mode = Mode::Exact;
      else
        throw UsageError("--mode expects fast or exact, got '" + v + "'");
    } else if (a == "--optimization") {
      const std::string v = take();
      if (v == "none")
        r.optimization = OptimizationLevel::None;
      else if (v == "basic")
        r.optimization = OptimizationLevel::Basic;
      else if (v == "all")
        r.optimization = OptimizationLevel::All;
      else
        throw UsageError("--optimization expects none, basic or all, got '" + v + "'");
    } else if (a == "--weight-storage") {
      r.weight_storage = parse_weight_storage(take());
    } else if (a == "--threads") {
      r.threads = static_cast<int>(parse_int("--threads", take(), 0, 1024));
    } else if (a == "--save-outputs") {
      r.save_dir = take();
      if (r.save_dir.empty()) throw UsageError("--save-outputs needs a directory");
    } else if (a.rfind("-", 0) == 0 && a.size() > 1) {
      if (!extra(a, take)) throw UsageError("unknown option '" + a + "'");
    } else if (r.model.empty()) {
      r.model = a;
    } else {
      throw UsageError("unexpected argument '" + a + "' (the model is '" + r.model + "')");
    }
  }
  if (r.model.empty()) throw UsageError(command + " needs a MODEL");
}

}  // namespace onemodel::cli
