// Symbolic dimensions of the graph builder (docs/model-building.md section 2). A dimension is an interned
// expression: a constant, a named symbol (an input's axis), or + - * floor-/ min max of two expressions. Equal
// expressions get equal ids, so comparing, hashing and copying a dimension costs one integer and building an
// operation never clones an expression tree: that keeps the build cost per operation constant however long the
// graph grows (the quadratic defect of traced-tensor-notes.md).
//
// Products are kept canonical, as coefficient x sorted product of atoms (an atom is a symbol or any expression
// that is not a product), so x*64 / 64 is x again and a reshape's -1 axis comes out as the expected product.
//
// Every expression also carries its value at two probe bindings (every symbol gets two distinct primes): the
// builder checks the runtime's shape inference at those bindings against the expressions it states.
#pragma once
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace onemodel::build {

using DimId = int32_t;

class DimTable {
 public:
  enum class Op : uint8_t { Const, Symbol, Product, Add, Sub, Div, Min, Max };
  static constexpr int kProbes = 2;

  DimId constant(int64_t c);
  DimId symbol(const std::string& name);  // the same name gives the same id
  DimId add(DimId a, DimId b);
  DimId sub(DimId a, DimId b);
  DimId mul(DimId a, DimId b);
  DimId div(DimId a, DimId b);  // floor division; the exact quotient when b's product divides a's
  DimId min(DimId a, DimId b);
  DimId max(DimId a, DimId b);

  bool is_constant(DimId d) const { return nodes_[d].op == Op::Const; }
  int64_t constant_value(DimId d) const { return nodes_[d].c; }
  int64_t probe(DimId d, int k) const { return nodes_[d].probe[k]; }
  // The value under `symbols` (symbol name -> extent); `ok` false when a symbol is unbound or a division is by 0.
  int64_t evaluate(DimId d, const std::unordered_map<std::string, int64_t>& symbols, bool& ok) const;
  std::string to_string(DimId d) const;  // "64", "batch", "(seq + 2)", "2*batch*seq"
  const std::vector<std::string>& symbols() const { return symbol_names_; }
  // d as coefficient x product of atoms (appended to `atoms`; `coef` multiplied).
  void factors(DimId d, int64_t& coef, std::vector<DimId>& atoms) const;

 private:
  struct Node {
    Op op = Op::Const;
    int64_t c = 0;             // Const: the value; Product: the coefficient; Symbol: index in symbol_names_
    DimId a = -1, b = -1;      // operands of Add, Sub, Div, Min, Max
    std::vector<DimId> atoms;  // Product: sorted atom ids (repeats allowed)
    int64_t probe[kProbes] = {};
  };
  DimId intern(Node n);
  DimId binary(Op op, DimId a, DimId b);
  DimId product(int64_t coef, std::vector<DimId> atoms);
  int64_t probe_of(const Node& n, int k) const;

  std::vector<Node> nodes_;
  std::unordered_map<std::string, DimId> index_;  // the interning key of every node
  std::vector<std::string> symbol_names_;
};

}  // namespace onemodel::build
