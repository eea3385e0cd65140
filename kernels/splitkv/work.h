// The work contract of the split-KV family: which query rows, split and cache tokens one stage-1
// CTA takes and where its results go; the reduce (reduce.h) combines the partial rows it writes.
// Nothing is planned on the device beforehand: each CTA computes its element's split layout
// from the indptrs and the plan's split length (element_splits), and the partial rows have a
// fixed place (global query row r, split s: partial row r * max_splits + s).
//
// Rows. The query rows of a batch element are its (query token t, head h) pairs, numbered
// r = t * num_heads + h. A stage-1 variant takes kRows rows per CTA: CTA j of an (element,
// split) takes rows [kRows * j, kRows * j + kRows), so a launch has
// Params::row_groups = ceil(max_q_len * num_heads / kRows) CTAs per (element, split). Head
// counts and kRows are powers of two, so the rows of a CTA are part of one token's heads
// (kRows <= num_heads), or all heads of several tokens (kRows > num_heads, e.g. 16 rows of
// 8 heads: two tokens); stage1_row names the (token, head) of each.
//
// Grid: blockIdx.x = (batch * max_splits + split) * row_groups + row group.
#pragma once

#include "arch/device.h"
#include "splitkv/params.h"

namespace mla::splitkv {

// The work of one stage-1 CTA.
struct Stage1Work {
    bool active;     // false: no such rows or no such split, nothing to write
    int batch;
    int q_row;       // global query row (token) of the CTA's first row
    int head0;       // head of the CTA's first row
    int tokens;      // query tokens its rows span (1 while kRows <= num_heads)
    int splits;      // partial rows of consecutive tokens lie this far apart (max_splits)
    bool empty_split;  // split path, rows that exist, a split past the element's last: the CTA
                       // only writes its rows' partial LSE as -inf, and zero partial O rows
                       // under Params::reduce_rows_early (stage1_write_empty_split)
    int64_t kv_begin;     // first slot (contiguous caches)
    int64_t tok_begin;    // cache tokens of this split for the CTA's last query token, causal
    int64_t tok_end;      //   limit applied (stage1_token_end: for its other tokens)
    int64_t visible_end;  // tokens the last query token may see (causal), before the split
    int64_t partial_row;  // split path: partial row of token q_row; single-split path: -1
    int partial_head0;    // split path: the head of row 0 in its partial row (head0; the
                          // balanced schedule's compact slots: balanced.h)
};

// The splits of an element of `tiles` tiles on the split path: the plan's tiles_per_split
// each, longer where the element exceeds the plan's max_kv_len so that it still fits
// max_splits.
struct ElementSplits {
    int splits;
    int64_t tiles_per_split;
};
MLA_DEVICE ElementSplits element_splits(int64_t tiles, int64_t plan_tiles_per_split,
                                         int max_splits) {
    int64_t per = plan_tiles_per_split > 0 ? plan_tiles_per_split : 1;
    if (tiles > per * max_splits) per = (tiles + max_splits - 1) / max_splits;
    const int64_t splits = (tiles + per - 1) / per;
    return ElementSplits{static_cast<int>(splits < 1 ? 1 : splits), per};
}

// log2(num_heads): head counts are powers of two (8 .. 128), so rows split into (token, head)
// with shifts and masks (a division by a run-time value costs registers on AMD).
MLA_DEVICE int heads_log2(const Params& p) { return __ffs(p.num_heads) - 1; }

// The rows of row group `group` of element w.batch (set): head0, q_row, tokens, kv_begin and
// visible_end of `w`; the element's query tokens and cache length, and the group's first token.
struct Stage1Rows {
    int q_len;
    int t;  // element-relative query token of the group's first row
    int64_t kv_len;
};
template <int kRows>
MLA_DEVICE Stage1Rows stage1_rows(const Params& p, int group, Stage1Work& w) {
    const int64_t row0 = static_cast<int64_t>(group) * kRows;
    const int t = static_cast<int>(row0 >> heads_log2(p));  // query token of the first row
    w.head0 = static_cast<int>(row0 & (p.num_heads - 1));
    const int q_begin = p.qo_indptr[w.batch];
    const int q_len = p.qo_indptr[w.batch + 1] - q_begin;
    w.kv_begin = p.kv_indptr[w.batch];
    const int64_t kv_len = p.kv_indptr[w.batch + 1] - w.kv_begin;
    w.q_row = q_begin + t;
    const int t_last = min(q_len - 1, ((w.head0 + kRows - 1) >> heads_log2(p)) + t);
    w.tokens = t_last - t + 1;
    // The causal limit of query t: it sees cache positions 0 .. kv_len - q_len + t.
    w.visible_end = max(int64_t{0}, kv_len - q_len + t_last + 1);
    return Stage1Rows{q_len, t, kv_len};
}

template <int kTileTokens, int kRows>
MLA_DEVICE Stage1Work stage1_work(const Params& p) {
    Stage1Work w{};
    int id = static_cast<int>(arch::block_index());
    const int group = id % p.row_groups;
    id /= p.row_groups;
    const int split = id % p.max_splits;
    w.batch = id / p.max_splits;
    const Stage1Rows r = stage1_rows<kRows>(p, group, w);
    const int t = r.t;
    const int q_len = r.q_len;
    const int64_t kv_len = r.kv_len;
    const int q_begin = w.q_row - t;
    w.partial_head0 = w.head0;
    const int64_t tiles = (kv_len + kTileTokens - 1) / kTileTokens;
    int splits = 1;
    int64_t tiles_per_split = tiles;
    w.partial_row = -1;
    w.splits = 1;
    if (p.split_kv) {
        const ElementSplits e = element_splits(tiles, p.tiles_per_split, p.max_splits);
        splits = e.splits;
        tiles_per_split = e.tiles_per_split;
        w.splits = p.max_splits;
        w.partial_row = static_cast<int64_t>(q_begin + t) * p.max_splits + split;
    }
    w.active = t < q_len && split < splits;
    w.empty_split = p.split_kv && t < q_len && split >= splits;
    // Whole tiles, spread evenly over the splits; then the causal limit (stage1_rows).
    const int64_t visible = w.visible_end;
    w.tok_begin = min(kv_len, split * tiles_per_split * kTileTokens);
    w.tok_end = min(min(kv_len, w.tok_begin + tiles_per_split * kTileTokens), visible);
    w.tok_end = max(w.tok_end, w.tok_begin);
    return w;
}

// Every stage-1 kernel calls this once its CTA knows it has work (an inactive CTA's exit counts
// the same): where the reduce is launched as a programmatic dependent of stage 1
// (p.dependent_reduce, split path only), it may then be scheduled while the last stage-1 CTAs
// run, and waits in wait_prior_grid for stage 1 to complete before it reads. Otherwise nothing:
// on the single-split path the kernel after it is the caller's.
MLA_DEVICE void stage1_allow_reduce(const Params& p) {
    if (p.dependent_reduce) arch::allow_dependent_launch();
}

// Row n (0 .. kRows - 1) of a stage-1 CTA: its query token relative to Stage1Work::q_row and
// its head relative to Stage1Work::head0, as final_o_row, partial_o_row and store_lse
// (epilogue.h) take them. A row past the CTA's last token (8 heads in 16 rows, the last token
// of an odd q_len) names the row num_heads before it: it loads the same Q, sees the same
// tokens and stores the same values to the same place, so the epilogue needs no per-row
// branch (one costs the AMD MXFP4 kernels spilled registers).
struct Stage1Row {
    int token;
    int head;
};
MLA_DEVICE Stage1Row stage1_row(const Params& p, const Stage1Work& w, int n) {
    const int r = w.head0 + n;
    return Stage1Row{min(r >> heads_log2(p), w.tokens - 1), (r & (p.num_heads - 1)) - w.head0};
}

// End of the cache tokens that query token q_row + i (i < tokens) of the CTA sees in its split:
// each earlier token sees one token less.
MLA_DEVICE int64_t stage1_token_end(const Stage1Work& w, int i) {
    return max(w.tok_begin, min(w.tok_end, w.visible_end - (w.tokens - 1 - i)));
}

// The slot of element token t (< kv_len, an int32: kv_indptr) of a paged cache whose page
// holding it is `page`.
MLA_DEVICE int64_t slot_in_page(const Params& p, int64_t page, int32_t t) {
    return page * p.page_size + t % p.page_size;  // 32-bit remainder, not the 64-bit routine
}

// Cache slot of token `tok` of the CTA's element: contiguous, or through the page table.
MLA_DEVICE int64_t cache_slot(const Params& p, const Stage1Work& w, int64_t tok) {
    if (p.page_indptr == nullptr) return w.kv_begin + tok;
    // tok < kv_len, an int32 (kv_indptr): 32-bit division, not the 64-bit routine.
    const int32_t t = static_cast<int32_t>(tok);
    const int64_t page = p.page_indices[int64_t{p.page_indptr[w.batch]} + t / p.page_size];
    return slot_in_page(p, page, t);
}

}  // namespace mla::splitkv
