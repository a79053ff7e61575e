// The deterministic double-precision exp, ln and logadd of the CTC beam search (ctc.md section 5): only
// + - * /, comparisons and exact floor, one rounding per operation in the written order, so native and wasm
// give the same bits (the tree is compiled with -ffp-contract=off). Exposed here for the tests.
#pragma once

namespace onemodel::ctc {

double det_exp(double x) noexcept;
double det_ln(double x) noexcept;
// ln(e^a + e^b).
double det_logadd(double a, double b) noexcept;

}  // namespace onemodel::ctc
