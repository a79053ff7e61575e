// Activation parsing and evaluation for RNN, GRU and LSTM (ops-recurrent.md "Activations").
#include "ops/recurrent_act.h"

#include <cctype>
#include <cmath>

#include "kernels/exact_math.h"

namespace onemodel::rt::recurrent {
namespace {

std::string lower(const std::string& s) {
  std::string r = s;
  for (char& ch : r) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return r;
}

struct ActName {
  const char* name;
  ActKind kind;
  bool takes_alpha, takes_beta;
  float alpha, beta;  // defaults
};

constexpr ActName kNames[] = {
    {"relu", ActKind::Relu, false, false, 0.0f, 0.0f},
    {"tanh", ActKind::Tanh, false, false, 0.0f, 0.0f},
    {"sigmoid", ActKind::Sigmoid, false, false, 0.0f, 0.0f},
    {"affine", ActKind::Affine, true, true, 1.0f, 0.0f},
    {"leakyrelu", ActKind::LeakyRelu, true, false, 0.01f, 0.0f},
    {"thresholdedrelu", ActKind::ThresholdedRelu, true, false, 1.0f, 0.0f},
    {"scaledtanh", ActKind::ScaledTanh, true, true, 1.0f, 0.0f},
    {"hardsigmoid", ActKind::HardSigmoid, true, true, 0.2f, 0.5f},
    {"elu", ActKind::Elu, true, false, 1.0f, 0.0f},
    {"softsign", ActKind::Softsign, false, false, 0.0f, 0.0f},
    {"softplus", ActKind::Softplus, false, false, 0.0f, 0.0f},
};

}  // namespace

float Activation::operator()(float x) const noexcept {
  switch (kind) {
    case ActKind::Relu: return (x < 0.0f || x == 0.0f) ? 0.0f : x;  // NaN passes, -0 becomes +0
    case ActKind::Tanh: return kern::exact_tanh(x);
    case ActKind::Sigmoid: return kern::exact_sigmoid(x);
    case ActKind::Affine: {
      const float p = alpha * x;
      return p + beta;
    }
    case ActKind::LeakyRelu: return x < 0.0f ? alpha * x : x;
    case ActKind::ThresholdedRelu: return x > alpha ? x : 0.0f;
    case ActKind::ScaledTanh: {
      const float u = beta * x;
      return alpha * kern::exact_tanh(u);
    }
    case ActKind::HardSigmoid: {
      const float p = alpha * x;
      const float v = p + beta;
      return v < 0.0f ? 0.0f : (v > 1.0f ? 1.0f : v);  // NaN passes through
    }
    case ActKind::Elu: {
      if (x >= 0.0f) return x;
      const float e = kern::exact_exp(x);
      return alpha * (e - 1.0f);
    }
    case ActKind::Softsign: {
      const float d = 1.0f + std::fabs(x);
      return x / d;
    }
    case ActKind::Softplus: {
      if (x > 20.0f) return x;
      const float e = kern::exact_exp(x);
      return kern::exact_log(1.0f + e);
    }
  }
  return x;
}

std::vector<std::vector<Activation>> parse_activations(const NodeInfo& info, int dirs, int per_direction,
                                                       const std::vector<std::string>& defaults) {
  std::vector<std::string> names;
  if (const ir::Attribute* a = info.find("activations")) {
    if (a->type != ir::AttrType::Strings)
      info.fail(ErrorKind::InvalidModel, "attribute 'activations' must be a list of strings");
    names = a->strings;
  }
  if (names.empty()) names = defaults;
  const auto n = static_cast<size_t>(per_direction);
  if (names.size() != n && names.size() != n * static_cast<size_t>(dirs))
    info.fail(ErrorKind::InvalidModel, "'activations' lists " + std::to_string(names.size()) + " functions, expected " +
                                           std::to_string(n) +
                                           (dirs == 2 ? " or " + std::to_string(2 * n) : std::string()));
  const std::vector<float> alphas = info.get_floats("activation_alpha");
  const std::vector<float> betas = info.get_floats("activation_beta");
  size_t ai = 0, bi = 0;  // separate cursors (ops-recurrent.md)
  std::vector<Activation> parsed;
  for (const std::string& raw : names) {
    const std::string nm = lower(raw);
    const ActName* found = nullptr;
    for (const ActName& c : kNames)
      if (nm == c.name) found = &c;
    if (!found) info.fail(ErrorKind::Unsupported, "activation function '" + raw + "' is not supported");
    Activation act{found->kind, found->alpha, found->beta};
    if (found->takes_alpha && ai < alphas.size()) act.alpha = alphas[ai++];
    if (found->takes_beta && bi < betas.size()) act.beta = betas[bi++];
    parsed.push_back(act);
  }
  std::vector<std::vector<Activation>> out(static_cast<size_t>(dirs));
  for (size_t d = 0; d < out.size(); ++d) {
    const size_t base = parsed.size() == n ? 0 : d * n;
    out[d].assign(parsed.begin() + static_cast<std::ptrdiff_t>(base),
                  parsed.begin() + static_cast<std::ptrdiff_t>(base + n));
  }
  return out;
}

}  // namespace onemodel::rt::recurrent
