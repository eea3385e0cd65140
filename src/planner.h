// Split-KV planning: how many CTAs share each batch element's cache, and the workspace layout
// that follows from it. Pure host arithmetic (no device calls), so it is unit-tested on CPU.
#pragma once

#include <cstddef>
#include <cstdint>

namespace mla {

struct SplitKvShape {
    int batch_size = 0;
    int total_q = 0;
    int max_kv_len = 0;
    int num_heads = 16;
    int kv_row_bytes = 0;      // bytes of one cache row the kernel streams (576 x element size)
    int tile_tokens = 64;      // cache rows per stage-1 tile (the split granularity)
    int multiprocessors = 0;   // SMs / CUs of the device; one stage-1 CTA is resident per unit
};

struct SplitKvPlan {
    int num_splits = 1;
    size_t partial_o_offset = 0;    // workspace bytes: fp32 [total_q][splits][heads][512]
    size_t partial_lse_offset = 0;  // fp32 [total_q][splits][heads]
    size_t workspace_bytes = 0;
    double predicted_us = 0.0;      // the cost model's estimate for the chosen split count
};

inline constexpr int kMaxSplits = 64;
inline constexpr size_t kWorkspaceAlignment = 256;

// Chooses the split count with the cost model described in planner.cpp. `forced_splits` > 0
// overrides the choice (clamped to [1, kMaxSplits]); the workspace always matches the result.
SplitKvPlan plan_split_kv(const SplitKvShape& shape, int forced_splits = 0);

}  // namespace mla
