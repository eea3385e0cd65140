// GoogleTest comparison helpers that check every element of O and LSE against a reference
// (dense FP32 layout: row t, head h at (t * heads + h) * 512, LSE at t * heads + h).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace mla_test {

// Tolerances for a path whose output is BF16 and which keeps Q in bf16.
//  - O, per (token, head) row of 512, element ref:
//      |got - ref| <= max(o_row_rel * max|ref over the row| + o_atol, o_bf16_ulps * ulp(ref))
//    with ulp(ref) the bf16 spacing at |ref|. "Within bf16 output rounding" (SPEC): the output
//    may be either bf16 neighbour of the exact value (one ulp; the fp32 value rounded can sit
//    on the other side of a midpoint after any accumulation-order difference), and small
//    elements may carry fp32 / f16 accumulation error up to 2^-8 of the row's largest one.
//  - LSE: |got - ref| <= lse_atol + lse_rtol * |ref|; -inf must be exactly -inf.
struct Tolerance {
    double o_row_rel = 1.0 / 256.0;
    double o_bf16_ulps = 1.0;
    double o_atol = 1e-6;
    double lse_atol = 1e-3;
    double lse_rtol = 1e-5;
};

// For FP32 outputs of double math against fp64 math cast to fp32: a few fp32 ulps of the row
// maximum (host reference against the known-answer vectors, or against a naive evaluation).
Tolerance fp32_tolerance();

// Every element of O (total_q x heads x 512, dense). NaN always fails; a row whose reference
// is all zero (a query that sees no token) must be exactly zero.
::testing::AssertionResult check_o(const float* got, const float* ref, int64_t total_q, int heads,
                                   const Tolerance& tol = Tolerance());
::testing::AssertionResult check_o(const std::vector<float>& got, const std::vector<float>& ref,
                                   int64_t total_q, int heads, const Tolerance& tol = Tolerance());

// The worst |got - ref| / allowed over O's elements, allowed as check_o states it: <= 1 where
// check_o passes; infinity for NaN (an infinite value beside an equal one too: check_o fails
// it), a buffer too small, or a difference where 0 is allowed.
// For tests that print their margin beside the pass / fail.
double worst_o_ratio(const std::vector<float>& got, const std::vector<float>& ref,
                     int64_t total_q, int heads, const Tolerance& tol = Tolerance());

// Every one of the n LSE values. NaN always fails; -inf (or any non-finite reference) must
// match exactly.
::testing::AssertionResult check_lse(const float* got, const float* ref, int64_t n,
                                     const Tolerance& tol = Tolerance());
::testing::AssertionResult check_lse(const std::vector<float>& got, const std::vector<float>& ref,
                                     const Tolerance& tol = Tolerance());

// BF16 O with a row stride (elements) -> dense FP32 (total_q x heads x 512), exact.
std::vector<float> dense_o_from_bf16(const uint16_t* o, int64_t total_q, int heads,
                                     int64_t o_stride_token);

// FP32 O with a row stride (elements) -> dense FP32.
std::vector<float> dense_o_from_fp32(const float* o, int64_t total_q, int heads,
                                     int64_t o_stride_token);

// SPEC's rule for a path that runs Q in fp8: |got - ref| <= 8e-3 + 2e-2 |ref|. Returns the worst
// ratio of error to that bound over the values (infinity for NaN, or for a non-finite reference
// not matched exactly).
double worst_fp8_rule_ratio(const std::vector<float>& got, const std::vector<float>& ref);

}  // namespace mla_test
