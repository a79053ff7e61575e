#include "onemodel/error.h"

namespace onemodel {

std::string_view error_kind_name(ErrorKind k) noexcept {
  switch (k) {
    case ErrorKind::Malformed: return "Malformed";
    case ErrorKind::InvalidModel: return "InvalidModel";
    case ErrorKind::Unsupported: return "Unsupported";
    case ErrorKind::ExternalData: return "ExternalData";
    case ErrorKind::Io: return "Io";
    case ErrorKind::UnsupportedOperator: return "UnsupportedOperator";
    case ErrorKind::ExactModeUnavailable: return "ExactModeUnavailable";
    case ErrorKind::InvalidInput: return "InvalidInput";
    case ErrorKind::Disposed: return "Disposed";
    case ErrorKind::InvalidArgument: return "InvalidArgument";
    case ErrorKind::Internal: return "Internal";
    case ErrorKind::GraphBuild: return "GraphBuild";
    case ErrorKind::Compile: return "Compile";
    case ErrorKind::DataDependent: return "DataDependent";
    case ErrorKind::InPlaceMutation: return "InPlaceMutation";
    case ErrorKind::SymbolicShape: return "SymbolicShape";
    case ErrorKind::InvalidUsage: return "InvalidUsage";
    case ErrorKind::UnsupportedOperation: return "UnsupportedOperation";
  }
  return "Internal";
}

Error::Error(ErrorKind kind, std::string message) : kind_(kind), message_(std::move(message)) { rebuild(); }

Error& Error::with_source(std::string s) {
  source_ = std::move(s);
  rebuild();
  return *this;
}
Error& Error::with_offset(int64_t o) {
  offset_ = o;
  rebuild();
  return *this;
}
Error& Error::with_field_path(std::string p) {
  field_path_ = std::move(p);
  rebuild();
  return *this;
}
Error& Error::with_node(std::string n) {
  node_ = std::move(n);
  rebuild();
  return *this;
}
Error& Error::with_operators(std::vector<std::string> ops) {
  operators_ = std::move(ops);
  rebuild();
  return *this;
}

void Error::rebuild() {
  what_ = std::string(error_kind_name(kind_)) + ": " + message_;
  std::string where;
  auto add = [&](const std::string& part) {
    where += where.empty() ? " [" : ", ";
    where += part;
  };
  if (!source_.empty()) add("in " + source_);
  if (offset_ >= 0) add("offset " + std::to_string(offset_));
  if (!field_path_.empty()) add("field " + field_path_);
  if (!node_.empty()) add("node '" + node_ + "'");
  if (!where.empty()) what_ += where + "]";
}

}  // namespace onemodel
