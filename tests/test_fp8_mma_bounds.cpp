// The derived tolerance of the fp8 tensor-core path (tests/common/fp8_mma.h), on the host: its
// allowances sit between the bf16 tolerance and SPEC's fp8-Q rule as the model says, follow
// the problem's score magnitudes, and the checks that use them reject what they must.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "compare.h"
#include "formats.h"
#include "fp8_mma.h"
#include "mla_problem.h"

namespace mla_test {
namespace {

constexpr int kDimQk = MLA_HEAD_DIM_QK;
constexpr int kDimV = MLA_HEAD_DIM_V;

ProblemSpec fp8_spec(double q_std, double kv_std, bool paged = false) {
    ProblemSpec s;
    s.q_dtype = MLA_DTYPE_FP8_E4M3FN;
    s.kv_dtype = MLA_DTYPE_FP8_E4M3FN;
    s.num_heads = 8;
    s.kv_lens = {0, 1, 70, 300};
    s.q_lens = {1, 2, 4, 1};  // element 1: its first query sees nothing
    s.q_std = q_std;
    s.kv_std = kv_std;
    s.paged = paged;
    s.page_size = paged ? 16 : 1;
    s.seed = 3;
    return s;
}

double spec_rule(double ref) { return kSpecFp8QAtol + kSpecFp8QRtol * std::fabs(ref); }

TEST(Fp8MmaBounds, OnlyForE4m3fnQueryAndCache) {
    ProblemSpec s = fp8_spec(1.0, 1.0);
    s.q_dtype = MLA_DTYPE_BF16;
    const HostProblem host = make_problem(s);
    EXPECT_THROW(fp8_mma_bounds(host, run_reference(host)), std::invalid_argument);
}

// Every O allowance lies between min(bf16 allowance, SPEC's rule) and SPEC's rule; rows that
// see nothing allow nothing; the LSE allowance is the bf16 one plus eps x A of its row.
TEST(Fp8MmaBounds, BetweenTheBf16ToleranceAndSpecsRule) {
    for (bool paged : {false, true}) {
        SCOPED_TRACE(paged ? "paged" : "contiguous");
        const HostProblem host = make_problem(fp8_spec(1.0, 1.0, paged));
        const Reference ref = run_reference(host);
        const Fp8MmaBounds b = fp8_mma_bounds(host, ref);
        const int heads = host.spec.num_heads;
        const std::vector<double> base_o = o_allowances(ref.o.data(), host.total_q, heads, Tolerance());
        const std::vector<double> base_lse =
            lse_allowances(ref.lse.data(), static_cast<int64_t>(ref.lse.size()), Tolerance());
        int64_t rows_seeing = 0;
        for (size_t r = 0; r < ref.lse.size(); ++r) {
            const bool sees = std::isfinite(ref.lse[r]);
            rows_seeing += sees;
            EXPECT_EQ(b.score_abs[r] > 0.0, sees) << "row " << r;
            EXPECT_NEAR(b.lse[r], base_lse[r] + kFp8MmaScoreRel * b.score_abs[r], 1e-12) << r;
            EXPECT_GE(b.score_abs[r], b.max_abs_logit[r]) << r;  // A_j >= |s_j|
            for (int d = 0; d < kDimV; ++d) {
                const size_t i = r * kDimV + d;
                if (!sees) {
                    EXPECT_EQ(b.o[i], 0.0) << i;
                    continue;
                }
                EXPECT_LE(b.o[i], spec_rule(ref.o[i])) << i;
                EXPECT_GE(b.o[i], std::min(base_o[i], spec_rule(ref.o[i]))) << i;
            }
        }
        EXPECT_GT(rows_seeing, 0);
        EXPECT_LT(rows_seeing, static_cast<int64_t>(ref.lse.size()));
    }
}

// A of a row that sees one token, computed here from the stored codes.
TEST(Fp8MmaBounds, ScoreMagnitudeIsTheAbsoluteSumOfTheTerms) {
    const HostProblem host = make_problem(fp8_spec(1.0, 1.0, /*paged=*/true));
    const Fp8MmaBounds b = fp8_mma_bounds(host, run_reference(host));
    // Element 1 (kv_len 1, q_len 2): its second query (row qo_indptr[1] + 1) sees token 0.
    const int t = host.qo_indptr[1] + 1;
    const uint8_t* k = host.kv.data() + host.slot(1, 0) * host.kv_stride_slot;
    for (int h = 0; h < host.spec.num_heads; ++h) {
        const uint8_t* q = host.q.data() + t * host.q_stride_token + h * kDimQk;
        double sum = 0.0, dot = 0.0;
        for (int d = 0; d < kDimQk; ++d) {
            const double x = mla::fmt::fp8_to_double(MLA_DTYPE_FP8_E4M3FN, q[d]) *
                             mla::fmt::fp8_to_double(MLA_DTYPE_FP8_E4M3FN, k[d]);
            sum += std::fabs(x);
            dot += x;
        }
        const double c = static_cast<double>(host.spec.sm_scale) * host.q_scale * host.kv_scale;
        const size_t r = static_cast<size_t>(t) * host.spec.num_heads + h;
        EXPECT_NEAR(b.score_abs[r], c * sum, 1e-9 * c * sum) << h;
        EXPECT_NEAR(b.max_abs_logit[r], std::fabs(c * dot), 1e-9 * c * sum) << h;
    }
}

// The share of the score error in O's allowance, row by row: the largest allowance / min(bf16
// allowance, SPEC's rule) of the row (1: the row keeps the bf16 tolerance, or SPEC's rule where
// that is tighter), for rows that see at least `min_tokens` tokens.
std::vector<double> row_growth(const HostProblem& host, const Reference& ref,
                               const Fp8MmaBounds& b, int min_tokens) {
    const std::vector<double> base =
        o_allowances(ref.o.data(), host.total_q, host.spec.num_heads, Tolerance());
    std::vector<double> out;
    for (int t = 0; t < host.total_q; ++t) {
        int e = 0;
        while (host.qo_indptr[e + 1] <= t) ++e;
        const int seen = host.kv_indptr[e + 1] - host.kv_indptr[e] -
                         (host.qo_indptr[e + 1] - host.qo_indptr[e]) + (t - host.qo_indptr[e]) + 1;
        if (seen < min_tokens) continue;
        for (int h = 0; h < host.spec.num_heads; ++h) {
            double g = 0.0;
            for (int d = 0; d < kDimV; ++d) {
                const size_t i = (static_cast<size_t>(t) * host.spec.num_heads + h) * kDimV + d;
                g = std::max(g, b.o[i] / std::min(base[i], spec_rule(ref.o[i])));
            }
            out.push_back(g);
        }
    }
    return out;
}

// randn x 0.02 (A ~ 0.007): the score error adds at most a few percent to the bf16 tolerance.
// Unit logits (A ~ 16): every element of a row over 64+ tokens ends at SPEC's rule. Q std 100
// (A ~ 1600, softmax nearly one-hot, so V barely deviates from O under the weights): most
// rows keep the bf16 tolerance.
TEST(Fp8MmaBounds, FollowTheScoreMagnitudes) {
    {
        SCOPED_TRACE("randn x 0.02");
        const HostProblem host = make_problem(fp8_spec(0.02, 0.02));
        const Reference ref = run_reference(host);
        for (double g : row_growth(host, ref, fp8_mma_bounds(host, ref), 1)) EXPECT_LE(g, 1.05);
    }
    {
        SCOPED_TRACE("unit randn");
        const HostProblem host = make_problem(fp8_spec(1.0, 1.0));
        const Reference ref = run_reference(host);
        const Fp8MmaBounds b = fp8_mma_bounds(host, ref);
        for (int t = 0; t < host.total_q; ++t) {
            if (t < host.qo_indptr[2]) continue;  // elements 0 and 1 see at most one token
            for (int i = t * host.spec.num_heads * kDimV; i < (t + 1) * host.spec.num_heads * kDimV; ++i)
                EXPECT_EQ(b.o[i], spec_rule(ref.o[i])) << i;
        }
    }
    {
        SCOPED_TRACE("Q std 100");
        const HostProblem host = make_problem(fp8_spec(100.0, 1.0));
        const Reference ref = run_reference(host);
        const std::vector<double> g = row_growth(host, ref, fp8_mma_bounds(host, ref), 2);
        const auto kept = std::count_if(g.begin(), g.end(), [](double x) { return x <= 1.001; });
        EXPECT_GT(kept, static_cast<long>(g.size() / 2)) << kept << " of " << g.size();
    }
}

// The checks reject an element past its allowance (O and LSE) and pass one inside it; the
// measured-error summary finds it.
TEST(Fp8MmaBounds, ChecksRejectAnElementPastItsAllowance) {
    const HostProblem host = make_problem(fp8_spec(1.0, 1.0));
    const Reference ref = run_reference(host);
    const Fp8MmaBounds b = fp8_mma_bounds(host, ref);
    const int heads = host.spec.num_heads;
    const auto row = std::find_if(ref.lse.begin(), ref.lse.end(),
                                  [](float x) { return std::isfinite(x); }) - ref.lse.begin();
    const size_t i = static_cast<size_t>(row) * kDimV + 5;
    ASSERT_GT(b.o[i], 0.0);
    std::vector<float> o = ref.o, lse = ref.lse;
    EXPECT_TRUE(check_o(o, ref.o, host.total_q, heads, b.o));
    EXPECT_TRUE(check_lse(lse, ref.lse, b.lse));
    EXPECT_EQ(fp8_mma_errors(o, lse, ref, b).o_ratio, 0.0);

    o[i] = static_cast<float>(ref.o[i] + 0.5 * b.o[i]);
    lse[row] = static_cast<float>(ref.lse[row] + 0.5 * b.lse[row]);
    EXPECT_TRUE(check_o(o, ref.o, host.total_q, heads, b.o));
    EXPECT_TRUE(check_lse(lse, ref.lse, b.lse));

    o[i] = static_cast<float>(ref.o[i] + 1.5 * b.o[i]);
    lse[row] = static_cast<float>(ref.lse[row] - 1.5 * b.lse[row]);
    EXPECT_FALSE(check_o(o, ref.o, host.total_q, heads, b.o));
    EXPECT_FALSE(check_lse(lse, ref.lse, b.lse));
    const Fp8MmaErrors e = fp8_mma_errors(o, lse, ref, b);
    EXPECT_NEAR(e.o_ratio, 1.5, 1e-3);
    EXPECT_NEAR(e.lse_ratio, 1.5, 1e-3);
}

}  // namespace
}  // namespace mla_test
