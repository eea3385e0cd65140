// fp8 e4m3 -> f16 decode with integer bit operations only (no conversion instructions: their
// throughput is low on Hopper, and MI300's native format differs from MI355's).
//
// An e4m3 code s.eeee.mmm placed as f16 bits s.0eeee.mmm0000000 is the same number times
// 2^(bias_e4m3 - 15): 2^-8 for e4m3fn (bias 7) and 2^-7 for e4m3fnuz (bias 8), for normal and
// subnormal codes alike (f16 has the wider range, so every code is exact). Kernels fold that
// power of two into the tensor's dequant scale (kFp8F16Scale). Codes that mean NaN (e4m3fn
// S.1111.111, e4m3fnuz 0x80) are not preserved: they decode to +-480 (fn) / -0 (fnuz) scaled.
#pragma once

#include <cstdint>

#include "arch/types.h"  // Fp8Flavor

namespace mla::arch {

// Multiply a decoded f16 by this to get the e4m3 value.
template <Fp8Flavor F>
inline constexpr float kFp8F16Scale = F == Fp8Flavor::kE4M3FN ? 256.0f : 128.0f;

// Four e4m3 codes (bytes b0..b3 of w) -> two f16x2 pairs: lo = (b0, b2), hi = (b1, b3)
// (low half first). The (0,2)/(1,3) pairing keeps every shift uniform across both halves.
MLA_DEVICE Quad decode_fp8x4(uint32_t w) {
    Quad q;
    q.lo = ((w & 0x007f007fu) << 7) | ((w << 8) & 0x80008000u);
    q.hi = ((w & 0x7f007f00u) >> 1) | (w & 0x80008000u);
    return q;
}

// Byte-permute two words: result byte i = byte selector nibble i of {a.b0..b3, b.b0..b3}.
MLA_DEVICE uint32_t byte_perm(uint32_t a, uint32_t b, uint32_t selector) {
    return __byte_perm(a, b, selector);
}

}  // namespace mla::arch
