// Factories of the element-wise operators (ops-elementwise.md) beyond those in ops.h, one line each in op_table.cc.
#pragma once
#include <memory>

#include "runtime/kernel.h"

namespace onemodel::rt {

}  // namespace onemodel::rt
