// Split-KV planning: how many CTAs share each batch element's cache, and the workspace layout
// that follows from it. Pure host arithmetic (no device calls), so it is unit-tested on CPU.
#pragma once

#include <cstddef>
#include <cstdint>

namespace mla {

struct SplitKvShape {  // (field order is used by aggregate initialization in plan.cpp)
    int batch_size = 0;
    int total_q = 0;
    int max_q_len = 1;
    int max_kv_len = 0;
    int num_heads = 16;
    int kv_row_bytes = 0;      // cache bytes per token the kernel streams (K, scales, V)
    double tile_latency_us = 0.0;  // least time a stage-1 CTA spends per tile (its critical
                                   // path when not bandwidth bound), per kernel format
    int tile_tokens = 64;      // cache rows per stage-1 tile (the split granularity)
    int multiprocessors = 0;   // SMs / CUs of the device; one stage-1 CTA is resident per unit
    int rows_per_cta = 16;     // query rows a stage-1 CTA serves (the variant's; splitkv/work.h)
    int tile_parallelism = 1;  // tiles a CTA works on at once (wgmma, 16 rows: one per consumer
                               // warpgroup): a CTA with fewer tiles still pays this many
    double cta_fixed_us = 2.0; // per-CTA prologue + epilogue of the variant
    double split_cta_us = 0.0; // more per wave of CTAs when splitting (partial O of
                               // rows_per_cta rows instead of the output; planner.cpp); >= 0:
                               // the workspace bound relies on it
};

struct SplitKvPlan {
    int num_splits = 1;        // 1: the single-split path (no reduce, no workspace)
    int tiles_per_split = 1;   // for an element of max_kv_len tokens
    int row_groups = 1;        // stage-1 CTAs per (element, split): ceil(max_q_len * heads /
                               // rows_per_cta)
    size_t partial_o_offset = 0;    // workspace bytes: fp32 [total_q * splits][heads][512]
    size_t partial_lse_offset = 0;  // fp32 [total_q * splits][heads]
    size_t partial_meta_offset = 0; // plan_balanced only: int32 [total_q][head blocks][2]
    size_t workspace_bytes = 0;     // 0 on the single-split path
    double predicted_us = 0.0;      // the cost model's estimate for the chosen split count
};

inline constexpr int kMaxSplits = 128;
inline constexpr size_t kWorkspaceAlignment = 256;

// Chooses the split count with the cost model described in planner.cpp. `forced_splits` > 0
// overrides the choice (clamped to [1, kMaxSplits]); the workspace always matches the result.
SplitKvPlan plan_split_kv(const SplitKvShape& shape, int forced_splits = 0);

// Batch-invariant mode (MLA_DECODE_FLAG_BATCH_INVARIANT): splits end at fixed token boundaries,
// every kInvariantSplitTokens tokens of an element, so that its split count is
// ceil(kv_len / kInvariantSplitTokens) whatever the batch, the device or max_kv_len (>= kv_len).
// planner.cpp says why 1024.
inline constexpr int kInvariantSplitTokens = 1024;

// The split layout of batch-invariant mode, the same for every shape except in its grid bound
// and workspace: tiles_per_split = kInvariantSplitTokens / tile_tokens (tile_tokens must divide
// it); num_splits = the splits of an element of max_kv_len tokens, at least 2 so that the route
// is always split-KV (an element of one split also goes through the reduce), and not capped by
// kMaxSplits (a cap would make long elements' splits follow max_kv_len).
SplitKvPlan plan_split_kv_invariant(const SplitKvShape& shape);

// Workspace bounds for graph capture across batch sizes (mla_decode_workspace_bound): bytes >=
// the workspace_bytes of the plan (plan_split_kv with `forced_splits`, or
// plan_split_kv_invariant) of every shape under `max`: batch_size <= max.batch_size,
// max_q_len <= max.max_q_len, max_kv_len <= max.max_kv_len, max_q_len <= total_q <=
// min(max.total_q, batch_size * max_q_len) (total_q is the sum of lengths <= max_q_len), every
// other field equal, and fewer than 2^40 CTAs per split (plan_create refuses grids over 2^31 - 1
// anyway). Forced splits and batch-invariant mode: the largest shape's own workspace (it grows
// with every field). The default mode's split count is not monotone in the shape: planner.cpp
// bounds the (query row, split) pairs of every plan that splits from what the planner's choice
// implies, searching batch, row groups, tiles and split counts with pruning (PairBound).
size_t split_kv_workspace_bound(const SplitKvShape& max, int forced_splits = 0);
size_t split_kv_invariant_workspace_bound(const SplitKvShape& max);

// The balanced schedule (kernels/splitkv/balanced.h) on the device's units: gangs of row_groups
// CTAs, balanced_gangs(row_groups, multiprocessors) of them (at least one). plan_balanced:
// num_splits 1 (no uniform split), row_groups as plan_split_kv's, tiles_per_split the tiles a
// CTA takes at most (every element of max_kv_len tokens: ceil(batch x tiles / gangs)), and the
// workspace: partial O and LSE of batch x row_groups + multiprocessors compact slots of
// rows_per_cta rows (the (batch + gangs - 1) x row_groups it may write, by a bound that grows
// with the shape), then the reduce's entries (int32 pairs per query token and head block).
// predicted_us: an estimate by the uniform model's terms, NOT calibrated (the planner does not
// choose the route by it). Its workspace grows with every field (multiprocessors fixed), so the
// largest shape's bounds every smaller one's.
int balanced_gangs(int row_groups, int multiprocessors);
SplitKvPlan plan_balanced(const SplitKvShape& shape);

// The model's prediction for a given split count (microseconds).
double predict_split_kv_us(const SplitKvShape& shape, int splits);

}  // namespace mla
