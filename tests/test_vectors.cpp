// The host reference reproduces every known-answer case of tests/data/vectors (expected O and
// LSE computed independently in fp64), with FP32 and with BF16 O.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "compare.h"
#include "mla_decode.h"
#include "vectors.h"

namespace mla_test {
namespace {

// The README's tolerance: bf16 output rounding, about 2^-8 of the row's largest |O|.
Tolerance readme_tolerance() { return Tolerance(); }

struct Outputs {
    std::vector<float> o;    // dense FP32
    std::vector<float> lse;
};

Outputs run_case(const VectorCase& c, mla_dtype o_dtype) {
    const size_t o_elements = static_cast<size_t>(c.total_q) * c.heads * c.d_v;
    Outputs out;
    out.lse.assign(static_cast<size_t>(c.total_q) * c.heads, NAN);
    if (o_dtype == MLA_DTYPE_FP32) {
        out.o.assign(o_elements, NAN);
        mla_decode_params p = c.host_params(out.o.data(), MLA_DTYPE_FP32, out.lse.data());
        EXPECT_EQ(mla_decode_reference(&p), MLA_STATUS_SUCCESS) << mla_last_error_message();
    } else {
        std::vector<uint16_t> o_bf16(o_elements, 0x7FC0);
        mla_decode_params p = c.host_params(o_bf16.data(), MLA_DTYPE_BF16, out.lse.data());
        EXPECT_EQ(mla_decode_reference(&p), MLA_STATUS_SUCCESS) << mla_last_error_message();
        out.o = dense_o_from_bf16(o_bf16.data(), c.total_q, c.heads,
                                  static_cast<int64_t>(c.heads) * c.d_v);
    }
    return out;
}

TEST(VectorCases, AllEightCasesArePresent) {
    const std::vector<std::string> want = {
        "bf16_h128_paged16", "bf16_mtp_mixed",  "bf16_q1_uneven", "fp8fn_large_logits",
        "fp8fn_q1_uneven",   "fp8fnuz_q1_uneven", "mxfp4_q1_uneven", "mxfp4k_fp8v_q1"};
    EXPECT_EQ(vector_case_names(), want) << "in " << vector_data_dir();
}

class VectorCaseTest : public ::testing::TestWithParam<std::string> {};

TEST_P(VectorCaseTest, ManifestIsConsistent) {
    VectorCase c = load_vector_case(GetParam());
    ASSERT_EQ(static_cast<int>(c.qo_indptr.size()), c.batch + 1);
    ASSERT_EQ(static_cast<int>(c.kv_indptr.size()), c.batch + 1);
    ASSERT_EQ(static_cast<int>(c.q_lens.size()), c.batch);
    ASSERT_EQ(static_cast<int>(c.kv_lens.size()), c.batch);
    for (int b = 0; b < c.batch; ++b) {
        EXPECT_EQ(c.qo_indptr[b + 1] - c.qo_indptr[b], c.q_lens[b]) << "element " << b;
        EXPECT_EQ(c.kv_indptr[b + 1] - c.kv_indptr[b], c.kv_lens[b]) << "element " << b;
    }
    EXPECT_EQ(c.qo_indptr[c.batch], c.total_q);
    EXPECT_EQ(c.expected_o.size(), static_cast<size_t>(c.total_q) * c.heads * c.d_v);
    EXPECT_EQ(c.expected_lse.size(), static_cast<size_t>(c.total_q) * c.heads);
}

// The case as a HostProblem (what the GPU tests upload) describes the same problem.
TEST_P(VectorCaseTest, AsHostProblemReproducesTheAnswer) {
    const VectorCase c = load_vector_case(GetParam());
    const Reference ref = run_reference(c.to_problem());
    EXPECT_TRUE(check_o(ref.o, c.expected_o, c.total_q, c.heads, fp32_tolerance()));
    EXPECT_TRUE(check_lse(ref.lse, c.expected_lse, fp32_tolerance()));
}

TEST_P(VectorCaseTest, ReferenceWithFp32OutputMatchesAtBf16Tolerance) {
    VectorCase c = load_vector_case(GetParam());
    Outputs got = run_case(c, MLA_DTYPE_FP32);
    EXPECT_TRUE(check_o(got.o, c.expected_o, c.total_q, c.heads, readme_tolerance()));
    EXPECT_TRUE(check_lse(got.lse, c.expected_lse, readme_tolerance()));
}

TEST_P(VectorCaseTest, ReferenceWithFp32OutputMatchesTightly) {
    VectorCase c = load_vector_case(GetParam());
    Outputs got = run_case(c, MLA_DTYPE_FP32);
    EXPECT_TRUE(check_o(got.o, c.expected_o, c.total_q, c.heads, fp32_tolerance()));
    EXPECT_TRUE(check_lse(got.lse, c.expected_lse, fp32_tolerance()));
}

TEST_P(VectorCaseTest, ReferenceWithBf16OutputMatchesAtBf16Tolerance) {
    VectorCase c = load_vector_case(GetParam());
    Outputs got = run_case(c, MLA_DTYPE_BF16);
    EXPECT_TRUE(check_o(got.o, c.expected_o, c.total_q, c.heads, readme_tolerance()));
    EXPECT_TRUE(check_lse(got.lse, c.expected_lse, readme_tolerance()));
}

TEST_P(VectorCaseTest, NoNanAndMaskedRowsAreExact) {
    VectorCase c = load_vector_case(GetParam());
    Outputs got = run_case(c, MLA_DTYPE_FP32);
    for (size_t i = 0; i < got.lse.size(); ++i) {
        ASSERT_FALSE(std::isnan(got.lse[i])) << "LSE " << i;
        if (std::isinf(c.expected_lse[i])) {
            for (int d = 0; d < c.d_v; ++d) ASSERT_EQ(got.o[i * c.d_v + d], 0.0f) << "row " << i;
        }
    }
}

INSTANTIATE_TEST_SUITE_P(KnownAnswers, VectorCaseTest, ::testing::ValuesIn(vector_case_names()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                             return info.param;
                         });

}  // namespace
}  // namespace mla_test
