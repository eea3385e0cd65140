// The balanced stage-1 schedule (kernels/splitkv/balanced.h) on the GPU: every plan of this
// process asks for it (MLA_DECODE_SCHEDULE=balanced, set before the first plan: the library
// reads its switches once), and each case checks every element of O and LSE against the host
// reference. The ctest registrations run the binary once more per rows per CTA
// (MLA_DECODE_ROWS=16 / 32 / 64, suffixes .rows16 ...), so the seesaw and solo consumers of
// each kernel walk items. The shapes are what the schedule must get right: uneven batches with
// empty and one-token elements between long ones (items that start and end mid-pair and at
// tile and page boundaries), a pair cut by many CTAs (a reduce of more splits than a warp's
// lanes), many short elements (many items a CTA), causal q_len 2-4 (pairs whose tokens see
// different lengths), paged caches, and e4m3 scores. Where the plan's kernel has no balanced
// form (not Hopper, mma16, other formats) the description says so and the case still checks
// the outputs of the uniform plan it runs.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "gpu_test.h"

#if defined(MLA_HAVE_GPU_RUNTIME)

namespace mla_test {
namespace {

const bool kScheduleSet = [] { return setenv("MLA_DECODE_SCHEDULE", "balanced", 1) == 0; }();

// Whether plans of e4m3fn caches take the balanced schedule here: Hopper with the wgmma kernels
// built, mma16 not forced.
bool balanced_expected() {
    const char* forced = std::getenv("MLA_DECODE_STAGE1");
    return hopper_with_wgmma() && (forced == nullptr || std::strcmp(forced, "mma16") != 0);
}

ProblemSpec fp8_spec(int heads, std::vector<int> kv_lens, std::vector<int> q_lens,
                     uint64_t seed) {
    return format_spec(MLA_DTYPE_FP8_E4M3FN, MLA_DTYPE_NONE, heads, std::move(kv_lens),
                       std::move(q_lens), seed);
}

// The plan's description for `params` (printed), with the balanced route checked where expected
// and the rows per CTA where MLA_DECODE_ROWS forces them.
std::string checked_route(const mla_decode_params& params) {
    Plan plan;
    EXPECT_EQ(plan.create(params), MLA_STATUS_SUCCESS) << mla_last_error_message();
    const std::string line = plan.get() != nullptr ? plan.describe() : std::string();
    std::printf("[ route    ] %s\n", line.c_str());
    if (balanced_expected()) {
        EXPECT_NE(line.find("route=balanced "), std::string::npos) << line;
        if (const char* rows = std::getenv("MLA_DECODE_ROWS")) {
            EXPECT_NE(line.find(std::string(" rows/cta=") + rows + " "), std::string::npos)
                << line;
        }
    }
    return line;
}

// bf16 Q: the default tolerance, through both entry points.
void expect_balanced(const ProblemSpec& spec) {
    const HostProblem host = make_problem(spec);
    checked_route(host.host_params(nullptr, MLA_DTYPE_BF16, nullptr));
    expect_matches_reference(host, Tolerance(), Api::kPlan);
    expect_matches_reference(host, Tolerance(), Api::kFwd);
}

// e4m3fn Q with MLA_DECODE_FLAG_FP8_MMA (e4m3 scores), by SPEC's fp8-Q rule.
void expect_balanced_fp8_mma(ProblemSpec spec) {
    spec.q_dtype = MLA_DTYPE_FP8_E4M3FN;
    const HostProblem host = make_problem(spec);
    const Reference ref = run_reference(host);
    DeviceProblem dev(host);
    dev.params.flags |= MLA_DECODE_FLAG_FP8_MMA;
    checked_route(dev.params);
    dev.poison_outputs(0xFF);
    ASSERT_TRUE(run_on_gpu(dev, Api::kPlan));
    EXPECT_LE(worst_fp8_rule_ratio(dev.download_o(), ref.o), 1.0);
    EXPECT_LE(worst_fp8_rule_ratio(dev.download_lse(), ref.lse), 1.0);
}

// Empty and one-token elements between long ones, lengths on and off tile boundaries.
const std::vector<int> kUneven = {0, 1, 5000, 63, 64, 65, 2000, 1, 300, 0, 4097};

TEST(GpuBalanced, UnevenBatch) {
    SKIP_WITHOUT_GPU();
    ASSERT_TRUE(kScheduleSet);
    for (const int heads : {16, 64, 128}) {
        SCOPED_TRACE("heads " + std::to_string(heads));
        expect_balanced(fp8_spec(heads, kUneven, {}, 11));
    }
}

// Causal q_len 2-4 beside q_len 1 (pairs of one element see different lengths).
TEST(GpuBalanced, UnevenQueryLengths) {
    SKIP_WITHOUT_GPU();
    ASSERT_TRUE(kScheduleSet);
    const std::vector<int> q_lens = {2, 1, 4, 3, 1, 2, 4, 1, 3, 2, 4};
    for (const int heads : {16, 128}) {
        SCOPED_TRACE("heads " + std::to_string(heads));
        expect_balanced(fp8_spec(heads, kUneven, q_lens, 12));
    }
}

// One long element beside a one-token one: its pairs are cut by many CTAs (more splits than
// the 32 lanes of a reduce warp at 128 heads), and a pair of one split writes O directly.
TEST(GpuBalanced, OneLongElement) {
    SKIP_WITHOUT_GPU();
    ASSERT_TRUE(kScheduleSet);
    expect_balanced(fp8_spec(128, {40000, 1}, {}, 13));
    expect_balanced(fp8_spec(16, {40000}, {}, 14));
}

// Many short elements: many items a CTA.
TEST(GpuBalanced, ManyShortElements) {
    SKIP_WITHOUT_GPU();
    ASSERT_TRUE(kScheduleSet);
    std::vector<int> lengths(300);
    for (size_t i = 0; i < lengths.size(); ++i) lengths[i] = static_cast<int>(1 + (i * 37) % 200);
    expect_balanced(fp8_spec(16, lengths, {}, 15));
}

// More row groups than a gang of the units' size: 128 heads x q_len 17 is 136 groups of 16
// rows (one gang of 136 CTAs, more than the H100's or H200's 132 units), 34 of 64.
TEST(GpuBalanced, ManyRowGroups) {
    SKIP_WITHOUT_GPU();
    ASSERT_TRUE(kScheduleSet);
    expect_balanced(fp8_spec(128, {300, 5, 1000}, {17, 3, 17}, 20));
}

// Paged caches (shuffled pages, NaN in spare slots): pages of 1, 16 and 64 tokens.
TEST(GpuBalanced, PagedCaches) {
    SKIP_WITHOUT_GPU();
    ASSERT_TRUE(kScheduleSet);
    for (const int page : {1, 16, 64}) {
        SCOPED_TRACE("page_size " + std::to_string(page));
        ProblemSpec spec = fp8_spec(64, kUneven, {}, 16);
        spec.paged = true;
        spec.page_size = page;
        expect_balanced(spec);
    }
}

// e4m3 scores (MLA_DECODE_FLAG_FP8_MMA) on the uneven batch, q_len 1 and 2.
TEST(GpuBalanced, Fp8Mma) {
    SKIP_WITHOUT_GPU();
    ASSERT_TRUE(kScheduleSet);
    expect_balanced_fp8_mma(fp8_spec(128, kUneven, {}, 17));
    expect_balanced_fp8_mma(fp8_spec(16, kUneven, std::vector<int>(kUneven.size(), 2), 18));
}

// The same inputs twice give the same bits: the schedule follows the lengths and the grid only.
TEST(GpuBalanced, RunToRunIdentical) {
    SKIP_WITHOUT_GPU();
    ASSERT_TRUE(kScheduleSet);
    const HostProblem host = make_problem(fp8_spec(128, kUneven, {}, 19));
    DeviceProblem dev(host);
    checked_route(dev.params);
    ASSERT_TRUE(run_on_gpu(dev, Api::kFwd));
    const std::vector<float> o = dev.download_o();
    const std::vector<float> lse = dev.download_lse();
    dev.poison_outputs(0xFF);
    ASSERT_TRUE(run_on_gpu(dev, Api::kFwd));
    EXPECT_EQ(std::memcmp(o.data(), dev.download_o().data(), o.size() * sizeof(float)), 0);
    EXPECT_EQ(std::memcmp(lse.data(), dev.download_lse().data(), lse.size() * sizeof(float)), 0);
}

}  // namespace
}  // namespace mla_test

#endif  // MLA_HAVE_GPU_RUNTIME
