// Umbrella header of the public C++ API.
#pragma once
#include "onemodel/ctc.h"
#include "onemodel/dtype.h"
#include "onemodel/error.h"
#include "onemodel/model.h"
#include "onemodel/model_format.h"
#include "onemodel/session.h"
#include "onemodel/tensor.h"
#include "onemodel/value.h"

namespace onemodel {
// Library version, "MAJOR.MINOR.PATCH".
const char* version() noexcept;
}  // namespace onemodel
