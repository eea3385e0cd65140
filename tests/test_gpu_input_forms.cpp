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
// plan's shape), an empty pool in the split forms, and the refusal of a BF16 rope beside an FP8
// latent (host reference only) with nothing written. Each test skips without a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
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

constexpr mla_dtype kNoV = static_cast<mla_dtype>(0);

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
    if (std::getenv("MLA_DECODE_NUM_SPLITS") == nullptr) {
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
        ProblemSpec plain = shape.spec;
        if (in_pages) {
            plain.paged = true;
            plain.page_size = 16;
            plain.page_list_tail = 2;
        }
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

// An empty pool in the split forms: every pointer into the pool NULL, kpe_cache included;
// O = 0, LSE = -inf.
TEST(GpuInputFormsEdges, EmptyPoolInTheSplitForms) {
    SKIP_WITHOUT_GPU();
    ProblemSpec s;
    s.kv_dtype = MLA_DTYPE_FP8_E4M3FN;
    s.num_heads = 16;
    s.kv_lens = {0, 0, 0};
    s.q_lens = {1, 3, 2};
    const HostProblem host = make_problem(with_forms(s, InputForms{true, true, true}));
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

// A BF16 rope beside an FP8 latent is served by the host reference only: the GPU entry points
// refuse it with UNSUPPORTED and write nothing.
TEST(GpuInputFormsEdges, Bf16RopeBesideAnFp8LatentIsRefused) {
    SKIP_WITHOUT_GPU();
    ProblemSpec s;
    s.kv_dtype = MLA_DTYPE_FP8_E4M3FN;
    s.kpe_dtype = MLA_DTYPE_BF16;
    s.num_heads = 16;
    s.kv_lens = {5, 70};
    const HostProblem host = make_problem(s);
    EXPECT_NO_THROW(run_reference(host));  // the host reference serves it
    // DeviceProblem asks for the workspace size, which refuses: make it 576-wide, then switch.
    ProblemSpec wide_spec = s;
    wide_spec.kpe_dtype = kNoV;
    const HostProblem wide = make_problem(wide_spec);
    DeviceProblem dev(wide);
    DeviceBuffer kpe(host.kpe.size());
    kpe.upload(host.kpe.data(), host.kpe.size());
    mla_decode_params p = dev.params;
    p.kpe_dtype = MLA_DTYPE_BF16;
    p.kpe_cache = kpe.get();
    p.kpe_stride_slot = host.kpe_stride_slot;
    p.kv_stride_slot = MLA_HEAD_DIM_QK;  // the 576-wide rows hold the latent codes first
    dev.poison_outputs(0x5C);
    EXPECT_EQ(mla_decode_fwd(&p, dev.workspace.get(), dev.workspace_bytes, nullptr),
              MLA_STATUS_UNSUPPORTED);
    EXPECT_NE(std::string(mla_last_error_message()).find("kpe_dtype"), std::string::npos);
    size_t bytes = 0;
    EXPECT_EQ(mla_decode_workspace_size(&p, &bytes), MLA_STATUS_UNSUPPORTED);
    mla_decode_plan* plan = nullptr;
    EXPECT_EQ(mla_decode_plan_create(&p, &plan), MLA_STATUS_UNSUPPORTED);
    EXPECT_EQ(plan, nullptr);
    Plan wide_plan;
    ASSERT_EQ(wide_plan.create(dev.params), MLA_STATUS_SUCCESS) << mla_last_error_message();
    DeviceBuffer workspace(wide_plan.workspace_bytes());
    EXPECT_EQ(mla_decode_plan_run(wide_plan.get(), &p, workspace.get(), workspace.bytes(),
                                  nullptr),
              MLA_STATUS_UNSUPPORTED);
    EXPECT_TRUE(outputs_untouched(dev, 0x5C));
}

}  // namespace
}  // namespace mla_test
