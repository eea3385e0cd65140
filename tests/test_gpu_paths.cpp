// GPU tests of the paths beyond the first release's: every cache format (bf16, fp8 e4m3fn /
// e4m3fnuz, MXFP4 keys and values, MXFP4 keys with fp8 values) at 8, 16, 32, 64 and 128 heads,
// q_len 1..4 (uniform, mixed, with fully masked queries), fp8 Q, paged caches with sentinel page
// list tails, lengths on both sides of every tile and split boundary, a batch of 1024, 128K-token
// sequences, caches past 2^31 / 2^32 bytes, extreme MXFP4 blocks, and the plan API (prepare /
// run, graph capture and replay with new lengths, two plans on two streams, refused calls).
//
// Every run compares every element of O and LSE with the host reference (double precision,
// from the same stored values) at the bf16-output tolerance, with O and LSE poisoned before the
// run. Each test skips, with the reason, when no GPU is present. The route each plan takes
// (single split or split-KV, split count) is printed as "[ route    ] ...".
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iterator>
#include <ostream>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "compare.h"
#include "device_info.h"  // mla::current_device_info: whether the device has dependent launch
#include "device_problem.h"
#include "gpu_graph.h"
#include "gpu_test.h"
#include "mla_decode.h"
#include "mla_problem.h"
#include "splitkv/launch.h"  // stage1_shape: whether this build has the wgmma kernels
#include "stage1_select.h"  // mma16_e4m3_built

namespace mla_test {
namespace {

namespace gpu = mla::gpu;

constexpr mla_dtype kNoV = MLA_DTYPE_NONE;
// 8 heads: a 128-head model split 16 ways; a 16-row CTA then holds two query tokens.
constexpr int kHeadCounts[] = {8, 16, 32, 64, 128};

// A cache format: the latent cache's dtype, and the dtype of a separate fp8 V cache (or none).
struct Format {
    mla_dtype kv;
    mla_dtype v;
};

const Format kBf16{MLA_DTYPE_BF16, kNoV};
const Format kFp8Fn{MLA_DTYPE_FP8_E4M3FN, kNoV};
const Format kFp8Fnuz{MLA_DTYPE_FP8_E4M3FNUZ, kNoV};
const Format kMxfp4{MLA_DTYPE_MXFP4, kNoV};
const Format kMxfp4FnV{MLA_DTYPE_MXFP4, MLA_DTYPE_FP8_E4M3FN};
const Format kMxfp4FnuzV{MLA_DTYPE_MXFP4, MLA_DTYPE_FP8_E4M3FNUZ};
const Format kAllFormats[] = {kBf16, kFp8Fn, kFp8Fnuz, kMxfp4, kMxfp4FnV, kMxfp4FnuzV};
const Format kMxfp4Formats[] = {kMxfp4, kMxfp4FnV, kMxfp4FnuzV};

std::string name_of(const Format& f) { return format_name(f.kv, f.v); }

// How GoogleTest prints the parameters (also in the ctest names): by name, not by bytes.
void PrintTo(const Format& f, std::ostream* os) { *os << name_of(f); }

ProblemSpec make_spec(const Format& f, int heads, std::vector<int> kv_lens,
                      std::vector<int> q_lens = {}, uint64_t seed = 1) {
    return format_spec(f.kv, f.v, heads, std::move(kv_lens), std::move(q_lens), seed);
}

ProblemSpec paged(ProblemSpec s, int page_size, int tail_entries = 0) {
    s.paged = true;
    s.page_size = page_size;
    s.page_list_tail = tail_entries;
    return s;
}

// `count` values in [lo, hi] from a fixed engine (raw mt19937_64 output: the same on every
// standard library).
std::vector<int> random_lengths(int count, int lo, int hi, uint64_t seed) {
    std::mt19937_64 engine(seed);
    std::vector<int> out(count);
    for (int& x : out) x = lo + static_cast<int>(engine() % static_cast<uint64_t>(hi - lo + 1));
    return out;
}

std::string trace(const char* what, int value) {
    return std::string(what) + " " + std::to_string(value);
}

// ---- every format x every head count -----------------------------------------------------------

class GpuFormatHeads : public ::testing::TestWithParam<std::tuple<Format, int>> {
protected:
    Format format() const { return std::get<0>(GetParam()); }
    int heads() const { return std::get<1>(GetParam()); }
};

// q_len 1, uneven lengths with zeros, both sides of the 64-token tile.
TEST_P(GpuFormatHeads, UnevenLengths) {
    SKIP_WITHOUT_GPU();
    expect_matches_reference(make_spec(format(), heads(), {0, 1, 63, 64, 65, 700, 2049}, {}, 3));
}

// Every element with the same q_len, 1..4. kv_len 3 leaves q_len 4's first query with no
// visible token (O = 0, LSE = -inf).
TEST_P(GpuFormatHeads, UniformQueryLengths) {
    SKIP_WITHOUT_GPU();
    for (int q_len = 1; q_len <= 4; ++q_len) {
        SCOPED_TRACE(trace("q_len", q_len));
        const std::vector<int> kv = {3, 130, 1100};
        expect_matches_reference(make_spec(format(), heads(), kv, std::vector<int>(3, q_len), 5),
                                 Tolerance(), Api::kPlan);
    }
}

// q_len 1..4 mixed in one batch, including q_len 4 over kv_len 0..3 (fully masked queries)
// and q_len > 0 over an empty cache.
TEST_P(GpuFormatHeads, MixedQueryLengthsWithMaskedQueries) {
    SKIP_WITHOUT_GPU();
    expect_matches_reference(make_spec(format(), heads(), {0, 1, 2, 3, 4, 0, 1, 64, 1000, 129},
                                       {4, 4, 4, 4, 4, 1, 2, 3, 1, 3}, 7),
                             Tolerance(), Api::kPlan);
}

INSTANTIATE_TEST_SUITE_P(
    AllFormats, GpuFormatHeads,
    ::testing::Combine(::testing::ValuesIn(kAllFormats), ::testing::ValuesIn(kHeadCounts)),
    [](const ::testing::TestParamInfo<std::tuple<Format, int>>& info) {
        return name_of(std::get<0>(info.param)) + "_h" + std::to_string(std::get<1>(info.param));
    });

// ---- fp8 Q ----------------------------------------------------------------------------------

class GpuFp8Query : public ::testing::TestWithParam<std::tuple<mla_dtype, Format>> {};

// Pre-quantized fp8 Q (per-tensor q_scale != 1) of either flavour against bf16, fp8 and MXFP4
// caches, mixed q_len, 8, 16 and 128 heads, unit and large (std 100) Q.
TEST_P(GpuFp8Query, MatchesReference) {
    SKIP_WITHOUT_GPU();
    for (int heads : {8, 16, 128}) {
        for (double q_std : {1.0, 100.0}) {
            SCOPED_TRACE(trace("heads", heads) + ", q_std " + std::to_string(q_std));
            ProblemSpec s = make_spec(std::get<1>(GetParam()), heads, {1, 3, 777, 2100, 0},
                                      {1, 4, 2, 3, 2}, 9);
            s.q_dtype = std::get<0>(GetParam());
            s.q_std = q_std;
            const HostProblem host = make_problem(s);
            ASSERT_NE(host.q_scale, 1.0f);
            expect_matches_reference(host, Tolerance(), heads == 16 ? Api::kFwd : Api::kPlan);
        }
    }
}

INSTANTIATE_TEST_SUITE_P(
    Fp8Q, GpuFp8Query,
    ::testing::Combine(::testing::Values(MLA_DTYPE_FP8_E4M3FN, MLA_DTYPE_FP8_E4M3FNUZ),
                       ::testing::Values(kBf16, kFp8Fn, kFp8Fnuz, kMxfp4)),
    [](const ::testing::TestParamInfo<std::tuple<mla_dtype, Format>>& info) {
        return "q_" + format_name(std::get<0>(info.param)) + "_kv_" +
               name_of(std::get<1>(info.param));
    });

// ---- fp8 Q on the e4m3 tensor core ---------------------------------------------------------

// MLA_DECODE_FLAG_FP8_MMA with e4m3fn Q on an e4m3fn cache: where the plan's variant is
// wgmma, or mma16 on an NVIDIA device from sm_89 on in a build whose every pass has mma16's
// e4m3 atom (mla::mma16_e4m3_built; the .stage1_mma16 registration forces mma16), its
// description says "e4m3 scores" (the scores are e4m3 products that the tensor core
// accumulates with fewer bits than f32). Per case three worst ratios to SPEC's fp8-Q rule
// (|error| <= 8e-3 + 2e-2 |ref|) are printed: the GPU against the reference from the same stored
// values, the GPU against the bf16 reference (Q not quantized: SPEC's comparison), and the exact
// result of the fp8 values against that bf16 reference (what quantizing Q alone costs: on the
// H200 3.3x the rule for unit randn, ~370x for Q std 100). Required: for the seed's input scales
// (randn * 0.02, unit randn) every element of O and LSE within the rule against the same values
// (LSE for Q std 10 and 100 too, where O is measured and printed), and against the bf16 reference
// within the rule or within 1.1x of the fp8 Q's own error; the e4m3 kernel's bits are the same
// run to run and, in at least one Q scale per head count, differ from the exact path's (small
// scores may round to the same outputs). 16 heads with q_len 1 (wgmma: 16 rows a CTA; under
// the .one_split registration the long-CTA kernel, its longest element 64 tiles) and q_len 2
// (32 rows), and 16 / 64 / 128 heads with q_len 1..4 mixed (64 rows), lengths around tile
// boundaries.
TEST(GpuFp8Mma, WithinTheFp8QRule) {
    SKIP_WITHOUT_GPU();
    mla::DeviceInfo device;
    ASSERT_EQ(mla::current_device_info(&device, false), MLA_STATUS_SUCCESS);
    // Q and cache of the e4m3 flavour the device multiplies (mla::device_e4m3_mma: e4m3fn on
    // NVIDIA sm_89+ and gfx950, e4m3fnuz on gfx940-gfx942). mma16 multiplies them with its e4m3
    // atom (mma.sync m16n8k32 .e4m3 / v_mfma_f32_16x16x32_fp8_fp8), and plans give it the e4m3
    // scores only where mma16 is forced (mla::stage1_e4m3_scores).
    mla::arch::Fp8Flavor flavor = mla::arch::Fp8Flavor::kE4M3FN;
    const bool device_e4m3 = mla::device_e4m3_mma(device, &flavor);
    const bool fnuz = flavor == mla::arch::Fp8Flavor::kE4M3FNUZ;
    const char* forced = std::getenv("MLA_DECODE_STAGE1");
    const bool mma16_forced = forced != nullptr && std::strcmp(forced, "mma16") == 0;
    const bool mma16_e4m3 = mla::mma16_e4m3_built() && mma16_forced && device_e4m3;
    const char* splits = std::getenv("MLA_DECODE_NUM_SPLITS");
    const bool one_split = splits != nullptr && std::strcmp(splits, "1") == 0;
    int e4m3_cases = 0;  // cases whose plan ran the e4m3 scores
    const std::vector<int> mixed = {1, 2, 4, 3, 1, 1, 2};
    const std::pair<int, std::vector<int>> shapes[] = {
        {16, std::vector<int>(7, 1)}, {16, std::vector<int>(7, 2)}, {16, mixed}, {64, mixed},
        {128, mixed}};
    for (const auto& [heads, q_lens] : shapes) {
        const int max_q_len = *std::max_element(q_lens.begin(), q_lens.end());
        int e4m3_heads = 0, e4m3_differing = 0;  // this shape's e4m3 cases, those not exact
        for (double q_std : {0.02, 1.0, 10.0, 100.0}) {
            SCOPED_TRACE(trace("heads", heads) + ", " + trace("max q_len", max_q_len) +
                         ", q_std " + std::to_string(q_std));
            ProblemSpec s = make_spec(fnuz ? kFp8Fnuz : kFp8Fn, heads,
                                      {1, 64, 700, 4096, 0, 2049, 65}, q_lens, 11);
            s.q_std = q_std;
            const Reference ref_bf16 = run_reference(make_problem(s));  // the same draws
            s.q_dtype = fnuz ? MLA_DTYPE_FP8_E4M3FNUZ : MLA_DTYPE_FP8_E4M3FN;
            const HostProblem host = make_problem(s);
            const Reference ref = run_reference(host);
            DeviceProblem dev(host);
            dev.params.flags |= MLA_DECODE_FLAG_FP8_MMA;
            bool e4m3 = false;
            {
                Plan plan;
                ASSERT_EQ(plan.create(dev.params), MLA_STATUS_SUCCESS);
                const std::string route = plan.describe();
                std::printf("[ route    ] %s\n", route.c_str());
                e4m3 = route.find("e4m3 scores") != std::string::npos;
                const bool wgmma = route.find("variant=wgmma") != std::string::npos;
                if (wgmma || (mma16_e4m3 && route.find("variant=mma16") != std::string::npos)) {
                    EXPECT_TRUE(e4m3) << route;
                }
                // On one split (.one_split) the 16-row shape's 64-tile element makes every CTA
                // of the launch a long one.
                if (wgmma && one_split && heads == 16 && max_q_len == 1) {
                    EXPECT_NE(route.find(" (e4m3 scores) (long CTAs: three consumers) "),
                              std::string::npos)
                        << route;
                }
            }
            dev.poison_outputs(0xFF);
            ASSERT_TRUE(run_on_gpu(dev, Api::kPlan));
            const std::vector<float> o = dev.download_o(), lse = dev.download_lse();
            if (e4m3) {  // the e4m3 kernel ran: the exact scores (no flag) give other bits
                ++e4m3_cases;
                ++e4m3_heads;
                dev.params.flags &= ~MLA_DECODE_FLAG_FP8_MMA;
                dev.poison_outputs(0xFF);
                ASSERT_TRUE(run_on_gpu(dev, Api::kPlan));
                const std::vector<float> o_exact = dev.download_o();
                const std::vector<float> lse_exact = dev.download_lse();
                if (std::memcmp(o.data(), o_exact.data(), o.size() * sizeof(float)) != 0 ||
                    std::memcmp(lse.data(), lse_exact.data(), lse.size() * sizeof(float)) != 0) {
                    ++e4m3_differing;
                } else {
                    std::printf("[ fp8 rule ] heads %d, max q_len %d, q_std %g: e4m3 scores, same "
                                "bits as the exact path\n", heads, max_q_len, q_std);
                }
                // Run to run, the e4m3 kernel's bits are the same.
                dev.params.flags |= MLA_DECODE_FLAG_FP8_MMA;
                dev.poison_outputs(0xFF);
                ASSERT_TRUE(run_on_gpu(dev, Api::kPlan));
                const std::vector<float> o_again = dev.download_o();
                const std::vector<float> lse_again = dev.download_lse();
                EXPECT_EQ(std::memcmp(o.data(), o_again.data(), o.size() * sizeof(float)), 0);
                EXPECT_EQ(std::memcmp(lse.data(), lse_again.data(), lse.size() * sizeof(float)),
                          0);
            }
            const double o_same = worst_fp8_rule_ratio(o, ref.o);
            const double lse_same = worst_fp8_rule_ratio(lse, ref.lse);
            const double o_bf16 = worst_fp8_rule_ratio(o, ref_bf16.o);
            const double lse_bf16 = worst_fp8_rule_ratio(lse, ref_bf16.lse);
            const double q_only_o = worst_fp8_rule_ratio(ref.o, ref_bf16.o);
            const double q_only_lse = worst_fp8_rule_ratio(ref.lse, ref_bf16.lse);
            std::printf("[ fp8 rule ] heads %d, max q_len %d, q_std %g: worst |error| / (8e-3 + "
                        "2e-2 |ref|) of O / LSE: GPU vs same values %.4f / %.4f, GPU vs bf16 Q "
                        "%.4f / %.4f, exact fp8 Q vs bf16 Q %.4f / %.4f\n",
                        heads, max_q_len, q_std, o_same, lse_same, o_bf16, lse_bf16, q_only_o,
                        q_only_lse);
            EXPECT_LE(lse_same, 1.0);
            if (q_std <= 1.0) {
                EXPECT_LE(o_same, 1.0);
            }
            EXPECT_LT(o_same, INFINITY);  // no NaN, no infinity
            EXPECT_LE(o_bf16, std::max(1.0, 1.1 * q_only_o));
            EXPECT_LE(lse_bf16, std::max(1.0, 1.1 * q_only_lse));
        }
        // mma16's e4m3 products (mma.sync m16n8k32) round the scores of Q std 0.02 to the exact
        // path's bits after the softmax (H200, s42); larger scores tell the two apart.
        if (e4m3_heads > 0) {
            EXPECT_GT(e4m3_differing, 0)
                << "heads " << heads << ", max q_len " << max_q_len
                << ": the plan says e4m3 scores, but every case's outputs equal the exact path's";
        }
    }
    // On Hopper with the wgmma kernels built, the 64-row cases (heads 64 and 128) go to wgmma
    // unless the environment forces mma16 (the .stage1_mma16 registration); forced mma16 runs
    // every case on e4m3 scores where the device multiplies e4m3 (its flavour, above).
    const int cases = 4 * static_cast<int>(std::size(shapes));
    if (mma16_e4m3) {
        EXPECT_EQ(e4m3_cases, cases);
    }
    const bool wgmma_built = mla::splitkv::stage1_shape(mla::splitkv::Stage1Variant::kWgmma,
                                                        mla::splitkv::KvFormat::kFp8E4M3FN)
                                 .tile_tokens > 0;
    if (device.cc_major == 9 && wgmma_built && !mma16_forced) {
        EXPECT_GT(e4m3_cases, 0) << "no case ran the e4m3 scores on this Hopper device";
    }
    std::printf("[ fp8 rule ] %d of %d cases ran the e4m3 scores\n", e4m3_cases, cases);
}

// ---- paged caches, tile and split boundaries, per format ------------------------------------

class GpuPathsFormat : public ::testing::TestWithParam<Format> {};

// Page sizes 1, 16, 64, shuffled pages, each element's page list ending in three entries of
// 0x7fffffff (never to be read), spare pages and the slots past each length in its last page
// holding NaN codes.
TEST_P(GpuPathsFormat, ShuffledPagesWithSentinelListTails) {
    SKIP_WITHOUT_GPU();
    const std::pair<int, int> page_sizes_and_heads[] = {{1, 16}, {16, 64}, {64, 128}, {16, 8}};
    for (const auto& [page_size, heads] : page_sizes_and_heads) {
        SCOPED_TRACE(trace("page_size", page_size) + ", " + trace("heads", heads));
        const ProblemSpec s =
            paged(make_spec(GetParam(), heads, {0, 1, 15, 16, 17, 63, 64, 65, 1000, 2047},
                            {1, 2, 4, 1, 3, 1, 2, 4, 1, 2}, 11),
                  page_size, 3);
        expect_matches_reference(s, Tolerance(), page_size == 16 ? Api::kPlan : Api::kFwd);
    }
}

// Pages of 64, 128 and 16 tokens, shuffled, at 16 heads with elements of up to 128 tiles (under
// the .one_split registration fp8 caches take the long-CTA kernel here, from 40 tiles a
// split). Lengths end mid-page and mid-tile, and past-the-end slots hold NaN codes. The
// producer's consecutive-slot loop runs here on 64- and 128-token pages: in the long CTAs and,
// through q_len 2 (32 rows), in MXFP4's 32-row kernel (its plan on the H200: 32 rows, 26 splits
// of 5 tiles; one split under .one_split: 16 rows).
TEST_P(GpuPathsFormat, LargeShuffledPagesOfLongElements) {
    SKIP_WITHOUT_GPU();
    for (int page_size : {64, 128, 16}) {
        SCOPED_TRACE(trace("page_size", page_size));
        const ProblemSpec s = paged(
            make_spec(GetParam(), 16, {4096 + 37, 8192, 1, 4160, 6000}, {1, 1, 1, 2, 1}, 17),
            page_size, 3);
        expect_matches_reference(s);
    }
}

// One element per problem, so each length is also max_kv_len (it sets the tiles and splits):
// 0, 1, 2 and both sides of 64, 128 and 4096.
TEST_P(GpuPathsFormat, SingleElementAroundTileAndSplitBoundaries) {
    SKIP_WITHOUT_GPU();
    for (int len : {0, 1, 2, 63, 64, 65, 127, 128, 129, 4095, 4096, 4097}) {
        SCOPED_TRACE(trace("kv_len", len));
        expect_matches_reference(make_spec(GetParam(), 16, {len}, {}, 13));
    }
}

// One element of 8192 sets the split layout (chunks of a multiple of 64 tokens); the others
// sit on both sides of every multiple of 64 up to 257 and of 384, 512, 1024, 2048, 4096, 8192.
// Run at 16 heads / q_len 1, and at 64 heads with q_len 1..4.
TEST_P(GpuPathsFormat, ElementsAroundSplitBoundaries) {
    SKIP_WITHOUT_GPU();
    const std::vector<int> kv = {8192, 63,   64,   65,   127,  128,  129,  191,  192,  193,
                                 255,  256,  257,  383,  384,  385,  511,  512,  513,  1023,
                                 1024, 1025, 2047, 2048, 2049, 4095, 4096, 4097, 8191, 0, 1};
    {
        SCOPED_TRACE("heads 16, q_len 1");
        expect_matches_reference(make_spec(GetParam(), 16, kv, {}, 15));
    }
    {
        SCOPED_TRACE("heads 64, q_len 1..4");
        std::vector<int> q(kv.size());
        for (size_t b = 0; b < q.size(); ++b) q[b] = 1 + static_cast<int>(b % 4);
        expect_matches_reference(make_spec(GetParam(), 64, kv, q, 17), Tolerance(), Api::kPlan);
    }
}

// A batch whose every query sees nothing: O = 0, LSE = -inf everywhere.
TEST_P(GpuPathsFormat, EveryElementEmpty) {
    SKIP_WITHOUT_GPU();
    expect_matches_reference(make_spec(GetParam(), 32, {0, 0, 0}, {1, 4, 2}, 19));
}

// An empty pool, as in an engine's warm-up or graph-capture step: num_slots 0, every pointer
// into the pool NULL (so nothing can be read from it), every kv length 0, q_len 1..3. O = 0 and
// LSE = -inf everywhere through mla_decode_fwd and the plan API, eagerly and replayed twice
// from a graph captured on a non-blocking stream; contiguous and paged.
TEST_P(GpuPathsFormat, EmptyPool) {
    SKIP_WITHOUT_GPU();
    const ProblemSpec spec = make_spec(GetParam(), 16, {0, 0, 0, 0}, {1, 3, 1, 2}, 49);
    for (bool in_pages : {false, true}) {
        SCOPED_TRACE(in_pages ? "paged" : "contiguous");
        const HostProblem host = make_problem(in_pages ? paged(spec, 16) : spec);
        const Reference ref = run_reference(host);
        for (float lse : ref.lse) ASSERT_TRUE(std::isinf(lse) && lse < 0.0f);
        DeviceProblem dev(host);
        dev.params.num_slots = 0;
        dev.params.kv_cache = nullptr;
        dev.params.kv_block_scales = nullptr;
        dev.params.v_cache = nullptr;
        dev.params.kv_page_indices = nullptr;
        for (Api api : {Api::kFwd, Api::kPlan}) {
            SCOPED_TRACE(api == Api::kFwd ? "fwd" : "plan");
            dev.poison_outputs(0xFF);
            ASSERT_TRUE(run_on_gpu(dev, api));
            expect_outputs_match(dev, ref);
        }
        TestStream stream;
        ASSERT_EQ(stream.status(), gpu::kSuccess);
        Plan plan;
        ASSERT_EQ(plan.create(dev.params), MLA_STATUS_SUCCESS) << mla_last_error_message();
        DeviceBuffer workspace(plan.workspace_bytes());
        poison_workspace(workspace);
        CapturedGraph graph;
        ASSERT_EQ(graph.begin_capture(stream.get()), gpu::kSuccess);
        const mla_status fwd = dev.run(stream.get());  // the plan cache has the shape (above)
        const mla_status prepared = mla_decode_plan_prepare(
            plan.get(), &dev.params, workspace.get(), workspace.bytes(), stream.get());
        const mla_status ran = mla_decode_plan_run(plan.get(), &dev.params, workspace.get(),
                                                   workspace.bytes(), stream.get());
        ASSERT_EQ(graph.end_capture(stream.get()), gpu::kSuccess);
        ASSERT_EQ(fwd, MLA_STATUS_SUCCESS);
        ASSERT_EQ(prepared, MLA_STATUS_SUCCESS);
        ASSERT_EQ(ran, MLA_STATUS_SUCCESS);
        for (int replay = 0; replay < 2; ++replay) {
            SCOPED_TRACE(trace("replay", replay));
            dev.poison_outputs(0xFF);
            ASSERT_EQ(graph.launch(stream.get()), gpu::kSuccess);
            ASSERT_EQ(stream.synchronize(), gpu::kSuccess);
            expect_outputs_match(dev, ref);
        }
    }
}

INSTANTIATE_TEST_SUITE_P(AllFormats, GpuPathsFormat, ::testing::ValuesIn(kAllFormats),
                         [](const ::testing::TestParamInfo<Format>& info) {
                             return name_of(info.param);
                         });

// ---- long sequences, large batches -----------------------------------------------------------

// Long elements: both sides of 65536 (with max_kv_len 65537 the split chunks are long), and
// short ones on the 2048 boundary beside them. Two formats (making the problem on the host is
// the cost here; bf16 has its long case below).
TEST(GpuLong, AroundSixtyFourKTokens) {
    SKIP_WITHOUT_GPU();
    for (const Format& f : {kFp8Fn, kMxfp4FnuzV}) {
        SCOPED_TRACE(name_of(f));
        expect_matches_reference(
            make_spec(f, 16, {65537, 65536, 65535, 2047, 2048, 2049}, {1, 2, 1, 4, 1, 3}, 21));
    }
}

// Two elements of up to 131072 tokens (and short ones) in a small batch.
TEST(GpuLong, Kv131072) {
    SKIP_WITHOUT_GPU();
    expect_matches_reference(make_spec(kBf16, 16, {131072, 99999, 2047, 2048, 2049, 0, 1},
                                       {1, 2, 1, 4, 1, 3, 1}, 23),
                             Tolerance(), Api::kPlan);
}

// One element of 65536 tokens: the plan splits it more than a warp has lanes (PlanCreate.
// OneLongElementSplitsPastOneWarpOfLanes; 94 on the H200), so the reduce takes its kernel for
// many splits (32 partial O rows in flight, the LSEs of up to 4 warps' worth in registers).
TEST(GpuLong, OneElementOfManySplits) {
    SKIP_WITHOUT_GPU();
    expect_matches_reference(make_spec(kFp8Fn, 16, {65536}, {}, 27), Tolerance(), Api::kPlan);
}

// A short element beside a long one in a plan of 33-64 splits (H200 / H100 planner: 64):
// reduce_split_parallel_kernel loads every split's partial row beside the LSEs there
// (Params::reduce_rows_early: 2 x 16 x 63 rows of 2 KB, within its bound), and the short
// element's splits past its last write zero rows that it loads and never adds. The workspace
// comes poisoned (poison_workspace), so a row loaded and added unwritten would show.
TEST(GpuLong, ShortBesideLongInManySplits) {
    SKIP_WITHOUT_GPU();
    for (const Format& f : {kFp8Fn, kBf16, kMxfp4}) {
        SCOPED_TRACE(name_of(f));
        expect_matches_reference(make_spec(f, 16, {16384, 100}, {}, 29), Tolerance(), Api::kPlan);
    }
}

// Whether this run's plans are the wgmma variant's as the H200's planner makes them: Hopper,
// the wgmma kernels built, mma16 and the rows per CTA (MLA_DECODE_ROWS) not forced, and the split
// count as the caller accepts it (MLA_DECODE_NUM_SPLITS "1", or also unset where
// `default_splits_too`).
bool wgmma_plans_as_planned(bool default_splits_too) {
    const char* splits = std::getenv("MLA_DECODE_NUM_SPLITS");
    const char* forced = std::getenv("MLA_DECODE_STAGE1");
    const bool splits_ok = splits == nullptr ? default_splits_too : std::strcmp(splits, "1") == 0;
    return splits_ok && hopper_with_wgmma() &&
           std::getenv("MLA_DECODE_ROWS") == nullptr &&
           (forced == nullptr || std::strcmp(forced, "mma16") != 0);
}

// The number after `key` in a plan's description line (-1 where it has none).
long route_number(const std::string& route, const char* key) {
    const size_t at = route.find(key);
    if (at == std::string::npos) return -1;
    return std::strtol(route.c_str() + at + std::strlen(key), nullptr, 10);
}

// After a run whose plan `route` describes (its description line): this thread's last stage-1
// launch (splitkv::last_stage1_tma) must have had TMA maps exactly where the plan's kernel
// takes whole tiles by TMA (splitkv::wgmma_tiles_by_tma: wgmma with an fp8 cache at 64 rows, an
// e4m3fn one at 32, in long CTAs, or in the 16-row seesaw where a split takes
// kWgmmaTma16MinTiles tiles or more, from the line's kv_len<= and splits=; bf16 or e4m3 scores
// alike) and the
// cache is contiguous (page_size 0) or paged in a multiple of 64 tokens, unless MLA_DECODE_TMA=0
// (ctest's .notma registrations: the copies everywhere); every other plan must have had none.
void expect_tma_where_it_applies(const std::string& route, int page_size) {
    namespace sk = mla::splitkv;
    const auto has = [&](const char* s) { return route.find(s) != std::string::npos; };
    const bool fp8 = has(" kv=fp8_e4m3fn ") || has(" kv=fp8_e4m3fnuz ");
    const bool long_cta = has("(long CTAs");
    const bool seesaw16 = has(" rows/cta=16 ") && !long_cta;
    const long tiles = (route_number(route, " kv_len<=") + sk::kWgmmaTileTokens - 1) /
                       sk::kWgmmaTileTokens;
    const long splits = std::max(1L, route_number(route, " splits="));
    const bool swizzled = has(" variant=wgmma") && fp8 &&
                          (has(" rows/cta=64 ") || long_cta ||
                           (has(" rows/cta=32 ") && has(" kv=fp8_e4m3fn ")) ||
                           (seesaw16 && (tiles + splits - 1) / splits >= sk::kWgmmaTma16MinTiles));
    const char* env = std::getenv("MLA_DECODE_TMA");
    const bool on = env == nullptr || std::strcmp(env, "0") != 0;
    const bool want = swizzled && on && (page_size == 0 || page_size % 64 == 0);
    EXPECT_EQ(mla::splitkv::last_stage1_tma(), want)
        << "page_size " << page_size << ", MLA_DECODE_TMA " << (env == nullptr ? "unset" : env)
        << ", route " << route;
}

// The plan of `host` (bf16 O, LSE): its description line, also printed.
std::string planned_route(const HostProblem& host) {
    Plan plan;
    const mla_status status = plan.create(host.host_params(nullptr, MLA_DTYPE_BF16, nullptr));
    EXPECT_EQ(status, MLA_STATUS_SUCCESS) << mla_last_error_message();
    const std::string line = status == MLA_STATUS_SUCCESS ? plan.describe() : std::string();
    std::printf("[ route    ] %s\n", line.c_str());
    return line;
}

// e4m3fn Q on an e4m3fn cache with MLA_DECODE_FLAG_FP8_MMA (e4m3 scores), judged by SPEC's fp8-Q
// rule against the same values; where expect_rows, the plan must take an e4m3-score wgmma kernel
// of `rows` rows (long CTAs included). `route`, where not null: the plan's description.
void expect_fp8_mma_rows(const HostProblem& host, bool expect_rows, int rows = 64,
                         std::string* route = nullptr) {
    const Reference ref = run_reference(host);
    DeviceProblem dev(host);
    dev.params.flags |= MLA_DECODE_FLAG_FP8_MMA;
    {
        Plan plan;
        ASSERT_EQ(plan.create(dev.params), MLA_STATUS_SUCCESS);
        std::printf("[ route    ] %s\n", plan.describe().c_str());
        if (route != nullptr) *route = plan.describe();
        if (expect_rows) {
            const std::string line = plan.describe();
            const std::string want = " rows/cta=" + std::to_string(rows) + " ";
            EXPECT_NE(line.find(" variant=wgmma (e4m3 scores) "), std::string::npos) << line;
            EXPECT_NE(line.find(want), std::string::npos) << line;
        }
    }
    dev.poison_outputs(0xFF);
    ASSERT_TRUE(run_on_gpu(dev, Api::kPlan));
    EXPECT_LE(worst_fp8_rule_ratio(dev.download_o(), ref.o), 1.0);
    EXPECT_LE(worst_fp8_rule_ratio(dev.download_lse(), ref.lse), 1.0);
}

// The long-CTA kernel of 16-row fp8 plans (three solo consumers: splits of at least
// kWgmmaLongCtaTiles tiles, variants.h; the choice follows max_kv_len, so every CTA of the
// launch runs it) with the elements beside the long one giving its CTAs 0 to 5 tiles (0 to 2
// a consumer: 0, 1, 63 .. 257 tokens) and a tile boundary at the long end. The planner takes
// it for large batches of long caches (bs256 kv8192); under the suite's .one_split
// registration (MLA_DECODE_NUM_SPLITS=1) this small batch takes it too, and on Hopper with the
// wgmma kernels built (mma16 not forced) the description must say so; the plain registration
// runs whatever the planner picks (8 splits of 9 tiles on the H200: the seesaw). Its stages are
// swizzled (WgmmaConfig::kSwizzled): a contiguous cache and 64-token pages take whole tiles by
// TMA, 16-token pages and partial tiles the copies; shuffled pages with NaN in spare slots.
// e4m3 scores take the same kernel (e4m3fn Q with MLA_DECODE_FLAG_FP8_MMA, judged by SPEC's
// fp8-Q rule against the same values; the plan API only): a contiguous cache and 16-token pages.
TEST(GpuLongCta, ConsumersOfZeroToManyTiles) {
    SKIP_WITHOUT_GPU();
    const bool expect_long = wgmma_plans_as_planned(false);
    struct Case {
        Format format;
        int page_size;  // 0: contiguous
        bool fp8_mma;   // e4m3fn Q with MLA_DECODE_FLAG_FP8_MMA: e4m3 scores
    };
    const Case cases[] = {{kFp8Fn, 0, false},  {kFp8Fnuz, 0, false}, {kFp8Fn, 64, false},
                          {kFp8Fnuz, 16, false}, {kFp8Fn, 0, true},    {kFp8Fn, 16, true}};
    for (const auto& [f, page_size, fp8_mma] : cases) {
        SCOPED_TRACE(name_of(f) + ", " + trace("page_size", page_size) +
                     (fp8_mma ? ", e4m3fn Q, FP8_MMA" : ""));
        ProblemSpec spec = make_spec(
            f, 16, {4097, 0, 1, 63, 64, 65, 128, 129, 192, 193, 255, 256, 257, 4096, 4095}, {},
            31);
        if (fp8_mma) spec.q_dtype = MLA_DTYPE_FP8_E4M3FN;
        if (page_size > 0) spec = paged(spec, page_size, 3);
        const HostProblem host = make_problem(spec);
        if (fp8_mma) {
            std::string route;
            expect_fp8_mma_rows(host, false, 16, &route);
            if (expect_long) {
                EXPECT_NE(route.find(" variant=wgmma (e4m3 scores) (long CTAs: three consumers) "
                                     "rows/cta=16 "),
                          std::string::npos)
                    << route;
            }
            expect_tma_where_it_applies(route, page_size);
            continue;
        }
        const std::string line = planned_route(host);
        if (expect_long) {
            EXPECT_NE(line.find(" variant=wgmma (long CTAs: three consumers) rows/cta=16 "),
                      std::string::npos)
                << line;
        }
        expect_matches_reference(host, Tolerance(), Api::kPlan);
        expect_matches_reference(host, Tolerance(), Api::kFwd);
        expect_tma_where_it_applies(line, page_size);
    }
}

// The 64-row wgmma producer by cache form: 128 heads, q_len 4 (512 rows an element), 12
// elements of up to 300 tokens that end mid-page and mid-tile, shuffled pages of 1-128 tokens
// with NaN codes in spare slots, a contiguous cache, and the split cache form (rope rows of
// their own stride). Every 64-row fp8 kernel keeps its tiles in swizzled stages
// (WgmmaConfig::kSwizzled): whole tiles of a contiguous cache or of pages of a multiple of 64
// tokens come by TMA, partial tiles and other pages by copies (copy_tile_rows_ss). bf16
// scores: a contiguous cache (both forms, e4m3fnuz too), pages of 1 to 192 tokens (e4m3fnuz on
// 2, 4, 32, 64 and, in the split cache form, 8 and 192). The fp8_mma cases (e4m3 scores: the
// stages are the A operand): a contiguous cache (both forms), pages of 192, 128, 64 (the split
// cache form), 8 and 2 (the split cache form). On
// Hopper with the wgmma kernels built (mma16 not forced; default or one split) the plans must
// take 64 rows (the planner's choice for this batch, e4m3fn and e4m3fnuz). (Paged 64-row CTAs
// of 9 tiles and more, on the split path: PagedSplitCtas.)
TEST(GpuRows64, ConsecutiveSlotsAndPages) {
    SKIP_WITHOUT_GPU();
    const bool expect_64 = wgmma_plans_as_planned(true);
    const std::vector<int> lengths = {300, 1, 64, 65, 128, 200, 257, 0, 191, 299, 100, 300};
    struct Case {
        Format format;
        int page_size;  // 0: contiguous
        bool split_cache;
        bool fp8_mma;
    };
    const Case cases[] = {
        {kFp8Fn, 0, false, false},   {kFp8Fn, 64, false, false}, {kFp8Fn, 128, false, false},
        {kFp8Fn, 16, false, false},  {kFp8Fn, 64, true, false},  {kFp8Fnuz, 0, false, false},
        {kFp8Fnuz, 64, false, false}, {kFp8Fn, 16, true, false}, {kFp8Fnuz, 32, false, false},
        {kFp8Fn, 1, false, false},   {kFp8Fn, 4, true, false},   {kFp8Fnuz, 2, false, false},
        {kFp8Fn, 3, false, false},   {kFp8Fnuz, 4, false, false}, {kFp8Fnuz, 8, true, false},
        {kFp8Fn, 0, true, false},    {kFp8Fnuz, 192, true, false}, {kFp8Fn, 0, false, true},
        {kFp8Fn, 128, false, true},  {kFp8Fn, 64, true, true},   {kFp8Fn, 8, false, true},
        {kFp8Fn, 2, true, true},     {kFp8Fn, 0, true, true},    {kFp8Fn, 192, false, true}};
    for (const Case& c : cases) {
        SCOPED_TRACE(name_of(c.format) + ", " + trace("page_size", c.page_size) +
                     (c.split_cache ? ", split cache" : "") +
                     (c.fp8_mma ? ", e4m3fn Q, FP8_MMA" : ""));
        ProblemSpec spec =
            make_spec(c.format, 128, lengths, std::vector<int>(lengths.size(), 4), 33);
        if (c.split_cache) spec.kpe_dtype = c.format.kv;
        if (c.fp8_mma) spec.q_dtype = MLA_DTYPE_FP8_E4M3FN;
        if (c.page_size > 0) spec = paged(spec, c.page_size, 3);
        const HostProblem host = make_problem(spec);
        std::string line;
        if (c.fp8_mma) {
            expect_fp8_mma_rows(host, expect_64, 64, &line);
        } else {
            line = planned_route(host);
            if (expect_64) {
                EXPECT_NE(line.find(" variant=wgmma rows/cta=64 "), std::string::npos) << line;
            }
            expect_matches_reference(host, Tolerance(), Api::kPlan);
        }
        expect_tma_where_it_applies(line, c.page_size);
    }
}

// The 64-row fp8 kernels on pages of 1 to 128 tokens (swizzled stages, WgmmaConfig::kSwizzled:
// whole tiles by TMA on pages of a multiple of 64, the copy loop with each row's slot offset
// loaded a tile ahead on the others; bf16 Q on pages of 1, 2, 4, 8, 12, 16, 32, 48 and 64,
// e4m3fnuz on 1 and 16; e4m3 scores on pages of 1, 3, 4, 12, 16, 32, 48, 64, 128 and a
// contiguous cache), and bf16's 32-row producer on pages of 16, 32, 48 and 64 (runs of 16 rows
// a warp), in split CTAs: 128 heads, q_len 4, 3 elements, the longest 4133 tokens (the plan on
// 132 units since 0.7.33: 64 rows, 5 splits of 13 tiles; at 4 elements it takes 32 rows), so
// that CTAs of 1 to 13 tiles run (bf16: their rope pieces in blocks from 9 tiles, per row
// below). Lengths end mid-page and mid-tile, one 5 tokens past a split boundary (13 x 64 + 5);
// shuffled pages with NaN codes in spare slots. The fp8_mma cases run e4m3fn Q with
// MLA_DECODE_FLAG_FP8_MMA (e4m3 scores at 64 rows), judged by SPEC's fp8-Q rule against the same
// values. Where the splits are not forced (MLA_DECODE_NUM_SPLITS; one split takes 16 rows
// here), on Hopper with the wgmma kernels built (mma16 not forced), the plans must take 64 rows.
TEST(GpuRows64, PagedSplitCtas) {
    SKIP_WITHOUT_GPU();
    const bool expect_64 =
        wgmma_plans_as_planned(true) && std::getenv("MLA_DECODE_NUM_SPLITS") == nullptr;
    const std::vector<int> lengths = {4133, 837, 300};
    struct Case {
        Format format;
        int page_size;  // 0: contiguous (e4m3 scores only)
        bool fp8_mma;
    };
    const Case cases[] = {{kFp8Fn, 8, false},  {kFp8Fn, 16, false}, {kFp8Fn, 32, false},
                          {kFp8Fn, 48, false}, {kFp8Fn, 64, false}, {kFp8Fnuz, 16, false},
                          {kFp8Fn, 1, false},  {kFp8Fn, 2, false},  {kFp8Fn, 4, false},
                          {kFp8Fnuz, 1, false}, {kFp8Fn, 16, true}, {kFp8Fn, 64, true},
                          {kFp8Fn, 32, true},  {kFp8Fn, 48, true},  {kFp8Fn, 1, true},
                          {kFp8Fn, 128, true}, {kFp8Fn, 0, true},   {kFp8Fn, 4, true},
                          {kFp8Fn, 3, true},   {kFp8Fn, 12, true},
                          {kFp8Fn, 12, false}, {kBf16, 16, false},
                          {kBf16, 32, false},  {kBf16, 48, false},  {kBf16, 64, false}};
    for (const Case& c : cases) {
        SCOPED_TRACE(name_of(c.format) + ", " + trace("page_size", c.page_size) +
                     (c.fp8_mma ? ", e4m3fn Q, FP8_MMA" : ""));
        ProblemSpec spec =
            make_spec(c.format, 128, lengths, std::vector<int>(lengths.size(), 4), 35);
        if (c.fp8_mma) spec.q_dtype = MLA_DTYPE_FP8_E4M3FN;
        const HostProblem host = make_problem(c.page_size > 0 ? paged(spec, c.page_size, 3) : spec);
        if (!c.fp8_mma) {
            const std::string line = planned_route(host);
            const char* rows = c.format.kv == MLA_DTYPE_BF16 ? " rows/cta=32 " : " rows/cta=64 ";
            if (expect_64) {
                EXPECT_NE(line.find(std::string(" variant=wgmma") + rows), std::string::npos)
                    << line;
            }
            expect_matches_reference(host, Tolerance(), Api::kPlan);
            continue;
        }
        expect_fp8_mma_rows(host, expect_64);
    }
}

// e4m3 scores at 64 rows where an element is empty, so that its CTAs have no tiles (their
// producer must not read a page list: 0.7.19's first form loaded one page ahead of the loop):
// the last element of the batch empty and the page list exactly as long as the pages (no tail
// entries, so a read past it is out of bounds under memcheck), on pages of 1, 3, 16 and 64
// tokens and a contiguous cache (without the fix: memcheck's out-of-bounds reads, thirty-sixth
// session); then an empty pool (num_slots 0, every pointer into the pool NULL, the page list
// too), O = 0 and LSE = -inf, whose plan takes 16 rows (either variant: by cost, or forced), so
// it does not reach the 64-row producer. 128 heads, q_len 4, e4m3fn Q with
// MLA_DECODE_FLAG_FP8_MMA; the plans' 64 rows asserted as in ConsecutiveSlotsAndPages.
TEST(GpuRows64, EmptyElementsFp8Mma) {
    SKIP_WITHOUT_GPU();
    const bool expect_64 = wgmma_plans_as_planned(true);
    const std::vector<int> lengths = {300, 1, 64, 65, 128, 200, 257, 17, 191, 299, 100, 0};
    for (int page_size : {0, 1, 3, 16, 64}) {
        SCOPED_TRACE(trace("page_size", page_size));
        ProblemSpec spec =
            make_spec(kFp8Fn, 128, lengths, std::vector<int>(lengths.size(), 4), 37);
        spec.q_dtype = MLA_DTYPE_FP8_E4M3FN;
        expect_fp8_mma_rows(make_problem(page_size > 0 ? paged(spec, page_size) : spec),
                            expect_64);
    }
    SCOPED_TRACE("empty pool, 16-token pages");
    ProblemSpec spec = make_spec(kFp8Fn, 128, {0, 0, 0}, {4, 4, 4}, 39);
    spec.q_dtype = MLA_DTYPE_FP8_E4M3FN;
    const HostProblem host = make_problem(paged(spec, 16));
    const Reference ref = run_reference(host);
    DeviceProblem dev(host);
    dev.params.flags |= MLA_DECODE_FLAG_FP8_MMA;
    dev.params.num_slots = 0;
    dev.params.kv_cache = nullptr;
    dev.params.kv_block_scales = nullptr;
    dev.params.v_cache = nullptr;
    dev.params.kv_page_indices = nullptr;
    {
        Plan plan;
        ASSERT_EQ(plan.create(dev.params), MLA_STATUS_SUCCESS) << mla_last_error_message();
        std::printf("[ route    ] %s\n", plan.describe().c_str());
    }
    dev.poison_outputs(0xFF);
    ASSERT_TRUE(run_on_gpu(dev, Api::kPlan));
    expect_outputs_match(dev, ref);
}

// One paged case of GpuRows16And32 (16 heads): the plan's rows (16 q_len) asserted where
// expect_rows, every element against the host reference (fp8_mma: e4m3fn Q with
// MLA_DECODE_FLAG_FP8_MMA, SPEC's fp8-Q rule against the same values).
struct RowsCase {
    Format format;
    int q_len;  // 16 heads: q_len 1 takes 16 rows, 2 takes 32
    int page_size;  // 0: contiguous
    bool split_cache;
    bool fp8_mma;
};

void expect_rows_case(const RowsCase& c, const std::vector<int>& lengths, bool expect_rows) {
    SCOPED_TRACE(name_of(c.format) + ", " + trace("q_len", c.q_len) + ", " +
                 trace("page_size", c.page_size) + (c.split_cache ? ", split cache" : "") +
                 (c.fp8_mma ? ", e4m3fn Q, FP8_MMA" : ""));
    ProblemSpec spec =
        make_spec(c.format, 16, lengths, std::vector<int>(lengths.size(), c.q_len), 37);
    if (c.split_cache) spec.kpe_dtype = c.format.kv;
    if (c.fp8_mma) spec.q_dtype = MLA_DTYPE_FP8_E4M3FN;
    const HostProblem host = make_problem(c.page_size > 0 ? paged(spec, c.page_size, 3) : spec);
    const int rows = 16 * c.q_len;
    std::string line;
    if (c.fp8_mma) {
        expect_fp8_mma_rows(host, expect_rows, rows, &line);
    } else {
        line = planned_route(host);
        if (expect_rows) {
            EXPECT_NE(line.find(" variant=wgmma rows/cta=" + std::to_string(rows) + " "),
                      std::string::npos)
                << line;
        }
        expect_matches_reference(host, Tolerance(), Api::kPlan);
    }
    expect_tma_where_it_applies(line, c.page_size);
}

// The 16- and 32-row wgmma producers on paged caches: 16 heads, 12 elements of up to 4100
// tokens that end mid-page and mid-tile (the H200's plans: 11 splits of 6 tiles, so CTAs of 1
// to 6 tiles), shuffled pages with NaN codes in spare slots. Padded stages, e4m3fnuz at 32 rows
// (q_len 2) and bf16 at 16 (q_len 1) and 32 rows (q_len 2): rows from their own pages
// (wgmma_producer_tiles' kOwnPageLanes) on pages of 1, 2, 4 and 8 (the split cache form on 4
// and 8) and, bf16 at 16 rows, 16 (the split cache form too); e4m3fnuz at 32 rows: runs of 16
// rows a warp with the page look-ahead (kWarpRun) on pages of 16, 32, 48 (split ends mid-page)
// and 64; the shuffled loop on pages of 3 (and 12, bf16). Swizzled stages (fp8 at 16 rows,
// e4m3fn at 32, bf16 or e4m3 scores; e4m3 scores (fp8_mma) at 32 rows on pages of 1, 16 and 64,
// the split cache form on 64): copy_tile_rows_ss, or TMA on a contiguous cache
// and pages of a multiple of 64 where the kernel takes it; at 16 rows (the seesaw) a
// contiguous cache (e4m3fnuz in the split cache form too), pages of 1, 3, 16 (e4m3fnuz, the
// split cache form), 64 and 128 (the split cache form), at 32 rows (e4m3fn) a contiguous cache
// and pages of 1, 3 and 64. Then 4 elements of up to 20037 tokens (32 splits of 10 tiles: the
// rope pieces copied in blocks, from 9 tiles a CTA) on pages of 1 and 16 (e4m3fnuz, 32 rows),
// 1 (e4m3fn, 32 rows), 64 (fp8, 16 rows) and 4 and 16 (bf16, 32 and 16 rows). Where the splits
// are not forced (one split takes 16 rows here), on Hopper with the wgmma kernels built (mma16
// not forced), the plans must take 16 rows for q_len 1 and 32 for q_len 2. Every case asserts
// where whole tiles came by TMA (expect_tma_where_it_applies). Which 16-row cases reach TMA
// depends on the SM count (8 tiles a split or more: on 132 SMs the short batch plans 11 splits
// of 6 and copies, the long batch's 64-token pages take TMA; on 114 SMs 9 splits of 8 do).
TEST(GpuRows16And32, OwnPagesAndRuns) {
    SKIP_WITHOUT_GPU();
    const bool expect_rows =
        wgmma_plans_as_planned(true) && std::getenv("MLA_DECODE_NUM_SPLITS") == nullptr;
    const std::vector<int> lengths = {4100, 1, 64, 65, 1000, 200, 2047, 0, 191, 3001, 100, 4097};
    const RowsCase cases[] = {
        {kFp8Fnuz, 2, 1, false, false},  {kFp8Fnuz, 2, 2, false, false},
        {kFp8Fnuz, 2, 4, true, false},   {kFp8Fnuz, 2, 8, false, false},
        {kFp8Fnuz, 2, 16, false, false}, {kFp8Fnuz, 2, 32, true, false},
        {kFp8Fnuz, 2, 48, false, false}, {kFp8Fnuz, 2, 3, false, false},
        {kFp8Fn, 2, 1, false, false},    {kFp8Fn, 2, 3, false, false},
        {kFp8Fn, 2, 64, false, false},
        {kFp8Fn, 2, 1, false, true},   {kFp8Fn, 2, 64, true, true},    {kFp8Fn, 2, 16, false, true},
        {kBf16, 1, 1, false, false},   {kBf16, 1, 2, false, false},    {kBf16, 1, 4, true, false},
        {kBf16, 1, 8, false, false},   {kBf16, 1, 16, false, false},   {kBf16, 1, 16, true, false},
        {kBf16, 1, 12, false, false},  {kBf16, 2, 1, false, false},    {kBf16, 2, 2, false, false},
        {kBf16, 2, 4, false, false},   {kBf16, 2, 8, true, false},     {kBf16, 2, 16, false, false},
        {kBf16, 2, 3, false, false},   {kFp8Fn, 1, 0, false, false},   {kFp8Fn, 1, 1, false, false},
        {kFp8Fn, 1, 3, false, false},  {kFp8Fn, 1, 64, false, false}, {kFp8Fn, 1, 128, true, false},
        {kFp8Fnuz, 1, 0, true, false}, {kFp8Fnuz, 1, 16, true, false}, {kFp8Fn, 2, 0, false, false},
        {kFp8Fnuz, 2, 64, true, false}};
    for (const RowsCase& c : cases) expect_rows_case(c, lengths, expect_rows);
    const std::vector<int> long_lengths = {20037, 1, 9000, 13001};
    const RowsCase long_cases[] = {{kFp8Fnuz, 2, 1, false, false},
                                   {kFp8Fnuz, 2, 16, true, false},
                                   {kFp8Fn, 2, 1, false, false},
                                   {kFp8Fn, 1, 64, false, false},
                                   {kBf16, 2, 4, false, false},
                                   {kBf16, 1, 16, false, false}};
    for (const RowsCase& c : long_cases) expect_rows_case(c, long_lengths, expect_rows);
}

// Rewrites cache token `tok` of element b (a contiguous cache) to the largest values along the
// signs of the query of row (q_row, head) (bf16 Q, or fp8 Q by its codes' sign bit): e4m3fn
// codes +-448, e4m3fnuz +-240, or bf16 +-4.5. That row's score there is ~2,000 (raw dot, bf16)
// against ~25 for the others: past its running maximum's lazy bound by far, as the other
// rows' scores there often are too. `moderate` (e4m3fn): codes +-64 instead, ~1/7 of that
// score (still ~17 past the row's maximum in log2 units, the lazy bound 8), for e4m3 scores,
// whose accumulation error grows with sum |q k| (GpuFp8Mma: Q std 100 exceeds the rule).
void align_token_to_query(HostProblem& host, int b, int tok, int q_row, int head,
                          bool moderate = false) {
    ASSERT_FALSE(host.spec.paged);
    const bool fp8_q = host.spec.q_dtype != MLA_DTYPE_BF16;
    const int64_t slot = host.kv_indptr[b] + tok;
    for (int d = 0; d < MLA_HEAD_DIM_QK; ++d) {
        const int64_t qi = q_row * host.q_stride_token + head * host.q_stride_head + d;
        bool neg = false;
        if (fp8_q) {
            neg = (host.q[static_cast<size_t>(qi)] & 0x80u) != 0;
        } else {
            uint16_t q_bits = 0;
            std::memcpy(&q_bits, &host.q[static_cast<size_t>(2 * qi)], 2);
            neg = (q_bits & 0x8000u) != 0;
        }
        const int64_t ki = slot * host.kv_stride_slot + d;
        if (host.spec.kv_dtype == MLA_DTYPE_BF16) {
            const uint16_t v = neg ? 0xC090u : 0x4090u;
            std::memcpy(&host.kv[static_cast<size_t>(2 * ki)], &v, 2);
        } else if (host.spec.kv_dtype == MLA_DTYPE_FP8_E4M3FNUZ) {
            host.kv[static_cast<size_t>(ki)] = neg ? 0xFFu : 0x7Fu;
        } else {
            ASSERT_EQ(host.spec.kv_dtype, MLA_DTYPE_FP8_E4M3FN);
            const uint8_t code = moderate ? 0x68u : 0x7Eu;  // 64 or 448
            host.kv[static_cast<size_t>(ki)] = static_cast<uint8_t>(code | (neg ? 0x80u : 0u));
        }
    }
}

// Settled maxima at 32 rows (wgmma_consumer_solo: a tile whose scores pass no row's lazy bound
// skips the owners' step): 16 heads, q_len 2, 40 elements of 2000-4100 tokens (the H200's plan:
// CTAs of many tiles, each consumer's first tile sets its maxima and most later ones move
// none). In each element one token in its last quarter is rewritten along one row's query
// (align_token_to_query), so that after many settled tiles a tile moves maxima far, and the
// consumer must take the owners' step again (and rescale); then Q std 100, where maxima keep
// moving. fp8 e4m3fn, e4m3fnuz and bf16 caches with bf16 Q, and e4m3fn Q on e4m3fn with
// MLA_DECODE_FLAG_FP8_MMA (e4m3 scores, judged by SPEC's fp8-Q rule against the same values;
// Q std 1 only, its aligned tokens moderate: align_token_to_query); where the splits are not
// forced (one split takes 16 rows here), on Hopper with the wgmma kernels built, the plans must
// take 32 rows.
TEST(GpuRows16And32, SettledMaximaMoveLate) {
    SKIP_WITHOUT_GPU();
    const bool expect_rows =
        wgmma_plans_as_planned(true) && std::getenv("MLA_DECODE_NUM_SPLITS") == nullptr;
    const std::vector<int> lengths = random_lengths(40, 2000, 4100, 41);
    const std::pair<Format, bool> cases[] = {
        {kFp8Fn, false}, {kFp8Fnuz, false}, {kBf16, false}, {kFp8Fn, true}};
    for (const auto& [f, fp8_mma] : cases) {
        for (const double q_std : {1.0, 100.0}) {
            if (fp8_mma && q_std > 1.0) continue;
            SCOPED_TRACE(name_of(f) + ", " + trace("q_std", static_cast<int>(q_std)) +
                         (fp8_mma ? ", e4m3fn Q, FP8_MMA" : ""));
            ProblemSpec spec = make_spec(f, 16, lengths, std::vector<int>(lengths.size(), 2), 41);
            spec.q_std = q_std;
            if (fp8_mma) spec.q_dtype = MLA_DTYPE_FP8_E4M3FN;
            HostProblem host = make_problem(spec);
            if (q_std == 1.0) {
                for (int b = 0; b < static_cast<int>(lengths.size()); ++b) {
                    const int tok = lengths[b] * 3 / 4 + b % 64;
                    align_token_to_query(host, b, tok, host.qo_indptr[b] + 1, b % 16, fp8_mma);
                }
            }
            if (fp8_mma) {
                expect_fp8_mma_rows(host, expect_rows, 32);
                continue;
            }
            const std::string line = planned_route(host);
            if (expect_rows) {
                EXPECT_NE(line.find(" variant=wgmma rows/cta=32 "), std::string::npos) << line;
            }
            expect_matches_reference(host, Tolerance(), Api::kPlan);
        }
    }
}

// Maxima that move late at 64 rows with e4m3 scores (e4m3fn Q on e4m3fn with
// MLA_DECODE_FLAG_FP8_MMA, judged by SPEC's fp8-Q rule against the same values): 16 heads,
// q_len 4, 24 elements of 2000-4100 tokens (on 132 units the plan takes 5 splits of 13 tiles;
// the .one_split registration CTAs of 32-63), one token in each element's last quarter aligned
// (moderately) with the query of one (token, head) row, so that a tile well into its CTA moves
// that row's maximum by ~17 past its lazy bound, after tiles that moved none. Written for a
// score warpgroup that skips the owners' step on tiles that move no maximum (a vote: the
// forty-ninth session's experiment, not kept); it fails when that vote misses the late tile, and
// guards any 64-row e4m3-score kernel that tracks maxima lazily. Where the splits are not
// forced, on Hopper with the wgmma kernels built, the plans must take 64 rows.
TEST(GpuRows64, SettledMaximaMoveLateFp8Mma) {
    SKIP_WITHOUT_GPU();
    const bool expect_rows =
        wgmma_plans_as_planned(true) && std::getenv("MLA_DECODE_NUM_SPLITS") == nullptr;
    const std::vector<int> lengths = random_lengths(24, 2000, 4100, 43);
    ProblemSpec spec = make_spec(kFp8Fn, 16, lengths, std::vector<int>(lengths.size(), 4), 43);
    spec.q_dtype = MLA_DTYPE_FP8_E4M3FN;
    HostProblem host = make_problem(spec);
    for (int b = 0; b < static_cast<int>(lengths.size()); ++b) {
        const int tok = lengths[b] * 3 / 4 + b % 64;
        align_token_to_query(host, b, tok, host.qo_indptr[b] + b % 4, b % 16, true);
    }
    expect_fp8_mma_rows(host, expect_rows, 64);
}

// 1024 elements of uneven lengths 0..2048, q_len 1.
TEST(GpuLargeBatch, Batch1024UnevenLengths) {
    SKIP_WITHOUT_GPU();
    expect_matches_reference(make_spec(kFp8Fn, 16, random_lengths(1024, 0, 2048, 25), {}, 25));
}

// 1024 elements of uneven lengths 0..512 with q_len 1..4 (MXFP4 keys, fp8 values).
TEST(GpuLargeBatch, Batch1024MixedQueryLengths) {
    SKIP_WITHOUT_GPU();
    expect_matches_reference(make_spec(kMxfp4FnV, 16, random_lengths(1024, 0, 512, 27),
                                       random_lengths(1024, 1, 4, 28), 27),
                             Tolerance(), Api::kPlan);
}

// ---- caches larger than 2^31 / 2^32 bytes ------------------------------------------------------

struct LargeCacheCase {
    const char* name;
    Format format;
    int page_size;  // 0: contiguous
    int64_t slot_base;
};

void PrintTo(const LargeCacheCase& c, std::ostream* os) { *os << c.name; }

class GpuLargeCache : public ::testing::TestWithParam<LargeCacheCase> {};

// Every used slot lies past slot_base (leading slots hold NaN codes, set on the device), so
// the byte offsets of the rows read pass 2^31 (fp8: 4M x 576 B; MXFP4: 8M x 288 B) or 2^32
// (bf16: 4M x 1152 B; the fp8 V cache: 8M x 576 B): 32-bit offset arithmetic fails here.
TEST_P(GpuLargeCache, UsedSlotsAtTheFarEnd) {
    SKIP_WITHOUT_GPU();
    const LargeCacheCase& c = GetParam();
    ProblemSpec s = make_spec(c.format, 16, {1000, 3, 0, 2500}, {1, 2, 4, 1}, 29);
    if (c.page_size > 0) s = paged(s, c.page_size, 2);
    s.slot_base = c.slot_base;
    expect_matches_reference(s, Tolerance(), c.page_size > 0 ? Api::kPlan : Api::kFwd);
}

INSTANTIATE_TEST_SUITE_P(
    PastTwoGiB, GpuLargeCache,
    ::testing::Values(LargeCacheCase{"fp8_e4m3fn_contiguous", kFp8Fn, 0, 4000000},
                      LargeCacheCase{"fp8_e4m3fnuz_pages64", kFp8Fnuz, 64, 4000000},
                      LargeCacheCase{"bf16_contiguous_past_4GiB", kBf16, 0, 4000000},
                      LargeCacheCase{"mxfp4_pages16", kMxfp4, 16, 8000000},
                      LargeCacheCase{"mxfp4_k_fp8_v_contiguous", kMxfp4FnV, 0, 8000000}),
    [](const ::testing::TestParamInfo<LargeCacheCase>& info) {
        return std::string(info.param.name);
    });

// ---- extreme MXFP4 blocks ---------------------------------------------------------------------

class GpuMxfp4Extremes : public ::testing::TestWithParam<Format> {
protected:
    // Tiny Q: scores over the 2^127-scaled blocks stay moderate (tens at most), and no Q element
    // is below 2^-28 of its row's largest, so the GPU keeps every Q value.
    ProblemSpec spec(int heads, std::vector<int> kv, std::vector<int> q,
                     Mxfp4Extremes extremes) const {
        ProblemSpec s = make_spec(GetParam(), heads, std::move(kv), std::move(q), 31);
        s.q_std = std::ldexp(1.0, -122);
        s.mxfp4_extremes = extremes;
        return s;
    }
};

// All-zero blocks (with scale codes 0, 127, 254), scale code 0 blocks (2^-127 x e2m1), and
// scale code 254 (2^127 x e2m1, |e2m1| <= 1.5) in the key-only dims 512..575.
TEST_P(GpuMxfp4Extremes, ZeroBlocksAndScaleCodes0And254InKeys) {
    SKIP_WITHOUT_GPU();
    for (int heads : {16, 128}) {
        SCOPED_TRACE(trace("heads", heads));
        expect_matches_reference(spec(heads, {1, 5, 64, 300, 1600, 0}, {1, 2, 4, 1, 3, 2},
                                      Mxfp4Extremes::kKeyScales),
                                 Tolerance(), heads == 16 ? Api::kFwd : Api::kPlan);
    }
}

// As above, plus one token in 97 with a scale code 254 block among the value dims: O reaches
// about 2^127 and must stay finite (lengths <= 1552: no two such tokens share a block).
TEST_P(GpuMxfp4Extremes, ScaleCode254InValues) {
    SKIP_WITHOUT_GPU();
    ProblemSpec s = spec(16, {6, 103, 600, 1552, 1}, {1, 1, 2, 4, 1}, Mxfp4Extremes::kValueScales);
    expect_matches_reference(paged(s, 16));
}

// The same values with one q_len for the whole batch, on the staged wgmma kernels (each token's
// block scales as powers of two on P and in the row sum: a token with code-254 values beside
// ordinary ones): at 16 heads the plan takes 16 rows per CTA for q_len 1 (one tile a CTA) and 2
// (two row groups, two tiles a CTA: the maximum moves ~127 binades between tiles; 0.7.4 failed
// here before its rescale fix) and 32 rows for q_len 4 (0.7.4's cost table).
TEST_P(GpuMxfp4Extremes, ScaleCode254InValuesPerQueryLength) {
    SKIP_WITHOUT_GPU();
    for (int q_len : {1, 2, 4}) {
        SCOPED_TRACE(trace("q_len", q_len));
        expect_matches_reference(spec(16, {6, 103, 600, 1552, 1}, std::vector<int>(5, q_len),
                                      Mxfp4Extremes::kValueScales));
    }
}

// e8m0 code 255 (NaN) on one block of a token that every query of its element sees: a latent
// block (element 1, q_len 2) and a rope block (element 3) make every O element and LSE of that
// element's rows NaN, as mla_decode.h states; elements 0 and 2 match the reference. At 16 heads
// (on sm_90a the staged 16-row kernel, whose decoders write a NaN block's codes apart) and 128,
// with short caches (one CTA an element) and long ones (several splits: the reduce keeps NaN).
// Element 4 is 40 tokens long with a NaN latent block: beside the long elements its split 0
// is its only one with tokens and every later split's LSE is -inf, so a reduce whose maximum
// dropped NaN would take -inf and write O = 0, LSE = -inf there.
// The outputs start as zeros, so a row left unwritten fails too.
TEST_P(GpuMxfp4Extremes, ScaleCode255MakesItsRowsNaN) {
    SKIP_WITHOUT_GPU();
    for (int heads : {16, 128}) {
        for (int len : {300, 5000}) {
            SCOPED_TRACE(trace("heads", heads) + ", " + trace("kv_len", len));
            HostProblem host =
                make_problem(make_spec(GetParam(), heads, {len, len, len, len, 40},
                                       {1, 2, 1, 1, 1}, 17));
            ASSERT_FALSE(host.spec.paged);
            const auto set_nan_code = [&](int b, int tok, int block) {
                const int64_t slot = host.kv_indptr[b] + tok;
                host.kv_block_scales[slot * host.kv_block_scale_stride + block] = 255;
            };
            set_nan_code(1, 37, 5);        // dims 160..191
            set_nan_code(3, len - 3, 17);  // dims 544..575 (rope)
            set_nan_code(4, 7, 3);         // dims 96..127
            const Reference ref = run_reference(host);
            DeviceProblem dev(host);
            dev.poison_outputs(0x00);
            ASSERT_TRUE(run_on_gpu(dev, Api::kFwd));
            const std::vector<float> o = dev.download_o(), lse = dev.download_lse();
            constexpr int64_t kDv = MLA_HEAD_DIM_V;
            for (int b = 0; b < 5; ++b) {
                const int q0 = host.qo_indptr[b], q_len = host.qo_indptr[b + 1] - q0;
                const int64_t row0 = static_cast<int64_t>(q0) * heads;
                const int64_t rows = static_cast<int64_t>(q_len) * heads;
                SCOPED_TRACE(trace("element", b));
                if (b == 1 || b >= 3) {
                    int64_t finite_o = 0, finite_lse = 0;
                    for (int64_t i = row0 * kDv; i < (row0 + rows) * kDv; ++i)
                        finite_o += !std::isnan(o[i]);
                    for (int64_t i = row0; i < row0 + rows; ++i) finite_lse += !std::isnan(lse[i]);
                    EXPECT_EQ(finite_o, 0) << "O elements that are not NaN";
                    EXPECT_EQ(finite_lse, 0) << "LSE values that are not NaN";
                } else {
                    EXPECT_TRUE(check_o(o.data() + row0 * kDv, ref.o.data() + row0 * kDv, q_len,
                                        heads, Tolerance()));
                    EXPECT_TRUE(check_lse(lse.data() + row0, ref.lse.data() + row0, rows,
                                          Tolerance()));
                }
            }
        }
    }
}

// Scale rows 32 bytes apart (copied 16 bytes at a time), 24 (4 at a time; every other test) and
// 19 (byte by byte), at heads 16 and 128 with q_len 1..4 (by default mma16 at 16 heads and
// wgmma at 128; the .stage1_wgmma registration runs both on wgmma).
TEST_P(GpuMxfp4Extremes, ScaleRowsOfEveryAlignment) {
    SKIP_WITHOUT_GPU();
    for (int64_t stride : {32, 19}) {
        for (int heads : {16, 128}) {
            SCOPED_TRACE(trace("scale stride", static_cast<int>(stride)) + trace(", heads", heads));
            ProblemSpec s = make_spec(GetParam(), heads, {1, 77, 700, 3000}, {1, 4, 2, 1}, 7);
            s.mxfp4_scale_stride = stride;
            expect_matches_reference(paged(s, 16));
        }
    }
}

// The scale tensor ends where the span the header states ends ((num_slots - 1) * stride +
// min(stride, 32) bytes), the last slot in use, for every scale-copy mode: 16-byte copies below
// the stride (48) and at it (32), 4-byte copies below it (24) and reading exactly to it (20),
// byte copies (19). A read past it shows only under compute-sanitizer memcheck
// (docs/notes/experiments/run_sanitize.sh): it fails there (it did with the span cut at + 18
// bytes, the header's figure before 0.7.1: a 16-byte copy of the last row's codes 16..31);
// without memcheck it is one more accuracy case.
TEST_P(GpuMxfp4Extremes, ScaleTensorOfTheStatedSpanOnly) {
    SKIP_WITHOUT_GPU();
    for (int64_t stride : {48, 32, 24, 20, 19}) {
        for (int heads : {16, 128}) {
            SCOPED_TRACE(trace("scale stride", static_cast<int>(stride)) + trace(", heads", heads));
            ProblemSpec s = make_spec(GetParam(), heads, {77, 700, 130}, {1, 2, 1}, 11);
            s.mxfp4_scale_stride = stride;
            s.exact_cache_span = true;
            expect_matches_reference(s);
        }
    }
}

INSTANTIATE_TEST_SUITE_P(Mxfp4, GpuMxfp4Extremes, ::testing::ValuesIn(kMxfp4Formats),
                         [](const ::testing::TestParamInfo<Format>& info) {
                             return name_of(info.param);
                         });

// ---- plan API: graph capture and replay with new lengths -------------------------------------

struct GraphCase {
    const char* name;
    Format format;
    int heads;
    int page_size;  // 0: contiguous
};

void PrintTo(const GraphCase& c, std::ostream* os) { *os << c.name; }

// The buffers are made for the capacity lengths; the replays use other lengths in the same
// device indptr buffers (same batch, total_q, max_q_len, max_kv_len: the same params).
const std::vector<int> kCapacityKv = {3000, 2000, 1500, 900, 64};
const std::vector<int> kCapacityQ = {2, 1, 2, 1, 2};
const std::vector<int> kFirstKv = {3000, 17, 1500, 0, 64};
const std::vector<int> kFirstQ = {2, 2, 1, 1, 2};
const std::vector<int> kSecondKv = {64, 2000, 1, 900, 63};
const std::vector<int> kSecondQ = {1, 1, 2, 2, 2};

class GpuGraph : public ::testing::TestWithParam<GraphCase> {
protected:
    // Captures one decode step (through `api`) on a non-blocking stream into a graph, then
    // replays it with the first lengths, the second lengths and the first again, rewriting only
    // the device qo_indptr / kv_indptr contents between replays.
    void replay_with_new_lengths(Api api) {
        const GraphCase& c = GetParam();
        ProblemSpec s = make_spec(c.format, c.heads, kCapacityKv, kCapacityQ, 33);
        if (c.page_size > 0) s = paged(s, c.page_size, 1);
        const HostProblem capacity = make_problem(s);
        const HostProblem first = with_lengths(capacity, kFirstQ, kFirstKv);
        const HostProblem second = with_lengths(capacity, kSecondQ, kSecondKv);
        const Reference ref_first = run_reference(first);
        const Reference ref_second = run_reference(second);
        DeviceProblem dev(capacity);
        dev.set_lengths(first);
        TestStream stream;
        ASSERT_EQ(stream.status(), gpu::kSuccess) << gpu::error_string(stream.status());

        Plan plan;
        ASSERT_EQ(plan.create(dev.params), MLA_STATUS_SUCCESS) << mla_last_error_message();
        std::printf("[ route    ] %s\n", plan.describe().c_str());
        DeviceBuffer plan_workspace(api == Api::kPlan ? plan.workspace_bytes() : 0);
        poison_workspace(plan_workspace);
        void* workspace = api == Api::kPlan ? plan_workspace.get() : dev.workspace.get();
        const size_t workspace_bytes =
            api == Api::kPlan ? plan_workspace.bytes() : dev.workspace_bytes;
        // One step on the stream: prepare + run, or mla_decode_fwd.
        auto enqueue = [&]() -> ::testing::AssertionResult {
            mla_status st = MLA_STATUS_SUCCESS;
            const char* call = "mla_decode_fwd";
            if (api == Api::kFwd) {
                st = mla_decode_fwd(&dev.params, workspace, workspace_bytes, stream.get());
            } else {
                call = "mla_decode_plan_prepare";
                st = mla_decode_plan_prepare(plan.get(), &dev.params, workspace, workspace_bytes,
                                             stream.get());
                if (st == MLA_STATUS_SUCCESS) {
                    call = "mla_decode_plan_run";
                    st = mla_decode_plan_run(plan.get(), &dev.params, workspace, workspace_bytes,
                                             stream.get());
                }
            }
            if (st == MLA_STATUS_SUCCESS) return ::testing::AssertionSuccess();
            return ::testing::AssertionFailure() << call << ": " << mla_status_string(st) << ": "
                                                 << mla_last_error_message();
        };
        if (api == Api::kFwd) {
            // As engines do before capturing: one eager step (the plan cache gets the shape).
            dev.poison_outputs(0xFF);
            ASSERT_TRUE(enqueue());
            ASSERT_EQ(stream.synchronize(), gpu::kSuccess);
            expect_outputs_match(dev, ref_first);
        }

        CapturedGraph graph;
        ASSERT_TRUE(graph.capture(stream.get(), enqueue));

        const std::pair<const HostProblem*, const Reference*> replays[] = {
            {&first, &ref_first}, {&second, &ref_second}, {&first, &ref_first}};
        int replay = 0;
        for (const auto& [lengths, ref] : replays) {
            SCOPED_TRACE(trace("replay", ++replay));
            dev.set_lengths(*lengths);
            dev.poison_outputs(0xFF);
            ASSERT_EQ(graph.launch(stream.get()), gpu::kSuccess);
            ASSERT_EQ(stream.synchronize(), gpu::kSuccess);
            expect_outputs_match(dev, *ref);
        }
    }
};

TEST_P(GpuGraph, PlanPrepareAndRunReplayWithNewLengths) {
    SKIP_WITHOUT_GPU();
    replay_with_new_lengths(Api::kPlan);
}

TEST_P(GpuGraph, FwdReplayWithNewLengths) {
    SKIP_WITHOUT_GPU();
    replay_with_new_lengths(Api::kFwd);
}

INSTANTIATE_TEST_SUITE_P(
    Steps, GpuGraph,
    ::testing::Values(GraphCase{"fp8_e4m3fn_h16_pages16", kFp8Fn, 16, 16},
                      GraphCase{"bf16_h64_contiguous", kBf16, 64, 0},
                      GraphCase{"fp8_e4m3fnuz_h8_pages16", kFp8Fnuz, 8, 16},
                      GraphCase{"mxfp4_k_fp8_e4m3fnuz_v_h128_pages64", kMxfp4FnuzV, 128, 64}),
    [](const ::testing::TestParamInfo<GraphCase>& info) { return std::string(info.param.name); });

// ---- plan API: two plans at once, layers, agreement with mla_decode_fwd ----------------------

// One plan, its workspace, and the problem it runs.
struct PlannedProblem {
    explicit PlannedProblem(const ProblemSpec& spec)
        : host(make_problem(spec)), ref(run_reference(host)), dev(host) {
        made = plan.create(dev.params);
        if (made == MLA_STATUS_SUCCESS) {
            std::printf("[ route    ] %s\n", plan.describe().c_str());
            workspace = DeviceBuffer(plan.workspace_bytes());
            poison_workspace(workspace);
        }
    }
    mla_status prepare(gpu::stream_t stream) const {
        return mla_decode_plan_prepare(plan.get(), &dev.params, workspace.get(), workspace.bytes(),
                                       stream);
    }
    mla_status run(gpu::stream_t stream) const {
        return mla_decode_plan_run(plan.get(), &dev.params, workspace.get(), workspace.bytes(),
                                   stream);
    }

    HostProblem host;
    Reference ref;
    DeviceProblem dev;
    Plan plan;
    mla_status made = MLA_STATUS_INTERNAL_ERROR;
    DeviceBuffer workspace;
};

// Two plans of different shapes, each with its own workspace, prepared and run interleaved on
// two streams (then again with the streams swapped); both results correct.
TEST(GpuPlans, TwoPlansInterleavedOnTwoStreams) {
    SKIP_WITHOUT_GPU();
    PlannedProblem a(make_spec(kFp8Fn, 16, {4000, 100, 0, 2500}, {}, 35));
    PlannedProblem b(paged(make_spec(kMxfp4FnuzV, 128, {3000, 3, 1200}, {1, 4, 2}, 37), 16));
    ASSERT_EQ(a.made, MLA_STATUS_SUCCESS);
    ASSERT_EQ(b.made, MLA_STATUS_SUCCESS);
    TestStream s1, s2;
    ASSERT_EQ(s1.status(), gpu::kSuccess);
    ASSERT_EQ(s2.status(), gpu::kSuccess);
    for (int round = 0; round < 2; ++round) {
        SCOPED_TRACE(trace("round", round));
        const gpu::stream_t sa = round == 0 ? s1.get() : s2.get();
        const gpu::stream_t sb = round == 0 ? s2.get() : s1.get();
        a.dev.poison_outputs(0xFF);
        b.dev.poison_outputs(0xFF);
        EXPECT_EQ(a.prepare(sa), MLA_STATUS_SUCCESS) << mla_last_error_message();
        EXPECT_EQ(b.prepare(sb), MLA_STATUS_SUCCESS) << mla_last_error_message();
        EXPECT_EQ(a.run(sa), MLA_STATUS_SUCCESS) << mla_last_error_message();
        EXPECT_EQ(b.run(sb), MLA_STATUS_SUCCESS) << mla_last_error_message();
        EXPECT_EQ(a.run(sa), MLA_STATUS_SUCCESS) << mla_last_error_message();  // a second layer
        ASSERT_EQ(s1.synchronize(), gpu::kSuccess);
        ASSERT_EQ(s2.synchronize(), gpu::kSuccess);
        expect_outputs_match(a.dev, a.ref);
        expect_outputs_match(b.dev, b.ref);
    }
}

// One prepare per step, one run per layer: layers of one step share the lengths (the indptr
// buffers) but have their own Q, cache, scales and outputs.
TEST(GpuPlans, OnePrepareServesEveryLayer) {
    SKIP_WITHOUT_GPU();
    const std::vector<int> kv = {5000, 17, 0, 1300}, q = {2, 1, 3, 2};
    PlannedProblem layer1(make_spec(kFp8Fnuz, 32, kv, q, 39));
    ASSERT_EQ(layer1.made, MLA_STATUS_SUCCESS) << mla_last_error_message();
    const HostProblem host2 = make_problem(make_spec(kFp8Fnuz, 32, kv, q, 41));
    const Reference ref2 = run_reference(host2);
    DeviceProblem layer2(host2);
    mla_decode_params params2 = layer2.params;
    params2.qo_indptr = layer1.dev.params.qo_indptr;  // the step's lengths
    params2.kv_indptr = layer1.dev.params.kv_indptr;
    ASSERT_NE(params2.kv_scale, layer1.dev.params.kv_scale);

    layer1.dev.poison_outputs(0xFF);
    layer2.poison_outputs(0xFF);
    ASSERT_EQ(layer1.prepare(nullptr), MLA_STATUS_SUCCESS) << mla_last_error_message();
    ASSERT_EQ(layer1.run(nullptr), MLA_STATUS_SUCCESS) << mla_last_error_message();
    ASSERT_EQ(mla_decode_plan_run(layer1.plan.get(), &params2, layer1.workspace.get(),
                                  layer1.workspace.bytes(), nullptr),
              MLA_STATUS_SUCCESS)
        << mla_last_error_message();
    ASSERT_TRUE(synchronize_device());
    expect_outputs_match(layer1.dev, layer1.ref);
    expect_outputs_match(layer2, ref2);
}

// prepare + run of an explicit plan and mla_decode_fwd give the same bits.
TEST(GpuPlans, PlanAndFwdAgreeBitForBit) {
    SKIP_WITHOUT_GPU();
    PlannedProblem p(make_spec(kMxfp4, 32, {2500, 1, 64, 700}, {1, 3, 4, 2}, 43));
    ASSERT_EQ(p.made, MLA_STATUS_SUCCESS) << mla_last_error_message();
    p.dev.poison_outputs(0xFF);
    ASSERT_EQ(p.prepare(nullptr), MLA_STATUS_SUCCESS) << mla_last_error_message();
    ASSERT_EQ(p.run(nullptr), MLA_STATUS_SUCCESS) << mla_last_error_message();
    ASSERT_TRUE(synchronize_device());
    const std::vector<float> o_plan = p.dev.download_o(), lse_plan = p.dev.download_lse();
    expect_outputs_match(p.dev, p.ref);
    p.dev.poison_outputs(0xFF);
    ASSERT_TRUE(run_on_gpu(p.dev, Api::kFwd));
    const std::vector<float> o_fwd = p.dev.download_o(), lse_fwd = p.dev.download_lse();
    ASSERT_EQ(o_plan.size(), o_fwd.size());
    EXPECT_EQ(std::memcmp(o_plan.data(), o_fwd.data(), o_plan.size() * sizeof(float)), 0);
    EXPECT_EQ(std::memcmp(lse_plan.data(), lse_fwd.data(), lse_plan.size() * sizeof(float)), 0);
}

// ---- plan API: refused calls (status, message, outputs untouched) -----------------------------

// A plan made for another shape (each field of the shape in turn) refuses prepare and run with
// INVALID_VALUE before anything is queued. The plans are made from edited copies of the params
// and run with the real ones, so nothing can write out of bounds even if a check is missing.
TEST(GpuPlanApi, ParamsOfAnotherShapeAreRefused) {
    SKIP_WITHOUT_GPU();
    const HostProblem host = make_problem(make_spec(kMxfp4FnV, 16, {100, 3000}, {1, 2}, 45));
    DeviceProblem dev(host);
    dev.poison_outputs(0x5A);
    struct Case {
        const char* what;
        std::function<void(mla_decode_params&)> edit;
    };
    const Case cases[] = {
        {"batch_size", [](mla_decode_params& p) { p.batch_size += 1; }},
        {"total_q", [](mla_decode_params& p) { p.total_q += 1; }},
        {"max_q_len", [](mla_decode_params& p) { p.max_q_len += 1; }},
        {"max_kv_len", [](mla_decode_params& p) { p.max_kv_len += 1; }},
        {"num_heads", [](mla_decode_params& p) {
             p.num_heads = 32;
             p.q_stride_token = 32 * 576;
             p.o_stride_token = 32 * 512;
         }},
        {"q_dtype", [](mla_decode_params& p) { p.q_dtype = MLA_DTYPE_FP8_E4M3FN; }},
        {"kv_dtype", [](mla_decode_params& p) {
             p.kv_dtype = MLA_DTYPE_FP8_E4M3FN;
             p.kv_stride_slot = 576;
             p.kv_block_scales = nullptr;
             p.kv_block_scale_stride = 0;
             p.v_cache = nullptr;
             p.v_dtype = kNoV;
         }},
        {"v_dtype", [](mla_decode_params& p) { p.v_dtype = MLA_DTYPE_FP8_E4M3FNUZ; }},
        {"v_dtype 0", [](mla_decode_params& p) {
             p.v_cache = nullptr;
             p.v_dtype = kNoV;
         }},
    };
    for (const Case& c : cases) {
        SCOPED_TRACE(c.what);
        mla_decode_params other = dev.params;
        c.edit(other);
        Plan plan;
        ASSERT_EQ(plan.create(other), MLA_STATUS_SUCCESS) << mla_last_error_message();
        DeviceBuffer workspace(std::max(plan.workspace_bytes(), dev.workspace_bytes) + 256);
        poison_workspace(workspace);
        const size_t bytes = workspace.bytes();
        EXPECT_EQ(mla_decode_plan_prepare(plan.get(), &dev.params, workspace.get(), bytes, nullptr),
                  MLA_STATUS_INVALID_VALUE);
        EXPECT_STRNE(mla_last_error_message(), "");
        EXPECT_EQ(mla_decode_plan_run(plan.get(), &dev.params, workspace.get(), bytes, nullptr),
                  MLA_STATUS_INVALID_VALUE);
        EXPECT_STRNE(mla_last_error_message(), "");
    }
    EXPECT_TRUE(outputs_untouched(dev, 0x5A));
}

// A plan is made from host fields alone (mla_decode_plan_create may see NULL pointers): the
// v_cache pointer and the page table are not part of its shape, so a plan made without them
// serves runs that have them, with correct results. (v_dtype is: it fixes the V source.)
TEST(GpuPlanApi, PlanFromHostFieldsServesVCacheAndPageTable) {
    SKIP_WITHOUT_GPU();
    ProblemSpec spec = make_spec(kMxfp4FnV, 16, {100, 3000}, {1, 2}, 46);
    spec.paged = true;
    spec.page_size = 16;
    const HostProblem host = make_problem(spec);
    const Reference ref = run_reference(host);
    DeviceProblem dev(host);
    mla_decode_params bare = dev.params;
    bare.v_cache = nullptr;
    bare.kv_page_indptr = nullptr;
    bare.kv_page_indices = nullptr;
    bare.page_size = 1;
    Plan plan;
    ASSERT_EQ(plan.create(bare), MLA_STATUS_SUCCESS) << mla_last_error_message();
    DeviceBuffer workspace(std::max<size_t>(plan.workspace_bytes(), 256));
    poison_workspace(workspace);
    dev.poison_outputs(0xFF);
    ASSERT_EQ(mla_decode_plan_prepare(plan.get(), &dev.params, workspace.get(), workspace.bytes(),
                                      nullptr),
              MLA_STATUS_SUCCESS)
        << mla_last_error_message();
    ASSERT_EQ(mla_decode_plan_run(plan.get(), &dev.params, workspace.get(), workspace.bytes(),
                                  nullptr),
              MLA_STATUS_SUCCESS)
        << mla_last_error_message();
    ASSERT_EQ(mla::gpu::device_synchronize(), mla::gpu::kSuccess);
    expect_outputs_match(dev, ref);
}

// The V source is fixed when the plan is made: a run with a v_cache on a plan made with v_dtype 0
// (V from the latent rows), or without one on a plan made with an FP8 v_dtype, is refused with
// INVALID_VALUE before anything is queued.
TEST(GpuPlanApi, RunWhoseVSourceDiffersFromThePlanIsRefused) {
    SKIP_WITHOUT_GPU();
    const HostProblem with_v = make_problem(make_spec(kMxfp4FnV, 16, {100, 3000}, {1, 2}, 48));
    const HostProblem without_v = make_problem(make_spec(kMxfp4, 16, {100, 3000}, {1, 2}, 48));
    const std::pair<const HostProblem*, const HostProblem*> cases[] = {
        {&without_v, &with_v},  // plan: latent rows; run: v_cache
        {&with_v, &without_v},  // plan: v_cache; run: latent rows
    };
    for (const auto& [plan_problem, run_problem] : cases) {
        SCOPED_TRACE(plan_problem == &with_v ? "plan with v_cache" : "plan without v_cache");
        Plan plan;
        ASSERT_EQ(plan.create(plan_problem->host_params(nullptr, MLA_DTYPE_BF16, nullptr)),
                  MLA_STATUS_SUCCESS)
            << mla_last_error_message();
        DeviceProblem dev(*run_problem);
        dev.poison_outputs(0x5A);
        DeviceBuffer workspace(std::max(plan.workspace_bytes(), dev.workspace_bytes) + 256);
        poison_workspace(workspace);
        const size_t bytes = workspace.bytes();
        EXPECT_EQ(mla_decode_plan_prepare(plan.get(), &dev.params, workspace.get(), bytes, nullptr),
                  MLA_STATUS_INVALID_VALUE);
        EXPECT_NE(std::string(mla_last_error_message()).find("v_cache"), std::string::npos)
            << mla_last_error_message();
        EXPECT_EQ(mla_decode_plan_run(plan.get(), &dev.params, workspace.get(), bytes, nullptr),
                  MLA_STATUS_INVALID_VALUE);
        EXPECT_NE(std::string(mla_last_error_message()).find("V source"), std::string::npos)
            << mla_last_error_message();
        EXPECT_TRUE(outputs_untouched(dev, 0x5A));
    }
}

// O or LSE over an input, or LSE over O (spans as in mla_decode.h), with device buffers large
// enough that a missed check could not write out of bounds: prepare, run and mla_decode_fwd
// refuse it with INVALID_VALUE before anything is queued (the host suite test_edges covers every
// input field, through the same validation).
TEST(GpuPlanApi, OverlappingOutputsAreRefused) {
    SKIP_WITHOUT_GPU();
    PlannedProblem p(make_spec(kMxfp4FnV, 16, {100, 3000}, {1, 2}, 50));
    ASSERT_EQ(p.made, MLA_STATUS_SUCCESS) << mla_last_error_message();
    DeviceProblem& dev = p.dev;
    struct Case {
        const char* names;  // "<output> and <input>", as the message says
        std::function<void(mla_decode_params&)> edit;
    };
    const Case cases[] = {
        {"o and q", [&](mla_decode_params& x) { x.o = dev.q.get(); }},
        {"o and kv_cache", [&](mla_decode_params& x) { x.o = dev.kv.get(); }},
        {"o and kv_block_scales", [&](mla_decode_params& x) { x.o = dev.kv_block_scales.get(); }},
        {"o and v_cache", [&](mla_decode_params& x) { x.o = dev.v.get(); }},
        {"o and lse", [&](mla_decode_params& x) {
             x.lse = reinterpret_cast<float*>(static_cast<char*>(dev.o.get()) + 256);
         }},
        {"lse and kv_cache", [&](mla_decode_params& x) {
             x.lse = reinterpret_cast<float*>(static_cast<char*>(dev.kv.get()) + 4096);
         }},
    };
    dev.poison_outputs(0x5A);
    const std::vector<uint8_t> kv_before = p.host.kv;
    for (const Case& c : cases) {
        SCOPED_TRACE(c.names);
        mla_decode_params params = dev.params;
        c.edit(params);
        const mla_status prepared = mla_decode_plan_prepare(
            p.plan.get(), &params, p.workspace.get(), p.workspace.bytes(), nullptr);
        EXPECT_EQ(prepared, MLA_STATUS_INVALID_VALUE);
        EXPECT_NE(std::string(mla_last_error_message()).find(c.names), std::string::npos)
            << mla_last_error_message();
        EXPECT_EQ(mla_decode_plan_run(p.plan.get(), &params, p.workspace.get(),
                                      p.workspace.bytes(), nullptr),
                  MLA_STATUS_INVALID_VALUE);
        EXPECT_EQ(mla_decode_fwd(&params, dev.workspace.get(), dev.workspace_bytes, nullptr),
                  MLA_STATUS_INVALID_VALUE);
    }
    ASSERT_TRUE(synchronize_device());
    EXPECT_TRUE(outputs_untouched(dev, 0x5A));
    std::vector<uint8_t> kv_after(kv_before.size());
    dev.kv.download(kv_after.data(), kv_after.size());
    EXPECT_TRUE(kv_after == kv_before) << "the cache was written";
}

// Workspace one byte short, or NULL: refused by prepare and run, outputs untouched.
TEST(GpuPlanApi, WorkspaceTooSmallOrNull) {
    SKIP_WITHOUT_GPU();
    PlannedProblem p(make_spec(kFp8Fn, 16, {16384}, {}, 47));  // one long element: splits
    ASSERT_EQ(p.made, MLA_STATUS_SUCCESS) << mla_last_error_message();
    const size_t need = p.workspace.bytes();
    ASSERT_GT(need, 0u) << "expected a split plan: " << p.plan.describe();
    p.dev.poison_outputs(0x5A);
    void* ws = p.workspace.get();
    EXPECT_EQ(mla_decode_plan_prepare(p.plan.get(), &p.dev.params, ws, need - 1, nullptr),
              MLA_STATUS_WORKSPACE_TOO_SMALL);
    EXPECT_STRNE(mla_last_error_message(), "");
    EXPECT_EQ(mla_decode_plan_run(p.plan.get(), &p.dev.params, ws, need - 1, nullptr),
              MLA_STATUS_WORKSPACE_TOO_SMALL);
    EXPECT_STRNE(mla_last_error_message(), "");
    EXPECT_EQ(mla_decode_plan_prepare(p.plan.get(), &p.dev.params, nullptr, need, nullptr),
              MLA_STATUS_NULL_POINTER);
    EXPECT_EQ(mla_decode_plan_run(p.plan.get(), &p.dev.params, nullptr, need, nullptr),
              MLA_STATUS_NULL_POINTER);
    EXPECT_TRUE(outputs_untouched(p.dev, 0x5A));
}

// describe: one non-empty line, NUL-terminated, truncated to the buffer (the refusals of bad
// buffers are in test_abi). A split plan and, at batch 1024 of short lengths, whatever the
// planner picks there.
TEST(GpuPlanApi, DescribeWritesOneTruncatableLine) {
    SKIP_WITHOUT_GPU();
    const std::pair<const char*, ProblemSpec> shapes[] = {
        {"one long element", make_spec(kFp8Fn, 16, {16384})},
        {"batch 1024, short", make_spec(kBf16, 16, std::vector<int>(1024, 64))},
    };
    for (const auto& [what, spec] : shapes) {
        SCOPED_TRACE(what);
        const HostProblem host = make_problem(spec);
        Plan plan;
        ASSERT_EQ(plan.create(host.host_params(nullptr, MLA_DTYPE_BF16, nullptr)),
                  MLA_STATUS_SUCCESS)
            << mla_last_error_message();

        char line[1024];
        std::memset(line, 0x7E, sizeof(line));
        ASSERT_EQ(mla_decode_plan_describe(plan.get(), line, sizeof(line)), MLA_STATUS_SUCCESS);
        ASSERT_NE(std::memchr(line, '\0', sizeof(line)), nullptr);
        const std::string full(line);
        std::printf("[ route    ] %s: %s\n", what, full.c_str());
        EXPECT_FALSE(full.empty());
        const size_t newline = full.find('\n');
        EXPECT_TRUE(newline == std::string::npos || newline + 1 == full.size())
            << "more than one line: " << full;

        char small[16];
        ASSERT_EQ(mla_decode_plan_describe(plan.get(), small, sizeof(small)), MLA_STATUS_SUCCESS);
        EXPECT_EQ(std::string(small), full.substr(0, std::min(full.size(), sizeof(small) - 1)));
        char one = 'x';
        ASSERT_EQ(mla_decode_plan_describe(plan.get(), &one, 1), MLA_STATUS_SUCCESS);
        EXPECT_EQ(one, '\0');
    }
}

// The description names the plan's stage-1 variant with its rows per CTA and tile; under
// MLA_DECODE_STAGE1=<name> (the suite's .stage1_<name> registration) it is that variant, or the
// line says why it is not available here.
TEST(GpuPlanApi, DescribeNamesTheStage1Variant) {
    SKIP_WITHOUT_GPU();
    const HostProblem host = make_problem(make_spec(kFp8Fn, 128, {4096, 4096}, {2, 1}));
    Plan plan;
    ASSERT_EQ(plan.create(host.host_params(nullptr, MLA_DTYPE_BF16, nullptr)), MLA_STATUS_SUCCESS)
        << mla_last_error_message();
    const std::string line = plan.describe();
    std::printf("[ route    ] %s\n", line.c_str());
    EXPECT_NE(line.find(" variant="), std::string::npos) << line;
    EXPECT_NE(line.find(" rows/cta="), std::string::npos) << line;
    EXPECT_NE(line.find(" tile="), std::string::npos) << line;
    const char* forced = std::getenv("MLA_DECODE_STAGE1");
    if (forced != nullptr && forced[0] != '\0') {
        const std::string name = forced;
        EXPECT_TRUE(line.find(" variant=" + name + " ") != std::string::npos ||
                    line.find("MLA_DECODE_STAGE1=" + name + " not available: ") !=
                        std::string::npos)
            << line;
    }
}

// By default (MLA_DECODE_PDL unset or anything but "0"), where the device and the loaded reduce
// allow it (NVIDIA sm_90+, sm_90 code, CUDA 12.3+: DeviceInfo::dependent_reduce), a split-KV
// plan launches its reduce as a programmatic dependent of stage 1 (the description says "LSE
// reduce (PDL)"); otherwise, and with MLA_DECODE_PDL=0 (the suite's .nopdl registration), it is
// a plain launch. Either way the results match the reference (the graph replays of GpuGraph
// run the same launches captured).
TEST(GpuPlanApi, SplitRouteReduceIsADependentLaunchOnSm90) {
    SKIP_WITHOUT_GPU();
    mla::DeviceInfo device;
    ASSERT_EQ(mla::current_device_info(&device, true), MLA_STATUS_SUCCESS)
        << mla_last_error_message();
    const char* pdl = std::getenv("MLA_DECODE_PDL");
    const bool off = pdl != nullptr && std::strcmp(pdl, "0") == 0;
    const bool expect = device.dependent_reduce && !off;
    // False on sm_90+ only where the loaded reduce came from pre-sm_90 PTX (a build without
    // sm_90 code) or the runtime or driver predates CUDA 12.3: said, not failed.
    std::printf("[ pdl      ] %s: the reduce %s be a dependent launch%s\n", device.arch_name,
                device.dependent_reduce ? "can" : "cannot",
                off ? "; MLA_DECODE_PDL=0 keeps it plain" : "");
    const HostProblem host = make_problem(make_spec(kFp8Fn, 16, {16384, 3000}));
    Plan plan;
    ASSERT_EQ(plan.create(host.host_params(nullptr, MLA_DTYPE_BF16, nullptr)), MLA_STATUS_SUCCESS)
        << mla_last_error_message();
    const std::string line = plan.describe();
    std::printf("[ route    ] %s\n", line.c_str());
    ASSERT_EQ(line.rfind("route=split_kv ", 0), 0u) << line;
    EXPECT_EQ(line.find("LSE reduce (PDL)") != std::string::npos, expect) << line;
    expect_matches_reference(host, Tolerance(), Api::kPlan);
    expect_matches_reference(host, Tolerance(), Api::kFwd);
}

}  // namespace
}  // namespace mla_test
