// ONEMODEL_ISA set for a scope (sessions read it when they are created; docs/kernels-gemm.md section 1), the
// previous value restored after it.
#pragma once
#include <cstdlib>
#include <string>

class IsaEnv {
 public:
  explicit IsaEnv(const char* v) {
    const char* old = std::getenv("ONEMODEL_ISA");
    had_ = old != nullptr;
    if (had_) old_ = old;
    setenv("ONEMODEL_ISA", v, 1);
  }
  ~IsaEnv() {
    if (had_)
      setenv("ONEMODEL_ISA", old_.c_str(), 1);
    else
      unsetenv("ONEMODEL_ISA");
  }
  IsaEnv(const IsaEnv&) = delete;
  IsaEnv& operator=(const IsaEnv&) = delete;

 private:
  bool had_ = false;
  std::string old_;
};
