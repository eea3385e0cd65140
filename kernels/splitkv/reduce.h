// Split-KV reduce: combines the partial results of each (query row, head) into the final bf16 O
// and natural-log LSE, per (row, head, slice of 4 * kWarpSize dims): each lane owns one float4
// run of the slice, so a few rows still spread over many warps; a slice's splits are spread
// over the four warps of a CTA as well past 32 splits, and past 8 where the rows are few
// (launch_reduce). Row r reads partial rows r * max_splits .. + max_splits - 1 (work.h); a
// split past its element's last has LSE -inf there and its partial O is never added (written
// as zeros where Params::reduce_rows_early has the rows loaded beside the LSEs, else unwritten
// and not read). Weight of split s: 2^(lse2_s - max_s lse2_s); a row no split saw gets O = 0
// and LSE = -inf. A split with LSE NaN (it saw a NaN value or score) makes the maximum, every
// weight but the -inf ones', O and LSE NaN.
#pragma once

#include "arch/device.h"
#include "splitkv/balanced.h"  // balanced_row_splits
#include "splitkv/params.h"
#include "splitkv/softmax.h"  // kNegInf, kLn2

namespace mla::splitkv {

inline constexpr int kReduceWarps = 4;
inline constexpr int kReduceSliceDims = 4 * arch::kWarpSize;
inline constexpr int kReduceSlices = kHeadDimV / kReduceSliceDims;
static_assert(kReduceSlices * kReduceSliceDims == kHeadDimV, "slices must tile the 512 dims");

// The order of the sums, the same in both kernels (so a row's result does not depend on which one
// the launch picks, i.e. on the other elements of the batch): the splits fall into chunks of
// kReduceChunk consecutive ones, chunk c into partial sum c % kReduceParts, each partial adds
// its splits in increasing order, and O and the weight sum are P0 + P1 + P2 + P3 in that order
// over the partials that added any split. Up to kReduceChunk splits there is only P0: the
// splits in order, as a sequential loop.
inline constexpr int kReduceChunk = 8;
inline constexpr int kReduceParts = kReduceWarps;
inline constexpr int kReduceGroupSplits = kReduceChunk * kReduceParts;  // 32: a chunk per part
static_assert(arch::kWarpSize % kReduceGroupSplits == 0,
              "a lane register of LSEs holds whole groups of chunks");

// Adds the N splits of weights w and partial O rows x (loaded only where they count, or all of
// them under Params::reduce_rows_early) to acc and wsum in order; only splits of weight > 0 or
// NaN count (past the last split, and a split with LSE -inf, whose partial O may be unwritten
// or zeros, do not).
template <int N>
MLA_DEVICE void add_splits(const float (&w)[N], const float4 (&x)[N], float (&acc)[4],
                           float& wsum) {
#pragma unroll
    for (int j = 0; j < N; ++j) {
        if (softmax_counts(w[j])) {
            wsum += w[j];
            acc[0] += w[j] * x[j].x;
            acc[1] += w[j] * x[j].y;
            acc[2] += w[j] * x[j].z;
            acc[3] += w[j] * x[j].w;
        }
    }
}

// A split's weight from its LSE (log2 domain) and the maximum m over the row's splits.
MLA_DEVICE float split_weight(float lse, float m) {
    return lse == kNegInf ? 0.0f : arch::fast_exp2(lse - m);
}

// The warp's maximum of the LSEs it holds (NaN if any is NaN).
MLA_DEVICE float warp_max_keep_nan(float m) {
#pragma unroll
    for (int mask = arch::kWarpSize / 2; mask > 0; mask /= 2)
        m = max_keep_nan(m, arch::shfl_xor(m, mask));
    return m;
}

// Where a (query row, head, slice) unit reads and writes.
struct ReduceUnit {
    int64_t row;
    int head;
    int dim;             // the lane's first of 4 dims
    const float* lse;    // split s's LSE at lse[s * num_heads]
    const float* o;      // split s's partial O dims at o[s * o_step]
    int64_t o_step;
};
MLA_DEVICE ReduceUnit reduce_unit(const Params& p, int64_t unit, int lane) {
    const int slice = static_cast<int>(unit % kReduceSlices);
    const int64_t row_head = unit / kReduceSlices;
    ReduceUnit u;
    u.row = row_head / p.num_heads;
    u.head = static_cast<int>(row_head % p.num_heads);
    u.dim = slice * kReduceSliceDims + 4 * lane;
    const int64_t first = u.row * p.max_splits * p.num_heads + u.head;
    u.lse = p.partial_lse + first;
    u.o = p.partial_o + first * kHeadDimV + u.dim;
    u.o_step = static_cast<int64_t>(p.num_heads) * kHeadDimV;
    return u;
}

// O = acc / wsum as bf16 (0 where no split counted) and the natural-log LSE (by lane 0 of the
// unit's first slice).
MLA_DEVICE void reduce_store(const Params& p, const ReduceUnit& u, int lane, float m,
                             const float (&acc)[4], float wsum) {
    const float inv = softmax_counts(wsum) ? 1.0f / wsum : 0.0f;
    uint2 packed;
    packed.x = arch::pack_bf16x2(acc[0] * inv, acc[1] * inv);
    packed.y = arch::pack_bf16x2(acc[2] * inv, acc[3] * inv);
    *reinterpret_cast<uint2*>(p.o + u.row * p.o_stride_token + u.head * p.o_stride_head +
                              u.dim) = packed;
    if (p.lse != nullptr && u.dim == 0 && lane == 0)
        p.lse[u.row * p.lse_stride_token + u.head] =
            softmax_counts(wsum) ? (m + __log2f(wsum)) * kLn2 : kNegInf;
}

// Adds partial Pr (its O sums pa, weight sum pw) to P0 + .. + Pr-1 in acc and wsum, if it
// added any split.
MLA_DEVICE void add_partial(float (&acc)[4], float& wsum, const float4& pa, float pw) {
    if (softmax_counts(pw)) {
        wsum += pw;
        acc[0] += pa.x;
        acc[1] += pa.y;
        acc[2] += pa.z;
        acc[3] += pa.w;
    }
}

// Up to kChunks * kReduceChunk splits (at most kReduceGroupSplits: chunk c is partial Pc): one
// warp per (row, head, slice), kReduceWarps units a CTA; lane j reads split j's LSE, then every
// partial O row is read at once. For many rows, whose warps fill the GPU anyway.
template <int kChunks>
__global__ void __launch_bounds__(kReduceWarps * arch::kWarpSize) reduce_kernel(const Params p) {
    static_assert(kChunks >= 1 && kChunks <= kReduceParts, "a chunk per partial at most");
    const int64_t unit = static_cast<int64_t>(arch::block_index()) * kReduceWarps + arch::warp_id();
    if (unit >= static_cast<int64_t>(p.total_q) * p.num_heads * kReduceSlices) return;
    const int lane = arch::lane_id();
    const ReduceUnit u = reduce_unit(p, unit, lane);
    // Launched as a programmatic dependent of stage 1 (launch_reduce), this grid may start
    // while stage 1 still writes the partial rows: every read of them comes after this wait.
    if (p.dependent_reduce) arch::wait_prior_grid();
    constexpr int kSplits = kChunks * kReduceChunk;
    const int splits = p.max_splits;  // <= kSplits (launch_reduce)
    const float lse = lane < splits && lane < kSplits ? u.lse[lane * p.num_heads] : kNegInf;
    // Params::reduce_rows_early: every split's partial O row is loaded beside the LSEs, in the
    // same round trip to L2, not after the weights (a second one); add_splits adds only those of
    // weight > 0 or NaN, so a split past its element's last (its row zeros) is read and never
    // added. Otherwise only the rows whose weight counts are loaded, after the weights.
    const bool early = p.reduce_rows_early;
    float4 x[kChunks][kReduceChunk];
#pragma unroll
    for (int c = 0; c < kChunks; ++c) {
#pragma unroll
        for (int i = 0; i < kReduceChunk; ++i) {
            const int j = c * kReduceChunk + i;
            x[c][i] = early && j < splits
                          ? *reinterpret_cast<const float4*>(u.o + j * u.o_step)
                          : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        }
    }
    const float m = warp_max_keep_nan(lse);
    float acc[kChunks][4] = {};
    float wsum[kChunks] = {};
    if (m != kNegInf) {
        const float w_lane = split_weight(lse, m);
        float w[kChunks][kReduceChunk];
#pragma unroll
        for (int c = 0; c < kChunks; ++c) {
#pragma unroll
            for (int i = 0; i < kReduceChunk; ++i) {
                const int j = c * kReduceChunk + i;
                w[c][i] = arch::shfl(w_lane, j);  // 0 past the last split
                if (!early && softmax_counts(w[c][i]))
                    x[c][i] = *reinterpret_cast<const float4*>(u.o + j * u.o_step);
            }
        }
#pragma unroll
        for (int c = 0; c < kChunks; ++c) add_splits(w[c], x[c], acc[c], wsum[c]);
    }
#pragma unroll
    for (int c = 1; c < kChunks; ++c)
        add_partial(acc[0], wsum[0], make_float4(acc[c][0], acc[c][1], acc[c][2], acc[c][3]),
                    wsum[c]);
    reduce_store(p, u, lane, m, acc[0], wsum[0]);
}

// Any split count: one CTA per (row, head, slice), warp q adds partial Pq (the chunks c with
// c % kReduceParts == q), so a row's partial O rows are read by four warps at once: an element
// of few rows and many splits (one long cache) is read in one or two round trips to L2 by 4x
// the warps, not in splits / 32 round trips by one. kGroups: the groups of
// kReduceGroupSplits splits whose chunks each warp has in flight (1: up to 32 splits, 2: 64,
// 4: any count, 128 a round). The partials meet in kReduceCombineBytes of dynamic shared memory.
inline constexpr int kReduceCombineBytes =
    (kReduceParts - 1) * arch::kWarpSize * static_cast<int>(sizeof(float4) + sizeof(float));
inline constexpr int kReduceMaxGroups = 4;
static_assert(kReduceRowsEarlyMaxSplits == (kReduceMaxGroups / 2) * kReduceGroupSplits,
              "the early rows of the split-parallel reduce: its rounds below kReduceMaxGroups");
template <int kGroups>
__global__ void __launch_bounds__(kReduceWarps * arch::kWarpSize)
    reduce_split_parallel_kernel(const Params p) {
    static_assert(kReduceParts == kReduceWarps, "one partial per warp");
    const int64_t unit = arch::block_index();
    if (unit >= static_cast<int64_t>(p.total_q) * p.num_heads * kReduceSlices) return;  // CTA
    const int lane = arch::lane_id();
    const int q = arch::warp_id();
    const ReduceUnit u = reduce_unit(p, unit, lane);
    if (p.dependent_reduce) arch::wait_prior_grid();
    const int splits = p.max_splits;

    // Every warp reads every LSE (split lane + k * kWarpSize in lse_r[k]) and takes the maximum:
    // one round trip for the first round's splits.
    constexpr int kRoundSplits = kGroups * kReduceGroupSplits;
    constexpr int kLseRegs = (kRoundSplits + arch::kWarpSize - 1) / arch::kWarpSize;
    float lse_r[kLseRegs];
#pragma unroll
    for (int k = 0; k < kLseRegs; ++k) {
        const int s = lane + k * arch::kWarpSize;
        lse_r[k] = s < splits ? u.lse[s * p.num_heads] : kNegInf;
    }
    // Up to 64 splits (one round), as reduce_kernel's where Params::reduce_rows_early: this
    // warp's partial O rows loaded beside the LSEs (one round trip to L2, not two): chunk g,
    // splits 32 g + 8 q + i; only those of weight > 0 or NaN are added. (Any count,
    // kReduceMaxGroups: not so; its two rounds' rows in flight spilled 300 bytes.)
    const bool early = kGroups < kReduceMaxGroups && p.reduce_rows_early;
    float4 x0[kGroups * kReduceChunk];
#pragma unroll
    for (int g = 0; g < kGroups; ++g) {
#pragma unroll
        for (int i = 0; i < kReduceChunk; ++i) {
            const int rel = g * kReduceGroupSplits + q * kReduceChunk + i;
            x0[g * kReduceChunk + i] =
                early && rel < splits ? *reinterpret_cast<const float4*>(u.o + rel * u.o_step)
                                      : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        }
    }
    float m = lse_r[0];
#pragma unroll
    for (int k = 1; k < kLseRegs; ++k) m = max_keep_nan(m, lse_r[k]);
    if constexpr (kGroups == kReduceMaxGroups) {
        for (int s = lane + kRoundSplits; s < splits; s += arch::kWarpSize)
            m = max_keep_nan(m, u.lse[s * p.num_heads]);
    }
    m = warp_max_keep_nan(m);

    float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    float wsum = 0.0f;
    if (m != kNegInf) {
        for (int base = 0; base < splits; base += kRoundSplits) {  // one round below kGroups 4
            if (base > 0) {
#pragma unroll
                for (int k = 0; k < kLseRegs; ++k) {
                    const int s = base + lane + k * arch::kWarpSize;
                    lse_r[k] = s < splits ? u.lse[s * p.num_heads] : kNegInf;
                }
            }
            float w_r[kLseRegs];
#pragma unroll
            for (int k = 0; k < kLseRegs; ++k) w_r[k] = split_weight(lse_r[k], m);
            // This warp's chunk of group g: splits base + 32 g + 8 q + i, all in flight.
            float w[kGroups * kReduceChunk];
            float4 x[kGroups * kReduceChunk];
#pragma unroll
            for (int g = 0; g < kGroups; ++g) {
#pragma unroll
                for (int i = 0; i < kReduceChunk; ++i) {
                    const int rel = g * kReduceGroupSplits + q * kReduceChunk + i;
                    // rel / kWarpSize is (g * 32) / kWarpSize: q * 8 + i < 32
                    const int j = g * kReduceChunk + i;
                    w[j] = arch::shfl(w_r[(g * kReduceGroupSplits) / arch::kWarpSize],
                                      rel % arch::kWarpSize);
                    if (early)  // (base == 0: one round)
                        x[j] = x0[j];
                    else
                        x[j] = softmax_counts(w[j]) ? *reinterpret_cast<const float4*>(
                                                          u.o + (base + rel) * u.o_step)
                                                    : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
                }
            }
            add_splits(w, x, acc, wsum);
        }
    }

    // P0 + P1 + P2 + P3 in order, over the partials that added a split, by warp 0.
    extern __shared__ float4 combine_shared[];
    float4* part_acc = combine_shared;                                         // [q - 1][lane]
    float* part_w = reinterpret_cast<float*>(combine_shared + (kReduceParts - 1) * arch::kWarpSize);
    if (q > 0) {
        part_acc[(q - 1) * arch::kWarpSize + lane] = make_float4(acc[0], acc[1], acc[2], acc[3]);
        part_w[(q - 1) * arch::kWarpSize + lane] = wsum;
    }
    arch::sync_block();
    if (q != 0) return;
#pragma unroll
    for (int r = 0; r < kReduceParts - 1; ++r)
        add_partial(acc, wsum, part_acc[r * arch::kWarpSize + lane],
                    part_w[r * arch::kWarpSize + lane]);
    reduce_store(p, u, lane, m, acc, wsum);
}

// The balanced schedule's reduce (Params::balanced; balanced.h): one warp per (row, head,
// slice) as reduce_kernel, the row's splits from partial_meta (any count, a warp's 32 LSEs a
// round), in the same order of sums as reduce_kernel's up to 8 splits and in chunks of 8 in
// order past that. A row whose pair had one split is left as stage 1 wrote it.
__global__ void __launch_bounds__(kReduceWarps * arch::kWarpSize)
    reduce_balanced_kernel(const Params p) {
    const int64_t unit = static_cast<int64_t>(arch::block_index()) * kReduceWarps + arch::warp_id();
    if (unit >= static_cast<int64_t>(p.total_q) * p.num_heads * kReduceSlices) return;
    const int lane = arch::lane_id();
    ReduceUnit u = reduce_unit(p, unit, lane);
    if (p.dependent_reduce) arch::wait_prior_grid();  // before partial_meta too
    const BalancedRowSplits rs = balanced_row_splits(p, u.row, u.head);
    if (rs.splits == 0) return;  // the whole warp: one unit
    const int64_t step = rs.step;
    u.lse = p.partial_lse + rs.first;
    u.o = p.partial_o + rs.first * kHeadDimV + u.dim;
    u.o_step = step * kHeadDimV;
    float m = kNegInf;
    for (int base = 0; base < rs.splits; base += arch::kWarpSize) {
        const int j = base + lane;
        m = max_keep_nan(m, j < rs.splits ? u.lse[j * step] : kNegInf);
    }
    m = warp_max_keep_nan(m);
    float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    float wsum = 0.0f;
    if (m != kNegInf) {
        for (int base = 0; base < rs.splits; base += arch::kWarpSize) {
            const int j = base + lane;
            const float w_lane = split_weight(j < rs.splits ? u.lse[j * step] : kNegInf, m);
            for (int c = 0; c * kReduceChunk < arch::kWarpSize &&
                            base + c * kReduceChunk < rs.splits;
                 ++c) {
                float w[kReduceChunk];
                float4 x[kReduceChunk];
#pragma unroll
                for (int i = 0; i < kReduceChunk; ++i) {
                    const int s = c * kReduceChunk + i;
                    w[i] = arch::shfl(w_lane, s);  // 0 past the last split
                    x[i] = softmax_counts(w[i])
                               ? *reinterpret_cast<const float4*>(u.o + (base + s) * u.o_step)
                               : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
                }
                add_splits(w, x, acc, wsum);
            }
        }
    }
    reduce_store(p, u, lane, m, acc, wsum);
}

}  // namespace mla::splitkv
