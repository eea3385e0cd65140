// GPU tests of the fp8 tensor-core path: stage-1 variant wgmma with e4m3fn Q on an e4m3fn
// cache, whose scores run on e4m3 wgmma from the raw codes (kernels/splitkv/stage1/wgmma.h).
// This binary forces MLA_DECODE_STAGE1=wgmma for its whole process (a global test environment
// sets it before any plan is made; the library reads it once). Each case prints the measured
// error of O and LSE beside the allowance derived from the problem (tests/common/fp8_mma.h:
// the score error model on top of the bf16 tolerance, O capped at SPEC's fp8-Q rule) and
// asserts every element within it, for small (randn x 0.02), unit and large (Q std 100)
// logits, at 16, 32 and 128 heads (16, 32 and 64 rows per CTA), q_len 1..4, single-split and
// split-KV routes, paged caches.
//
// The tests skip without a GPU, and, with the reason, where the wgmma variant cannot serve
// (not an sm_90 device, or a build without sm_90a kernels); anywhere else a plan that is not on
// the fp8 tensor-core path fails.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <string>
#include <vector>

#include "compare.h"
#include "device_problem.h"
#include "fp8_mma.h"
#include "gpu_test.h"
#include "mla_decode.h"
#include "mla_problem.h"

namespace mla_test {
namespace {

class ForceWgmma : public ::testing::Environment {
public:
    void SetUp() override { ASSERT_EQ(setenv("MLA_DECODE_STAGE1", "wgmma", 1), 0); }
};
::testing::Environment* const kForceWgmma = ::testing::AddGlobalTestEnvironment(new ForceWgmma);

struct Fp8MmaCase {
    const char* name;
    int heads;
    std::vector<int> kv_lens;
    std::vector<int> q_lens;
    double q_std, kv_std;
    int page_size;  // 0: contiguous
};

ProblemSpec spec_of(const Fp8MmaCase& c, uint64_t seed) {
    ProblemSpec s;
    s.q_dtype = MLA_DTYPE_FP8_E4M3FN;
    s.kv_dtype = MLA_DTYPE_FP8_E4M3FN;
    s.num_heads = c.heads;
    s.kv_lens = c.kv_lens;
    s.q_lens = c.q_lens;
    s.q_std = c.q_std;
    s.kv_std = c.kv_std;
    if (c.page_size > 0) {
        s.paged = true;
        s.page_size = c.page_size;
    }
    s.seed = seed;
    return s;
}

// Makes a plan for `dev`; skips where the wgmma variant cannot serve, fails where it could but
// the plan is not on the fp8 tensor-core path.
::testing::AssertionResult on_fp8_mma_path(const DeviceProblem& dev, bool* unavailable) {
    *unavailable = false;
    Plan plan;
    if (plan.create(dev.params) != MLA_STATUS_SUCCESS)
        return ::testing::AssertionFailure() << "plan: " << mla_last_error_message();
    const std::string line = plan.describe();
    if (runs_on_fp8_mma(dev.params)) return ::testing::AssertionSuccess();
    *unavailable = line.find("MLA_DECODE_STAGE1=wgmma not available") != std::string::npos;
    return ::testing::AssertionFailure() << "not on the fp8 tensor-core path: " << line;
}

// Runs the case through the plan API, checks every element within the derived allowances and
// prints the measured error (expect_outputs_match) with the case's name.
void run_case(const Fp8MmaCase& c, uint64_t seed) {
    const HostProblem host = make_problem(spec_of(c, seed));
    DeviceProblem dev(host);
    bool unavailable = false;
    ::testing::AssertionResult path = on_fp8_mma_path(dev, &unavailable);
    if (unavailable) GTEST_SKIP() << path.message();
    ASSERT_TRUE(path);
    const Reference ref = run_reference(host);
    dev.poison_outputs(0xFF);
    ASSERT_TRUE(run_on_gpu(dev, Api::kPlan));
    std::printf("[ case     ] %s\n", c.name);
    const Fp8MmaErrors e = expect_outputs_match(dev, ref);
    // The allowances hold O within SPEC's fp8-Q rule everywhere.
    EXPECT_LE(e.o_spec_ratio, 1.0) << describe(e);
    EXPECT_GT(e.max_abs_logit, 0.0);
}

// The case at each Q standard deviation (the cache's: 0.02 with Q's 0.02, else 1), named
// "<what>, Q std <q_std>, <heads> heads"; stops at a skip.
void run_q_stds(const std::string& what, int heads, const std::vector<int>& kv_lens,
                const std::vector<int>& q_lens, int page_size, uint64_t seed,
                std::initializer_list<double> q_stds) {
    for (double q_std : q_stds) {
        char name[160];
        std::snprintf(name, sizeof(name), "%s, Q std %g, %d heads", what.c_str(), q_std, heads);
        SCOPED_TRACE(name);
        run_case({name, heads, kv_lens, q_lens, q_std, q_std == 0.02 ? 0.02 : 1.0, page_size}, seed);
        if (::testing::Test::IsSkipped() || ::testing::Test::HasFatalFailure()) return;
    }
}

class GpuFp8Mma : public ::testing::TestWithParam<int> {};  // heads

// Small (randn x 0.02, Q and cache), unit and large (Q std 100) logits; q_len 1; lengths on
// both sides of the 64-token tile.
TEST_P(GpuFp8Mma, SmallUnitAndLargeLogits) {
    SKIP_WITHOUT_GPU();
    run_q_stds("q_len 1", GetParam(), {1, 63, 64, 65, 777, 2100, 0, 4097}, {}, 0, 5,
               {0.02, 1.0, 100.0});
}

// q_len 1..4 mixed with fully masked queries, on 16-token pages.
TEST_P(GpuFp8Mma, MixedQueryLengthsOnPages) {
    SKIP_WITHOUT_GPU();
    run_q_stds("mixed q_len, paged", GetParam(), {0, 3, 4, 130, 1100, 64, 2049},
               {1, 4, 4, 2, 3, 1, 2}, 16, 7, {1.0, 100.0});
}

// A few long elements: the split-KV route (several splits per element, then the reduce).
TEST_P(GpuFp8Mma, SplitKvRoute) {
    SKIP_WITHOUT_GPU();
    run_q_stds("split-KV", GetParam(), {16384, 9000}, {}, 0, 9, {1.0, 100.0});
}

INSTANTIATE_TEST_SUITE_P(Heads, GpuFp8Mma, ::testing::Values(16, 32, 128),
                         [](const ::testing::TestParamInfo<int>& info) {
                             return "h" + std::to_string(info.param);
                         });

}  // namespace
}  // namespace mla_test
