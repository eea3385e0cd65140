// The split-KV planner (host arithmetic only): route choice, split lengths and the workspace
// layout that stage 1, the metadata kernel and the reduce rely on.
#include <gtest/gtest.h>

#include <algorithm>
#include <tuple>
#include <utility>

#include "planner.h"
#include "splitkv/formats.h"

namespace {

using mla::splitkv::KvFormat;
using mla::splitkv::kv_traits;

mla::SplitKvShape shape(int batch, int kv_len, int heads = 16, int q_len = 1, int units = 132) {
    mla::SplitKvShape s;
    s.batch_size = batch;
    s.total_q = batch * q_len;
    s.max_q_len = q_len;
    s.max_kv_len = kv_len;
    s.num_heads = heads;
    s.kv_row_bytes = kv_traits(KvFormat::kFp8E4M3FN).streamed_bytes;
    s.tile_tokens = 64;
    s.multiprocessors = units;
    return s;
}

// Layout invariants every plan must satisfy (`capped`: at most kMaxSplits splits, as the
// default mode's plans; batch-invariant plans are not capped).
void expect_consistent(const mla::SplitKvShape& s, const mla::SplitKvPlan& p, bool capped = true) {
    const int64_t tiles = std::max(1, (s.max_kv_len + s.tile_tokens - 1) / s.tile_tokens);
    EXPECT_GE(p.num_splits, 1);
    if (capped) {
        EXPECT_LE(p.num_splits, mla::kMaxSplits);
    }
    EXPECT_GE(static_cast<int64_t>(p.tiles_per_split) * p.num_splits, tiles);  // covers max_kv_len
    EXPECT_EQ(p.row_groups, s.max_q_len * s.num_heads / 16);
    if (p.num_splits == 1) {
        EXPECT_EQ(p.workspace_bytes, 0u);  // single-split path: no metadata, no partials
        return;
    }
    const size_t rows = static_cast<size_t>(s.total_q) * p.num_splits * s.num_heads;
    for (size_t off : {p.split_meta_offset, p.row_meta_offset, p.partial_o_offset, p.partial_lse_offset})
        EXPECT_EQ(off % mla::kWorkspaceAlignment, 0u);
    EXPECT_GE(p.row_meta_offset, p.split_meta_offset + s.batch_size * mla::kSplitMetaBytes);
    EXPECT_GE(p.partial_o_offset, p.row_meta_offset + s.total_q * mla::kRowMetaBytes);
    EXPECT_GE(p.partial_lse_offset, p.partial_o_offset + rows * 512 * sizeof(float));
    EXPECT_GE(p.workspace_bytes, p.partial_lse_offset + rows * sizeof(float));
}

TEST(Planner, SmallBatchLongCacheSplits) {
    const auto s = shape(4, 8192);
    const auto p = mla::plan_split_kv(s);
    expect_consistent(s, p);
    EXPECT_GT(p.num_splits, 8);  // 4 CTAs would leave 128 of 132 units idle
}

TEST(Planner, FullMachineDoesNotSplit) {
    const auto s = shape(256, 8192);
    const auto p = mla::plan_split_kv(s);
    expect_consistent(s, p);
    EXPECT_EQ(p.num_splits, 1);
    EXPECT_EQ(p.workspace_bytes, 0u);
}

TEST(Planner, ManyHeadsAndQueriesCountAsCtas) {
    // 8 head groups x 4 query tokens: 32 CTAs per element fill the machine without splitting.
    const auto s = shape(32, 8192, 128, 4);
    const auto p = mla::plan_split_kv(s);
    expect_consistent(s, p);
    EXPECT_EQ(p.row_groups, 32);
    EXPECT_EQ(p.num_splits, 1);
    // The same cache with 16 heads and one query splits.
    EXPECT_GT(mla::plan_split_kv(shape(32, 8192)).num_splits, 1);
}

TEST(Planner, ChoiceFollowsTheDeviceNotATable) {
    // Fewer compute units: less reason to split.
    const int big = mla::plan_split_kv(shape(8, 8192, 16, 1, 304)).num_splits;
    const int small = mla::plan_split_kv(shape(8, 8192, 16, 1, 16)).num_splits;
    EXPECT_GT(big, small);
}

TEST(Planner, ForcedSplitsAreClampedAndLaidOut) {
    const auto s = shape(3, 1000, 64, 2);
    for (int forced : {1, 2, 7, 64, 500}) {
        const auto p = mla::plan_split_kv(s, forced);
        expect_consistent(s, p);
        EXPECT_EQ(p.num_splits, std::min(forced, mla::kMaxSplits));
    }
}

TEST(Planner, ZeroAndTinyLengths) {
    for (int kv : {0, 1, 63, 64, 65}) {
        const auto s = shape(1, kv);
        const auto p = mla::plan_split_kv(s);
        expect_consistent(s, p);
        EXPECT_LE(p.num_splits, 2);
    }
}

// The H200 sweep (bench/split_sweep.sh): MXFP4 rows are small, but the kernel is latency bound
// at 3.3 us a tile, so bs64 kv1024 runs 45 us with 2 splits against 65 us with one. A model
// charging bytes only kept it at one split.
TEST(Planner, LatencyBoundTilesSplitLikeTheSweep) {
    auto s = shape(64, 1024);
    s.kv_row_bytes = kv_traits(KvFormat::kMxfp4).streamed_bytes;
    EXPECT_EQ(mla::plan_split_kv(s).num_splits, 1);  // bytes alone: looks cheap, no split
    s.tile_latency_us = 3.3;
    EXPECT_EQ(mla::plan_split_kv(s).num_splits, 2);
    // fp8 at 2.4 us a tile, the sweep's best choices: bs4 kv8192 -> 32, bs32 -> 4, bs256 -> 1.
    for (auto [batch, kv, want] : {std::tuple{4, 8192, 32}, {32, 8192, 4}, {64, 8192, 2}, {256, 1024, 1}}) {
        auto f = shape(batch, kv);
        f.tile_latency_us = 2.4;
        EXPECT_EQ(mla::plan_split_kv(f).num_splits, want) << "batch " << batch << " kv " << kv;
    }
}

TEST(Planner, PredictionGrowsWithTheCache) {
    EXPECT_LT(mla::predict_split_kv_us(shape(64, 1024), 1), mla::predict_split_kv_us(shape(64, 8192), 1));
}

// ---- batch-invariant mode ------------------------------------------------------------------

// Splits of element b as the metadata kernel (kernels/splitkv/metadata.h) cuts them: its tiles
// in runs of the plan's tiles_per_split, stretched only when they would need more than the
// plan's num_splits (an element longer than max_kv_len).
int element_splits(const mla::SplitKvPlan& p, int kv_len, int tile_tokens) {
    const int64_t tiles = (static_cast<int64_t>(kv_len) + tile_tokens - 1) / tile_tokens;
    int64_t per_split = p.tiles_per_split;
    if (tiles > per_split * p.num_splits) per_split = (tiles + p.num_splits - 1) / p.num_splits;
    return static_cast<int>(std::max<int64_t>(1, (tiles + per_split - 1) / per_split));
}

// Whatever the batch, query rows, heads, compute units, tile cost and max_kv_len, the plan cuts
// every element at the same token boundaries (every kInvariantSplitTokens tokens), so an
// element's split count is ceil(kv_len / that) (at least 1) whatever max_kv_len (>= kv_len)
// the call declares; the route is always split-KV (num_splits >= 2) and the layout holds.
TEST(PlannerInvariant, SplitsEndAtFixedTokenBoundaries) {
    const int chunk = mla::kInvariantSplitTokens;
    ASSERT_EQ(chunk % 64, 0);
    for (int batch : {1, 2, 7, 64, 1024}) {
        for (int units : {1, 78, 132, 304}) {
            for (auto [heads, q_len] : {std::pair{16, 1}, {16, 4}, {128, 1}, {128, 3}}) {
                for (int max_kv : {0, 1, 1023, 1024, 1025, 8192, 65537, 131072}) {
                    auto s = shape(batch, max_kv, heads, q_len, units);
                    s.tile_latency_us = units == 78 ? 3.3 : 2.4;
                    const auto p = mla::plan_split_kv_invariant(s);
                    SCOPED_TRACE(::testing::Message() << "batch " << batch << " units " << units
                                                      << " heads " << heads << " q_len " << q_len
                                                      << " max_kv_len " << max_kv);
                    expect_consistent(s, p, /*capped=*/false);
                    EXPECT_EQ(p.tiles_per_split * s.tile_tokens, mla::kInvariantSplitTokens);
                    EXPECT_EQ(p.num_splits, std::max(2, (max_kv + chunk - 1) / chunk));
                    EXPECT_GT(p.workspace_bytes, 0u);
                    EXPECT_GT(p.predicted_us, 0.0);
                    for (int kv : {0, 1, 1023, 1024, 1025, 4000, 8192, 65537, 131072}) {
                        if (kv > max_kv) continue;
                        EXPECT_EQ(element_splits(p, kv, s.tile_tokens),
                                  std::max(1, (kv + chunk - 1) / chunk))
                            << "kv_len " << kv;
                    }
                }
            }
        }
    }
}

// The default mode's split count follows the batch (that is what the mode exists to avoid):
// one element of 8192 tokens alone and inside a batch of 256 is cut differently there, the same
// way here.
TEST(PlannerInvariant, TheDefaultModeWouldCutTheSameElementDifferently) {
    auto alone = shape(1, 8192), batch = shape(256, 8192);
    alone.tile_latency_us = batch.tile_latency_us = 2.4;
    EXPECT_NE(element_splits(mla::plan_split_kv(alone), 8192, 64),
              element_splits(mla::plan_split_kv(batch), 8192, 64));
    const int want = 8192 / mla::kInvariantSplitTokens;
    EXPECT_EQ(element_splits(mla::plan_split_kv_invariant(alone), 8192, 64), want);
    EXPECT_EQ(element_splits(mla::plan_split_kv_invariant(batch), 8192, 64), want);
}

// Elements of one split still take the split-KV route, and the prediction charges its
// launches and partials: never below the single-split path's.
TEST(PlannerInvariant, OneSplitElementsPayForTheReduce) {
    for (int batch : {1, 256}) {
        auto s = shape(batch, 1000);
        s.tile_latency_us = 2.4;
        EXPECT_GT(mla::plan_split_kv_invariant(s).predicted_us, mla::predict_split_kv_us(s, 1));
    }
}

}  // namespace
