// The wgmma variant's decoder warpgroups (stage1/wgmma.h; staged MXFP4 at 16 and 32 rows): each
// MXFP4 tile of the raw ring into e4m3fn codes and per-token factors for the consumers.
#pragma once

#include "splitkv/q_prologue.h"  // exp2_int
#include "splitkv/stage1/wgmma/config.h"

// The roles' code exists only in sm_90a device passes (arch/nvidia/sm90.h).
#if defined(MLA_ARCH_SM90)
namespace mla::splitkv {

// ---- decoder warpgroups (Cfg::kStagedDecode): each MXFP4 tile of the raw ring into e4m3fn codes
// and per-token factors (WgmmaMxfp4StagedDecode). R = kDecoderThreads / 64 threads take a tile
// row (16 rows: two warpgroups, R = 4; 32 rows: one, R = 2); thread sub (0 .. R - 1) of a row
// takes its 16-byte pieces (32 elements, one scale block) sub, sub + R, ... (R = 4: of the 16
// latent ones, and the first 4 warps one rope piece each; R = 2: 9 of the 18), and the row's
// largest codes are log2(R) shuffles away (the rope's: 1). It loads all its pieces and codes
// first (its warp then releases the raw stage; 9 pieces are 36 registers), then writes each
// piece's 32 codes at bytes 32 piece of the row, thread sub 0 the row's factors (R = 4: the
// rope's from its first rope thread). A piece's 8 codes of each magnitude come from integer
// arithmetic on its scale code (mxfp4_e4m3_codes; ncu of 0.7.4: the decoders set the pace, and
// the table's f32 conversions were ~11 instructions of a piece's ~65). R = 4: a row's threads
// are neighbouring lanes (row dt / 4, sub dt % 4), so a 16-byte phase of 8 lanes reads 2 rows'
// 64 contiguous bytes (pitch 336, 80 mod 128: 16 bytes of bank overlap) and writes 2 rows' 128
// bytes (pitch 592, 80 mod 128: conflict-free); in the rope pass subs 0 / 1 and 2 / 3 take rows
// 32 apart (0 mod 128 in both rings): its reads and writes are 2-way conflicted. R = 2: they are
// 8 lanes apart (lane 16 h + 8 sub + i of a warp: its row 8 h + i of 16), so a phase reads and
// writes 16 bytes of 8 consecutive rows, 80 mod 128 apart: conflict-free. Each thread arrives on
// the stage's front barrier after its pieces of dims 0..255 (pieces 0..7: its first 8 / R
// passes) and on its full barrier once all its stores are done.
namespace wgmma_detail {
// e4m3fn codes of the e2m1 magnitudes 0, 0.5, 1, 1.5 (lo, bytes 0..3) and 2, 3, 4, 6 (hi) times
// 2^j: exact for j = -8 .. 6, rounded to nearest below (j is clamped to [-30, 7]: a zero block's
// code may lie above its token's largest, and only its entry 0 is read).
MLA_DEVICE void mxfp4_e4m3_table(int j, uint32_t& lo, uint32_t& hi) {
    namespace hw = arch::sm90;
    const float x = exp2_int(j < -30 ? -30 : (j > 7 ? 7 : j));
    lo = hw::f32x2_to_e4m3x2(0.0f, 0.5f * x) | (hw::f32x2_to_e4m3x2(x, 1.5f * x) << 16);
    hi = hw::f32x2_to_e4m3x2(2.0f * x, 3.0f * x) | (hw::f32x2_to_e4m3x2(4.0f * x, 6.0f * x) << 16);
}
// The same codes as mxfp4_e4m3_table: for j >= -5 (every nonzero entry a normal e4m3fn code)
// by integer arithmetic, byte k of a word being code(magnitude) = 8 (j + e) + m for the
// magnitude's exponent e and mantissa m (0.5: 8 j + 48, 1: + 56, 1.5: + 60, 2: + 64, 3: + 68,
// 4: + 72, 6: + 76; entry 0 stays 0); below that, subnormal codes, by the table. Each byte stays
// in 0 .. 255 for j = -5 .. 6 (8 j + the constant's byte), so no byte carries into or borrows
// from the next (the 32-bit products themselves wrap for j < 0); j > 6 occurs only for a zero
// block (its codes lie above the token's largest), which reads entry 0 alone, and for code 255
// (NaN; the decoder writes over those codes); the low byte of lo is 0 whatever j is.
MLA_DEVICE void mxfp4_e4m3_codes(int j, uint32_t& lo, uint32_t& hi) {
    if (j < -5) return mxfp4_e4m3_table(j, lo, hi);
    const uint32_t u = static_cast<uint32_t>(j);
    lo = u * 0x08080800u + 0x3C383000u;
    hi = u * 0x08080808u + 0x4C484440u;
}
// The 8 e2m1 elements of a word (element i in nibble i, bit 3 its sign) as 8 e4m3fn codes
// (bytes 0..3 of x, then of y): the magnitude by a byte-permute lookup, the sign to the code's
// top bit (odd elements' signs are the top bits of w's bytes, even ones' those of w << 4).
MLA_DEVICE uint2 e2m1x8_to_e4m3(uint32_t w, uint32_t lo, uint32_t hi) {
    const uint32_t m = w & 0x77777777u;  // selectors without PRMT's sign-replicate bit
    const uint32_t ws = w << 4;
    uint2 r;
    r.x = arch::byte_perm(lo, hi, m) | (arch::byte_perm(ws, w, 0x5140u) & 0x80808080u);
    r.y = arch::byte_perm(lo, hi, m >> 16) | (arch::byte_perm(ws, w, 0x7362u) & 0x80808080u);
    return r;
}
}  // namespace wgmma_detail

template <class Cfg>
MLA_DEVICE void wgmma_decoder(const WgmmaRows& rows, const WgmmaShared<Cfg>& sh, int dt) {
    namespace hw = arch::sm90;
    using Decode = typename Cfg::Decode;
    static_assert(Decode::kTokenScales, "the staged tile: e4m3fn codes and token factors");
    constexpr int kPieces = kMxfp4RowBytes / 16;
    constexpr int kLatentPieces = kKvLoraRank / kMxfp4BlockSize;
    constexpr int kRowThreads = Cfg::kDecoderThreads / Cfg::kTileTokens;  // 4 or 2
    static_assert(kRowThreads * Cfg::kTileTokens == Cfg::kDecoderThreads &&
                      (kRowThreads == 4 || kRowThreads == 2),
                  "4 or 2 threads a row");
    // Lanes between a row's threads: 1 (4 a row), 8 (2 a row: 8 lanes, 8 rows).
    constexpr int kSubStride = kRowThreads == 4 ? 1 : 8;
    // 4 a row: the 16 latent pieces take 4 passes, and the 2 rope pieces of a row go to the
    // first 4 warps (rows 0 .. 31) as a fifth pass: subs 0 / 1 take those of their row, subs
    // 2 / 3 those of the row 32 after it. The other 4 warps skip it (as a pass of every warp,
    // it ran half its lanes). 2 a row: 9 passes of both parts.
    constexpr bool kRopeApart = kRowThreads == 4;
    constexpr int kRopePieces = kPieces - kLatentPieces;
    static_assert(!kRopeApart || (kLatentPieces % kRowThreads == 0 &&
                                  kRopePieces * Cfg::kTileTokens == Cfg::kDecoderThreads / 2),
                  "the rope pieces: one a thread of the first half");
    constexpr int kPerThread = kRopeApart ? kLatentPieces / kRowThreads + 1
                                          : (kPieces + kRowThreads - 1) / kRowThreads;
    constexpr int kFrontPasses = Cfg::kFrontChunks * 2 / kRowThreads;  // two pieces a chunk
    static_assert(kFrontPasses * kRowThreads == Cfg::kFrontChunks * 2 &&
                      kFrontPasses < kPerThread,
                  "the front chunks' pieces end with a pass");
    static_assert(Cfg::kRowBytes == kHeadDimQk &&
                      Cfg::kRowPitch >= Decode::kTokenScaleOffset + 16,
                  "an e4m3fn row and its factors in the pad");
    const int sub = dt / kSubStride % kRowThreads;
    const int row = dt / (kSubStride * kRowThreads) * kSubStride + dt % kSubStride;
    // kRopeApart: this thread's rope piece (row rope_row), or none.
    static_assert(!kRopeApart || kRopePieces == 2, "2 rope pieces: subs 0 / 1 and 2 / 3");
    const bool has_rope = !kRopeApart || dt < kRopePieces * Cfg::kTileTokens;
    const int rope_row = kRopeApart ? row + (sub >> 1) * (Cfg::kTileTokens / 2) : row;
    // Pass j's piece and row.
    auto piece_of = [&](int j) {
        if (kRopeApart && j == kPerThread - 1) return kLatentPieces + (sub & 1);
        return sub + kRowThreads * j;
    };
    auto row_of = [&](int j) { return kRopeApart && j == kPerThread - 1 ? rope_row : row; };
    for (int t = 0; t < rows.n_tiles; ++t) {
        const int rs = t % Cfg::kRawStages;
        hw::mbarrier_wait(&sh.raw_full[rs], (t / Cfg::kRawStages) & 1);
        const uint8_t* src = sh.raw + rs * Cfg::kRawStageBytes;
        uint4 d[kPerThread];
        int code[kPerThread];
        int c_lat = -1, c_rope = -1;  // the largest codes of nonzero, non-NaN blocks
#pragma unroll
        for (int j = 0; j < kPerThread; ++j) {
            const int piece = piece_of(j);
            d[j] = make_uint4(0u, 0u, 0u, 0u);
            code[j] = 0;
            if (piece >= kPieces || (piece >= kLatentPieces && !has_rope)) continue;
            const uint8_t* r = src + row_of(j) * Cfg::kRawRowPitch;
            d[j] = *reinterpret_cast<const uint4*>(r + 16 * piece);
            code[j] = r[WgmmaMxfp4Decode::kScaleOffset + piece];
            const bool nonzero = ((d[j].x | d[j].y | d[j].z | d[j].w) & 0x77777777u) != 0u;
            if (nonzero && code[j] != 255) {
                if (piece < kLatentPieces) c_lat = max(c_lat, code[j]);
                else c_rope = max(c_rope, code[j]);
            }
        }
        __syncwarp();
        if (dt % 32 == 0) hw::mbarrier_arrive(&sh.raw_empty[rs]);
#pragma unroll
        for (int mask = kSubStride; mask < kSubStride * kRowThreads; mask <<= 1) {
            c_lat = max(c_lat, __shfl_xor_sync(0xffffffffu, c_lat, mask));
            if (!kRopeApart) c_rope = max(c_rope, __shfl_xor_sync(0xffffffffu, c_rope, mask));
        }
        if (kRopeApart) {
#pragma unroll
            for (int mask = 1; mask < kRopePieces; mask <<= 1)
                c_rope = max(c_rope, __shfl_xor_sync(0xffffffffu, c_rope, mask));
        }
        c_lat = c_lat < 0 ? 127 : max(c_lat, Decode::kLowestCode);
        c_rope = c_rope < 0 ? 127 : max(c_rope, Decode::kLowestCode);

        const int stage = t % Cfg::kStages;
        const int use = t / Cfg::kStages;
        if (use > 0) hw::mbarrier_wait(&sh.empty[stage], (use - 1) & 1);
        uint8_t* const dst = sh.stages + stage * Cfg::kStageBytes;
#pragma unroll
        for (int j = 0; j < kPerThread; ++j) {
            if (j == kFrontPasses) hw::mbarrier_arrive(&sh.front[stage]);
            const int piece = piece_of(j);
            if (piece >= kPieces || (piece >= kLatentPieces && !has_rope)) continue;
            uint32_t lo, hi;
            wgmma_detail::mxfp4_e4m3_codes(
                code[j] - (piece < kLatentPieces ? c_lat : c_rope) + 6, lo, hi);
            const uint2 e0 = wgmma_detail::e2m1x8_to_e4m3(d[j].x, lo, hi);
            const uint2 e1 = wgmma_detail::e2m1x8_to_e4m3(d[j].y, lo, hi);
            const uint2 e2 = wgmma_detail::e2m1x8_to_e4m3(d[j].z, lo, hi);
            const uint2 e3 = wgmma_detail::e2m1x8_to_e4m3(d[j].w, lo, hi);
            uint4* o = reinterpret_cast<uint4*>(dst + row_of(j) * Cfg::kRowPitch + 32 * piece);
            o[0] = make_uint4(e0.x, e0.y, e1.x, e1.y);
            o[1] = make_uint4(e2.x, e2.y, e3.x, e3.y);
            // e8m0 NaN: every element NaN, written over the codes above (those came from an
            // out-of-range j, harmlessly: integers); as a branch around the decode, with its
            // merge of two results, it cost ~10 instructions a piece (ncu, twenty-first session).
            if (code[j] == 255) {
                o[0] = o[1] = make_uint4(0x7f7f7f7fu, 0x7f7f7f7fu, 0x7f7f7f7fu, 0x7f7f7f7fu);
            }
        }
        // The row's factors (x = 2^e_lat, y = 2^e_rope, z = e_lat, w = 0) from the threads
        // that know them: the row's sub 0, and with kRopeApart its first rope thread for y.
        float* const f = reinterpret_cast<float*>(dst + Decode::kTokenScaleOffset);
        const int e_lat = c_lat - 133, e_rope = c_rope - 133;
        if (!kRopeApart) {
            if (sub == 0)
                *reinterpret_cast<float4*>(f + row * Cfg::kRowPitch / 4) = make_float4(
                    exp2_int(e_lat), exp2_int(e_rope), static_cast<float>(e_lat), 0.0f);
        } else {
            if (sub == 0) {
                f[row * Cfg::kRowPitch / 4] = exp2_int(e_lat);
                *reinterpret_cast<float2*>(f + row * Cfg::kRowPitch / 4 + 2) =
                    make_float2(static_cast<float>(e_lat), 0.0f);
            }
            if (has_rope && (sub & 1) == 0)
                f[rope_row * Cfg::kRowPitch / 4 + 1] = exp2_int(e_rope);
        }
        hw::mbarrier_arrive(&sh.full[stage]);
    }
}

}  // namespace mla::splitkv
#endif  // MLA_ARCH_SM90
