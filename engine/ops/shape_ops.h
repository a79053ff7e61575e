// Factories of the shape and indexing operators (ops-shape-indexing.md) beyond those in ops.h, one line each in op_table.cc.
#pragma once
#include <memory>

#include "runtime/kernel.h"

namespace onemodel::rt {

}  // namespace onemodel::rt
