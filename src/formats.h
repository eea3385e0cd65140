// Exact host codecs of the SPEC number formats: bf16, e4m3fn, e4m3fnuz, e2m1 and e8m0, plus
// the OCP MX v1.0 scale choice for an e2m1 block. Header-only; shared by the host reference
// and the tests. Every decode is exact (each code's value is representable in a double) and
// every encode rounds once, to nearest with ties to even, on integer bits (it does not depend
// on the caller's floating-point rounding mode).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "mla_decode.h"

namespace mla::fmt {

// ---------------------------------------------------------------------------------------------
// A binary floating-point grid: `mantissa_bits` fraction bits, smallest normal exponent
// `min_normal_exp` (values below it are subnormal with the same quantum), `exponent_bias`.
// ---------------------------------------------------------------------------------------------
struct Grid {
    int mantissa_bits;
    int min_normal_exp;
    int exponent_bias;
};

inline constexpr Grid kBf16Grid{7, -126, 127};
inline constexpr Grid kE4m3fnGrid{3, -6, 7};
inline constexpr Grid kE4m3fnuzGrid{3, -7, 8};
inline constexpr Grid kE2m1Grid{1, 0, 1};

// floor(log2(x)) for a finite x > 0.
inline int floor_log2(double x) {
    int e = 0;
    std::frexp(x, &e);  // x = f * 2^e with f in [0.5, 1)
    return e - 1;
}

// Rounds q >= 0 (below 2^53) to the nearest integer, ties to even, without the rounding mode.
inline double round_half_even(double q) {
    double lower = std::floor(q);
    double frac = q - lower;  // exact
    if (frac > 0.5) return lower + 1.0;
    if (frac < 0.5) return lower;
    return std::fmod(lower, 2.0) == 0.0 ? lower : lower + 1.0;
}

// Exponent and fraction fields (no sign) of a finite magnitude ax >= 0 rounded to nearest
// even on the grid, without an upper limit: a result past the grid's largest finite value
// comes back as larger fields, which the caller saturates or turns into infinity.
// Normal results round the double's bits directly (a carry out of the fraction bumps the
// exponent, as it must); results below the smallest normal are rounded on the subnormal
// quantum, where rounding up to 2^mantissa_bits lands exactly on the smallest normal's fields.
inline uint32_t round_to_fields(double ax, const Grid& g) {
    uint64_t u;
    std::memcpy(&u, &ax, sizeof(u));
    const int exponent = static_cast<int>(u >> 52) - 1023;  // -1023 for zero / subnormal doubles
    if (exponent >= g.min_normal_exp) {
        const int dropped = 52 - g.mantissa_bits;
        const uint64_t lsb = (u >> dropped) & 1u;
        u += (uint64_t{1} << (dropped - 1)) - 1u + lsb;
        const int rounded_exponent = static_cast<int>(u >> 52) - 1023;
        const uint32_t mantissa =
            static_cast<uint32_t>(u >> dropped) & ((uint32_t{1} << g.mantissa_bits) - 1u);
        return (static_cast<uint32_t>(rounded_exponent + g.exponent_bias) << g.mantissa_bits) |
               mantissa;
    }
    const double quanta = std::ldexp(ax, g.mantissa_bits - g.min_normal_exp);  // exact
    return static_cast<uint32_t>(round_half_even(quanta));
}

// Value of exponent/fraction fields (no sign) on a grid without special codes.
inline double grid_value(uint32_t exponent_field, uint32_t mantissa_field, const Grid& g) {
    if (exponent_field == 0) {
        return std::ldexp(static_cast<double>(mantissa_field), g.min_normal_exp - g.mantissa_bits);
    }
    double significand = 1.0 + std::ldexp(static_cast<double>(mantissa_field), -g.mantissa_bits);
    return std::ldexp(significand, static_cast<int>(exponent_field) - g.exponent_bias);
}

// ---------------------------------------------------------------------------------------------
// bf16: the upper 16 bits of an IEEE-754 binary32.
// ---------------------------------------------------------------------------------------------
inline constexpr uint16_t kBf16QuietNan = 0x7FC0;

inline float bf16_to_float(uint16_t bits) {
    uint32_t u = static_cast<uint32_t>(bits) << 16;
    float f;
    std::memcpy(&f, &u, sizeof(f));
    return f;
}

inline double bf16_to_double(uint16_t bits) { return static_cast<double>(bf16_to_float(bits)); }

// float -> bf16, round to nearest even; overflow gives +-inf; NaN stays NaN (sign and the top
// payload bits kept, quiet bit set, so a signalling NaN never truncates to infinity).
inline uint16_t bf16_from_float(float x) {
    uint32_t u;
    std::memcpy(&u, &x, sizeof(u));
    if (std::isnan(x)) return static_cast<uint16_t>((u >> 16) | 0x0040u);
    uint32_t lsb = (u >> 16) & 1u;
    return static_cast<uint16_t>((u + 0x7FFFu + lsb) >> 16);
}

// double -> bf16 rounded once (no double rounding through float); overflow gives +-inf; NaN
// gives a quiet NaN with the sign kept.
inline uint16_t bf16_from_double(double x) {
    const uint16_t sign = std::signbit(x) ? 0x8000 : 0x0000;
    if (std::isnan(x)) return static_cast<uint16_t>(sign | kBf16QuietNan);
    const double ax = std::fabs(x);
    const uint32_t fields = std::isinf(ax) ? 0x7F80u : round_to_fields(ax, kBf16Grid);
    return static_cast<uint16_t>(sign | (fields >= 0x7F80u ? 0x7F80u : fields));  // overflow: inf
}

// ---------------------------------------------------------------------------------------------
// e4m3fn (OCP OFP8 E4M3): bias 7, max 448, NaN = S.1111.111, no infinities, has -0.
// ---------------------------------------------------------------------------------------------
inline constexpr double kE4m3fnMax = 448.0;
inline constexpr uint8_t kE4m3fnNan = 0x7F;

inline double e4m3fn_to_double(uint8_t code) {
    uint32_t exponent = (code >> 3) & 0xFu, mantissa = code & 0x7u;
    if (exponent == 0xF && mantissa == 0x7) return std::numeric_limits<double>::quiet_NaN();
    double magnitude = grid_value(exponent, mantissa, kE4m3fnGrid);
    return (code & 0x80) ? -magnitude : magnitude;
}

// Round to nearest even, saturating: |x| beyond 448 (infinities included) gives +-448; NaN
// gives S.1111.111 with the sign kept; -0 and negative values that round to zero give 0x80.
inline uint8_t e4m3fn_from_double(double x) {
    const uint8_t sign = std::signbit(x) ? 0x80 : 0x00;
    if (std::isnan(x)) return static_cast<uint8_t>(sign | kE4m3fnNan);
    const double ax = std::fabs(x);
    const uint32_t max_fields = 0x7E;  // 448
    uint32_t fields = std::isinf(ax) ? max_fields : round_to_fields(ax, kE4m3fnGrid);
    if (fields > max_fields) fields = max_fields;
    return static_cast<uint8_t>(sign | fields);
}

// ---------------------------------------------------------------------------------------------
// e4m3fnuz (AMD CDNA3 / LLVM Float8E4M3FNUZ): bias 8, max 240, 0x80 the only NaN, no -0, no inf.
// ---------------------------------------------------------------------------------------------
inline constexpr double kE4m3fnuzMax = 240.0;
inline constexpr uint8_t kE4m3fnuzNan = 0x80;

inline double e4m3fnuz_to_double(uint8_t code) {
    if (code == kE4m3fnuzNan) return std::numeric_limits<double>::quiet_NaN();
    double magnitude = grid_value((code >> 3) & 0xFu, code & 0x7u, kE4m3fnuzGrid);
    return (code & 0x80) ? -magnitude : magnitude;
}

// Round to nearest even, saturating to +-240 (infinities included); NaN gives 0x80; any value
// that rounds to zero (of either sign) gives 0x00, since 0x80 is the NaN.
inline uint8_t e4m3fnuz_from_double(double x) {
    if (std::isnan(x)) return kE4m3fnuzNan;
    const double ax = std::fabs(x);
    const uint32_t max_fields = 0x7F;  // 240
    uint32_t fields = std::isinf(ax) ? max_fields : round_to_fields(ax, kE4m3fnuzGrid);
    if (fields > max_fields) fields = max_fields;
    if (fields == 0) return 0x00;
    const uint8_t sign = std::signbit(x) ? 0x80 : 0x00;
    return static_cast<uint8_t>(sign | fields);
}

// ---------------------------------------------------------------------------------------------
// FP8 helpers by mla_dtype (FP8_E4M3FN or FP8_E4M3FNUZ).
// ---------------------------------------------------------------------------------------------
inline double fp8_to_double(mla_dtype dtype, uint8_t code) {
    return dtype == MLA_DTYPE_FP8_E4M3FNUZ ? e4m3fnuz_to_double(code) : e4m3fn_to_double(code);
}

inline uint8_t fp8_from_double(mla_dtype dtype, double x) {
    return dtype == MLA_DTYPE_FP8_E4M3FNUZ ? e4m3fnuz_from_double(x) : e4m3fn_from_double(x);
}

inline double fp8_max(mla_dtype dtype) {
    return dtype == MLA_DTYPE_FP8_E4M3FNUZ ? kE4m3fnuzMax : kE4m3fnMax;
}

inline uint8_t fp8_nan_code(mla_dtype dtype) {
    return dtype == MLA_DTYPE_FP8_E4M3FNUZ ? kE4m3fnuzNan : kE4m3fnNan;
}

// ---------------------------------------------------------------------------------------------
// e2m1 (OCP MX FP4): magnitudes 0, 0.5, 1, 1.5, 2, 3, 4, 6 for codes 0..7; bit 3 = sign.
// Codes are the low 4 bits of the argument / result.
// ---------------------------------------------------------------------------------------------
inline constexpr double kE2m1Max = 6.0;

inline double e2m1_to_double(uint8_t code) {
    double magnitude = grid_value((code >> 1) & 0x3u, code & 0x1u, kE2m1Grid);
    return (code & 0x8) ? -magnitude : magnitude;
}

// Round to nearest even, saturating to +-6 (infinities included); the sign is kept, so -0 and
// small negative values give 0x8 (negative zero). e2m1 has no NaN: NaN gives 0x0 (+0).
inline uint8_t e2m1_from_double(double x) {
    if (std::isnan(x)) return 0x0;
    const double ax = std::fabs(x);
    const uint32_t max_fields = 0x7;  // 6
    uint32_t fields = std::isinf(ax) ? max_fields : round_to_fields(ax, kE2m1Grid);
    if (fields > max_fields) fields = max_fields;
    const uint8_t sign = std::signbit(x) ? 0x8 : 0x0;
    return static_cast<uint8_t>(sign | fields);
}

// The e2m1 pair of a packed MXFP4 byte: element 2k in the low nibble, 2k+1 in the high nibble.
inline double mxfp4_low_to_double(uint8_t byte) { return e2m1_to_double(byte & 0xF); }
inline double mxfp4_high_to_double(uint8_t byte) { return e2m1_to_double(byte >> 4); }
inline uint8_t mxfp4_pack(uint8_t even_code, uint8_t odd_code) {
    return static_cast<uint8_t>((even_code & 0xF) | ((odd_code & 0xF) << 4));
}

// ---------------------------------------------------------------------------------------------
// e8m0 (OCP MX scale): value 2^(code - 127); code 0 is 2^-127 (not zero); code 255 is NaN.
// ---------------------------------------------------------------------------------------------
inline constexpr uint8_t kE8m0Nan = 255;
inline constexpr int kE8m0Bias = 127;

inline double e8m0_to_double(uint8_t code) {
    if (code == kE8m0Nan) return std::numeric_limits<double>::quiet_NaN();
    return std::ldexp(1.0, static_cast<int>(code) - kE8m0Bias);
}

// OCP MX v1.0 scale of one block of e2m1 elements from the block's largest magnitude `amax`:
// shared exponent = floor(log2(amax)) - 2 (2 = the largest e2m1 exponent), clamped to the
// finite e8m0 range [-127, 127], i.e. codes 0..254. Elements are then e2m1(x / scale); values
// of (6, 8) * scale saturate to 6 as the specification allows.
// Special blocks: all zero (amax 0) -> code 0 (2^-127; every element encodes to +-0, so the
// decoded block is exactly zero); amax NaN -> 255 (NaN); amax +inf -> 254.
inline uint8_t mx_e2m1_scale_code(double amax) {
    if (std::isnan(amax)) return kE8m0Nan;
    if (amax == 0.0) return 0;
    if (std::isinf(amax)) return 254;
    int code = floor_log2(amax) - 2 + kE8m0Bias;
    if (code < 0) code = 0;
    if (code > 254) code = 254;
    return static_cast<uint8_t>(code);
}

// One element of an MX block with scale `scale_code`: e2m1(x / 2^(scale_code - 127)).
inline uint8_t mx_e2m1_encode(double x, uint8_t scale_code) {
    return e2m1_from_double(x / e8m0_to_double(scale_code));
}

}  // namespace mla::fmt
