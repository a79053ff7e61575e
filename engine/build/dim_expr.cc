#include "build/dim_expr.h"

#include <algorithm>
#include <climits>
#include <cstring>

namespace onemodel::build {
namespace {

constexpr int64_t kBad = INT64_MIN;  // a probe value that overflowed or divided by zero

bool is_prime(int64_t n) {
  for (int64_t d = 2; d * d <= n; ++d)
    if (n % d == 0) return false;
  return n > 1;
}

// The k-th prime from `from` on: symbol k's probe value. Primes far from the small fixed extents models use
// (1, 3, 64, 128...) make a false match of two expressions at both bindings unlikely.
int64_t nth_prime_from(int64_t from, size_t k) {
  int64_t p = from - 1;
  for (size_t i = 0; i <= k; ++i) {
    ++p;
    while (!is_prime(p)) ++p;
  }
  return p;
}

int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

int64_t apply(DimTable::Op op, int64_t x, int64_t y) {
  if (x == kBad || y == kBad) return kBad;
  int64_t r = 0;
  switch (op) {
    case DimTable::Op::Add: return __builtin_add_overflow(x, y, &r) ? kBad : r;
    case DimTable::Op::Sub: return __builtin_sub_overflow(x, y, &r) ? kBad : r;
    case DimTable::Op::Div: return y == 0 ? kBad : floor_div(x, y);
    case DimTable::Op::Min: return std::min(x, y);
    case DimTable::Op::Max: return std::max(x, y);
    default: return kBad;
  }
}

void append_bytes(std::string& key, const void* p, size_t n) { key.append(static_cast<const char*>(p), n); }

}  // namespace

int64_t DimTable::probe_of(const Node& n, int k) const {
  switch (n.op) {
    case Op::Const: return n.c;
    case Op::Symbol: return nth_prime_from(k == 0 ? 67 : 131, static_cast<size_t>(n.c));
    case Op::Product: {
      int64_t v = n.c;
      for (DimId a : n.atoms) {
        int64_t x = nodes_[a].probe[k];
        if (x == kBad || __builtin_mul_overflow(v, x, &v)) return kBad;
      }
      return v;
    }
    default: return apply(n.op, nodes_[n.a].probe[k], nodes_[n.b].probe[k]);
  }
}

DimId DimTable::intern(Node n) {
  std::string key;
  key.push_back(static_cast<char>(n.op));
  append_bytes(key, &n.c, sizeof n.c);
  append_bytes(key, &n.a, sizeof n.a);
  append_bytes(key, &n.b, sizeof n.b);
  if (!n.atoms.empty()) append_bytes(key, n.atoms.data(), n.atoms.size() * sizeof(DimId));
  auto [it, fresh] = index_.try_emplace(std::move(key), static_cast<DimId>(nodes_.size()));
  if (!fresh) return it->second;
  for (int k = 0; k < kProbes; ++k) n.probe[k] = probe_of(n, k);
  nodes_.push_back(std::move(n));
  return it->second;
}

DimId DimTable::constant(int64_t c) {
  Node n;
  n.op = Op::Const;
  n.c = c;
  return intern(std::move(n));
}

DimId DimTable::symbol(const std::string& name) {
  auto found = std::find(symbol_names_.begin(), symbol_names_.end(), name);
  Node n;
  n.op = Op::Symbol;
  n.c = found - symbol_names_.begin();
  if (found == symbol_names_.end()) symbol_names_.push_back(name);
  return intern(std::move(n));
}

void DimTable::factors(DimId d, int64_t& coef, std::vector<DimId>& atoms) const {
  const Node& n = nodes_[d];
  if (n.op == Op::Const) {
    coef *= n.c;
  } else if (n.op == Op::Product) {
    coef *= n.c;
    atoms.insert(atoms.end(), n.atoms.begin(), n.atoms.end());
  } else {
    atoms.push_back(d);
  }
}

DimId DimTable::product(int64_t coef, std::vector<DimId> atoms) {
  if (coef == 0 || atoms.empty()) return constant(coef);
  std::sort(atoms.begin(), atoms.end());
  if (coef == 1 && atoms.size() == 1) return atoms[0];
  Node n;
  n.op = Op::Product;
  n.c = coef;
  n.atoms = std::move(atoms);
  return intern(std::move(n));
}

DimId DimTable::mul(DimId a, DimId b) {
  int64_t coef = 1;
  std::vector<DimId> atoms;
  factors(a, coef, atoms);
  factors(b, coef, atoms);
  return product(coef, std::move(atoms));
}

DimId DimTable::div(DimId a, DimId b) {
  int64_t ca = 1, cb = 1;
  std::vector<DimId> aa, ab;
  factors(a, ca, aa);
  factors(b, cb, ab);
  if (cb != 0 && ca % cb == 0) {  // exact when every atom of b cancels one of a
    std::sort(aa.begin(), aa.end());
    std::sort(ab.begin(), ab.end());
    if (std::includes(aa.begin(), aa.end(), ab.begin(), ab.end())) {
      std::vector<DimId> rest;
      std::set_difference(aa.begin(), aa.end(), ab.begin(), ab.end(), std::back_inserter(rest));
      return product(ca / cb, std::move(rest));
    }
  }
  return binary(Op::Div, a, b);
}

DimId DimTable::add(DimId a, DimId b) {
  if (is_constant(b) && constant_value(b) == 0) return a;
  if (is_constant(a) && constant_value(a) == 0) return b;
  return binary(Op::Add, std::min(a, b), std::max(a, b));
}

DimId DimTable::sub(DimId a, DimId b) {
  if (a == b) return constant(0);
  if (is_constant(b) && constant_value(b) == 0) return a;
  return binary(Op::Sub, a, b);
}

DimId DimTable::min(DimId a, DimId b) { return a == b ? a : binary(Op::Min, std::min(a, b), std::max(a, b)); }
DimId DimTable::max(DimId a, DimId b) { return a == b ? a : binary(Op::Max, std::min(a, b), std::max(a, b)); }

DimId DimTable::binary(Op op, DimId a, DimId b) {
  if (is_constant(a) && is_constant(b)) {
    int64_t v = apply(op, constant_value(a), constant_value(b));
    if (v != kBad) return constant(v);
  }
  Node n;
  n.op = op;
  n.a = a;
  n.b = b;
  return intern(std::move(n));
}

int64_t DimTable::evaluate(DimId d, const std::unordered_map<std::string, int64_t>& symbols, bool& ok) const {
  const Node& n = nodes_[d];
  switch (n.op) {
    case Op::Const: return n.c;
    case Op::Symbol: {
      auto it = symbols.find(symbol_names_[static_cast<size_t>(n.c)]);
      if (it == symbols.end()) ok = false;
      return it == symbols.end() ? 0 : it->second;
    }
    case Op::Product: {
      int64_t v = n.c;
      for (DimId a : n.atoms)
        if (__builtin_mul_overflow(v, evaluate(a, symbols, ok), &v)) ok = false;
      return v;
    }
    default: {
      int64_t v = apply(n.op, evaluate(n.a, symbols, ok), evaluate(n.b, symbols, ok));
      if (v == kBad) ok = false;
      return v == kBad ? 0 : v;
    }
  }
}

std::string DimTable::to_string(DimId d) const {
  const Node& n = nodes_[d];
  switch (n.op) {
    case Op::Const: return std::to_string(n.c);
    case Op::Symbol: return symbol_names_[static_cast<size_t>(n.c)];
    case Op::Product: {
      std::string s = n.c == 1 ? "" : std::to_string(n.c);
      for (DimId a : n.atoms) s += (s.empty() ? "" : "*") + to_string(a);
      return s;
    }
    case Op::Add: {  // the constant term last, a negative one as a subtraction: "(H - 1)"
      DimId x = is_constant(n.a) ? n.b : n.a, c = is_constant(n.a) ? n.a : n.b;
      if (is_constant(c) && constant_value(c) < 0)
        return "(" + to_string(x) + " - " + std::to_string(-constant_value(c)) + ")";
      return "(" + to_string(x) + " + " + to_string(c) + ")";
    }
    case Op::Sub: return "(" + to_string(n.a) + " - " + to_string(n.b) + ")";
    case Op::Div: return "(" + to_string(n.a) + " / " + to_string(n.b) + ")";
    case Op::Min: return "min(" + to_string(n.a) + ", " + to_string(n.b) + ")";
    case Op::Max: return "max(" + to_string(n.a) + ", " + to_string(n.b) + ")";
  }
  return "?";
}

}  // namespace onemodel::build
