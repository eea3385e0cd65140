#include "planner.h"

#include <algorithm>
#include <cmath>

namespace mla {
namespace {

// The cost model, in microseconds, for batch elements of max_kv_len tokens each.
//
// Stage 1 runs batch * splits * row_groups CTAs, one resident per multiprocessor, in waves.
// Every CTA streams ceil(tiles / splits) tiles; a tile costs its bytes over one
// multiprocessor's share of the memory bandwidth, but never less than the kernel's latency per
// tile (SplitKvShape::tile_latency_us: on the H200 every format's stage 1 is latency bound,
// 2.4 us a tile for fp8 whether 4 or 256 CTAs run, so this term decides). (Row groups of one element and split read
// the same tiles, mostly from L2; the model charges them in full, which keeps it conservative
// for many heads or long q_len.) Each CTA also pays a fixed cost: launch ramp, loading Q,
// filling the copy pipeline, writing its output. Splitting (more than one split) adds the
// reduce (charged as two launches: calibrated so when a metadata kernel still ran before the
// timed run, and kept so that the plans stay), and the reduce reads every split's partial O
// once. Splitting more fills more multiprocessors for small batches and shortens each CTA's
// serial walk over long caches; wave quantization makes the choice non-obvious for mid batches
// (64 elements x 2 splits on 132 units is one wave, x 3 splits is two). A variant whose CTA works
// on several tiles at once (SplitKvShape::tile_parallelism: tile_latency_us is then its time per
// tile in steady state) takes as long for fewer tiles as for that many. A CTA that writes
// partial O (split_cta_us, per wave) costs more than one that writes the output: fp32 rows of
// rows_per_cta, a larger epilogue for more rows, on top of the bytes charged below.
constexpr double kBandwidthBytesPerUs = 3.6e6;  // sustained HBM read rate, bytes per us
constexpr double kExtraLaunchUs = 2.5;          // the split route's overhead: 2 x this
constexpr double kSplitMustWin = 0.98;  // a split count replaces the best so far only below
                                        // this fraction of its time (worth its overheads)
// Splits past 64 cost a little more than their partial O: 0.03 us a split, the best charge of
// the twenty-fourth session's fit (docs/notes/experiments/cost_table_fit_s24.py; A/B-timed at
// 0.05 and 0, not at 0.03 itself; docs/perf/h200_2026-12-03_s24): with 0.7.7's split-parallel
// reduce, batch-1 16-row plans at 32k-131k tokens ran 0.85-0.99x the time at 86-128 splits
// that they took at 0.1 (64-121 splits); at 0 the planner also gave 128 splits of one tile to
// 8k tokens (MXFP4, 1.08-1.09x slower) and of two to 16k (fp8 H16 q_len 1 and H8 q_len 2
// 1.03-1.04x slower, the rest 0.94-0.97x). (0.1 was fitted to the old reduce, 10.3 us at 64
// splits and 16.7 at 128 under ncu, where 0.7.7's takes 5.8 / 8.0.)
constexpr int kSplitsWithoutExtraCost = 64;
constexpr double kExtraCostPerSplitUs = 0.03;
double extra_split_us(int splits) {
    return kExtraCostPerSplitUs * std::max(0, splits - kSplitsWithoutExtraCost);
}

size_t align_up(size_t v) { return (v + kWorkspaceAlignment - 1) / kWorkspaceAlignment * kWorkspaceAlignment; }

int64_t tiles_of(const SplitKvShape& s) {
    return std::max<int64_t>(1, (static_cast<int64_t>(s.max_kv_len) + s.tile_tokens - 1) / s.tile_tokens);
}

// The query rows of an element (max_q_len tokens x heads) over the rows one CTA serves.
int row_groups_of(const SplitKvShape& s) {
    const int64_t rows = static_cast<int64_t>(std::max(1, s.max_q_len)) * s.num_heads;
    const int64_t per_cta = std::max(1, s.rows_per_cta);
    return static_cast<int>(std::max<int64_t>(1, (rows + per_cta - 1) / per_cta));
}

// The time of one tile of a CTA: its bytes over one unit's share of the bandwidth when all are
// busy (a partly filled last wave is no faster per CTA, which keeps the model conservative),
// never less than the kernel's latency per tile.
double tile_us_of(const SplitKvShape& s) {
    const int64_t units = std::max(1, s.multiprocessors);
    const double unit_bytes_per_us = kBandwidthBytesPerUs / static_cast<double>(units);
    return std::max(static_cast<double>(s.tile_tokens) * s.kv_row_bytes / unit_bytes_per_us,
                    s.tile_latency_us);
}

// Stage 1's time: `waves` waves of CTAs that each walk `tiles_per_cta` tiles of `tile_us`.
double stage1_us(const SplitKvShape& s, double tile_us, int64_t waves, int64_t tiles_per_cta) {
    const int64_t tiles_charged = std::max<int64_t>(tiles_per_cta, s.tile_parallelism);
    return static_cast<double>(waves) *
           (static_cast<double>(tiles_charged) * tile_us + s.cta_fixed_us);
}

// What the split-KV route adds to stage 1 with `splits` splits per element: the reduce's
// launch (see above), and the partial O written by stage 1 and read by the reduce.
double split_route_us(const SplitKvShape& s, int splits) {
    const double partial_bytes = static_cast<double>(s.total_q) * splits * s.num_heads * 512.0 * 4.0;
    return 2.0 * kExtraLaunchUs + 2.0 * partial_bytes / kBandwidthBytesPerUs +
           extra_split_us(splits);
}

// The split-KV workspace of `row_splits` (query row, split) pairs of `heads` heads: the partial
// O rows, then the partial LSE rows (kernels/splitkv/params.h).
void lay_out(size_t row_splits, size_t heads, SplitKvPlan* plan) {
    const size_t rows = row_splits * heads;
    plan->partial_o_offset = 0;
    plan->partial_lse_offset = plan->partial_o_offset + align_up(rows * 512 * sizeof(float));
    plan->workspace_bytes = plan->partial_lse_offset + align_up(rows * sizeof(float));
}

// The workspace of plan->num_splits splits: none on the single-split path.
void lay_out_workspace(const SplitKvShape& shape, SplitKvPlan* plan) {
    if (plan->num_splits == 1) return;  // single-split path: no workspace at all
    const size_t total_q = static_cast<size_t>(shape.total_q);
    lay_out(total_q * plan->num_splits, static_cast<size_t>(shape.num_heads), plan);
}

}  // namespace

double predict_split_kv_us(const SplitKvShape& s, int splits) {
    const int64_t tiles = tiles_of(s);
    const int64_t tiles_per_cta = (tiles + splits - 1) / splits;
    const int64_t ctas = static_cast<int64_t>(s.batch_size) * splits * row_groups_of(s);
    const int64_t units = std::max(1, s.multiprocessors);
    const int64_t waves = (ctas + units - 1) / units;
    const double stage1 = stage1_us(s, tile_us_of(s), waves, tiles_per_cta);
    if (splits == 1) return stage1;
    return stage1 + static_cast<double>(waves) * s.split_cta_us + split_route_us(s, splits);
}

SplitKvPlan plan_split_kv(const SplitKvShape& shape, int forced_splits) {
    SplitKvPlan plan;
    const int64_t tiles = tiles_of(shape);
    if (forced_splits > 0) {
        plan.num_splits = std::min(forced_splits, kMaxSplits);
    } else {
        const int max_splits = static_cast<int>(std::min<int64_t>(tiles, kMaxSplits));
        double best = predict_split_kv_us(shape, 1);
        plan.num_splits = 1;
        for (int s = 2; s <= max_splits; ++s) {
            const double us = predict_split_kv_us(shape, s);
            if (us < best * kSplitMustWin) {  // a split must win clearly
                best = us;
                plan.num_splits = s;
            }
        }
    }
    plan.tiles_per_split = static_cast<int>((tiles + plan.num_splits - 1) / plan.num_splits);
    plan.row_groups = row_groups_of(shape);
    plan.predicted_us = predict_split_kv_us(shape, plan.num_splits);
    lay_out_workspace(shape, &plan);
    return plan;
}

int balanced_gangs(int row_groups, int multiprocessors) {
    return std::max(1, multiprocessors / std::max(1, row_groups));
}

SplitKvPlan plan_balanced(const SplitKvShape& shape) {
    SplitKvPlan plan;
    const int64_t rows = std::max(1, shape.rows_per_cta);
    plan.row_groups = row_groups_of(shape);
    const int64_t g = balanced_gangs(plan.row_groups, shape.multiprocessors);
    const int64_t units = static_cast<int64_t>(shape.batch_size) * tiles_of(shape);
    const int64_t per_cta = (units + g - 1) / g;
    plan.tiles_per_split = static_cast<int>(std::min<int64_t>(per_cta, 0x7fffffff));
    // Two items a CTA, one of them split, and the reduce.
    plan.predicted_us = stage1_us(shape, tile_us_of(shape), 1, per_cta) + shape.cta_fixed_us +
                        shape.split_cta_us + split_route_us(shape, 2);
    // (batch + gangs - 1) x row_groups slots at most, bounded by batch x row_groups + units
    // (gangs x row_groups <= units where a gang fits): a bound that grows with the shape, where
    // the count itself does not (fewer row groups make more gangs).
    const size_t slot_rows =
        (static_cast<size_t>(shape.batch_size) * static_cast<size_t>(plan.row_groups) +
         static_cast<size_t>(std::max(0, shape.multiprocessors))) *
        static_cast<size_t>(rows);
    const size_t blocks = rows < shape.num_heads ? static_cast<size_t>(shape.num_heads / rows) : 1;
    plan.partial_o_offset = 0;
    plan.partial_lse_offset = align_up(slot_rows * 512 * sizeof(float));
    plan.partial_meta_offset = plan.partial_lse_offset + align_up(slot_rows * sizeof(float));
    plan.workspace_bytes =
        plan.partial_meta_offset +
        align_up(static_cast<size_t>(shape.total_q) * blocks * 2 * sizeof(int32_t));
    return plan;
}

// Why 1024 tokens. The cost model above (mma16 on the H200, fp8: 2.4 us a tile) against
// mma16's best split count per shape, geometric means over the 8 competition shapes / 7
// engine shapes (H128, q_len 2 and 4, 32k and 64k tokens): 256-token splits 1.28x / 1.29x,
// 512 1.34x / 1.10x, 1024 1.56x / 1.09x, 2048 1.65x / 1.14x. Short splits lose on large
// batches (more partial O to write and reduce), long ones on small batches (idle units, long
// serial walks: bs4 kv8192 46 vs 19 us with 1024). 1024 over 512: the same for large batches
// and long caches, and half the workspace of long caches, which grows with the splits (bs64
// H128 at 128k tokens: 2 GiB of partial O with 1024, 4 GiB with 512); 512 would be about 15%
// faster on the competition shapes' small batches. mla_bench --mla_batch_invariant measures
// the real cost; kInvariantSplitTokens is the one place to change it.
SplitKvPlan plan_split_kv_invariant(const SplitKvShape& shape) {
    SplitKvPlan plan;
    plan.tiles_per_split = std::max(1, kInvariantSplitTokens / std::max(1, shape.tile_tokens));
    const int splits = static_cast<int>((tiles_of(shape) + plan.tiles_per_split - 1) /
                                        plan.tiles_per_split);
    plan.num_splits = std::max(2, splits);  // the grid's bound; elements take what they need
    plan.row_groups = row_groups_of(shape);
    plan.predicted_us = predict_split_kv_us(shape, splits);
    if (splits == 1) plan.predicted_us += split_route_us(shape, 1);  // the reduce all the same
    lay_out_workspace(shape, &plan);
    return plan;
}

// ---- workspace bounds --------------------------------------------------------------------------

namespace {

// The default mode's bound: the most (query row, split) pairs, total_q * s, of a plan that
// splits (s > 1), over every shape under the largest one. Trying every shape would take
// batch x q_len x tiles x total_q plans (~10^9 for batch 1024 and 128K tokens); instead:
//
//  (1) What the choice implies. plan_split_kv keeps s only if predict(s) < 0.98 predict(1) and
//      predict(s) < predict(s') for every s' < s (s beat by 2% a best that was at most
//      predict(s') if s' was ever the best, and at most predict(s') / 0.98 if it was not).
//      predict(s) = stage1(s) + 2 launches + c * total_q * s + e(s) (c: the partial O of one
//      query row, written and read; e: extra_split_us plus split_cta_us per wave of CTAs, both
//      nondecreasing in s, 0 for s = 1) and predict(1) = stage1(1), where stage1 does not
//      depend on total_q, so with S = stage1 + e
//          total_q < L(s) = min( (0.98 stage1(1) - S(s) - 2 launches) / (c s),
//                                min over 1 < s' < s of (S(s') - S(s)) / (c (s - s')) ),
//      and the pairs of (batch b, q_len, tiles t, s) are at most s * min(L(s), b * q_len (total_q
//      sums b lengths <= q_len), the largest total_q). stage1 sees q_len only through the row
//      groups, so each row-group count is taken at its longest q_len.
//  (2) Tiles: while ceil(t / s) stays the same, stage1(s) does too and every other term of L(s)
//      grows with t, so only t = multiples of s and t = the largest shape's tiles are evaluated.
//  (3) Pruning, with upper bounds only (x <= ceil(x) <= x + 1 - 1/d, and CTAs n per split:
//      stage1(s) >= n (t tau + s f) / U on U units): a batch whose stage1(1) leaves no gain
//      worth the pairs found so far is skipped at once; for each s, lines in t above the terms of
//      L(s) for s' = 1 and for the counts with the fewest waves per split below s leave the
//      interval of t where L(s) could beat the best so far, and only that is evaluated (the
//      lines leave e out: e(s) >= 0 and e(s') - e(s) <= 0 only lower L(s)).
// stage1 is predict_split_kv_us's own arithmetic (stage1_us), and every limit gets a slack
// above the rounding of both, so the bound holds as the planner computes.
class PairBound {
public:
    explicit PairBound(const SplitKvShape& largest)
        : shape_(largest),
          max_tiles_(tiles_of(largest)),
          max_splits_(static_cast<int>(std::min<int64_t>(max_tiles_, kMaxSplits))),
          units_(std::max(1, largest.multiprocessors)),
          tile_us_(tile_us_of(largest)),
          c_(2.0 * largest.num_heads * 512.0 * 4.0 / kBandwidthBytesPerUs) {
        for (int k = 1; k <= kMaxSplits; ++k) {
            inv_[k] = 1.0 / k;
            inv_c_[k] = 1.0 / (c_ * k);
        }
    }

    // The bound on pairs; 0 when no shape under the largest one splits.
    int64_t run() {
        const int max_q_len = std::max(1, shape_.max_q_len);
        if (max_splits_ < 2) return 0;  // caches of one tile do not split
        for (int q = max_q_len; q >= 1; --q) {
            const int groups = row_groups(q);
            if (q < max_q_len && row_groups(q + 1) == groups) continue;  // not its longest
            const int64_t b_top = std::min<int64_t>(std::max(1, shape_.batch_size),
                                                    ctas_limit() / groups);
            for (int64_t b = b_top; b >= 1; --b) {
                const int64_t rows_max = std::min<int64_t>(shape_.total_q, b * q);
                if (rows_max * max_splits_ <= best_) break;  // fewer rows below
                batch(b * groups, rows_max);
            }
        }
        return best_;
    }

private:
    int row_groups(int q_len) const {
        SplitKvShape s = shape_;
        s.max_q_len = q_len;
        return row_groups_of(s);
    }

    // For t >= 2 tiles, s > 1 splits and n CTAs per split on U units,
    //     0.98 stage1(1) - stage1(s) - 2 launches <= gain(n, ceil(n / U), t)
    //         = 0.98 ceil(n / U) one(t) - n many(t) / U - 2 launches,
    // one(t) = (t + max(0, p - 2)) tau + f >= a wave of one split (max(t, p) <= t + max(0, p - 2)),
    // many(t) = t tau + 2 f: stage1(s) >= (n s / U) (t / s tau + f) >= n many(t) / U.
    double one(double t) const {
        return (t + std::max(0, shape_.tile_parallelism - 2)) * tile_us_ + shape_.cta_fixed_us;
    }
    double many(double t) const { return t * tile_us_ + 2.0 * shape_.cta_fixed_us; }
    double gain(int64_t ctas, int64_t waves_one, double t) const {
        return kSplitMustWin * static_cast<double>(waves_one) * one(t) -
               static_cast<double>(ctas) * many(t) / static_cast<double>(units_) -
               2.0 * kExtraLaunchUs;
    }
    // CTAs per split from which no shape splits: with ceil(n / U) <= (n + U - 1) / U, gain is at
    // most a line in n, <= 0 past the limit at t = 2 and at the largest t (gain is linear in t).
    // kNoLimit when the line rises.
    static constexpr int64_t kNoLimit = int64_t{1} << 40;  // more than any launch holds
    int64_t ctas_limit() const {
        const double u = static_cast<double>(units_);
        double limit = 0.0;
        for (const double t : {2.0, static_cast<double>(max_tiles_)}) {
            const double slope = (kSplitMustWin * one(t) - many(t)) / u;
            if (slope >= 0.0) return kNoLimit;
            const double at_zero = kSplitMustWin * (u - 1.0) / u * one(t) - 2.0 * kExtraLaunchUs;
            limit = std::max(limit, at_zero / -slope);
        }
        return static_cast<int64_t>(
            std::min(std::ceil(limit) + 1.0, static_cast<double>(kNoLimit)));
    }

    double stage1(int s, int64_t t) const {  // t < 2^26: max_kv_len is an int32
        return stage1_us(shape_, tile_us_, waves_[s], static_cast<int32_t>(t + s - 1) / s);
    }

    // The most rows below `limit` as the planner rounds: limit plus the slack, floored.
    int64_t rows_below(double limit) const {
        return limit + slack_ < 1.0 ? 0 : static_cast<int64_t>(std::floor(limit + slack_));
    }
    // A limit at or below this cannot give s splits more pairs than the best so far (rows <=
    // limit + slack <= best / s).
    double needed(int s) const {
        return static_cast<double>(best_) * inv_[s] - 2.0 * slack_;
    }

    // Shapes of `ctas` CTAs per split and at most rows_max query rows.
    void batch(int64_t ctas, int64_t rows_max) {
        if (ctas >= kNoLimit) return;
        const int64_t w1 = (ctas + units_ - 1) / units_;
        const double t_max = static_cast<double>(max_tiles_);
        slack_ = 1e-9 * (1.0 + 2.0 * static_cast<double>(w1) * one(t_max) / c_);
        // (3) pairs < gain / c, and gain is linear in t.
        if (rows_below(std::max(gain(ctas, w1, 2.0), gain(ctas, w1, t_max)) / c_) <= best_) return;
        // waves_[s] = ceil(ctas * s / U), from ctas = whole * U + part without dividing.
        const int64_t whole = ctas / units_, part = ctas % units_;
        int64_t full = 0, rest = 0;
        for (int s = 1; s <= max_splits_; ++s) {
            full += whole;
            rest += part;
            if (rest >= units_) {
                rest -= units_;
                ++full;
            }
            waves_[s] = full + (rest > 0 ? 1 : 0);
        }
        int records = 0;  // fewest waves per split so far, in order of s (record_[])
        for (int s = 2; s <= max_splits_; ++s) {
            if (s * rows_max > best_) splits(s, rows_max, records);
            const int last = records > 0 ? record_[records - 1] : 0;
            if (last == 0 || waves_[s] * last < waves_[last] * s) record_[records++] = s;
        }
    }

    // (3) The interval of t where the lines above L(s)'s terms exceed needed(s), then (2).
    void splits(int s, int64_t rows_max, int records) {
        const double tau = tile_us_, f = shape_.cta_fixed_us, ws = static_cast<double>(waves_[s]);
        double lo = s, hi = static_cast<double>(max_tiles_);
        const double need = needed(s);
        // Keeps the t in [lo, hi] where slope * t + at_zero > need (a line is above it at
        // both ends, below it at both, or crosses once).
        const auto cut = [&](double slope, double at_zero) {
            const bool at_lo = slope * lo + at_zero > need, at_hi = slope * hi + at_zero > need;
            if (at_lo && at_hi) return true;
            if (!at_lo && !at_hi) return false;
            const double cross = (need - at_zero) / slope;
            (at_lo ? hi : lo) = cross;
            return lo <= hi;
        };
        // s' = the records, latest first (a count with fewer waves per split than s kills it at
        // once): ceil(t / r) <= (t + r - 1) / r, and >= 2, so max(., p) adds <= max(0, p - 2).
        const double e = std::max(0, shape_.tile_parallelism - 2);
        bool open = true;
        for (int i = records - 1; open && i >= 0; --i) {
            const int r = record_[i];
            const double wr = static_cast<double>(waves_[r]);
            open = cut((wr * inv_[r] - ws * inv_[s]) * tau * inv_c_[s - r],
                       (wr * ((1.0 - inv_[r] + e) * tau + f) - ws * f) * inv_c_[s - r]);
        }
        // s' = 1: max(t, p) <= t + max(0, p - s) for t >= s; ceil(t / s) >= t / s.
        const double w1 = static_cast<double>(waves_[1]);
        const double e1 = std::max(0, shape_.tile_parallelism - s);
        open = open && cut((kSplitMustWin * w1 - ws * inv_[s]) * tau * inv_c_[s],
                           (kSplitMustWin * w1 * (e1 * tau + f) - ws * f - 2.0 * kExtraLaunchUs) *
                               inv_c_[s]);
        if (!open) return;
        // Blocks k of t with ceil(t / s) = k, widened by a tile each way against rounding; a
        // block's last t covers the block.
        const int64_t lo_t = static_cast<int64_t>(std::floor(lo)) - 1;
        const int64_t hi_t = std::min(max_tiles_, static_cast<int64_t>(std::ceil(hi)) + 1);
        const int64_t first = std::max<int64_t>(1, (lo_t + s - 1) / s), last = (hi_t + s - 1) / s;
        for (int64_t k = last; k >= first; --k)
            evaluate(s, std::min(k * s, max_tiles_), rows_max, records);
    }

    // What s > 1 splits add to stage 1 besides the launches and the partial O (S - stage1).
    double split_extra(int s) const {
        return static_cast<double>(waves_[s]) * shape_.split_cta_us + extra_split_us(s);
    }

    // (1) L(s) at t tiles, exactly as the planner computes its terms.
    void evaluate(int s, int64_t t, int64_t rows_max, int records) {
        const double stage1_s = stage1(s, t) + split_extra(s);
        double limit =
            (kSplitMustWin * stage1(1, t) - stage1_s - 2.0 * kExtraLaunchUs) * inv_c_[s];
        const double need = needed(s);
        const auto term = [&](int other) {
            limit = std::min(limit, (stage1(other, t) + split_extra(other) - stage1_s) *
                                        inv_c_[s - other]);
        };
        for (int i = records - 1; i >= 0 && limit > need; --i) term(record_[i]);  // binds most
        for (int other = s - 1; other >= 2 && limit > need; --other) term(other);
        if (limit <= need) return;
        best_ = std::max(best_, s * std::min(rows_max, rows_below(limit)));
    }

    SplitKvShape shape_;
    int64_t max_tiles_;
    int max_splits_;
    int64_t units_;
    double tile_us_, c_;
    double slack_ = 0.0;
    int64_t best_ = 0;
    double inv_[kMaxSplits + 1] = {}, inv_c_[kMaxSplits + 1] = {};  // 1 / k, 1 / (c k)
    int64_t waves_[kMaxSplits + 1] = {};
    int record_[kMaxSplits + 1] = {};
};

// `max` with total_q no larger than its batch_size * max_q_len allows.
SplitKvShape largest_of(const SplitKvShape& max) {
    SplitKvShape top = max;
    top.total_q = static_cast<int>(std::min<int64_t>(
        max.total_q, static_cast<int64_t>(max.batch_size) * std::max(1, max.max_q_len)));
    return top;
}

}  // namespace

size_t split_kv_workspace_bound(const SplitKvShape& max, int forced_splits) {
    const SplitKvShape top = largest_of(max);
    if (forced_splits > 0) return plan_split_kv(top, forced_splits).workspace_bytes;
    const int64_t pairs = PairBound(top).run();
    if (pairs == 0) return 0;  // no shape under it splits
    SplitKvPlan plan;
    lay_out(static_cast<size_t>(pairs), static_cast<size_t>(top.num_heads), &plan);
    return plan.workspace_bytes;
}

size_t split_kv_invariant_workspace_bound(const SplitKvShape& max) {
    return plan_split_kv_invariant(largest_of(max)).workspace_bytes;
}

}  // namespace mla
