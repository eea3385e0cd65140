// The input forms of mla_decode.h ("Input forms") on the host reference: Q as q_nope + q_pe, the
// cache as latent rows + rope rows, the LSE at a row stride. A problem in a split form holds the
// same values as the 576-wide problem of the same spec (ProblemSpec::split_q, kpe_dtype,
// lse_stride_token), stored elsewhere and with other strides (padding poisoned), so its O and
// LSE must equal the 576-wide problem's bit for bit; the 576-wide reference itself is checked
// against independent computations in test_reference.cpp. A BF16 rope beside an FP8 latent has
// no 576-wide twin; it is checked against a BF16 576-wide cache holding the same values (the
// FP8 latent decoded exactly, which a power-of-two kv_scale keeps representable in bf16).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <ostream>
#include <string>
#include <tuple>
#include <vector>

#include "formats.h"
#include "mla_decode.h"
#include "mla_problem.h"

namespace mla_test {
namespace {

namespace fmt = mla::fmt;

std::string dtype_text(mla_dtype d) {
    switch (d) {
        case MLA_DTYPE_BF16: return "bf16";
        case MLA_DTYPE_FP8_E4M3FN: return "fp8_e4m3fn";
        case MLA_DTYPE_FP8_E4M3FNUZ: return "fp8_e4m3fnuz";
        case MLA_DTYPE_MXFP4: return "mxfp4";
        default: return "none";
    }
}

ProblemSpec base_spec(mla_dtype q, mla_dtype kv, bool paged) {
    ProblemSpec s;
    s.num_heads = 16;
    s.q_dtype = q;
    s.kv_dtype = kv;
    s.kv_lens = {0, 1, 63, 64, 130, 7};
    s.q_lens = {1, 2, 1, 4, 3, 4};  // q_len 4 over kv_len 7: causal rows, one sees few tokens
    if (paged) {
        s.paged = true;
        s.page_size = 16;
    }
    s.seed = 11;
    return s;
}

// O (FP32 and BF16) and LSE of the host reference; LSE dense.
struct Outputs {
    std::vector<float> o32;
    std::vector<uint16_t> o16;
    std::vector<float> lse;
};

Outputs reference_outputs(const HostProblem& hp) {
    Outputs out;
    const Reference ref = run_reference(hp);  // FP32 O, LSE at the problem's stride, densified
    out.o32 = ref.o;
    out.lse = ref.lse;
    out.o16.assign(hp.o_elements(), 0);
    std::vector<float> lse(hp.lse_elements());
    mla_decode_params p = hp.host_params(out.o16.data(), MLA_DTYPE_BF16, lse.data());
    const mla_status st = mla_decode_reference(&p);
    EXPECT_EQ(st, MLA_STATUS_SUCCESS) << mla_last_error_message();
    EXPECT_EQ(std::memcmp(hp.dense_lse(lse).data(), out.lse.data(), out.lse.size() * 4), 0)
        << "the LSE of the BF16-O call differs from the FP32-O call's";
    return out;
}

::testing::AssertionResult bitwise_equal(const Outputs& got, const Outputs& want) {
    if (got.o32.size() != want.o32.size() || got.lse.size() != want.lse.size() ||
        got.o16.size() != want.o16.size())
        return ::testing::AssertionFailure() << "sizes differ";
    for (size_t i = 0; i < want.o32.size(); ++i) {
        if (std::memcmp(&got.o32[i], &want.o32[i], 4) != 0)
            return ::testing::AssertionFailure()
                   << "FP32 O[" << i << "] = " << got.o32[i] << ", want " << want.o32[i];
    }
    if (std::memcmp(got.o16.data(), want.o16.data(), want.o16.size() * 2) != 0)
        return ::testing::AssertionFailure() << "BF16 O differs";
    for (size_t i = 0; i < want.lse.size(); ++i) {
        if (std::memcmp(&got.lse[i], &want.lse[i], 4) != 0)
            return ::testing::AssertionFailure()
                   << "LSE[" << i << "] = " << got.lse[i] << ", want " << want.lse[i];
    }
    return ::testing::AssertionSuccess();
}

// Some rows must see tokens and give finite, non-zero results (so an all-zero or all-NaN pair
// of runs cannot pass as equal).
::testing::AssertionResult informative(const Outputs& o) {
    size_t finite_lse = 0, nonzero_o = 0;
    for (float x : o.lse) finite_lse += std::isfinite(x);
    for (float x : o.o32) nonzero_o += std::isfinite(x) && x != 0.0f;
    if (finite_lse == 0 || nonzero_o == 0) return ::testing::AssertionFailure() << "no result";
    return ::testing::AssertionSuccess();
}

// ---- every split form equals the 576-wide form ------------------------------------------------

using FormsCase = std::tuple<mla_dtype, mla_dtype, bool, InputForms>;  // Q, cache, paged, forms

class SplitForms : public ::testing::TestWithParam<FormsCase> {};

TEST_P(SplitForms, EqualThe576WideFormBitForBit) {
    const auto [q, kv, paged, forms] = GetParam();
    const ProblemSpec plain = base_spec(q, kv, paged);
    const HostProblem a = make_problem(plain);
    const HostProblem b = make_problem(with_forms(plain, forms));
    ASSERT_EQ(b.q_pe.empty(), !forms.split_q);
    ASSERT_EQ(b.kpe.empty(), !forms.split_cache);
    const Outputs want = reference_outputs(a);
    ASSERT_TRUE(informative(want));
    EXPECT_TRUE(bitwise_equal(reference_outputs(b), want));
}

const InputForms kForms[] = {
    {true, false, false}, {false, true, false}, {false, false, true}, {true, true, true}};
const InputForms kFormsWithoutSplitCache[] = {{true, false, false}, {false, false, true}};

std::string case_name(const ::testing::TestParamInfo<FormsCase>& info) {
    const auto& [q, kv, paged, forms] = info.param;
    return "q_" + dtype_text(q) + "_kv_" + dtype_text(kv) + (paged ? "_paged" : "") +
           forms_name(forms);
}

INSTANTIATE_TEST_SUITE_P(
    Bf16AndFp8Caches, SplitForms,
    ::testing::Combine(::testing::Values(MLA_DTYPE_BF16, MLA_DTYPE_FP8_E4M3FN,
                                         MLA_DTYPE_FP8_E4M3FNUZ),
                       ::testing::Values(MLA_DTYPE_BF16, MLA_DTYPE_FP8_E4M3FN,
                                         MLA_DTYPE_FP8_E4M3FNUZ),
                       ::testing::Bool(), ::testing::ValuesIn(kForms)),
    case_name);

// MXFP4 caches have no split form (mla_decode.h); split Q and the LSE stride apply.
INSTANTIATE_TEST_SUITE_P(
    Mxfp4Cache, SplitForms,
    ::testing::Combine(::testing::Values(MLA_DTYPE_BF16, MLA_DTYPE_FP8_E4M3FN),
                       ::testing::Values(MLA_DTYPE_MXFP4), ::testing::Bool(),
                       ::testing::ValuesIn(kFormsWithoutSplitCache)),
    case_name);

// ---- a BF16 rope beside an FP8 latent (DeepSeek-V3.2): the host reference's own ---------------

class Bf16RopeBesideFp8Latent : public ::testing::TestWithParam<mla_dtype> {};

// The mixed cache against a BF16 576-wide cache of the same values: the latent's FP8 codes
// decoded with a power-of-two kv_scale (exact in bf16), the rope's bf16 values as they are.
TEST_P(Bf16RopeBesideFp8Latent, EqualsABf16CacheOfTheSameValues) {
    const mla_dtype fp8 = GetParam();
    ProblemSpec mixed_spec = base_spec(MLA_DTYPE_BF16, fp8, true);
    mixed_spec.kpe_dtype = MLA_DTYPE_BF16;
    mixed_spec.split_q = true;
    HostProblem mixed = make_problem(mixed_spec);
    mixed.kv_scale = 0.0625f;  // the codes are what they are; the scale only has to be 2^k

    HostProblem wide = make_problem(base_spec(MLA_DTYPE_BF16, MLA_DTYPE_BF16, true));
    ASSERT_EQ(wide.num_slots, mixed.num_slots);
    ASSERT_EQ(wide.kv_stride_slot, MLA_HEAD_DIM_QK);
    wide.q = mixed.q;  // the same Q values, in the split form
    wide.q_pe = mixed.q_pe;
    wide.q_stride_head = mixed.q_stride_head;
    wide.q_stride_token = mixed.q_stride_token;
    wide.q_pe_stride_head = mixed.q_pe_stride_head;
    wide.q_pe_stride_token = mixed.q_pe_stride_token;
    wide.spec.split_q = true;
    size_t finite = 0;
    for (int64_t slot = 0; slot < wide.num_slots; ++slot) {
        uint8_t* row = &wide.kv[static_cast<size_t>(slot * MLA_HEAD_DIM_QK * 2)];
        const uint8_t* latent = &mixed.kv[static_cast<size_t>(slot * mixed.kv_stride_slot)];
        const uint8_t* rope = &mixed.kpe[static_cast<size_t>(slot * mixed.kpe_stride_slot * 2)];
        for (int d = 0; d < MLA_KV_LORA_RANK; ++d) {
            const double v = fmt::fp8_to_double(fp8, latent[d]) * mixed.kv_scale;
            const uint16_t bits = fmt::bf16_from_double(v);
            ASSERT_TRUE(std::isnan(v) || fmt::bf16_to_double(bits) == v) << v;
            finite += std::isfinite(v);
            std::memcpy(row + 2 * d, &bits, 2);
        }
        std::memcpy(row + 2 * MLA_KV_LORA_RANK, rope, 2 * MLA_QK_ROPE_HEAD_DIM);
    }
    ASSERT_GT(finite, 0u);
    const Outputs want = reference_outputs(wide);
    ASSERT_TRUE(informative(want));
    EXPECT_TRUE(bitwise_equal(reference_outputs(mixed), want));
}

INSTANTIATE_TEST_SUITE_P(Fp8, Bf16RopeBesideFp8Latent,
                         ::testing::Values(MLA_DTYPE_FP8_E4M3FN, MLA_DTYPE_FP8_E4M3FNUZ),
                         [](const ::testing::TestParamInfo<mla_dtype>& info) {
                             return dtype_text(info.param);
                         });

// The rope really is read from kpe_cache in its own dtype: a BF16 rope and the same rope as FP8
// codes give different results (same latent codes), unless the values happen to agree.
TEST(Bf16RopeBesideFp8LatentIsItsOwnForm, DiffersFromTheFp8Rope) {
    ProblemSpec s = base_spec(MLA_DTYPE_BF16, MLA_DTYPE_FP8_E4M3FN, false);
    s.kpe_dtype = MLA_DTYPE_FP8_E4M3FN;
    const HostProblem fp8_rope = make_problem(s);
    s.kpe_dtype = MLA_DTYPE_BF16;
    const HostProblem bf16_rope = make_problem(s);
    ASSERT_EQ(fp8_rope.kv, bf16_rope.kv) << "the latent codes are the same";
    EXPECT_FALSE(bitwise_equal(reference_outputs(bf16_rope), reference_outputs(fp8_rope)));
}

// ---- the LSE row stride -------------------------------------------------------------------------

// The reference writes num_heads floats per row, lse_stride_token apart, and nothing between.
TEST(LseStride, RowsAtTheStrideAndNothingBetween) {
    for (int64_t stride : {int64_t{16}, int64_t{17}, int64_t{64}}) {
        SCOPED_TRACE(stride);
        ProblemSpec s = base_spec(MLA_DTYPE_BF16, MLA_DTYPE_FP8_E4M3FN, false);
        s.lse_stride_token = stride;
        const HostProblem hp = make_problem(s);
        std::vector<float> o(hp.o_elements()), lse(hp.lse_elements(), 42.0f);
        mla_decode_params p = hp.host_params(o.data(), MLA_DTYPE_FP32, lse.data());
        ASSERT_EQ(mla_decode_reference(&p), MLA_STATUS_SUCCESS) << mla_last_error_message();
        const std::vector<float> dense = run_reference(make_problem(base_spec(
            MLA_DTYPE_BF16, MLA_DTYPE_FP8_E4M3FN, false))).lse;
        for (size_t i = 0; i < lse.size(); ++i) {
            const size_t t = i / stride, h = i % stride;
            if (h < 16) {
                ASSERT_EQ(std::memcmp(&lse[i], &dense[t * 16 + h], 4), 0) << i;
            } else {
                ASSERT_EQ(lse[i], 42.0f) << "written between rows at " << i;
            }
        }
    }
}

}  // namespace
}  // namespace mla_test
