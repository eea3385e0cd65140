// GPU tests of the input forms (mla_decode.h, "Input forms"): Q as q_nope + q_pe, the cache as
// latent rows + rope rows of the latent's dtype, the LSE at a row stride, alone and together;
// every cache format (MXFP4 ones without a split cache, which they do not have), 16 and 128
// heads, q_len 1..4 mixed, contiguous and paged, through mla_decode_fwd and the plan API, on
// both GPU routes (single split: stage 1 stores the LSE; split-KV: the reduce does). Each form
// runs contiguous through mla_decode_fwd and paged through the plan API; all forms together
// also the other two ways.
//
// Each run is checked twice: every element of O and LSE against the host reference (double
// precision, bf16-output tolerance; O and LSE poisoned before the run), and bit for bit against
// the GPU's result for the same values in the 576-wide forms (same shape, so the same plan and
// kernels: only where the bytes are read from differs, so nothing else may). The split forms'
// padding and the slots no sequence uses hold NaN codes, so a read from the wrong place shows.
// Then: a plan made with the 576-wide forms runs the split forms (the forms are not part of a
// plan's shape), an empty pool in the split forms. Then a BF16 rope beside an FP8 latent
// (DeepSeek-V3.2's cache, kernels of its own; GpuBf16Rope*): every element against the host
// reference, both fp8 flavours, 16 / 64 / 128 heads, q_len 1..4, both routes, contiguous and
// paged, padded strides, fp8 Q, rope values past f16's range, the rope dtype as part of a
// plan's shape. Each test skips without a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ostream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "compare.h"
#include "device_problem.h"
#include "gpu_test.h"
#include "mla_decode.h"
#include "mla_problem.h"

namespace mla_test {
namespace {

constexpr mla_dtype kNoV = MLA_DTYPE_NONE;

struct Format {
    mla_dtype kv;
    mla_dtype v;
};

const Format kFormats[] = {
    {MLA_DTYPE_BF16, kNoV},          {MLA_DTYPE_FP8_E4M3FN, kNoV},
    {MLA_DTYPE_FP8_E4M3FNUZ, kNoV},  {MLA_DTYPE_MXFP4, kNoV},
    {MLA_DTYPE_MXFP4, MLA_DTYPE_FP8_E4M3FN}, {MLA_DTYPE_MXFP4, MLA_DTYPE_FP8_E4M3FNUZ},
};

// The forms of the cases (a split cache only where the format has one).
const InputForms kForms[] = {
    {true, false, false}, {false, true, false}, {false, false, true}, {true, true, true}};

// The shapes of a case: {description, expected route, spec without forms}. Route "split_kv":
// one long element (its splits meet in the reduce); "single_split": many short ones (stage 1
// stores O and LSE itself). The routes are the planner's choice for these shapes on the H200
// (any stage-1 variant); the test checks them, so that both LSE stores stay covered.
struct Shape {
    const char* name;
    const char* route;
    ProblemSpec spec;
};

ProblemSpec shape_spec(const Format& f, int heads, std::vector<int> kv, std::vector<int> q,
                       uint64_t seed) {
    return format_spec(f.kv, f.v, heads, std::move(kv), std::move(q), seed);
}

std::vector<Shape> shapes(const Format& f) {
    std::vector<int> kv256, q256, kv64;
    for (int b = 0; b < 256; ++b) {
        kv256.push_back(b % 5 == 0 ? 0 : 1 + (b * 37) % 64);  // zeros, 1..64
        q256.push_back(1 + b % 4);
        if (b < 64) kv64.push_back(kv256.back());
    }
    return {
        {"one element of 4100, h16, q_len 3", "route=split_kv",
         shape_spec(f, 16, {4100}, {3}, 21)},
        {"one element of 2100, h128", "route=split_kv", shape_spec(f, 128, {2100}, {1}, 22)},
        {"256 short elements, h16, q_len 1..4", "route=single_split",
         shape_spec(f, 16, kv256, q256, 23)},
        {"64 short elements, h128", "route=single_split",
         shape_spec(f, 128, kv64, std::vector<int>(64, 1), 24)},
    };
}

// `spec` in shuffled pages of 16, each page list two sentinel entries longer than needed.
ProblemSpec in_shuffled_pages(ProblemSpec spec) {
    spec.paged = true;
    spec.page_size = 16;
    spec.page_list_tail = 2;
    return spec;
}

::testing::AssertionResult same_bits(const std::vector<float>& got, const std::vector<float>& want,
                                     const char* what) {
    if (got.size() != want.size()) return ::testing::AssertionFailure() << what << ": sizes";
    for (size_t i = 0; i < want.size(); ++i) {
        if (std::memcmp(&got[i], &want[i], sizeof(float)) != 0) {
            return ::testing::AssertionFailure() << what << "[" << i << "] = " << got[i]
                                                 << ", the 576-wide forms give " << want[i];
        }
    }
    return ::testing::AssertionSuccess();
}

// Runs `host` through `api` with poisoned outputs; the plan's route must contain `route`.
void run_checked(DeviceProblem& dev, Api api, const char* route) {
    Plan plan;
    ASSERT_EQ(plan.create(dev.params), MLA_STATUS_SUCCESS) << mla_last_error_message();
    const std::string description = plan.describe();
    if (std::getenv("MLA_DECODE_NUM_SPLITS") == nullptr &&
        std::getenv("MLA_DECODE_ROWS") == nullptr) {
        EXPECT_NE(description.find(route), std::string::npos) << description;
    }
    dev.poison_outputs(0xFF);
    ASSERT_TRUE(run_on_gpu(dev, api));
}

using Case = std::tuple<Format, InputForms, bool, Api>;  // format, forms, paged, api

class GpuInputForms : public ::testing::TestWithParam<Case> {};

TEST_P(GpuInputForms, MatchTheReferenceAndThe576WideFormsBitForBit) {
    SKIP_WITHOUT_GPU();
    const auto [format, forms, in_pages, api] = GetParam();
    for (const Shape& shape : shapes(format)) {
        SCOPED_TRACE(shape.name);
        const ProblemSpec plain = in_pages ? in_shuffled_pages(shape.spec) : shape.spec;
        const HostProblem wide_host = make_problem(plain);
        const HostProblem split_host = make_problem(with_forms(plain, forms));
        DeviceProblem wide(wide_host), split(split_host);
        run_checked(wide, api, shape.route);
        run_checked(split, api, shape.route);
        expect_outputs_match(split, run_reference(split_host));
        EXPECT_TRUE(same_bits(split.download_o(), wide.download_o(), "O"));
        EXPECT_TRUE(same_bits(split.download_lse(), wide.download_lse(), "LSE"));
        if (forms.lse_stride) {  // nothing between the LSE rows
            std::vector<float> raw(split_host.lse_elements());
            split.lse.download(raw.data(), raw.size() * sizeof(float));
            const uint32_t poison = 0xFFFFFFFFu;
            const size_t stride = static_cast<size_t>(split_host.lse_row_stride());
            for (size_t i = 0; i < raw.size(); ++i) {
                if (i % stride < static_cast<size_t>(plain.num_heads)) continue;
                ASSERT_EQ(std::memcmp(&raw[i], &poison, 4), 0) << "LSE written at " << i;
            }
        }
    }
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
    const auto& [format, forms, in_pages, api] = info.param;
    return format_name(format.kv, format.v) + forms_name(forms) + (in_pages ? "_paged" : "") +
           (api == Api::kFwd ? "_fwd" : "_plan");
}

std::vector<Case> cases() {
    std::vector<Case> out;
    for (const Format& f : kFormats) {
        for (InputForms forms : kForms) {
            if (f.kv == MLA_DTYPE_MXFP4) {  // no split MXFP4 cache: the other forms
                if (forms.split_cache && !forms.split_q) continue;
                forms.split_cache = false;
            }
            out.push_back({f, forms, false, Api::kFwd});
            out.push_back({f, forms, true, Api::kPlan});
            if (forms.split_q && forms.lse_stride) {  // all the forms of the format
                out.push_back({f, forms, true, Api::kFwd});
                out.push_back({f, forms, false, Api::kPlan});
            }
        }
    }
    return out;
}

INSTANTIATE_TEST_SUITE_P(EveryFormatAndForm, GpuInputForms, ::testing::ValuesIn(cases()),
                         case_name);

// fp8 Q in the split form (both flavours) against bf16 and fp8 caches in the split form.
TEST(GpuInputFormsFp8Q, SplitFp8QueryMatchesTheReference) {
    SKIP_WITHOUT_GPU();
    for (mla_dtype q : {MLA_DTYPE_FP8_E4M3FN, MLA_DTYPE_FP8_E4M3FNUZ}) {
        for (mla_dtype kv : {MLA_DTYPE_BF16, MLA_DTYPE_FP8_E4M3FN, MLA_DTYPE_FP8_E4M3FNUZ}) {
            SCOPED_TRACE(format_name(q) + " Q, " + format_name(kv) + " cache");
            ProblemSpec s;
            s.q_dtype = q;
            s.kv_dtype = kv;
            s.num_heads = 64;
            s.kv_lens = {1, 3, 777, 2100, 0};
            s.q_lens = {1, 4, 2, 3, 2};
            s.seed = 25;
            const HostProblem host = make_problem(with_forms(s, InputForms{true, true, true}));
            ASSERT_NE(host.q_scale, 1.0f);
            expect_matches_reference(host, Tolerance(), Api::kPlan);
        }
    }
}

// The forms are not part of a plan's shape: a plan made from the 576-wide params runs the
// split forms (and the other way round) with the right numbers.
TEST(GpuInputFormsPlan, APlanServesEveryForm) {
    SKIP_WITHOUT_GPU();
    for (mla_dtype kv : {MLA_DTYPE_BF16, MLA_DTYPE_FP8_E4M3FN}) {
        SCOPED_TRACE(format_name(kv));
        ProblemSpec s;
        s.kv_dtype = kv;
        s.num_heads = 16;
        s.kv_lens = {100, 4000, 0, 64};
        s.q_lens = {1, 2, 3, 4};
        s.seed = 27;
        const HostProblem wide_host = make_problem(s);
        const HostProblem split_host = make_problem(with_forms(s, InputForms{true, true, true}));
        DeviceProblem wide(wide_host), split(split_host);
        for (int made_with_split = 0; made_with_split < 2; ++made_with_split) {
            Plan plan;
            ASSERT_EQ(plan.create(made_with_split ? split.params : wide.params),
                      MLA_STATUS_SUCCESS)
                << mla_last_error_message();
            DeviceBuffer workspace(plan.workspace_bytes());
            poison_workspace(workspace);
            for (DeviceProblem* dev : {&wide, &split}) {
                dev->poison_outputs(0xFF);
                ASSERT_EQ(mla_decode_plan_prepare(plan.get(), &dev->params, workspace.get(),
                                                  workspace.bytes(), nullptr),
                          MLA_STATUS_SUCCESS)
                    << mla_last_error_message();
                ASSERT_EQ(mla_decode_plan_run(plan.get(), &dev->params, workspace.get(),
                                              workspace.bytes(), nullptr),
                          MLA_STATUS_SUCCESS)
                    << mla_last_error_message();
                ASSERT_TRUE(synchronize_device());
            }
            expect_outputs_match(split, run_reference(split_host));
            EXPECT_TRUE(same_bits(split.download_o(), wide.download_o(), "O"));
            EXPECT_TRUE(same_bits(split.download_lse(), wide.download_lse(), "LSE"));
        }
    }
}

// `host` (every length 0, a split cache) run as an empty pool, num_slots 0 and every pointer
// into the pool NULL (kpe_cache included), through fwd and the plan API: O = 0, LSE = -inf.
void expect_empty_pool_matches(const HostProblem& host) {
    const Reference ref = run_reference(host);
    DeviceProblem dev(host);
    dev.params.num_slots = 0;
    dev.params.kv_cache = nullptr;
    dev.params.kpe_cache = nullptr;
    for (Api api : {Api::kFwd, Api::kPlan}) {
        dev.poison_outputs(0xFF);
        ASSERT_TRUE(run_on_gpu(dev, api));
        expect_outputs_match(dev, ref);
    }
}

// An empty pool in the split forms: every pointer into the pool NULL, kpe_cache included;
// O = 0, LSE = -inf.
TEST(GpuInputFormsEdges, EmptyPoolInTheSplitForms) {
    SKIP_WITHOUT_GPU();
    ProblemSpec s;
    s.kv_dtype = MLA_DTYPE_FP8_E4M3FN;
    s.num_heads = 16;
    s.kv_lens = {0, 0, 0};
    s.q_lens = {1, 3, 2};
    expect_empty_pool_matches(make_problem(with_forms(s, InputForms{true, true, true})));
}

// ---- a BF16 rope beside an FP8 latent (DeepSeek-V3.2's cache) ------------------------------
// Its own kernels (mma16; e4m3fn's also wgmma on Hopper): the latent's fp8 codes times
// kv_scale, the rope's bf16 values as they are. No 576-wide twin holds the same values, so each
// run is checked against the host reference alone, every element (O and LSE poisoned first),
// and the route asserted.

constexpr mla_dtype kFp8Flavours[] = {MLA_DTYPE_FP8_E4M3FN, MLA_DTYPE_FP8_E4M3FNUZ};

ProblemSpec bf16_rope_spec(mla_dtype fp8, int heads, std::vector<int> kv, std::vector<int> q,
                           uint64_t seed) {
    ProblemSpec s = format_spec(fp8, kNoV, heads, std::move(kv), std::move(q), seed);
    s.kpe_dtype = MLA_DTYPE_BF16;
    return s;
}

// The shapes: the split-KV route (an element of 4100 tokens among short ones: several splits
// meet in the reduce, which stores the LSE; q_len 1..3) and the single-split route (many short
// elements: stage 1 stores O and LSE; q_len 1..4, zeros among the lengths).
std::vector<Shape> bf16_rope_shapes(mla_dtype fp8, int heads) {
    std::vector<int> kv_short, q_short;
    const int batch = heads >= 64 ? 64 : 256;
    for (int b = 0; b < batch; ++b) {
        kv_short.push_back(b % 5 == 0 ? 0 : 1 + (b * 37) % 64);
        q_short.push_back(heads >= 64 ? 1 + b % 2 : 1 + b % 4);
    }
    return {
        {"one element of 4100 among short ones, q_len 1..3", "route=split_kv",
         bf16_rope_spec(fp8, heads, {4100, 17, 0, 64}, {3, 1, 2, 1}, 51)},
        {"short elements, q_len 1..4", "route=single_split",
         bf16_rope_spec(fp8, heads, kv_short, q_short, 52)},
    };
}

// The plan of a BF16-rope problem: the format named; on a Hopper device with the wgmma kernels:
// wgmma (WgmmaFp8Bf16RopeDecode, either fp8 flavour) where MLA_DECODE_STAGE1=wgmma forces it,
// else the planner's choice by cost (either variant); mma16 where forced; everything else mma16,
// and (MLA_DECODE_STAGE1=wgmma forced) the description says why wgmma does not serve it.
void expect_bf16_rope_plan(const std::string& description) {
    EXPECT_NE(description.find("_bf16_rope"), std::string::npos) << description;
    const char* forced = std::getenv("MLA_DECODE_STAGE1");
    const std::string force = forced != nullptr ? forced : "";
    if (hopper_with_wgmma() && force != "mma16") {
        if (force == "wgmma") {
            EXPECT_NE(description.find("variant=wgmma"), std::string::npos) << description;
        } else {
            EXPECT_TRUE(description.find("variant=wgmma") != std::string::npos ||
                        description.find("variant=mma16") != std::string::npos)
                << description;
        }
        return;
    }
    EXPECT_NE(description.find("variant=mma16"), std::string::npos) << description;
    if (force == "wgmma") {
        EXPECT_NE(description.find("MLA_DECODE_STAGE1=wgmma not available"), std::string::npos)
            << description;
    }
}

// Runs `dev` through `api` with poisoned outputs, checks the plan and route, and compares every
// element of O and LSE with the host reference; `worst_o`, where given, receives O's worst
// |diff| / allowed (worst_o_ratio).
void expect_bf16_rope_matches(const HostProblem& host, Api api, const char* route,
                              double* worst_o = nullptr) {
    DeviceProblem dev(host);
    Plan plan;
    ASSERT_EQ(plan.create(dev.params), MLA_STATUS_SUCCESS) << mla_last_error_message();
    const std::string description = plan.describe();
    expect_bf16_rope_plan(description);
    if (route != nullptr && std::getenv("MLA_DECODE_NUM_SPLITS") == nullptr &&
        std::getenv("MLA_DECODE_ROWS") == nullptr) {
        EXPECT_NE(description.find(route), std::string::npos) << description;
    }
    dev.poison_outputs(0xFF);
    ASSERT_TRUE(run_on_gpu(dev, api));
    const Reference ref = run_reference(host);
    expect_outputs_match(dev, ref);
    if (worst_o != nullptr) {
        *worst_o = worst_o_ratio(dev.download_o(), ref.o, host.total_q, host.spec.num_heads);
    }
}

using Bf16RopeCase = std::tuple<mla_dtype, int, bool>;  // fp8 flavour, heads, paged

class GpuBf16Rope : public ::testing::TestWithParam<Bf16RopeCase> {};

// Both routes; contiguous through mla_decode_fwd with the plain forms, paged (shuffled pages
// of 16, a sentinel past each list) through the plan API with split Q and a strided LSE too.
// The latent and rope rows are padded (544 and 96 elements apart), padding and unused slots
// NaN codes.
TEST_P(GpuBf16Rope, MatchesTheReference) {
    SKIP_WITHOUT_GPU();
    const auto [fp8, heads, in_pages] = GetParam();
    for (const Shape& shape : bf16_rope_shapes(fp8, heads)) {
        SCOPED_TRACE(shape.name);
        ProblemSpec s = shape.spec;
        if (in_pages) s = with_forms(in_shuffled_pages(s), InputForms{true, false, true});
        expect_bf16_rope_matches(make_problem(s), in_pages ? Api::kPlan : Api::kFwd,
                                 shape.route);
    }
}

std::string bf16_rope_case_name(const ::testing::TestParamInfo<Bf16RopeCase>& info) {
    const auto& [fp8, heads, in_pages] = info.param;
    return format_name(fp8) + "_h" + std::to_string(heads) + (in_pages ? "_paged_plan" : "_fwd");
}

INSTANTIATE_TEST_SUITE_P(Fp8LatentHeadsPaging, GpuBf16Rope,
                         ::testing::Combine(::testing::ValuesIn(kFp8Flavours),
                                            ::testing::Values(16, 64, 128), ::testing::Bool()),
                         bf16_rope_case_name);

// Rope values far past f16's range: random values times 2500 (up to about 1e4) and times 30000
// (past 65504), with Q's rope at unit scale and at 100 (SPEC's large-logit case); a bf16 rope
// must reach the scores intact (its products on the bf16 atom, f32 accumulation). On mma16 Q's
// rope does not set the power of two that brings Q's latent dims into f16 range; on wgmma it
// does (Q^T's rope dims are bf16 times the same power of two). Three seeds; each case prints
// O's worst |diff| / allowed, the margin (0.7.40's two-chain scores missed by 1.06x on the H100).
TEST(GpuBf16RopeLarge, RopeValuesPastTheF16Range) {
    SKIP_WITHOUT_GPU();
    for (mla_dtype fp8 : kFp8Flavours) {
        for (double gain : {2500.0, 30000.0}) {
            for (double q_std : {1.0, 100.0}) {
                for (uint64_t seed : {53, 153, 253}) {
                    SCOPED_TRACE(format_name(fp8) + " rope gain " + std::to_string(gain) +
                                 " q_std " + std::to_string(q_std) + " seed " +
                                 std::to_string(seed));
                    ProblemSpec s =
                        bf16_rope_spec(fp8, 16, {4100, 300, 1, 0}, {2, 1, 1, 1}, seed);
                    s.rope_gain = gain;
                    s.q_std = q_std;
                    double worst = NAN;  // printed as nan where the run stopped early
                    expect_bf16_rope_matches(make_problem(s), Api::kPlan, nullptr, &worst);
                    std::printf("[ margin ] %s gain %g q_std %g seed %d: worst O |diff| / "
                                "allowed %.3f\n",
                                format_name(fp8).c_str(), gain, q_std, static_cast<int>(seed),
                                worst);
                }
            }
        }
    }
}

// Q in fp8 (both flavours, a per-tensor scale) beside the mixed cache: the rope's scores take
// q_scale, not kv_scale.
TEST(GpuBf16RopeFp8Q, Fp8QueryMatchesTheReference) {
    SKIP_WITHOUT_GPU();
    for (mla_dtype fp8 : kFp8Flavours) {
        for (mla_dtype q : kFp8Flavours) {
            SCOPED_TRACE(format_name(q) + " Q, " + format_name(fp8) + " latent");
            ProblemSpec s = bf16_rope_spec(fp8, 64, {1, 3, 777, 2100, 0}, {1, 4, 2, 3, 2}, 54);
            s.q_dtype = q;
            s = with_forms(s, InputForms{true, false, true});
            const HostProblem host = make_problem(s);
            ASSERT_NE(host.q_scale, 1.0f);
            expect_bf16_rope_matches(host, Api::kFwd, nullptr);
        }
    }
}

// Pages of 1, 4, 8 and 64 tokens (shuffled, sentinel tails; e4m3fn's 32-row wgmma kernel copies
// pages of 1-8 tokens a row per thread), 16 heads at q_len 1-2; then caches of kv_scale far from
// 1 (values 2^-30 and 2^13 times unit randn, Q 2^30 and 2^-13 times it, so that the scores stay
// near 1): wgmma adds the rope's scores times 1 / kv_scale, which the LSE shows (the outputs'
// absolute floor hides the small values' O).
TEST(GpuBf16RopePages, SmallPagesAndFarScales) {
    SKIP_WITHOUT_GPU();
    for (mla_dtype fp8 : kFp8Flavours) {
        for (int page : {1, 4, 8, 64}) {
            SCOPED_TRACE(format_name(fp8) + " pages of " + std::to_string(page));
            ProblemSpec s = bf16_rope_spec(fp8, 16, {700, 64, 1, 0, 130}, {2, 2, 1, 2, 1}, 56);
            s.paged = true;
            s.page_size = page;
            s.page_list_tail = 2;
            expect_bf16_rope_matches(make_problem(s), Api::kPlan, nullptr);
        }
        for (double kv_std : {0x1p-30, 8192.0}) {
            SCOPED_TRACE(format_name(fp8) + " kv_std " + std::to_string(kv_std));
            ProblemSpec s = bf16_rope_spec(fp8, 16, {700, 64, 1, 0, 130}, {2, 2, 1, 2, 1}, 57);
            s.kv_std = kv_std;
            s.q_std = 1.0 / kv_std;
            const HostProblem host = make_problem(s);
            EXPECT_TRUE(host.kv_scale < 1e-6f || host.kv_scale > 10.0f) << host.kv_scale;
            expect_bf16_rope_matches(host, Api::kFwd, nullptr);
        }
    }
}

// Padded row strides everywhere at once: Q and O rows with room after the heads, the split
// forms' padded heads and rope rows, an LSE row stride; 128 heads, q_len 2.
TEST(GpuBf16RopeStrides, PaddedRowsEverywhere) {
    SKIP_WITHOUT_GPU();
    for (mla_dtype fp8 : kFp8Flavours) {
        SCOPED_TRACE(format_name(fp8));
        ProblemSpec s = bf16_rope_spec(fp8, 128, {1500, 64, 65, 0}, {2, 2, 1, 2}, 55);
        s = with_forms(s, InputForms{true, false, true});
        s.kpe_dtype = MLA_DTYPE_BF16;
        s.q_stride_token = 128 * (512 + 32) + 64;
        s.o_stride_token = 128 * 512 + 256;
        expect_bf16_rope_matches(make_problem(s), Api::kPlan, nullptr);
    }
}

// The rope's dtype is part of a plan's shape: a plan made with the BF16 rope refuses a run of
// the same shape with 576-wide FP8 rows (and the other way round), INVALID_VALUE naming the
// rope, nothing written; each plan runs its own params right.
TEST(GpuBf16RopePlan, TheRopeDtypeIsPartOfThePlansShape) {
    SKIP_WITHOUT_GPU();
    ProblemSpec s = bf16_rope_spec(MLA_DTYPE_FP8_E4M3FN, 16, {100, 4000, 0, 64}, {1, 2, 3, 4}, 56);
    const HostProblem mixed_host = make_problem(s);
    s.kpe_dtype = kNoV;
    const HostProblem wide_host = make_problem(s);
    DeviceProblem mixed(mixed_host), wide(wide_host);
    for (int made_with_mixed = 0; made_with_mixed < 2; ++made_with_mixed) {
        SCOPED_TRACE(made_with_mixed ? "plan with the bf16 rope" : "plan with 576-wide rows");
        DeviceProblem& own = made_with_mixed ? mixed : wide;
        DeviceProblem& other = made_with_mixed ? wide : mixed;
        Plan plan;
        ASSERT_EQ(plan.create(own.params), MLA_STATUS_SUCCESS) << mla_last_error_message();
        if (made_with_mixed) expect_bf16_rope_plan(plan.describe());
        DeviceBuffer workspace(plan.workspace_bytes());
        poison_workspace(workspace);
        other.poison_outputs(0x5C);
        EXPECT_EQ(mla_decode_plan_prepare(plan.get(), &other.params, workspace.get(),
                                          workspace.bytes(), nullptr),
                  MLA_STATUS_INVALID_VALUE);
        EXPECT_EQ(mla_decode_plan_run(plan.get(), &other.params, workspace.get(),
                                      workspace.bytes(), nullptr),
                  MLA_STATUS_INVALID_VALUE);
        EXPECT_NE(std::string(mla_last_error_message()).find("rope"), std::string::npos)
            << mla_last_error_message();
        ASSERT_TRUE(synchronize_device());
        EXPECT_TRUE(outputs_untouched(other, 0x5C));
        own.poison_outputs(0xFF);
        ASSERT_EQ(mla_decode_plan_prepare(plan.get(), &own.params, workspace.get(),
                                          workspace.bytes(), nullptr),
                  MLA_STATUS_SUCCESS)
            << mla_last_error_message();
        ASSERT_EQ(mla_decode_plan_run(plan.get(), &own.params, workspace.get(), workspace.bytes(),
                                      nullptr),
                  MLA_STATUS_SUCCESS)
            << mla_last_error_message();
        ASSERT_TRUE(synchronize_device());
        expect_outputs_match(own, run_reference(made_with_mixed ? mixed_host : wide_host));
    }
}

// An empty pool with the mixed cache: kv_cache and kpe_cache NULL; O = 0, LSE = -inf.
TEST(GpuBf16RopeEdges, EmptyPool) {
    SKIP_WITHOUT_GPU();
    expect_empty_pool_matches(
        make_problem(bf16_rope_spec(MLA_DTYPE_FP8_E4M3FNUZ, 16, {0, 0, 0}, {1, 3, 2}, 57)));
}

}  // namespace
}  // namespace mla_test
