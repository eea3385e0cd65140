// MXFP4 (OCP MX v1.0: e2m1 elements + one e8m0 scale per 32) -> bf16 decode, bit-exact, with
// integer bit operations only (no conversion instructions).
//
// Compiles as device code under nvcc and hip-clang and as plain host C++ (no GPU runtime header
// is included here), so the exact code the kernels run is also tested exhaustively on the CPU
// (tests/test_formats.cpp).
//
// Value: element * 2^(c - 127) for scale code c, rounded to bf16, which is exact for every code
// c <= 252 (an e2m1 magnitude has at most two significant bits and every product lies on the bf16
// grid, subnormal ones for c = 0 and c = 1 included: 0.5 * 2^-127 = 2^-128 is bf16 0x0020), and for
// c = 253 / 254 too except where |value| >= 2^128, which gives +-inf. c = 255 (NaN) gives a quiet
// NaN for every element, zeros included. The element's sign is kept (-0 for code 0x8).
//
// Method: a per-scale table E[x] = bf16 bits of (e2m1 magnitude x) * 2^(c-127), x = 0..7, kept
// as two 8-byte tables (low bytes, high bytes) in four words. Every element is then two byte-
// permute lookups indexed by its 3 magnitude bits; its sign bit goes into the high byte; the
// 16-bit halves are interleaved into bf16x2 words. For 2 <= c <= 252 the table is an integer
// add of (c - 127) << 7 to the bf16 bits of the 8 magnitudes (E[0] = 0 stays zero); other codes
// build it per entry (subnormals, infinities, NaN) behind a branch that is uniform per scale
// block.
// The table depends on the scale code only: build it once per 32-element block
// (mxfp4_bf16_table) and decode the block's 4 words with it. The scale_code overload rebuilds it
// on every call, branch included (nvcc 13 does not merge the rebuilds of 4 calls with one scale).
//
// Instruction counts, fast path (PTX of nvcc 13.0 -arch=sm_90a and AMDGPU asm of clang for
// gfx90a inspected; no SASS disassembler was at hand, the SASS figure assumes ptxas fuses each
// PTX and+or pair into one LOP3 and takes the constant selectors as immediates):
//   decode, per 8 elements (one packed word), NVIDIA: 15 (17 PTX ALU instructions)
//     1 LOP3  m = w & 0x77777777     (magnitude selectors; PRMT reads the low 4 nibbles only)
//     1 SHF   m >> 16                (selectors of elements 4..7)
//     4 PRMT  lo / hi table lookups of elements 0..3 and 4..7
//     1 SHF   w << 4                 (even elements' sign bits to the byte MSBs)
//     2 PRMT  gather the 8 sign bits to the MSBs of the two high-byte words
//     2 LOP3  hi |= signs & 0x80808080
//     4 PRMT  interleave low / high bytes into 4 bf16x2 words
//   decode, AMD (v_perm_b32 takes byte selectors): 18 VALU: v_and + v_lshrrev + v_and (even /
//     odd nibbles to byte selectors), 4 v_perm lookups, v_lshlrev + 2 v_and_or (signs),
//     8 v_perm interleaves.
//   table, per scale code: 4 integer multiply-adds + 4 PRMT / v_perm, plus the range test and
//     branch; about 2-3 per 8 elements when built once per 32-element block.
#pragma once

#include <cstdint>

#include "arch/host_device.h"

namespace mla::arch {

// bf16 bits of e2m1 magnitude x (x = 0..7) times 2^(c - 127), as two byte tables:
// lo0 / hi0 hold the low / high bytes of E[0..3] (byte x), lo1 / hi1 those of E[4..7].
// High bytes never have their top (sign) bit set.
struct Mxfp4Bf16Table {
    uint32_t lo0, lo1, hi0, hi1;
};

namespace mxfp4_detail {

// Byte permutes of the 8 bytes {a.b0..a.b3, b.b0..b.b3} (a = bytes 0..3). Two selector
// encodings, one per hardware instruction; the decoder is written once for each and the host
// emulations let the CPU test run both.
//   kNibble (NVIDIA PRMT / __byte_perm): result byte i = byte ((sel >> 4i) & 7); bits 16..31 of
//     sel are ignored. Callers never set bit 3 of a selector nibble (PRMT's sign-replicate mode).
//   kByte (AMD v_perm_b32): result byte i = byte ((sel >> 8i) & 0xff); callers use values 0..7
//     only.
enum class PermKind { kNibble, kByte };

#if defined(__HIP_DEVICE_COMPILE__)
inline constexpr PermKind kNativePerm = PermKind::kByte;
#else
inline constexpr PermKind kNativePerm = PermKind::kNibble;  // NVIDIA device code, and the host
#endif

template <PermKind K>
MLA_HOST_DEVICE uint32_t perm(uint32_t a, uint32_t b, uint32_t sel) {
    if constexpr (K == PermKind::kNibble) {
#if defined(__CUDA_ARCH__)
        // Plain PRMT: __byte_perm would AND every variable selector with 0x7777 again.
        uint32_t r;
        asm("prmt.b32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(sel));
        return r;
#else
        const uint64_t bytes = (static_cast<uint64_t>(b) << 32) | a;
        uint32_t r = 0;
        for (int i = 0; i < 4; ++i) {
            const uint32_t s = (sel >> (4 * i)) & 7u;
            r |= static_cast<uint32_t>((bytes >> (8 * s)) & 0xffu) << (8 * i);
        }
        return r;
#endif
    } else {
#if defined(__HIP_DEVICE_COMPILE__)
        return __builtin_amdgcn_perm(b, a, sel);  // v_perm_b32: src1 = bytes 0..3
#else
        const uint64_t bytes = (static_cast<uint64_t>(b) << 32) | a;
        uint32_t r = 0;
        for (int i = 0; i < 4; ++i) {
            const uint32_t s = (sel >> (8 * i)) & 7u;  // values 0..7 only (see above)
            r |= static_cast<uint32_t>((bytes >> (8 * s)) & 0xffu) << (8 * i);
        }
        return r;
#endif
    }
}

// Constant selector picking bytes i0..i3 (each 0..7) in the encoding of K.
template <PermKind K>
MLA_HOST_DEVICE constexpr uint32_t sel4(uint32_t i0, uint32_t i1, uint32_t i2, uint32_t i3) {
    return K == PermKind::kNibble ? (i0 | (i1 << 4) | (i2 << 8) | (i3 << 12))
                                  : (i0 | (i1 << 8) | (i2 << 16) | (i3 << 24));
}

// Splits four bf16 pairs (E[0],E[1]) .. (E[6],E[7]) into the low-byte / high-byte tables.
template <PermKind K>
MLA_HOST_DEVICE Mxfp4Bf16Table split_pairs(uint32_t p01, uint32_t p23, uint32_t p45, uint32_t p67) {
    Mxfp4Bf16Table t;
    t.lo0 = perm<K>(p01, p23, sel4<K>(0, 2, 4, 6));
    t.hi0 = perm<K>(p01, p23, sel4<K>(1, 3, 5, 7));
    t.lo1 = perm<K>(p45, p67, sel4<K>(0, 2, 4, 6));
    t.hi1 = perm<K>(p45, p67, sel4<K>(1, 3, 5, 7));
    return t;
}

// E[x] for any code, entry by entry: the slow path (c < 2 or c > 252; used for every code by the
// test as the reference of the fast table).
MLA_HOST_DEVICE uint32_t bf16_entry(uint32_t x, uint32_t c) {
    if (c >= 255u) return 0x7fc0u;  // e8m0 NaN: every element NaN, zeros included
    if (x == 0u) return 0u;
    // bf16 biased exponent and fraction of the magnitude: 0.5 (x = 1) = 2^-1; x >= 2 is the
    // normal e2m1 code (e, m) = (x >> 1, x & 1), value 1.m * 2^(e - 1).
    const int exponent =
        (x == 1u ? 126 : 126 + static_cast<int>(x >> 1)) + static_cast<int>(c) - 127;
    const uint32_t fraction = x == 1u ? 0u : (x & 1u) << 6;
    if (exponent >= 255) return 0x7f80u;                                       // |v| >= 2^128
    if (exponent >= 1) return (static_cast<uint32_t>(exponent) << 7) | fraction;  // normal
    return (0x80u | fraction) >> (1 - exponent);  // subnormal (exponent 0 or -1): exact shift
}

template <PermKind K>
MLA_HOST_DEVICE Mxfp4Bf16Table table_generic(uint32_t c) {
    uint32_t p[4];
    for (uint32_t i = 0; i < 4; ++i) p[i] = bf16_entry(2 * i, c) | (bf16_entry(2 * i + 1, c) << 16);
    return split_pairs<K>(p[0], p[1], p[2], p[3]);
}

// 2 <= c <= 252: E[x] = bf16(magnitude x) + (c - 127) << 7 for x >= 1, i.e. c << 7 plus
// -0x80, 0, 0x40, 0x80, 0xc0, 0x100, 0x140 for x = 1..7 (every result normal and finite, so the
// add never leaves its 16-bit half); E[0] = 0.
template <PermKind K>
MLA_HOST_DEVICE Mxfp4Bf16Table table_fast(uint32_t c) {
    const uint32_t p01 = c * 0x00800000u - 0x00800000u;  // (0, E[1])
    const uint32_t p23 = c * 0x00800080u + 0x00400000u;  // (E[2], E[3])
    const uint32_t p45 = c * 0x00800080u + 0x00c00080u;  // (E[4], E[5])
    const uint32_t p67 = c * 0x00800080u + 0x01400100u;  // (E[6], E[7])
    return split_pairs<K>(p01, p23, p45, p67);
}

template <PermKind K>
MLA_HOST_DEVICE Mxfp4Bf16Table table(uint32_t c) {
    if (c - 2u <= 250u) return table_fast<K>(c);
    return table_generic<K>(c);
}

template <PermKind K>
MLA_HOST_DEVICE void decode(uint32_t w, const Mxfp4Bf16Table& t, uint32_t (&out)[4]) {
    constexpr uint32_t kSign = 0x80808080u;
    if constexpr (K == PermKind::kNibble) {
        // Nibble k of m is element k's magnitude; PRMT reads selector nibbles 0..3.
        const uint32_t m = w & 0x77777777u;
        const uint32_t m_hi = m >> 16;
        const uint32_t l0 = perm<K>(t.lo0, t.lo1, m);     // low bytes of elements 0..3
        const uint32_t l1 = perm<K>(t.lo0, t.lo1, m_hi);  // 4..7
        uint32_t h0 = perm<K>(t.hi0, t.hi1, m);
        uint32_t h1 = perm<K>(t.hi0, t.hi1, m_hi);
        // Sign of element 2i is bit 3 of byte i of w, i.e. the MSB of byte i of w << 4; that of
        // element 2i+1 is the MSB of byte i of w.
        const uint32_t ws = w << 4;
        h0 |= perm<K>(ws, w, sel4<K>(0, 4, 1, 5)) & kSign;
        h1 |= perm<K>(ws, w, sel4<K>(2, 6, 3, 7)) & kSign;
        out[0] = perm<K>(l0, h0, sel4<K>(0, 4, 1, 5));
        out[1] = perm<K>(l0, h0, sel4<K>(2, 6, 3, 7));
        out[2] = perm<K>(l1, h1, sel4<K>(0, 4, 1, 5));
        out[3] = perm<K>(l1, h1, sel4<K>(2, 6, 3, 7));
    } else {
        // Byte selectors: even elements (low nibbles) and odd elements (high nibbles).
        const uint32_t even = w & 0x07070707u;         // elements 0, 2, 4, 6
        const uint32_t odd = (w >> 4) & 0x07070707u;   // elements 1, 3, 5, 7
        const uint32_t le = perm<K>(t.lo0, t.lo1, even);
        const uint32_t lo = perm<K>(t.lo0, t.lo1, odd);
        const uint32_t he = perm<K>(t.hi0, t.hi1, even) | ((w << 4) & kSign);
        const uint32_t ho = perm<K>(t.hi0, t.hi1, odd) | (w & kSign);
        const uint32_t e02 = perm<K>(le, he, sel4<K>(0, 4, 1, 5));  // bf16x2 (e0, e2)
        const uint32_t e46 = perm<K>(le, he, sel4<K>(2, 6, 3, 7));  // (e4, e6)
        const uint32_t e13 = perm<K>(lo, ho, sel4<K>(0, 4, 1, 5));  // (e1, e3)
        const uint32_t e57 = perm<K>(lo, ho, sel4<K>(2, 6, 3, 7));  // (e5, e7)
        out[0] = perm<K>(e02, e13, sel4<K>(0, 1, 4, 5));
        out[1] = perm<K>(e02, e13, sel4<K>(2, 3, 6, 7));
        out[2] = perm<K>(e46, e57, sel4<K>(0, 1, 4, 5));
        out[3] = perm<K>(e46, e57, sel4<K>(2, 3, 6, 7));
    }
}

}  // namespace mxfp4_detail

// The table of one e8m0 scale code (0..255). Build it once per 32-element block.
MLA_HOST_DEVICE Mxfp4Bf16Table mxfp4_bf16_table(uint32_t scale_code) {
    return mxfp4_detail::table<mxfp4_detail::kNativePerm>(scale_code);
}

// The table of a scale code with mxfp4_code_fast(code) (2 <= code <= 252: every product normal
// and finite), without the branch to the general case: for callers that check a group of codes
// once and keep the decodes of the group in one straight-line block.
MLA_HOST_DEVICE bool mxfp4_code_fast(uint32_t scale_code) { return scale_code - 2u <= 250u; }
MLA_HOST_DEVICE Mxfp4Bf16Table mxfp4_bf16_table_fast(uint32_t scale_code) {
    return mxfp4_detail::table_fast<mxfp4_detail::kNativePerm>(scale_code);
}

// 8 e2m1 values (one little-endian word of 4 packed bytes: element k in nibble k, i.e. byte k/2,
// low nibble for even k) of a block with table `t` -> 4 bf16x2 words in natural order:
// out[j] = bf16(element 2j) | bf16(element 2j+1) << 16.
MLA_HOST_DEVICE void decode_mxfp4x8_bf16(uint32_t packed, const Mxfp4Bf16Table& t,
                                         uint32_t (&out)[4]) {
    mxfp4_detail::decode<mxfp4_detail::kNativePerm>(packed, t, out);
}

// The same with the block's e8m0 scale code (0..255) instead of its table.
MLA_HOST_DEVICE void decode_mxfp4x8_bf16(uint32_t packed, uint32_t scale_code,
                                         uint32_t (&out)[4]) {
    decode_mxfp4x8_bf16(packed, mxfp4_bf16_table(scale_code), out);
}

}  // namespace mla::arch
