// A tiny protobuf encoder for the importer tests: builds models and hostile inputs byte by byte, so the
// tests never need python or a protobuf library. Msg is a byte string with helpers per wire type.
#pragma once
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "base/bits.h"
#include "onemodel/tensor.h"
#include "onnx/import.h"

namespace onemodel::test {

struct Msg {
  std::string b;

  static void put_varint(std::string& s, uint64_t v) {
    while (v >= 0x80) {
      s.push_back(static_cast<char>((v & 0x7f) | 0x80));
      v >>= 7;
    }
    s.push_back(static_cast<char>(v));
  }
  Msg& key(uint32_t field, uint32_t wire) {
    put_varint(b, (static_cast<uint64_t>(field) << 3) | wire);
    return *this;
  }
  Msg& varint(uint32_t field, uint64_t v) {
    key(field, 0);
    put_varint(b, v);
    return *this;
  }
  Msg& bytes(uint32_t field, const std::string& s) {
    key(field, 2);
    put_varint(b, s.size());
    b += s;
    return *this;
  }
  Msg& msg(uint32_t field, const Msg& m) { return bytes(field, m.b); }
  Msg& fixed32(uint32_t field, uint32_t v) {
    key(field, 5);
    for (int i = 0; i < 4; ++i) b.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
    return *this;
  }
  Msg& f32(uint32_t field, float f) { return fixed32(field, float_bits(f)); }
  Msg& fixed64(uint32_t field, uint64_t v) {
    key(field, 1);
    for (int i = 0; i < 8; ++i) b.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
    return *this;
  }
  Msg& packed_varints(uint32_t field, std::initializer_list<uint64_t> vs) {
    std::string p;
    for (auto v : vs) put_varint(p, v);
    return bytes(field, p);
  }
  Msg& packed_floats(uint32_t field, std::initializer_list<float> vs) {
    std::string p;
    for (float v : vs) p.append(reinterpret_cast<const char*>(&v), 4);
    return bytes(field, p);
  }
  Msg& raw(const std::string& s) {
    b += s;
    return *this;
  }
};

// --- ONNX message builders (field numbers from onnx.proto) ---
inline Msg tensor_type(int elem, std::initializer_list<int64_t> dims) {
  Msg shape;
  for (auto d : dims) shape.msg(1, Msg().varint(1, static_cast<uint64_t>(d)));
  Msg tt;
  tt.varint(1, static_cast<uint64_t>(elem)).msg(2, shape);
  return Msg().msg(1, tt);
}
inline Msg value_info(const std::string& name, int elem, std::initializer_list<int64_t> dims) {
  return Msg().bytes(1, name).msg(2, tensor_type(elem, dims));
}
inline Msg node(const std::string& op, std::initializer_list<std::string> in, std::initializer_list<std::string> out,
                const std::string& name = "") {
  Msg n;
  for (const auto& s : in) n.bytes(1, s);
  for (const auto& s : out) n.bytes(2, s);
  if (!name.empty()) n.bytes(3, name);
  n.bytes(4, op);
  return n;
}
inline Msg float_tensor_raw(const std::string& name, std::initializer_list<int64_t> dims, const std::vector<float>& v) {
  Msg t;
  for (auto d : dims) t.varint(1, static_cast<uint64_t>(d));
  t.varint(2, 1).bytes(8, name);
  t.bytes(9, std::string(reinterpret_cast<const char*>(v.data()), v.size() * 4));
  return t;
}
inline Msg opset(const std::string& domain, int64_t v) {
  return Msg().bytes(1, domain).varint(2, static_cast<uint64_t>(v));
}
inline Msg model(const Msg& graph, int64_t ir = 8, int64_t op = 17) {
  return Msg().varint(1, static_cast<uint64_t>(ir)).msg(7, graph).msg(8, opset("", op));
}

// Element values of a (possibly unaligned) view, copied out with memcpy: initializers view the file bytes
// and may sit at any address, so typed spans over them would be misaligned.
template <class T>
std::vector<T> values_of(const Tensor& t) {
  EXPECT_EQ(t.dtype(), DTypeOf<T>::value);
  std::vector<T> out(static_cast<size_t>(t.numel()));
  if (!out.empty()) std::memcpy(out.data(), t.raw(), out.size() * sizeof(T));
  return out;
}

inline Storage storage_of(const std::string& s) {
  Storage st = allocate_storage(s.size());
  if (!s.empty()) std::memcpy(st.data.get(), s.data(), s.size());
  return st;
}
inline ir::Model import_msg(const Msg& m, const onnx::ImportOptions& o = {}) {
  return onnx::import_bytes(storage_of(m.b), "<test>", o);
}
inline void write_file(const std::filesystem::path& p, const std::string& s) {
  std::ofstream f(p, std::ios::binary);
  f.write(s.data(), static_cast<std::streamsize>(s.size()));
}

// A fresh empty temporary directory, removed by the destructor.
struct TempDir {
  std::filesystem::path path;
  explicit TempDir(const std::string& tag) {
    // CTest runs tests in parallel processes: the name must differ between processes too.
    static std::random_device rd;
    path = std::filesystem::temp_directory_path() /
           ("onemodel_" + tag + "_" + std::to_string(rd()) + "_" + std::to_string(rd()));
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

}  // namespace onemodel::test
