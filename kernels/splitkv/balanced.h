// The balanced stage-1 schedule on the device: a CTA's items, the work of an item and where the
// reduce finds a row's splits (design: docs/notes/balanced_schedule.md; the arithmetic, shared
// with the host tests: schedule.h). Params::balanced selects it; the wgmma variant's e4m3fn
// kernels run it (stage1/wgmma.h).
//
// Gangs. The CTAs launched (Params::balanced_ctas) are gangs of row_groups CTAs: CTA c is
// member g = c % row_groups of gang c / row_groups, and member g serves row group g of every
// element its gang takes. So an element's row groups read each of its tiles at about the same
// time, on neighbouring CTAs, and share it through L2 (as the uniform layout's do): the first
// form, whose units were the tiles of each (element, row group) pair, put one element's row
// groups in different CTAs' runs at different times, and 128 heads read every tile twice
// from HBM.
//
// Units and items, as in schedule.h with elements for its pairs and gangs for its CTAs: a unit is
// one tile of one element, max(1, ceil(kv_len / 64)) of them for an element with query tokens
// (its last token sees the whole cache; an element with no cache still writes O 0 and LSE -inf
// for its rows), none for an element without. Gang j of the G = min(gangs, T) that take units
// walks the units [j T / G, (j + 1) T / G) as items, one per element its run crosses; member g
// takes the item's tiles that its row group's last query token sees (the causal limit,
// work.h), none where the element has no such rows (the member skips the item) or where that
// limit is before the item (the item then has no tiles: O 0, LSE -inf). T is the sum over the
// batch, from the indptrs on the device: nothing is planned on the host but the grid, so
// plan/run stays graph-safe.
//
// Outputs. An item that holds its whole element (the element has one split) writes the final O
// and LSE (Stage1Work::partial_row -1). Split s of an element of several writes partial O and LSE
// to slot (BalancedPair::slot + s) * row_groups + g: partial rows slot * kRows .. + kRows - 1 (row
// n of the group at slot * kRows + n). The workspace holds (batch + G - 1) x row_groups slots of
// kRows rows (balanced_slot_bound). The member of the gang of an element's split 0 also writes,
// for every (query token, head block) of its rows, where the reduce finds them:
// partial_meta[2 e] = the partial row of the block's first head in split 0 (split s's is
// s x row_groups x kRows rows on), partial_meta[2 e + 1] = the splits (0: one split, the output
// is final and the reduce leaves it), e = token * blocks + head / block (blocks = num_heads /
// kRows where kRows < num_heads, else 1).
#pragma once

#include "arch/device.h"
#include "splitkv/params.h"
#include "splitkv/schedule.h"
#include "splitkv/work.h"

namespace mla::splitkv {

// Units of element b (see above).
template <int kTileTokens>
MLA_DEVICE int64_t balanced_element_units(const Params& p, int b) {
    if (p.qo_indptr[b + 1] == p.qo_indptr[b]) return 0;
    const int64_t tiles = (p.kv_indptr[b + 1] - p.kv_indptr[b] + kTileTokens - 1) / kTileTokens;
    return tiles > 0 ? tiles : 1;
}

// A CTA's current item, in shared memory: written by one thread (balanced_start,
// balanced_next), read by every role after a block-wide barrier; or one copy per role that
// its own thread advances (the continuous pipeline, stage1/wgmma.h), read after the role's
// barrier.
struct BalancedState {
    int64_t units;          // T
    int64_t gangs;          // G
    int64_t element;        // the item's element; -1: the CTA has no (more) items
    int64_t element_first;  // the element's first unit
    int64_t element_units;
    int64_t begin;          // the item's units [begin, end), counted from the element's first
    int64_t end;
    int64_t splits;         // the element's splits: 1, the item writes the final O
    int64_t slot;           // the element's slot of this split (splits > 1)
    int64_t run_begin;      // the gang's units [run_begin, run_end)
    int64_t run_end;
};
inline constexpr int kBalancedStateBytes = static_cast<int>(sizeof(BalancedState));

// This CTA's row group (its member index in its gang).
MLA_DEVICE int balanced_group(const Params& p) {
    return static_cast<int>(arch::block_index()) % p.row_groups;
}

// The work of the item in `st` (st.element >= 0) for this CTA's row group, as stage1_work's of a
// CTA; *row0: the group's first element-relative row. active false: the element has no such
// rows (the CTA skips the item).
template <int kTileTokens, int kRows>
MLA_DEVICE Stage1Work balanced_item_work(const Params& p, const BalancedState& st, int* row0) {
    // 32-bit arithmetic and shifts only: the producer runs this in 24 registers.
    Stage1Work w{};
    w.batch = static_cast<int>(st.element);
    const int group = balanced_group(p);
    const Stage1Rows r = stage1_rows<kRows>(p, group, w);
    *row0 = group * kRows;
    w.active = r.t < r.q_len;
    w.empty_split = false;
    w.tok_begin = min(st.begin * kTileTokens, w.visible_end);
    w.tok_end = max(w.tok_begin, min(st.end * kTileTokens, w.visible_end));
    w.splits = 1;  // a token's rows follow the previous token's in the slot
    if (st.splits > 1) {
        const int64_t first = (st.slot * p.row_groups + group) * kRows;  // row 0's partial row
        w.partial_row = first >> heads_log2(p);
        w.partial_head0 = static_cast<int>(first & (p.num_heads - 1));
    } else {
        w.partial_row = -1;
        w.partial_head0 = w.head0;
    }
    return w;
}

// Head blocks of a query token in partial_meta: num_heads / kRows, or 1 (kRows >= num_heads).
MLA_HOST_DEVICE int balanced_head_blocks(int num_heads, int rows) {
    return rows < num_heads ? num_heads / rows : 1;
}

// One thread: where the reduce finds the rows of this CTA's group of the item's element (its
// split 0 only).
template <int kTileTokens, int kRows>
MLA_DEVICE void balanced_write_meta(const Params& p, const BalancedState& st) {
    int row0 = 0;
    const Stage1Work w = balanced_item_work<kTileTokens, kRows>(p, st, &row0);
    if (!w.active) return;
    const int blocks = balanced_head_blocks(p.num_heads, kRows);
    const int64_t first = (st.slot * p.row_groups + balanced_group(p)) * kRows;
    for (int i = 0; i < w.tokens; ++i) {
        const int64_t e = static_cast<int64_t>(w.q_row + i) * blocks + w.head0 / kRows;
        p.partial_meta[2 * e] = st.splits > 1 ? static_cast<int32_t>(first + i * p.num_heads) : -1;
        p.partial_meta[2 * e + 1] = st.splits > 1 ? static_cast<int32_t>(st.splits) : 0;
    }
}

// One thread: completes `st` from its element and the element's first unit: the next element
// with units from st.element on, its item for this CTA's gang, or st.element = -1 where the
// gang's run has ended. kOutputs: also the item's split count and slot, and the reduce's
// entries where the item is its element's split 0 (a walk whose role writes no output, the
// continuous pipeline's producer, leaves them: 64-bit divisions, in its few registers).
template <int kTileTokens, int kRows, bool kOutputs = true>
MLA_DEVICE void balanced_fill(const Params& p, BalancedState* st) {
    const int64_t end = st->run_end;
    int64_t units = 0;
    while (st->element < p.batch && st->element_first < end &&
           (units = balanced_element_units<kTileTokens>(p, static_cast<int>(st->element))) == 0)
        ++st->element;
    if (st->element >= p.batch || st->element_first >= end) {
        st->element = -1;
        return;
    }
    st->element_units = units;
    st->begin = (st->run_begin > st->element_first ? st->run_begin : st->element_first) -
                st->element_first;
    st->end = (end < st->element_first + units ? end : st->element_first + units) -
              st->element_first;
    if constexpr (kOutputs) {
        const BalancedGrid g{st->units, st->gangs};
        const BalancedPair bp = balanced_pair(g, st->element, st->element_first, units);
        const int64_t split = arch::block_index() / p.row_groups - bp.first_cta;
        st->splits = bp.splits;
        st->slot = bp.slot + split;
        if (split == 0) balanced_write_meta<kTileTokens, kRows>(p, *st);
    } else {
        st->splits = 0;  // unknown: the walk's role writes no output
        st->slot = 0;
    }
}

// One thread, after every role that reads `st` has finished its item: the next one.
template <int kTileTokens, int kRows, bool kOutputs = true>
MLA_DEVICE void balanced_next(const Params& p, BalancedState* st) {
    st->element_first += st->element_units;
    ++st->element;
    balanced_fill<kTileTokens, kRows, kOutputs>(p, st);
}

// Every thread of the CTA: finds T and the CTA's first item and leaves them in *st, written by
// one thread; the caller's block-wide barrier then publishes it. `scratch`: shared memory for
// block_threads() + block_threads() / 32 int64 values, free until that barrier. Each thread
// sums a run of consecutive elements, the runs' sums are scanned (within warps, then over
// warps), and the thread whose run holds the gang's first unit finds its element. Every gang
// member finds the same.
template <int kTileTokens, int kRows>
MLA_DEVICE void balanced_start(const Params& p, int64_t* scratch, BalancedState* st) {
    const int tid = static_cast<int>(arch::thread_index());
    const int threads = static_cast<int>(arch::block_threads());
    const int warps = threads / arch::kWarpSize;
    const int per = (p.batch + threads - 1) / threads;
    const int b0 = min(p.batch, tid * per);
    const int b1 = min(p.batch, b0 + per);
    int64_t mine = 0;
    for (int b = b0; b < b1; ++b) mine += balanced_element_units<kTileTokens>(p, b);
    int64_t* const prefix = scratch;             // [threads]: exclusive prefix within the warp
    int64_t* const warp_base = scratch + threads;  // [warps]: exclusive prefix of the warps
    prefix[tid] = mine;
    arch::sync_block();
    if (tid % arch::kWarpSize == 0) {
        int64_t sum = 0;
        for (int i = tid; i < tid + arch::kWarpSize; ++i) {
            const int64_t v = prefix[i];
            prefix[i] = sum;
            sum += v;
        }
        warp_base[tid / arch::kWarpSize] = sum;
    }
    arch::sync_block();
    if (tid == 0) {
        int64_t sum = 0;
        for (int i = 0; i < warps; ++i) {
            const int64_t v = warp_base[i];
            warp_base[i] = sum;
            sum += v;
        }
        st->units = sum;
        st->gangs = balanced_grid(sum, p.balanced_ctas / p.row_groups).ctas;
        st->element = -1;  // unless a thread below finds the gang's first element
        const int64_t gang = arch::block_index() / p.row_groups;
        if (gang < st->gangs) {
            st->run_begin = balanced_cta_begin(BalancedGrid{st->units, st->gangs}, gang);
            st->run_end = balanced_cta_begin(BalancedGrid{st->units, st->gangs}, gang + 1);
        }
    }
    arch::sync_block();
    const int64_t gang = arch::block_index() / p.row_groups;
    if (gang >= st->gangs) return;
    const int64_t first = st->run_begin;
    int64_t at = warp_base[tid / arch::kWarpSize] + prefix[tid];
    if (first < at || first >= at + mine) return;
    for (int b = b0; b < b1; ++b) {
        const int64_t units = balanced_element_units<kTileTokens>(p, b);
        if (first < at + units) {
            st->element = b;
            st->element_first = at;
            return;
        }
        at += units;
    }
}

// Where the reduce finds query row `row` (global token), head `head`: partial rows first +
// j * step, j < splits (splits 0: the row's output is final).
struct BalancedRowSplits {
    int64_t first;
    int64_t step;
    int splits;
};
MLA_DEVICE BalancedRowSplits balanced_row_splits(const Params& p, int64_t row, int head) {
    const int rows = p.rows_per_cta;
    const int block = rows < p.num_heads ? rows : p.num_heads;
    const int64_t e = row * balanced_head_blocks(p.num_heads, rows) + head / block;
    const int splits = p.partial_meta[2 * e + 1];
    return BalancedRowSplits{splits > 0 ? p.partial_meta[2 * e] + head % block : 0,
                             static_cast<int64_t>(p.row_groups) * rows, splits};
}

}  // namespace mla::splitkv
