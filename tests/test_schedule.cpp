// The balanced stage-1 schedule's arithmetic (kernels/splitkv/schedule.h; host only). No kernel
// uses it yet. These tests pin the contract that stage 1 and the reduce will both rely on:
// * the CTAs' runs partition the units evenly;
// * every pair's units are taken once, in order, by its consecutive splits;
// * the stage-1 view (a CTA's items) and the reduce view (a pair's splits) agree;
// * the slots are unique and below the bound.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <set>
#include <vector>

#include "splitkv/schedule.h"

namespace {

using mla::splitkv::BalancedGrid;
using mla::splitkv::BalancedItem;
using mla::splitkv::BalancedPair;

std::vector<int64_t> prefix_of(const std::vector<int64_t>& units) {
    std::vector<int64_t> first(units.size() + 1, 0);
    for (size_t p = 0; p < units.size(); ++p) first[p + 1] = first[p] + units[p];
    return first;
}

// Checks every property of the schedule of `units` (units per pair) on `launched` CTAs, and
// returns the largest number of splits of one pair.
int64_t check_schedule(const std::vector<int64_t>& units, int64_t launched) {
    const std::vector<int64_t> first = prefix_of(units);
    const int64_t pairs = static_cast<int64_t>(units.size());
    const BalancedGrid g = mla::splitkv::balanced_grid(first.back(), launched);
    EXPECT_EQ(g.ctas, std::min(launched, first.back()));  // launched >= 1 here
    if (g.ctas == 0) {
        EXPECT_EQ(mla::splitkv::balanced_slot_bound(pairs, g), 0);
        return 0;
    }
    const int64_t bound = mla::splitkv::balanced_slot_bound(pairs, g);
    EXPECT_EQ(bound, pairs + g.ctas - 1);
    // The CTAs' runs: contiguous, non-empty, within one unit of each other, covering [0, T).
    const int64_t lo = g.units / g.ctas;
    EXPECT_EQ(mla::splitkv::balanced_cta_begin(g, 0), 0);
    EXPECT_EQ(mla::splitkv::balanced_cta_begin(g, g.ctas), g.units);
    for (int64_t c = 0; c < g.ctas; ++c) {
        const int64_t b = mla::splitkv::balanced_cta_begin(g, c);
        const int64_t e = mla::splitkv::balanced_cta_begin(g, c + 1);
        EXPECT_TRUE(e - b == lo || e - b == lo + 1) << "CTA " << c << ": " << e - b << " units";
        EXPECT_EQ(mla::splitkv::balanced_cta_of(g, b), c);
        EXPECT_EQ(mla::splitkv::balanced_cta_of(g, e - 1), c);
    }
    // Stage 1's view: each CTA's items, in unit order.
    std::vector<int64_t> next_unit(units.size(), 0);   // the next unit each pair expects
    std::vector<int64_t> next_split(units.size(), 0);  // and the split that should take it
    std::set<int64_t> slots;
    for (int64_t u = 0; u < g.units; ++u) {  // the search behind a CTA's first item
        const int64_t p = mla::splitkv::balanced_pair_of(first.data(), pairs, u);
        const size_t at = static_cast<size_t>(p);
        const bool holds = first[at] <= u && u < first[at + 1];
        EXPECT_TRUE(holds) << "unit " << u << " found in pair " << p;
        if (!holds) return 0;
    }
    for (int64_t c = 0; c < g.ctas; ++c) {
        int64_t taken = 0;
        int64_t last_pair = -1;
        const int64_t run_begin = mla::splitkv::balanced_cta_begin(g, c);
        const int64_t run_end = mla::splitkv::balanced_cta_begin(g, c + 1);
        mla::splitkv::balanced_items(g, first.data(), pairs, c, [&](const BalancedItem& it) {
            ASSERT_GE(it.pair, 0);
            ASSERT_LT(it.pair, pairs);
            EXPECT_GT(it.pair, last_pair) << "CTA " << c << ": items out of order";
            last_pair = it.pair;
            const size_t p = static_cast<size_t>(it.pair);
            EXPECT_GT(units[p], 0) << "an item of a pair of no units";
            EXPECT_EQ(it.begin, next_unit[p]) << "pair " << p << ": a gap or an overlap";
            EXPECT_LT(it.begin, it.end);
            EXPECT_LE(it.end, units[p]);
            EXPECT_EQ(it.split, next_split[p]) << "pair " << p;
            EXPECT_GE(first[p] + it.begin, run_begin) << "CTA " << c << ": outside its run";
            EXPECT_LE(first[p] + it.end, run_end) << "CTA " << c << ": outside its run";
            next_unit[p] = it.end;
            ++next_split[p];
            taken += it.end - it.begin;
            // The reduce's view of the same pair.
            const BalancedPair bp = mla::splitkv::balanced_pair(g, it.pair, first[p], units[p]);
            EXPECT_EQ(bp.first_cta + it.split, c);
            EXPECT_EQ(bp.splits, it.splits);
            EXPECT_EQ(bp.slot + it.split, it.slot);
            // The documented slot: p + cta_of(first_p) + j.
            EXPECT_EQ(it.slot,
                      it.pair + mla::splitkv::balanced_cta_of(g, first[p]) + it.split);
            EXPECT_GE(it.slot, 0);
            EXPECT_LT(it.slot, bound);
            EXPECT_TRUE(slots.insert(it.slot).second) << "slot " << it.slot << " taken twice";
        });
        EXPECT_EQ(taken, run_end - run_begin) << "CTA " << c;
    }
    int64_t most_splits = 0;
    for (size_t p = 0; p < units.size(); ++p) {
        EXPECT_EQ(next_unit[p], units[p]) << "pair " << p << ": units left untaken";
        const BalancedPair bp =
            mla::splitkv::balanced_pair(g, static_cast<int64_t>(p), first[p], units[p]);
        EXPECT_EQ(next_split[p], bp.splits) << "pair " << p;
        if (units[p] == 0) {
            EXPECT_EQ(bp.first_cta, -1);
        }
        most_splits = std::max(most_splits, bp.splits);
    }
    return most_splits;
}

// The motivating shape (docs/notes/balanced_schedule.md): bs40 kv3000 H128 q_len 1 at 64 rows
// per CTA has 80 pairs of 47 tiles. On 132 CTAs each takes 28 or 29 tiles (one split each took
// 47 in 0.7.33's plan), and each pair has 2 or 3 splits.
TEST(BalancedSchedule, EqualPairsOverMoreCtasThanPairs) {
    const std::vector<int64_t> units(80, 47);
    EXPECT_EQ(check_schedule(units, 132), 3);
    const BalancedGrid g = mla::splitkv::balanced_grid(80 * 47, 132);
    for (int64_t c = 0; c < g.ctas; ++c) {
        const int64_t n = mla::splitkv::balanced_cta_begin(g, c + 1) -
                          mla::splitkv::balanced_cta_begin(g, c);
        EXPECT_TRUE(n == 28 || n == 29) << n;
    }
    for (int64_t p = 0; p < 80; ++p)
        EXPECT_GE(mla::splitkv::balanced_pair(g, p, p * 47, 47).splits, 2);
}

// Fewer units than CTAs: only T CTAs take units, one each, and every pair's splits are its
// units.
TEST(BalancedSchedule, FewerUnitsThanCtas) {
    const std::vector<int64_t> units = {3, 0, 1, 2};
    EXPECT_EQ(mla::splitkv::balanced_grid(6, 132).ctas, 6);
    EXPECT_EQ(check_schedule(units, 132), 3);
}

// No units at all (every element empty), or no CTA launched: no CTA takes any, and no slot is
// needed.
TEST(BalancedSchedule, NoUnits) {
    EXPECT_EQ(check_schedule({0, 0, 0}, 132), 0);
    EXPECT_EQ(check_schedule({}, 132), 0);
    EXPECT_EQ(mla::splitkv::balanced_grid(10, 0).ctas, 0);
    EXPECT_EQ(mla::splitkv::balanced_grid(10, -3).ctas, 0);
}

// One CTA takes everything: every pair is one split, and its output is final.
TEST(BalancedSchedule, OneCta) { EXPECT_EQ(check_schedule({5, 0, 7, 1}, 1), 1); }

// One long element among short ones (the uneven batch the uniform plan serves at the longest
// element's pace): it is cut across most CTAs, and the slots stay within pairs + G - 1.
TEST(BalancedSchedule, OneLongPairAmongShortOnes) {
    std::vector<int64_t> units(64, 2);
    units[17] = 2048;  // 131072 tokens
    const int64_t most = check_schedule(units, 132);
    EXPECT_GE(most, 120);
}

// Random batches: pairs of 0 to 300 units (runs of empty pairs included), on grids of 1 to 1,000
// CTAs, fewer and more than the units.
TEST(BalancedSchedule, RandomBatches) {
    std::mt19937_64 rng(53);
    for (int trial = 0; trial < 300; ++trial) {
        std::uniform_int_distribution<int> npairs(1, 300);
        std::vector<int64_t> units(static_cast<size_t>(npairs(rng)));
        const int kind = trial % 3;
        for (int64_t& u : units) {
            const uint64_t r = rng();
            u = kind == 0 ? static_cast<int64_t>(r % 4)
                          : (r % 5 == 0 ? 0 : static_cast<int64_t>(r % 301));
        }
        std::uniform_int_distribution<int64_t> launched(1, 1000);
        SCOPED_TRACE(::testing::Message() << "trial " << trial);
        check_schedule(units, launched(rng));
        if (::testing::Test::HasFailure()) return;
    }
}

}  // namespace
