// GPU tests: every GPU path against the host reference, every element checked, through the
// C ABI. Each test skips (with the reason) when no GPU is present, so CI on CPU machines runs
// them as skipped; they must have run green on a GPU before a kernel change is called done.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "compare.h"
#include "device_problem.h"
#include "gpu_test.h"
#include "mla_decode.h"
#include "mla_problem.h"
#include "vectors.h"

namespace mla_test {
namespace {

std::vector<int> uniform_lengths(int batch, int len) { return std::vector<int>(batch, len); }

class GpuFormat : public ::testing::TestWithParam<mla_dtype> {
protected:
    ProblemSpec spec(std::vector<int> kv_lens, double q_std = 1.0, uint64_t seed = 7) const {
        ProblemSpec s;
        s.kv_dtype = GetParam();
        s.kv_lens = std::move(kv_lens);
        s.q_std = q_std;
        s.kv_std = 1.0;
        s.seed = seed;
        return s;
    }
};

// The eight competition shapes (H 16, q_len 1, uniform lengths), inputs as the seed made them.
TEST_P(GpuFormat, CompetitionShapes) {
    SKIP_WITHOUT_GPU();
    for (int batch : {4, 32, 64, 256}) {
        for (int kv : {1024, 8192}) {
            SCOPED_TRACE("batch " + std::to_string(batch) + " kv_len " + std::to_string(kv));
            ProblemSpec s = spec(uniform_lengths(batch, kv), 0.02, 11);
            s.kv_std = 0.02;
            expect_matches_reference(s);
        }
    }
}

// Uneven lengths with zeros in one batch, around tile (64) boundaries.
TEST_P(GpuFormat, UnevenLengthsWithZeros) {
    SKIP_WITHOUT_GPU();
    expect_matches_reference(spec({0, 1, 17, 64, 200, 0, 1000, 63, 65, 129, 0, 4097}));
}

// Every length 1..70 (both sides of the 16-token blocks and the 64-token tiles), as one batch.
TEST_P(GpuFormat, LengthsOneToSeventy) {
    SKIP_WITHOUT_GPU();
    std::vector<int> lens;
    for (int n = 1; n <= 70; ++n) lens.push_back(n);
    expect_matches_reference(spec(lens, 1.0, 3));
}

// One long sequence forces many splits: the short ones get splits with no tokens at all, and
// lengths shorter than the split count.
TEST_P(GpuFormat, ShortLengthsUnderManySplits) {
    SKIP_WITHOUT_GPU();
    expect_matches_reference(spec({16384, 0, 1, 5, 63, 64, 65, 300}, 1.0, 5));
}

// Q magnitudes: the seed's early generator (std 0.02), unit, and large logits (std 100).
TEST_P(GpuFormat, QueryScales) {
    SKIP_WITHOUT_GPU();
    for (double q_std : {0.02, 1.0, 100.0}) {
        SCOPED_TRACE("q_std " + std::to_string(q_std));
        expect_matches_reference(spec({1, 37, 513, 2048}, q_std, 17));
    }
}

// Paged caches: page sizes 1, 16 and 64, pages shuffled, spare pages poisoned with NaN codes.
TEST_P(GpuFormat, PagedCaches) {
    SKIP_WITHOUT_GPU();
    for (int page_size : {1, 16, 64}) {
        SCOPED_TRACE("page_size " + std::to_string(page_size));
        ProblemSpec s = spec({0, 1, 15, 16, 17, 64, 65, 1000, 3000}, 1.0, 23);
        s.paged = true;
        s.page_size = page_size;
        expect_matches_reference(s);
    }
}

// Padded Q and O rows (row strides larger than packed).
TEST_P(GpuFormat, RowStrides) {
    SKIP_WITHOUT_GPU();
    ProblemSpec s = spec({3, 700, 129}, 1.0, 29);
    s.q_stride_token = 16 * 576 + 64;
    s.o_stride_token = 16 * 512 + 128;
    expect_matches_reference(s);
}

// The same inputs twice give bit-identical outputs (no race, no order dependence).
TEST_P(GpuFormat, Deterministic) {
    SKIP_WITHOUT_GPU();
    const HostProblem host = make_problem(spec({5000, 77, 1024}, 1.0, 31));
    DeviceProblem dev(host);
    ASSERT_EQ(dev.run(), MLA_STATUS_SUCCESS) << mla_last_error_message();
    ASSERT_EQ(mla::gpu::device_synchronize(), mla::gpu::kSuccess);
    const std::vector<float> o1 = dev.download_o(), lse1 = dev.download_lse();
    dev.poison_outputs(0xFF);
    ASSERT_EQ(dev.run(), MLA_STATUS_SUCCESS) << mla_last_error_message();
    ASSERT_EQ(mla::gpu::device_synchronize(), mla::gpu::kSuccess);
    const std::vector<float> o2 = dev.download_o(), lse2 = dev.download_lse();
    ASSERT_EQ(o1.size(), o2.size());
    EXPECT_EQ(std::memcmp(o1.data(), o2.data(), o1.size() * sizeof(float)), 0);
    EXPECT_EQ(std::memcmp(lse1.data(), lse2.data(), lse1.size() * sizeof(float)), 0);
}

// LSE is optional: with lse = NULL, O is still right.
TEST_P(GpuFormat, WithoutLse) {
    SKIP_WITHOUT_GPU();
    const HostProblem host = make_problem(spec({9, 1300}, 1.0, 37));
    const Reference ref = run_reference(host);
    DeviceProblem dev(host, /*with_lse=*/false);
    dev.poison_outputs(0xFF);
    ASSERT_EQ(dev.run(), MLA_STATUS_SUCCESS) << mla_last_error_message();
    ASSERT_EQ(mla::gpu::device_synchronize(), mla::gpu::kSuccess);
    EXPECT_TRUE(check_o(dev.download_o(), ref.o, host.total_q, 16));
}

INSTANTIATE_TEST_SUITE_P(Formats, GpuFormat,
                         ::testing::Values(MLA_DTYPE_BF16, MLA_DTYPE_FP8_E4M3FN,
                                           MLA_DTYPE_FP8_E4M3FNUZ),
                         [](const ::testing::TestParamInfo<mla_dtype>& info) {
                             return format_name(info.param);
                         });

// ---- known-answer vectors on the GPU ----------------------------------------------------------

// Uploads a vector case and runs it on the GPU; returns the status (and outputs on success).
struct VectorRun {
    mla_status status = MLA_STATUS_INTERNAL_ERROR;
    std::vector<float> o, lse;
};

VectorRun run_vector_on_gpu(const VectorCase& vc) {
    const HostProblem host = vc.to_problem();
    VectorRun r;
    size_t ws = 0;
    const mla_decode_params probe = host.host_params(nullptr, MLA_DTYPE_BF16, nullptr);
    r.status = mla_decode_workspace_size(&probe, &ws);
    if (r.status != MLA_STATUS_SUCCESS) return r;
    DeviceProblem dev(host);
    dev.poison_outputs(0xFF);
    r.status = dev.run();
    if (r.status != MLA_STATUS_SUCCESS) return r;
    if (mla::gpu::device_synchronize() != mla::gpu::kSuccess) {
        r.status = MLA_STATUS_DEVICE_ERROR;
        return r;
    }
    r.o = dev.download_o();
    r.lse = dev.download_lse();
    return r;
}

// Every vector case (every format, 128 heads on shuffled pages, mixed q_len with a fully
// masked query, large logits) runs on the GPU and reproduces the independently computed
// answer: the GPU paths of this release serve all of them.
TEST(GpuVectors, ReproduceKnownAnswers) {
    SKIP_WITHOUT_GPU();
    const std::vector<std::string> names = vector_case_names();
    size_t ran = 0;
    for (const std::string& name : names) {
        SCOPED_TRACE(name);
        const VectorCase vc = load_vector_case(name);
        const VectorRun r = run_vector_on_gpu(vc);
        ASSERT_EQ(r.status, MLA_STATUS_SUCCESS)
            << mla_status_string(r.status) << ": " << mla_last_error_message();
        EXPECT_TRUE(check_o(r.o, vc.expected_o, vc.total_q, vc.heads));
        EXPECT_TRUE(check_lse(r.lse, vc.expected_lse));
        ++ran;
        std::printf("[ vectors  ] %s: matched on the GPU\n", name.c_str());
    }
    EXPECT_EQ(ran, names.size());
    EXPECT_GE(ran, 8u);
}

// ---- bad input on the device path: status, and outputs untouched --------------------------

TEST(GpuBadInput, WorkspaceTooSmallLeavesOutputsUntouched) {
    SKIP_WITHOUT_GPU();
    ProblemSpec s;
    s.kv_dtype = MLA_DTYPE_FP8_E4M3FN;
    s.kv_lens = {100, 2000};
    const HostProblem host = make_problem(s);
    DeviceProblem dev(host);
    ASSERT_GT(dev.workspace_bytes, 0u);
    dev.poison_outputs(0x5A);
    const mla_status st = mla_decode_fwd(&dev.params, dev.workspace.get(), dev.workspace_bytes - 1,
                                         nullptr);
    EXPECT_EQ(st, MLA_STATUS_WORKSPACE_TOO_SMALL);
    EXPECT_STRNE(mla_last_error_message(), "");
    EXPECT_TRUE(outputs_untouched(dev, 0x5A));
}

TEST(GpuBadInput, NullWorkspaceWhenOneIsNeeded) {
    SKIP_WITHOUT_GPU();
    ProblemSpec s;
    s.kv_lens = {100, 3000};
    const HostProblem host = make_problem(s);
    DeviceProblem dev(host);
    ASSERT_GT(dev.workspace_bytes, 0u);
    dev.poison_outputs(0x5A);
    EXPECT_EQ(mla_decode_fwd(&dev.params, nullptr, dev.workspace_bytes, nullptr),
              MLA_STATUS_NULL_POINTER);
    EXPECT_STRNE(mla_last_error_message(), "");
    EXPECT_TRUE(outputs_untouched(dev, 0x5A));
}

TEST(GpuBadInput, MisalignedWorkspace) {
    SKIP_WITHOUT_GPU();
    ProblemSpec s;
    s.kv_lens = {100};
    const HostProblem host = make_problem(s);
    DeviceProblem dev(host);
    dev.poison_outputs(0x5A);
    DeviceBuffer big(dev.workspace_bytes + 512);
    poison_workspace(big);
    const mla_status st = mla_decode_fwd(&dev.params, static_cast<char*>(big.get()) + 16,
                                         dev.workspace_bytes + 256, nullptr);
    EXPECT_EQ(st, MLA_STATUS_MISALIGNED);
    EXPECT_TRUE(outputs_untouched(dev, 0x5A));
}

// What no GPU path serves (FP32 O; head counts other than 16, 32, 64, 128) is refused up
// front, outputs untouched.
TEST(GpuBadInput, UnsupportedProblemsAreRefused) {
    SKIP_WITHOUT_GPU();
    ProblemSpec s;
    s.kv_lens = {100, 20};
    const HostProblem host = make_problem(s);
    DeviceProblem dev(host);
    dev.poison_outputs(0x5A);
    struct Case {
        const char* what;
        void (*edit)(mla_decode_params*);
    };
    const Case cases[] = {
        {"fp32 O", [](mla_decode_params* p) { p->o_dtype = MLA_DTYPE_FP32; }},
        {"24 heads", [](mla_decode_params* p) { p->num_heads = 24; }},
    };
    for (const Case& c : cases) {
        SCOPED_TRACE(c.what);
        mla_decode_params p = dev.params;
        c.edit(&p);
        EXPECT_EQ(mla_decode_fwd(&p, dev.workspace.get(), dev.workspace_bytes, nullptr),
                  MLA_STATUS_UNSUPPORTED);
        EXPECT_STRNE(mla_last_error_message(), "");
    }
    EXPECT_TRUE(outputs_untouched(dev, 0x5A));
}

}  // namespace
}  // namespace mla_test
