// The balanced stage-1 schedule on the device: a CTA's items, the work of an item and where the
// reduce finds a row's splits (design: docs/notes/balanced_schedule.md; the arithmetic, shared
// with the host tests: schedule.h). Params::balanced selects it; the wgmma variant's e4m3fn
// kernels run it (stage1/wgmma.h).
//
// Units and CTAs as in schedule.h: a unit is one tile of one (element, row group) pair, pairs
// numbered element-major (pair = element * row_groups + group), and CTA c of the G =
// min(launched, T) that take units walks the units [c T / G, (c + 1) T / G) as items, one per
// pair its run crosses. A pair's units are the tiles its last query token sees (the causal
// limit, work.h), at least one where its rows exist (an element with no visible cache still
// writes O 0 and LSE -inf for them), none where they do not (a row group past an element's
// query tokens). T is the sum over the batch, from the indptrs on the device: nothing is
// planned on the host but the grid, so plan/run stays graph-safe.
//
// Outputs. An item that holds its whole pair (the pair has one split) writes the final O and
// LSE (Stage1Work::partial_row -1). Split j of a pair of several writes partial O and LSE to
// compact slot s = BalancedPair::slot + j: partial rows s * kRows .. + kRows - 1 (row n of the
// group at s * kRows + n), so the workspace holds pairs + G - 1 slots of kRows rows
// (balanced_slot_bound). The CTA of a pair's split 0 also writes, for every (query token, head
// block) of the pair's rows, where the reduce finds them: partial_meta[2 e] = the partial row
// of the block's first head in split 0, partial_meta[2 e + 1] = the splits (0: one split, the
// output is final and the reduce leaves it), e = token * blocks + head / block (blocks =
// num_heads / kRows where kRows < num_heads, else 1).
#pragma once

#include "arch/device.h"
#include "splitkv/params.h"
#include "splitkv/schedule.h"
#include "splitkv/work.h"

namespace mla::splitkv {

// Units of pair `pair` (see above).
template <int kTileTokens, int kRows>
MLA_DEVICE int64_t balanced_pair_units(const Params& p, int64_t pair) {
    Stage1Work w{};
    w.batch = static_cast<int>(pair / p.row_groups);
    const Stage1Rows r = stage1_rows<kRows>(p, static_cast<int>(pair % p.row_groups), w);
    if (r.t >= r.q_len) return 0;
    const int64_t tiles = (w.visible_end + kTileTokens - 1) / kTileTokens;
    return tiles > 0 ? tiles : 1;
}

// The units of all row groups of element b.
template <int kTileTokens, int kRows>
MLA_DEVICE int64_t balanced_element_units(const Params& p, int b) {
    int64_t units = 0;
    const int64_t first = static_cast<int64_t>(b) * p.row_groups;
    for (int g = 0; g < p.row_groups; ++g)
        units += balanced_pair_units<kTileTokens, kRows>(p, first + g);
    return units;
}

// A CTA's current item, in shared memory: written by one thread (balanced_start,
// balanced_next), read by every role after a block-wide barrier.
struct BalancedState {
    int64_t units;       // T
    int64_t ctas;        // G
    int64_t pair;        // the item's pair; -1: the CTA has no (more) items
    int64_t pair_first;  // the pair's first unit
    int64_t pair_units;
    int64_t begin;       // the item's units [begin, end), counted from the pair's first
    int64_t end;
    int64_t splits;      // the pair's splits: 1, the item writes the final O
    int64_t slot;        // the item's compact slot (splits > 1)
};
inline constexpr int kBalancedStateBytes = static_cast<int>(sizeof(BalancedState));

// The work of the item in `st` (st.pair >= 0), as stage1_work's of a CTA; *row0: the group's
// first element-relative row.
template <int kTileTokens, int kRows>
MLA_DEVICE Stage1Work balanced_item_work(const Params& p, const BalancedState& st, int* row0) {
    // 32-bit divisions and shifts only: the producer runs this in 24 registers (pairs number
    // below 2^31: the uniform plan's grid, batch x row_groups, is bounded so).
    Stage1Work w{};
    const int pair = static_cast<int>(st.pair);
    w.batch = pair / p.row_groups;
    const int group = pair - w.batch * p.row_groups;
    stage1_rows<kRows>(p, group, w);
    *row0 = group * kRows;
    w.active = true;
    w.empty_split = false;
    w.tok_begin = st.begin * kTileTokens;
    w.tok_end = max(w.tok_begin, min(st.end * kTileTokens, w.visible_end));
    w.splits = 1;  // a token's rows follow the previous token's in the slot
    if (st.splits > 1) {
        const int64_t first = st.slot * kRows;  // partial row of the group's row 0
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

// One thread: where the reduce finds the rows of the item's pair (its split 0 only).
template <int kTileTokens, int kRows>
MLA_DEVICE void balanced_write_meta(const Params& p, const BalancedState& st) {
    int row0 = 0;
    const Stage1Work w = balanced_item_work<kTileTokens, kRows>(p, st, &row0);
    const int blocks = balanced_head_blocks(p.num_heads, kRows);
    const int64_t first = st.slot * kRows;
    for (int i = 0; i < w.tokens; ++i) {
        const int64_t e = static_cast<int64_t>(w.q_row + i) * blocks + w.head0 / kRows;
        p.partial_meta[2 * e] = st.splits > 1 ? static_cast<int32_t>(first + i * p.num_heads) : -1;
        p.partial_meta[2 * e + 1] = st.splits > 1 ? static_cast<int32_t>(st.splits) : 0;
    }
}

// One thread: completes `st` from its pair and the pair's first unit: the next pair with units
// from st.pair on, its item for this CTA, or st.pair = -1 where the CTA's run has ended; writes
// the reduce's entries where the item is its pair's split 0.
template <int kTileTokens, int kRows>
MLA_DEVICE void balanced_fill(const Params& p, BalancedState* st) {
    const BalancedGrid g{st->units, st->ctas};
    const int64_t c = arch::block_index();
    const int64_t end = balanced_cta_begin(g, c + 1);
    const int64_t pairs = static_cast<int64_t>(p.batch) * p.row_groups;
    int64_t units = 0;
    while (st->pair < pairs && st->pair_first < end &&
           (units = balanced_pair_units<kTileTokens, kRows>(p, st->pair)) == 0)
        ++st->pair;
    if (st->pair >= pairs || st->pair_first >= end) {
        st->pair = -1;
        return;
    }
    const int64_t begin = balanced_cta_begin(g, c);
    const BalancedPair bp = balanced_pair(g, st->pair, st->pair_first, units);
    const int64_t split = c - bp.first_cta;
    st->pair_units = units;
    st->begin = (begin > st->pair_first ? begin : st->pair_first) - st->pair_first;
    st->end = (end < st->pair_first + units ? end : st->pair_first + units) - st->pair_first;
    st->splits = bp.splits;
    st->slot = bp.slot + split;
    if (split == 0) balanced_write_meta<kTileTokens, kRows>(p, *st);
}

// One thread, after every role has finished the item in `st`: the next one.
template <int kTileTokens, int kRows>
MLA_DEVICE void balanced_next(const Params& p, BalancedState* st) {
    st->pair_first += st->pair_units;
    ++st->pair;
    balanced_fill<kTileTokens, kRows>(p, st);
}

// Every thread of the CTA: finds T and the CTA's first item and leaves them in *st, written by
// one thread; the caller's block-wide barrier then publishes it. `scratch`: shared memory for
// block_threads() + block_threads() / 32 int64 values, free until that barrier. Each thread
// sums a run of consecutive elements, the runs' sums are scanned (within warps, then over
// warps), and the thread whose run holds the CTA's first unit finds its pair.
template <int kTileTokens, int kRows>
MLA_DEVICE void balanced_start(const Params& p, int64_t* scratch, BalancedState* st) {
    const int tid = static_cast<int>(arch::thread_index());
    const int threads = static_cast<int>(arch::block_threads());
    const int warps = threads / arch::kWarpSize;
    const int per = (p.batch + threads - 1) / threads;
    const int b0 = min(p.batch, tid * per);
    const int b1 = min(p.batch, b0 + per);
    int64_t mine = 0;
    for (int b = b0; b < b1; ++b) mine += balanced_element_units<kTileTokens, kRows>(p, b);
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
        st->ctas = balanced_grid(sum, p.balanced_ctas).ctas;
        st->pair = -1;  // unless a thread below finds the CTA's first pair
    }
    arch::sync_block();
    const int64_t c = arch::block_index();
    if (c >= st->ctas) return;
    const int64_t first = balanced_cta_begin(BalancedGrid{st->units, st->ctas}, c);
    int64_t at = warp_base[tid / arch::kWarpSize] + prefix[tid];
    if (first < at || first >= at + mine) return;
    for (int b = b0; b < b1; ++b) {
        for (int g = 0; g < p.row_groups; ++g) {
            const int64_t pair = static_cast<int64_t>(b) * p.row_groups + g;
            const int64_t units = balanced_pair_units<kTileTokens, kRows>(p, pair);
            if (first < at + units) {
                st->pair = pair;
                st->pair_first = at;
                return;
            }
            at += units;
        }
    }
}

// Where the reduce finds query row `row` (global token), head `head`: partial rows first +
// j * rows_per_cta, j < splits (splits 0: the row's output is final).
struct BalancedRowSplits {
    int64_t first;
    int splits;
};
MLA_DEVICE BalancedRowSplits balanced_row_splits(const Params& p, int64_t row, int head) {
    const int rows = p.rows_per_cta;
    const int block = rows < p.num_heads ? rows : p.num_heads;
    const int64_t e = row * balanced_head_blocks(p.num_heads, rows) + head / block;
    const int splits = p.partial_meta[2 * e + 1];
    return BalancedRowSplits{splits > 0 ? p.partial_meta[2 * e] + head % block : 0, splits};
}

}  // namespace mla::splitkv
