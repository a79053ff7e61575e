#include "onemodel/onemodel.h"

namespace onemodel {
const char* version() noexcept { return ONEMODEL_VERSION; }
}  // namespace onemodel
