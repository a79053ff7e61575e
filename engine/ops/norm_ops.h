// Factories of the normalisation, softmax and reduction operators (ops-norms.md) beyond those in ops.h, one line each in op_table.cc.
#pragma once
#include <memory>

#include "runtime/kernel.h"

namespace onemodel::rt {

}  // namespace onemodel::rt
