// Split metadata: one small CTA turns the device-resident qo_indptr / kv_indptr into the
// per-element split layout that stage 1 and the reduce read (params.h, SplitMeta / RowMeta),
// without the host seeing the lengths. Element b of kv_len tokens is cut into splits of the
// plan's tiles_per_split tiles (longer if b exceeds the plan's max_kv_len, so that it still fits
// max_splits); its partial rows follow those of elements 0 .. b-1: a block-wide exclusive sum
// of q_len_b * splits_b, carried across chunks of kMetaThreads elements.
#pragma once

#include "arch/device.h"
#include "arch/prim.h"
#include "splitkv/params.h"

namespace mla::splitkv {

inline constexpr int kMetaThreads = 256;

template <int kTileTokens>
__global__ void __launch_bounds__(kMetaThreads) split_meta_kernel(const Params p) {
    using Sum = arch::BlockExclusiveSum<kMetaThreads>;
    __shared__ typename Sum::TempStorage temp;
    int carry = 0;
    for (int base = 0; base < p.batch; base += kMetaThreads) {
        const int b = base + static_cast<int>(threadIdx.x);
        int q_len = 0, splits = 1;
        int64_t tiles_per_split = p.tiles_per_split;
        if (b < p.batch) {
            q_len = p.qo_indptr[b + 1] - p.qo_indptr[b];
            const int64_t kv_len = p.kv_indptr[b + 1] - p.kv_indptr[b];
            const int64_t tiles = (kv_len + kTileTokens - 1) / kTileTokens;
            if (tiles > tiles_per_split * p.max_splits)
                tiles_per_split = (tiles + p.max_splits - 1) / p.max_splits;
            splits = static_cast<int>(max(int64_t{1}, (tiles + tiles_per_split - 1) / tiles_per_split));
        }
        int offset = 0, total = 0;
        Sum::run(temp, b < p.batch ? q_len * splits : 0, offset, total);
        if (b < p.batch) {
            const int first = carry + offset;
            p.split_meta[b] = SplitMeta{splits, static_cast<int32_t>(tiles_per_split), first, 0};
            const int q0 = p.qo_indptr[b];
            for (int t = 0; t < q_len; ++t) p.row_meta[q0 + t] = RowMeta{first + t * splits, splits};
        }
        carry += total;
        __syncthreads();  // temp is reused by the next chunk
    }
}

}  // namespace mla::splitkv
