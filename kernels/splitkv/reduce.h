// Split-KV reduce: combines the partial results of each (query row, head) into the final bf16 O
// and natural-log LSE. One warp per (row, head, slice of 4 * kWarpSize dims): each lane owns one
// float4 run of the slice, so a few rows with many splits still spread over many warps. Row r
// reads partial rows r * max_splits .. + max_splits - 1 (work.h); a split past its element's
// last has LSE -inf there and its partial O is neither written nor added. Weight of split s:
// 2^(lse2_s - max_s lse2_s); a row no split saw gets O = 0 and LSE = -inf. A split with LSE NaN
// (it saw a NaN value or score) makes the maximum, every weight but the -inf ones', O and LSE
// NaN.
#pragma once

#include "arch/device.h"
#include "splitkv/params.h"
#include "splitkv/softmax.h"  // kNegInf, kLn2

namespace mla::splitkv {

inline constexpr int kReduceWarps = 4;
inline constexpr int kReduceSliceDims = 4 * arch::kWarpSize;
inline constexpr int kReduceSlices = kHeadDimV / kReduceSliceDims;
static_assert(kReduceSlices * kReduceSliceDims == kHeadDimV, "slices must tile the 512 dims");

// One warp's worth of splits, base .. base + kWarpSize - 1, added to a lane's acc and wsum in
// split order: lane j holds split base + j's LSE (kNegInf past the last split), m the maximum
// over all splits. The partial O rows are read kOBatch at a time, all in flight together, each
// weight handed out by a shuffle; only splits of weight > 0 or NaN are read (past the last
// split, and a split with LSE -inf, whose partial O may be unwritten, are not).
template <int kOBatch>
MLA_DEVICE void add_warp_of_splits(const float* o_part, int64_t o_step, int base, int splits,
                                   float lse, float m, float (&acc)[4], float& wsum) {
    const float w_lane = lse == kNegInf ? 0.0f : arch::fast_exp2(lse - m);
    const int n = splits - base < arch::kWarpSize ? splits - base : arch::kWarpSize;
    for (int j0 = 0; j0 < n; j0 += kOBatch) {
        float4 x[kOBatch];
        float w[kOBatch];
#pragma unroll
        for (int j = 0; j < kOBatch; ++j) {
            w[j] = j0 + j < n ? arch::shfl(w_lane, j0 + j) : 0.0f;
            x[j] = softmax_counts(w[j])
                       ? *reinterpret_cast<const float4*>(o_part + (base + j0 + j) * o_step)
                       : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        }
#pragma unroll
        for (int j = 0; j < kOBatch; ++j) {
            if (softmax_counts(w[j])) {
                wsum += w[j];
                acc[0] += w[j] * x[j].x;
                acc[1] += w[j] * x[j].y;
                acc[2] += w[j] * x[j].z;
                acc[3] += w[j] * x[j].w;
            }
        }
    }
}

// kOBatch: partial O rows a lane has in flight at once; kLseRegs: warps' worth of split LSEs
// each lane keeps in registers. launch_reduce picks both from the split count, and launches a
// kernel of kLseRegs < kReduceMaxLseRegs only for at most kLseRegs * kWarpSize splits; the one
// of kReduceMaxLseRegs takes any count (splits past its registers, which only batch-invariant
// mode's long caches reach, have their LSE read again in the weight pass). The weights, the sums
// and their order, and so the result bit for bit, are the same for every choice.
inline constexpr int kReduceMaxLseRegs = 4;
template <int kOBatch, int kLseRegs>
__global__ void __launch_bounds__(kReduceWarps * arch::kWarpSize)
    reduce_kernel(const Params p) {
    const int64_t unit = static_cast<int64_t>(blockIdx.x) * kReduceWarps + arch::warp_id();
    if (unit >= static_cast<int64_t>(p.total_q) * p.num_heads * kReduceSlices) return;
    const int slice = static_cast<int>(unit % kReduceSlices);
    const int64_t row_head = unit / kReduceSlices;
    const int64_t row = row_head / p.num_heads;
    const int head = static_cast<int>(row_head % p.num_heads);
    const int lane = arch::lane_id();
    // Launched as a programmatic dependent of stage 1 (launch_reduce), this grid may start
    // while stage 1 still writes the partial rows: every read of them comes after this wait.
    if (p.dependent_reduce) arch::wait_prior_grid();
    const int splits = p.max_splits;
    const int64_t first = row * p.max_splits * p.num_heads + head;
    const int dim = slice * kReduceSliceDims + 4 * lane;

    // Few dependent round trips to memory (each ~0.4 us from L2, ~1 us cold): the lanes read
    // the splits' LSEs in parallel (one round trip for up to kLseRegs warps of splits) and the
    // warp takes their maximum; then a warp's worth of splits at a time (add_warp_of_splits).
    // Weights, sums and their order are those of a sequential loop over the splits.
    const float* lse_part = p.partial_lse + first;
    float lse_r[kLseRegs];  // split lane + k * kWarpSize
#pragma unroll
    for (int k = 0; k < kLseRegs; ++k) {
        const int s = lane + k * arch::kWarpSize;
        lse_r[k] = s < splits ? lse_part[s * p.num_heads] : kNegInf;
    }
    float m = lse_r[0];
#pragma unroll
    for (int k = 1; k < kLseRegs; ++k) m = max_keep_nan(m, lse_r[k]);
    constexpr bool kAnySplits = kLseRegs == kReduceMaxLseRegs;
    if constexpr (kAnySplits) {
        for (int s = lane + kLseRegs * arch::kWarpSize; s < splits; s += arch::kWarpSize)
            m = max_keep_nan(m, lse_part[s * p.num_heads]);
    }
#pragma unroll
    for (int mask = arch::kWarpSize / 2; mask > 0; mask /= 2)
        m = max_keep_nan(m, arch::shfl_xor(m, mask));

    float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    float wsum = 0.0f;
    if (m != kNegInf) {
        // A split with LSE -inf has weight 0: its partial O (unwritten past the element's
        // last split) is not added.
        const float* o_part = p.partial_o + first * kHeadDimV + dim;
        const int64_t o_step = static_cast<int64_t>(p.num_heads) * kHeadDimV;
#pragma unroll
        for (int k = 0; k < kLseRegs; ++k) {
            if (k * arch::kWarpSize < splits)
                add_warp_of_splits<kOBatch>(o_part, o_step, k * arch::kWarpSize, splits,
                                            lse_r[k], m, acc, wsum);
        }
        if constexpr (kAnySplits) {
            for (int base = kLseRegs * arch::kWarpSize; base < splits; base += arch::kWarpSize) {
                const float lse = base + lane < splits ? lse_part[(base + lane) * p.num_heads]
                                                       : kNegInf;
                add_warp_of_splits<kOBatch>(o_part, o_step, base, splits, lse, m, acc, wsum);
            }
        }
    }
    const float inv = softmax_counts(wsum) ? 1.0f / wsum : 0.0f;
    uint2 packed;
    packed.x = arch::pack_bf16x2(acc[0] * inv, acc[1] * inv);
    packed.y = arch::pack_bf16x2(acc[2] * inv, acc[3] * inv);
    *reinterpret_cast<uint2*>(p.o + row * p.o_stride_token + head * p.o_stride_head + dim) = packed;
    if (p.lse != nullptr && slice == 0 && lane == 0)
        p.lse[row * p.lse_stride_token + head] =
            softmax_counts(wsum) ? (m + __log2f(wsum)) * kLn2 : kNegInf;
}

}  // namespace mla::splitkv
