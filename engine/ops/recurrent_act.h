// The activation functions of the recurrent operators (ops-recurrent.md "Activations"): parsed once from the
// node's `activations`, `activation_alpha` and `activation_beta` attributes, applied per gate element. Every
// function is either compares/selects and rounded IEEE operations or the exact transcendentals, so one
// implementation serves both modes and is bit-identical everywhere.
#pragma once
#include <string>
#include <vector>

#include "runtime/kernel.h"

namespace onemodel::rt::recurrent {

enum class ActKind {
  Relu,
  Tanh,
  Sigmoid,
  Affine,
  LeakyRelu,
  ThresholdedRelu,
  ScaledTanh,
  HardSigmoid,
  Elu,
  Softsign,
  Softplus
};

struct Activation {
  ActKind kind = ActKind::Tanh;
  float alpha = 0.0f;
  float beta = 0.0f;
  float operator()(float x) const noexcept;
};

// The activations of each direction (`per_direction` entries per direction, `dirs` directions). Names match
// case-insensitively; a bidirectional layer may list one set (shared) or one set per direction. Alpha and
// beta are consumed with separate cursors, one value per activation that takes the parameter; missing values
// take the activation's own defaults. Throws Unsupported (naming the node) for unknown names, InvalidModel for
// a list of the wrong length.
std::vector<std::vector<Activation>> parse_activations(const NodeInfo& info, int dirs, int per_direction,
                                                       const std::vector<std::string>& defaults);

}  // namespace onemodel::rt::recurrent
