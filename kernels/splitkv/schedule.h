// A stage-1 schedule balanced across batch elements: its arithmetic, for host and device.
// Stage 1 (kernels/splitkv/balanced.h) finds its items and their compact slots with it, and
// writes where each row's slots are for the reduce. balanced.h applies it to elements (its
// "pairs" below) and gangs of row_groups CTAs (its "CTAs"), so that an element's row groups
// read each tile side by side; the pair and CTA wording here is the general form. T comes from
// the lengths on the device, so the host knows only a bound: balanced_slot_bound with G = the
// gangs launched (elements' slots, each of row_groups CTAs' rows; the planner's plan_balanced
// bounds it further by batch x row_groups + units). tests/test_schedule.cpp checks it on the
// host. Design: docs/notes/balanced_schedule.md.
//
// Units. A unit is one tile of one (element, row group) pair. Pairs are numbered element-major,
// p = element * row_groups + group, so one element's row groups run on neighbouring CTAs and
// share its tiles through L2. Pair p has units_p units: 0 where the element has no such rows
// (balanced.h gives a pair whose rows see no cache one unit, so that its CTA writes them).
// first_p is the number of units before pair p, and T is the total.
//
// CTAs. Of the CTAs launched, G = min(launched, T) take units. CTA c takes units
// [floor(c T / G), floor((c + 1) T / G)): one contiguous run, at least one unit, and any two
// CTAs' runs differ by at most one unit. A CTA's run is cut into items where it crosses pair
// boundaries. An item is a run of one pair's units.
//
// Splits and slots. The CTAs that take a pair's units are its splits, numbered j = 0, 1, ... in
// unit order: split j is CTA cta_of(first_p) + j. A pair of one split writes its output
// directly. Any other pair writes its splits' partial O and LSE to compact slots: split j of
// pair p goes to slot p + cta_of(first_p) + j. Consecutive pairs share at most their boundary
// CTA, so the slots are unique and increasing in (p, j), and they stay below pairs + G - 1.
// A slot holds one row group's partial O and LSE, so the workspace is bounded by the shape and
// the grid, not by a longest element.
#pragma once

#include <cstdint>

#include "arch/host_device.h"

namespace mla::splitkv {

// Make it with balanced_grid only: the functions below need 1 <= G <= T (G = 0: none apply).
struct BalancedGrid {
    int64_t units;  // T
    int64_t ctas;   // G = min(launched, T): the CTAs that take units (0 when T or launched is 0)
};

MLA_HOST_DEVICE BalancedGrid balanced_grid(int64_t units, int64_t launched) {
    const int64_t u = units > 0 ? units : 0;
    const int64_t l = launched > 0 ? launched : 0;
    return BalancedGrid{u, l < u ? l : u};
}

// The first unit of CTA c (0 <= c <= G: c = G gives T).
MLA_HOST_DEVICE int64_t balanced_cta_begin(const BalancedGrid& g, int64_t c) {
    return c * g.units / g.ctas;
}

// The CTA that takes unit u (0 <= u < T): the largest c with balanced_cta_begin(c) <= u.
MLA_HOST_DEVICE int64_t balanced_cta_of(const BalancedGrid& g, int64_t u) {
    return ((u + 1) * g.ctas - 1) / g.units;
}

// Slots the whole grid writes at most: pairs + G - 1, or 0 when no CTA takes units. Each slot
// holds the partial O and LSE of one row group; a query row uses only its pair's splits.
MLA_HOST_DEVICE int64_t balanced_slot_bound(int64_t pairs, const BalancedGrid& g) {
    return g.ctas > 0 && pairs > 0 ? pairs + g.ctas - 1 : 0;
}

// The pair holding unit u (0 <= u < T): the p with pair_first[p] <= u < pair_first[p + 1]
// (binary search; pair_first as for balanced_items).
MLA_HOST_DEVICE int64_t balanced_pair_of(const int64_t* pair_first, int64_t pairs, int64_t u) {
    int64_t lo = 0;
    int64_t hi = pairs - 1;
    while (lo < hi) {
        const int64_t mid = (lo + hi + 1) / 2;
        if (pair_first[mid] <= u) lo = mid;
        else hi = mid - 1;
    }
    return lo;
}

// The splits of pair `pair`, whose units are [first_unit, first_unit + units).
struct BalancedPair {
    int64_t first_cta;  // the CTA of split 0; -1 for a pair of no units
    int64_t splits;     // 0 for a pair of no units
    int64_t slot;       // slot of split 0; -1 for a pair of no units
};
MLA_HOST_DEVICE BalancedPair balanced_pair(const BalancedGrid& g, int64_t pair,
                                           int64_t first_unit, int64_t units) {
    if (units <= 0) return BalancedPair{-1, 0, -1};
    const int64_t c0 = balanced_cta_of(g, first_unit);
    const int64_t c1 = balanced_cta_of(g, first_unit + units - 1);
    return BalancedPair{c0, c1 - c0 + 1, pair + c0};
}

// One item of a CTA: units [begin, end) of pair `pair`, counted from the pair's first unit,
// which are split `split` of the pair's `splits`. Its partial rows go to `slot`, unless
// splits == 1: then its output is final.
struct BalancedItem {
    int64_t pair;
    int64_t begin;
    int64_t end;
    int64_t split;
    int64_t splits;
    int64_t slot;
};

// Calls visit(item) for each item of CTA c (0 <= c < G), in unit order. pair_first[p] is
// first_p for p = 0 .. pairs, so pair_first[pairs] = T.
template <typename Visit>
MLA_HOST_DEVICE void balanced_items(const BalancedGrid& g, const int64_t* pair_first,
                                    int64_t pairs, int64_t c, Visit&& visit) {
    const int64_t begin = balanced_cta_begin(g, c);
    const int64_t end = balanced_cta_begin(g, c + 1);
    for (int64_t p = balanced_pair_of(pair_first, pairs, begin); p < pairs && pair_first[p] < end;
         ++p) {
        const int64_t first = pair_first[p];
        const int64_t last = pair_first[p + 1];
        if (last == first) continue;  // a pair of no units
        const BalancedPair bp = balanced_pair(g, p, first, last - first);
        const int64_t split = c - bp.first_cta;
        visit(BalancedItem{p, (begin > first ? begin : first) - first,
                           (end < last ? end : last) - first, split, bp.splits,
                           bp.slot + split});
    }
}

}  // namespace mla::splitkv
