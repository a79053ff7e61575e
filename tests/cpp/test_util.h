// Shared helpers for the C++ tests.
#pragma once
#include <cstdlib>
#include <filesystem>
#include <string>

namespace onemodel::test {

// The repository root (tests read testdata/ from there).
inline std::filesystem::path source_dir() {
  if (const char* e = std::getenv("ONEMODEL_SOURCE_DIR")) return e;
  return ONEMODEL_SOURCE_DIR;
}
inline std::filesystem::path testdata(const std::string& name) { return source_dir() / "testdata" / name; }

}  // namespace onemodel::test
