// The tolerance of the fp8 tensor-core path, derived element by element from the problem.
//
// The path: stage-1 variant wgmma with e4m3fn Q on an e4m3fn cache computes the scores
// S = K Q^T on m64nNk32 e4m3 wgmma from the raw codes (kernels/splitkv/stage1/wgmma.h,
// kScores = kE4M3); everything after the scores (exp2, P in f16, V decoded to f16, f32 sums,
// bf16 output) is the same as on the bf16-Q paths.
//
// Error model of one score. The e4m3 products are exact (4 x 4 significant bits), but the
// tensor core adds each k32 step's products to its f32 accumulator keeping about 13
// significant bits, truncating (Hopper's fp8 MMA returns f32 values whose 10 low mantissa bits
// are zero). Every partial sum of the score s_j = c sum_i q_i k_ji (c = sm_scale q_scale
// kv_scale, natural-log units) is bounded by A_j = c sum_i |q_i k_ji|, so each of the 18 k32
// steps errs by less than 2^-13 A_j and
//     |ds_j| <= eps A_j,   eps = kFp8MmaScoreRel = 18 x 2^-13 (2.2e-3).
// (The kernel's two accumulator chains at 16 and 32 rows split the same 18 steps.) The error
// scales with A, not with the score: a truncating accumulator errs in proportion to its partial
// sums, which cancellation can leave far larger than the final score (a score of 0 can carry
// an error of eps A), so a bound relative to |max logit| alone would not hold; A bounds every
// partial sum. For the tests' Gaussian inputs A is about 15x the logits' standard deviation
// (576 terms: A = c 576 sqrt(2/pi)^2 sigma_q sigma_k against sqrt(576) c sigma_q sigma_k),
// about 4x the row's largest |logit|. Measured on the H200 (earlier three-role kernel, Q std
// 100): LSE off by 3e-3 where this bound allows ~3 -- the bound is the worst case of the model,
// the test output prints the measured eps (max |dLSE| / A) beside it.
//
// Per row with delta = eps max_j A_j over its visible tokens j:
//  * LSE: LSE' - LSE = log sum_j p_j e^{ds_j} lies in [min ds, max ds], so |dLSE| <= delta,
//    added to base's allowance (lse_atol + lse_rtol |LSE|).
//  * O: the weights p'_j = p_j e^{ds_j} / sum_k p_k e^{ds_k} are within a factor e^{+-2 delta} of
//    p_j and sum_j (p'_j - p_j) = 0, so
//        |dO_d| = |sum_j (p'_j - p_j) (v_jd - O_d)| <= (e^{2 delta} - 1) MAD_d,
//        MAD_d = sum_j p_j |v_jd - O_d|,
//    added to base's allowance, and never more than SPEC's fp8-Q rule (kSpecFp8QAtol +
//    kSpecFp8QRtol |ref|): the tighter of the two. Small logits (randn x 0.02) keep about the
//    bf16 tolerance, unit logits end at SPEC's rule, large logits (Q std 100: a nearly one-hot
//    softmax, MAD ~ 0) mostly keep the bf16 tolerance, SPEC's rule near ties.
#pragma once

#include <string>
#include <vector>

#include "compare.h"
#include "mla_problem.h"

namespace mla_test {

// eps of the model above: 18 k32 steps, each truncating to 13 significant bits.
inline constexpr double kFp8MmaScoreRel = 18.0 / 8192.0;

struct Fp8MmaBounds {
    std::vector<double> o;    // allowed |got - ref| per O element (dense, as check_o)
    std::vector<double> lse;  // allowed |got - ref| per LSE value (total_q x heads)
    // Per (token, head) row: max over its visible tokens of A_j, and of |s_j| (0: none visible).
    std::vector<double> score_abs;
    std::vector<double> max_abs_logit;
};

// The allowances of `host` (e4m3fn Q on an e4m3fn cache, V from the same rows) on the fp8
// tensor-core path: `base` (the tolerance of everything after the scores) plus the score
// error's share, O capped at SPEC's fp8-Q rule. `ref` is the host reference of `host`.
// Throws std::invalid_argument for other formats.
Fp8MmaBounds fp8_mma_bounds(const HostProblem& host, const Reference& ref,
                            const Tolerance& base = Tolerance());

// Measured error of outputs against the reference, beside the bounds.
struct Fp8MmaErrors {
    double o_err = 0.0, o_allowed = 0.0;  // the largest |dO| and the allowance there
    double o_ratio = 0.0;                 // the largest |dO| / allowance
    double o_spec_ratio = 0.0;            // the largest |dO| / SPEC's fp8-Q allowance
    double lse_err = 0.0, lse_allowed = 0.0, lse_ratio = 0.0;  // the same for LSE
    double lse_eps = 0.0;   // the largest |dLSE| / A of its row: the eps the LSE shows
    double max_abs_logit = 0.0;  // the largest |score| of the problem (for the report)
};
Fp8MmaErrors fp8_mma_errors(const std::vector<float>& o, const std::vector<float>& lse,
                            const Reference& ref, const Fp8MmaBounds& bounds);

// One line: measured errors, allowances, ratios and the model's eps.
std::string describe(const Fp8MmaErrors& e);

}  // namespace mla_test
