// The epilogue of stage 1, shared by its variants: where the O row and the LSE of a query row
// go, and in what type.
//   single-split path (Stage1Work::partial_row < 0): the final O (bf16, round to nearest even)
//     and, when requested, the natural-log LSE;
//   split path: the split's partial O (fp32, already divided by its sum) and its log2-domain
//     LSE (-inf: the split saw no token), which the reduce (reduce.h) combines.
// Rows are named by query token q_row + i of the CTA (i < Stage1Work::tokens) and head
// head0 + head.
#pragma once

#include "arch/device.h"
#include "splitkv/params.h"
#include "splitkv/softmax.h"
#include "splitkv/work.h"

namespace mla::splitkv {

MLA_DEVICE bool single_split(const Stage1Work& w) { return w.partial_row < 0; }

// The row of the final O (single-split path).
MLA_DEVICE uint16_t* final_o_row(const Params& p, const Stage1Work& w, int i, int head) {
    return p.o + (w.q_row + i) * p.o_stride_token + (w.head0 + head) * p.o_stride_head;
}

// The row of this split's partial O (split path): partial row partial_row + i * splits, head
// partial_head0 + head (the uniform schedule's rows r * max_splits + s, work.h; the balanced
// one's compact slots, balanced.h).
MLA_DEVICE float* partial_o_row(const Params& p, const Stage1Work& w, int i, int head) {
    return p.partial_o +
           ((w.partial_row + static_cast<int64_t>(i) * w.splits) * p.num_heads + w.partial_head0 +
            head) *
               kHeadDimV;
}

// A value of O as a row of that type stores it (the pointer only picks the overload): bf16 in
// the final O, fp32 in a partial O. Use: dst[k] = o_value(dst, x).
MLA_DEVICE uint16_t o_value(const uint16_t*, float x) { return arch::float_to_bf16_rne(x); }
MLA_DEVICE float o_value(const float*, float x) { return x; }

// The LSE of the row from its running max m (log2 domain) and sum l.
MLA_DEVICE void store_lse(const Params& p, const Stage1Work& w, int i, int head, float m,
                          float l) {
    const float lse2 = softmax_lse2(m, l);
    if (!single_split(w)) {
        p.partial_lse[(w.partial_row + static_cast<int64_t>(i) * w.splits) * p.num_heads +
                      w.partial_head0 + head] = lse2;
    } else if (p.lse != nullptr) {
        p.lse[static_cast<int64_t>(w.q_row + i) * p.lse_stride_token + w.head0 + head] =
            softmax_counts(l) ? lse2 * kLn2 : kNegInf;
    }
}

// A CTA of the split path whose split is past its element's last (Stage1Work::empty_split): its
// rows' partial LSE as -inf, so that the reduce, which reads max_splits partial rows of every
// query row, gives that split no weight and never adds its partial O. Where the reduce loads
// every split's partial O row beside the LSEs (Params::reduce_rows_early) those rows are written
// too, as zeros, so that it never reads unwritten workspace (compute-sanitizer's initcheck);
// otherwise they are left unwritten.
template <int kRows>
MLA_DEVICE void stage1_write_empty_split(const Params& p, const Stage1Work& w) {
    const int threads = static_cast<int>(arch::block_threads());
    for (int n = static_cast<int>(arch::thread_index()); n < kRows; n += threads) {
        const Stage1Row row = stage1_row(p, w, n);
        store_lse(p, w, row.token, row.head, kNegInf, 0.0f);
    }
    if (!p.reduce_rows_early) return;
    constexpr int kRowVectors = kHeadDimV / 4;  // float4s of a partial O row
    for (int k = static_cast<int>(arch::thread_index()); k < kRows * kRowVectors; k += threads) {
        const Stage1Row row = stage1_row(p, w, k / kRowVectors);
        reinterpret_cast<float4*>(partial_o_row(p, w, row.token, row.head))[k % kRowVectors] =
            make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    }
}

}  // namespace mla::splitkv
