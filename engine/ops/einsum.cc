// Einsum (ONNX opset 12+): explicit ("ij,jk->ik") and implicit ("ij,jk") forms, ellipses with numpy
// broadcasting of the ellipsis extents, repeated labels within one term (diagonals). Computed by a plain
// loop over every label combination: output labels outer, summed labels inner in row-major order, so each
// output element is one sequential sum of products, the same bits in fast and exact mode and on every
// machine (-ffp-contract=off, no reassociation). Integer products and sums wrap around.
#include <algorithm>
#include <cstring>
#include <map>
#include <type_traits>

#include "ops/index_util.h"
#include "ops/ops.h"

namespace onemodel::rt {
namespace {

constexpr int kEllipsisBase = 1000;  // label ids of ellipsis dims: kEllipsisBase + position from the left

struct Term {
  std::vector<char> letters;  // in order; '.' marks the ellipsis position
};

Term parse_term(const NodeInfo& info, const std::string& s) {
  Term t;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '.') {
      if (s.compare(i, 3, "...") != 0)
        info.fail(ErrorKind::InvalidModel, "malformed ellipsis in equation term '" + s + "'");
      if (std::count(t.letters.begin(), t.letters.end(), '.') != 0)
        info.fail(ErrorKind::InvalidModel, "two ellipses in term '" + s + "'");
      t.letters.push_back('.');
      i += 2;
    } else if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
      t.letters.push_back(c);
    } else {
      info.fail(ErrorKind::InvalidModel, std::string("unexpected character '") + c + "' in equation");
    }
  }
  return t;
}

// The whole contraction: label extents, each operand's per-label strides, the output labels.
struct Plan {
  std::vector<int> out_labels, sum_labels;
  std::map<int, int64_t> extent;
  std::vector<std::map<int, int64_t>> strides;  // per input: label -> element stride (summed for repeats)
  std::vector<int64_t> out_dims;
};

// Label ids of term t for an operand of `rank` (ellipsis dims right-aligned against `ell` dims in all).
std::vector<int> term_labels(const NodeInfo& info, const Term& t, int rank, int ell_total, int& ell_here) {
  const int named =
      static_cast<int>(std::count_if(t.letters.begin(), t.letters.end(), [](char c) { return c != '.'; }));
  const bool has_ell = named != static_cast<int>(t.letters.size());
  ell_here = has_ell ? rank - named : 0;
  if (ell_here < 0 || (!has_ell && named != rank))
    info.fail(ErrorKind::InvalidModel,
              "equation term has " + std::to_string(named) + " labels for rank " + std::to_string(rank));
  std::vector<int> ids;
  for (char c : t.letters) {
    if (c != '.') {
      ids.push_back(static_cast<unsigned char>(c));
      continue;
    }
    for (int k = 0; k < ell_here; ++k) ids.push_back(kEllipsisBase + (ell_total - ell_here) + k);
  }
  return ids;
}

Plan make_plan(const NodeInfo& info, const std::string& equation, const std::vector<Shape>& shapes) {
  std::string eq;
  for (char c : equation)
    if (c != ' ') eq += c;
  const size_t arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  std::vector<Term> terms;
  size_t at = 0;
  while (true) {
    const size_t comma = lhs.find(',', at);
    terms.push_back(parse_term(info, lhs.substr(at, comma == std::string::npos ? std::string::npos : comma - at)));
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  if (terms.size() != shapes.size())
    info.fail(ErrorKind::InvalidModel, "equation has " + std::to_string(terms.size()) + " terms for " +
                                           std::to_string(shapes.size()) + " inputs");
  int ell_total = 0;
  for (size_t i = 0; i < terms.size(); ++i) {
    const int named = static_cast<int>(
        std::count_if(terms[i].letters.begin(), terms[i].letters.end(), [](char c) { return c != '.'; }));
    ell_total = std::max(ell_total, shapes[i].rank() - named);
  }
  Plan p;
  p.strides.resize(shapes.size());
  std::map<int, int> uses;
  for (size_t i = 0; i < terms.size(); ++i) {
    int ell_here = 0;
    const std::vector<int> ids = term_labels(info, terms[i], shapes[i].rank(), ell_total, ell_here);
    const std::vector<int64_t> st = row_strides(shapes[i]);
    for (size_t d = 0; d < ids.size(); ++d) {
      const int id = ids[d];
      const int64_t n = shapes[i][static_cast<int>(d)];
      auto it = p.extent.find(id);
      const bool ell = id >= kEllipsisBase;
      if (it == p.extent.end() || (ell && it->second == 1)) {
        p.extent[id] = n;
      } else if (it->second != n && !(ell && n == 1)) {
        info.fail(ErrorKind::InvalidModel,
                  "label extents disagree (" + std::to_string(it->second) + " and " + std::to_string(n) + ")");
      }
      if (!(ell && n == 1)) p.strides[i][id] += st[d];  // a broadcast ellipsis dim keeps stride 0
      ++uses[id];
    }
  }
  if (arrow != std::string::npos) {
    const Term out = parse_term(info, eq.substr(arrow + 2));
    for (char c : out.letters) {
      if (c == '.') {
        for (int k = 0; k < ell_total; ++k) p.out_labels.push_back(kEllipsisBase + k);
        continue;
      }
      const int id = static_cast<unsigned char>(c);
      if (!p.extent.count(id))
        info.fail(ErrorKind::InvalidModel, std::string("output label '") + c + "' is not in any input");
      if (std::count(p.out_labels.begin(), p.out_labels.end(), id) != 0)
        info.fail(ErrorKind::InvalidModel, "output label repeated");
      p.out_labels.push_back(id);
    }
  } else {
    // Implicit form: the ellipsis dims, then the labels used once, in alphabetical order.
    for (int k = 0; k < ell_total; ++k) p.out_labels.push_back(kEllipsisBase + k);
    for (const auto& [id, n] : uses)
      if (id < kEllipsisBase && n == 1) p.out_labels.push_back(id);
  }
  for (const auto& [id, n] : p.extent)
    if (std::find(p.out_labels.begin(), p.out_labels.end(), id) == p.out_labels.end()) p.sum_labels.push_back(id);
  for (int id : p.out_labels) p.out_dims.push_back(p.extent.count(id) ? p.extent[id] : 1);
  return p;
}

template <class T>
T mul(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) * static_cast<U>(b)));
  } else {
    return a * b;
  }
}
template <class T>
T add(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
  } else {
    return a + b;
  }
}

template <class T>
void contract(const Plan& p, std::span<const Tensor> ins, T* out) {
  std::vector<int> labels = p.out_labels;
  labels.insert(labels.end(), p.sum_labels.begin(), p.sum_labels.end());
  const size_t L = labels.size(), nin = ins.size();
  std::vector<int64_t> ext(L);
  std::vector<std::vector<int64_t>> st(nin, std::vector<int64_t>(L, 0));
  for (size_t l = 0; l < L; ++l) {
    ext[l] = p.extent.count(labels[l]) ? p.extent.at(labels[l]) : 1;
    for (size_t i = 0; i < nin; ++i) {
      auto it = p.strides[i].find(labels[l]);
      if (it != p.strides[i].end()) st[i][l] = it->second;
    }
  }
  int64_t out_n = 1, sum_n = 1;
  for (size_t l = 0; l < L; ++l) (l < p.out_labels.size() ? out_n : sum_n) *= ext[l];
  std::vector<const T*> base(nin);
  for (size_t i = 0; i < nin; ++i) base[i] = static_cast<const T*>(ins[i].raw());
  std::vector<int64_t> idx(L, 0), off(nin, 0);
  for (int64_t o = 0; o < out_n; ++o) {
    T acc = T(0);
    for (int64_t s = 0; s < sum_n; ++s) {
      T prod = base[0][off[0]];
      for (size_t i = 1; i < nin; ++i) prod = mul(prod, base[i][off[i]]);
      acc = add(acc, prod);
      // Odometer over all labels (summed labels are innermost).
      for (size_t l = L; l-- > 0;) {
        for (size_t i = 0; i < nin; ++i) off[i] += st[i][l];
        if (++idx[l] < ext[l]) break;
        for (size_t i = 0; i < nin; ++i) off[i] -= st[i][l] * ext[l];
        idx[l] = 0;
      }
    }
    out[o] = acc;
  }
}

class EinsumKernel final : public Kernel {
 public:
  explicit EinsumKernel(std::string eq) : Kernel(KernelFlags{.exact = true}), eq_(std::move(eq)) {}

  void infer(InferContext& ctx) const override {
    if (ctx.inputs.empty()) ctx.fail(ErrorKind::InvalidModel, "expects at least one input");
    std::vector<Shape> shapes;
    for (size_t i = 0; i < ctx.inputs.size(); ++i) {
      if (!ctx.has_input(i)) ctx.fail(ErrorKind::InvalidModel, "input " + std::to_string(i) + " is missing");
      if (ctx.input(i).dtype != ctx.input(0).dtype) ctx.fail(ErrorKind::InvalidModel, "inputs differ in element type");
      shapes.push_back(ctx.input(i).shape);
    }
    const DType t = ctx.input(0).dtype;
    if (t == DType::Bool || !visit_numeric(t, [](auto) {}))
      ctx.fail(ErrorKind::Unsupported, "element type " + type_str(t) + " is not supported");
    ctx.set_output(0, t, checked_shape(ctx, make_plan(ctx.info, eq_, shapes).out_dims));
  }

  void run(RunContext& ctx) const override {
    std::vector<Shape> shapes;
    for (const Tensor& t : ctx.inputs) shapes.push_back(t.shape());
    const Plan p = make_plan(ctx.info, eq_, shapes);
    if (ctx.output(0).numel() == 0) return;
    visit_numeric(ctx.output(0).dtype(),
                  [&](auto z) { contract(p, ctx.inputs, static_cast<decltype(z)*>(ctx.output(0).raw_mut())); });
  }

 private:
  std::string eq_;
};

}  // namespace

std::unique_ptr<Kernel> make_einsum(const NodeInfo& info) {
  if (!info.has("equation")) info.fail(ErrorKind::InvalidModel, "needs the equation attribute");
  return std::make_unique<EinsumKernel>(info.get_string("equation", ""));
}

}  // namespace onemodel::rt
