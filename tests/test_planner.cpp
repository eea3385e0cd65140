// The split-KV planner (host arithmetic only): route choice, split lengths and the workspace
// layout that stage 1, the metadata kernel and the reduce rely on.
#include <gtest/gtest.h>

#include <algorithm>
#include <tuple>

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

// Layout invariants every plan must satisfy.
void expect_consistent(const mla::SplitKvShape& s, const mla::SplitKvPlan& p) {
    const int64_t tiles = std::max(1, (s.max_kv_len + s.tile_tokens - 1) / s.tile_tokens);
    EXPECT_GE(p.num_splits, 1);
    EXPECT_LE(p.num_splits, mla::kMaxSplits);
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

}  // namespace
