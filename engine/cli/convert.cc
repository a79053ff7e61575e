// `onemodel convert IN OUT [--weight-storage float32|float16|bfloat16]`: writes IN (ONNX, or already the
// OneModel format) as a .onemodel file through the public API (onemodel/model_format.h, docs/format.md).
#include <cstdio>
#include <filesystem>

#include "cli/cli.h"
#include "onemodel/model_format.h"

namespace onemodel::cli {

int cmd_convert(const std::vector<std::string>& args) {
  std::vector<std::string> paths;
  ConvertOptions options;
  for (size_t k = 0; k < args.size(); ++k) {
    std::string a = args[k], value;
    if (a.rfind("--weight-storage", 0) == 0) {
      if (a.size() > 16 && a[16] == '=') {
        value = a.substr(17);
      } else if (a.size() == 16) {
        if (k + 1 >= args.size()) throw UsageError("--weight-storage needs a value");
        value = args[++k];
      } else {
        throw UsageError("unknown option '" + a + "'");
      }
      options.weight_storage = parse_weight_storage(value);
    } else if (a.size() > 1 && a[0] == '-') {
      throw UsageError("unknown option '" + a + "'");
    } else {
      paths.push_back(a);
    }
  }
  if (paths.size() != 2) throw UsageError("convert takes an input MODEL and an OUTPUT path");
  model_format::convert(paths[0], paths[1], options);
  std::printf("wrote %s (%llu bytes) from %s (%llu bytes)\n", paths[1].c_str(),
              static_cast<unsigned long long>(std::filesystem::file_size(paths[1])), paths[0].c_str(),
              static_cast<unsigned long long>(std::filesystem::file_size(paths[0])));
  return 0;
}

}  // namespace onemodel::cli
