// Shared helpers for the C++ tests.
#pragma once
#include <cstdlib>
#include <cstdint>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "onemodel/error.h"

namespace onemodel::test {

// The repository root (tests read testdata/ from there).
inline std::filesystem::path source_dir() {
  if (const char* e = std::getenv("ONEMODEL_SOURCE_DIR")) return e;
  return ONEMODEL_SOURCE_DIR;
}
inline std::filesystem::path testdata(const std::string& name) { return source_dir() / "testdata" / name; }

// n values uniform in [-bound, bound), the same for the same seed.
inline std::vector<float> uniform_floats(size_t n, uint32_t seed, float bound) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-bound, bound);
  std::vector<float> v(n);
  for (float& f : v) f = u(rng);
  return v;
}

// Runs f, expects an onemodel::Error of `kind` and returns it for further checks (message, node, ...).
template <class F>
Error expect_error(ErrorKind kind, F&& f) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    return e;
  }
  ADD_FAILURE() << "no error thrown, expected " << error_kind_name(kind);
  return Error(ErrorKind::Internal, "none");
}

}  // namespace onemodel::test
