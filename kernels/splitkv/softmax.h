// What the online softmax of every stage-1 variant (and the reduce) shares. Scores are kept in
// the log2 domain (raw dot * sm_scale * log2(e)), so exponentials are exp2 and a split's LSE is
// m + log2(l); the natural-log LSE of the ABI is that times ln 2.
#pragma once

#include "arch/device.h"

namespace mla::splitkv {

inline constexpr float kLog2e = 1.4426950408889634f;
inline constexpr float kLn2 = 0.6931471805599453f;
inline constexpr float kNegInf = -__builtin_huge_valf();

// Lazy rescale (the wgmma stage 1): the running max moves only when a tile's max passes it by
// more than this (log2 domain), so P = exp2(s - m) stays below 2^8 and O is rarely rescaled.
inline constexpr float kLazyRescaleLog2 = 8.0f;

// What P = exp2(s - offset) subtracts under running max m: m itself, or 0 while every score seen
// is masked (m = -inf), so that masked scores give exp2(-inf) = 0, never exp2(NaN).
MLA_DEVICE float softmax_offset(float m) { return m == kNegInf ? 0.0f : m; }

// Factor that rescales a sum (or O) accumulated under max m_old when the max becomes m_new.
MLA_DEVICE float softmax_rescale(float m_old, float m_new) {
    return arch::fast_exp2(m_old - softmax_offset(m_new));
}

// Whether a row sum (or a split's weight) counts: > 0, or NaN. A NaN value or score that a row
// saw makes its P, hence its sum, NaN; that must reach O and LSE as NaN (mla_decode.h), not
// read as "no token seen" (a test `l > 0` is false for NaN: the row then got LSE -inf, and the
// reduce dropped the whole split, its result finite; GPU test ScaleCode255MakesItsRowsNaN).
MLA_DEVICE bool softmax_counts(float l) { return !(l <= 0.0f); }

// The larger of a and b, NaN if either is NaN (fmaxf returns the other one).
MLA_DEVICE float max_keep_nan(float a, float b) { return (a > b || a != a) ? a : b; }

// LSE (log2 domain) of max m and sum l; -inf when no token was seen (l == 0), NaN for a NaN l.
MLA_DEVICE float softmax_lse2(float m, float l) {
    return softmax_counts(l) ? m + __log2f(l) : kNegInf;
}

}  // namespace mla::splitkv
