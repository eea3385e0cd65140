// The Q prologue of stage 1, shared by its variants: where a query row lies (its latent dims in
// q, its rope dims in q_pe), loading it as bf16 words (bf16 as stored, fp8 widened exactly), and
// the per-row power-of-two scale that brings a row into f16 range for the f16 score product of
// an fp8 cache.
#pragma once

#include "arch/device.h"
#include "splitkv/params.h"

namespace mla::splitkv {

// Power of two 2^k as a float, k in [-126, 127].
MLA_DEVICE float exp2_int(int k) { return arch::bits_float(static_cast<uint32_t>(k + 127) << 23); }

// Scale exponent that brings a row with max |value| `amax` into [2^14, 2^15): exact in f16.
MLA_DEVICE int f16_row_scale_exponent(float amax) {
    const int biased = static_cast<int>(arch::float_bits(amax) >> 23) & 0xff;
    if (amax == 0.0f || biased == 0xff) return 0;  // zero row, or inf/NaN: leave it alone
    const int e = biased - 127;                     // amax in [2^e, 2^(e+1))
    const int k = 14 - e;
    return k < -120 ? -120 : (k > 120 ? 120 : k);
}

// Four fp8 Q codes (the lowest dim in the low byte) as two bf16 pairs (w0 = dims 0, 1; w1 =
// dims 2, 3), exactly: fp8 -> f16 by the cache decoder (arch/fp8.h), then f16 -> fp32 -> bf16
// by truncation, exact since bf16 holds every e4m3 value; one code path for both flavours (they
// differ in the power of two only), so the prologue stays small.
MLA_DEVICE void widen_q_fp8x4(QFormat format, uint32_t codes, uint32_t& w0, uint32_t& w1) {
    const float up = format == QFormat::kFp8E4M3FN
                         ? arch::kFp8F16Scale<arch::Fp8Flavor::kE4M3FN>
                         : arch::kFp8F16Scale<arch::Fp8Flavor::kE4M3FNUZ>;
    auto bf16 = [&](uint32_t f16) {
        return arch::float_bits(arch::f16_bits_to_float(f16) * up) >> 16;
    };
    const arch::Quad d = arch::decode_fp8x4(codes);  // lo = (c0, c2), hi = (c1, c3)
    w0 = bf16(d.lo & 0xffffu) | (bf16(d.hi & 0xffffu) << 16);
    w1 = bf16(d.lo >> 16) | (bf16(d.hi >> 16) << 16);
}

// fp8 Q codes as load_q_codes leaves them (w[0 .. kWords/2 - 1], 4 codes a word) widened in
// place into bf16 pairs as load_q_bf16_words loads them (w[0 .. kWords - 1]).
template <int kWords>
MLA_DEVICE void widen_q_fp8_words(QFormat format, uint32_t (&w)[kWords]) {
#pragma unroll
    for (int i = kWords / 2 - 1; i >= 0; --i)  // from the top: each word read before it is written
        widen_q_fp8x4(format, w[i], w[2 * i], w[2 * i + 1]);
}

// Loads kWords 32-bit words of bf16 Q as stored (dims 2w, 2w+1 in word w), starting at element
// `elem` of the row at `row`. (fp8 Q: load_q_codes, then widen_q_fp8_words.)
template <int kWords>
MLA_DEVICE void load_q_bf16_words(const void* row, int64_t elem, uint32_t (&w)[kWords]) {
    const uint4* src = reinterpret_cast<const uint4*>(static_cast<const uint16_t*>(row) + elem);
#pragma unroll
    for (int i = 0; i < kWords / 4; ++i) {
        const uint4 v = src[i];
        w[4 * i] = v.x;
        w[4 * i + 1] = v.y;
        w[4 * i + 2] = v.z;
        w[4 * i + 3] = v.w;
    }
}

// The query row of (token, head): dims 0..511 from `nope`, dims 512..575 from `pe` (bytes).
// For a 576-wide Q, pe = nope + 512 elements (kernel_params.cpp): one code path for both forms.
struct QRow {
    const uint8_t* nope;
    const uint8_t* pe;
};

MLA_DEVICE QRow q_row(const Params& p, int64_t token, int64_t head) {
    const int64_t bytes = p.q_format == QFormat::kBf16 ? 2 : 1;
    return QRow{static_cast<const uint8_t*>(p.q) +
                    (token * p.q_stride_token + head * p.q_stride_head) * bytes,
                static_cast<const uint8_t*>(p.q_pe) +
                    (token * p.q_pe_stride_token + head * p.q_pe_stride_head) * bytes};
}

// load_q_bf16_words of dims elem .. elem + 2 kWords - 1 of a query row, from the part that
// holds them. `elem` is a multiple of the run (2 kWords dims), which divides 512, so a run never
// straddles the latent / rope boundary.
template <int kWords>
MLA_DEVICE void load_q_bf16_words(const QRow& row, int elem, uint32_t (&w)[kWords]) {
    static_assert(kKvLoraRank % (2 * kWords) == 0, "a run of Q dims lies in one part");
    const bool rope = elem >= kKvLoraRank;
    load_q_bf16_words(rope ? row.pe : row.nope, rope ? elem - kKvLoraRank : elem, w);
}

// Dims elem .. elem + 2 kWords - 1 of an fp8 query row as its codes, as stored, in w[0 ..
// kWords / 2 - 1] (4 codes a word, the lowest dim in the low byte; widen_q_fp8_words makes them
// the bf16 pairs of load_q_bf16_words in place). elem is a multiple of the run (a run never
// straddles the latent / rope boundary). Loading the codes of every run first and widening
// after lets a thread's Q loads all be in flight at once.
template <int kWords>
MLA_DEVICE void load_q_codes(const QRow& row, int elem, uint32_t (&w)[kWords]) {
    static_assert(kKvLoraRank % (2 * kWords) == 0, "a run of Q dims lies in one part");
    const bool rope = elem >= kKvLoraRank;
    const uint32_t* src = reinterpret_cast<const uint32_t*>(
        rope ? row.pe + (elem - kKvLoraRank) : row.nope + elem);
#pragma unroll
    for (int i = 0; i < kWords / 2; ++i) w[i] = src[i];
}

}  // namespace mla::splitkv
