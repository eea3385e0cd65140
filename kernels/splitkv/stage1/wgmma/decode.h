// The wgmma variant's decoders (stage1/wgmma.h): how a tile of each KV format becomes wgmma's A
// fragments (K for S^T, V^T for O^T) and how Q^T and P^T are laid out for it. WgmmaDecodeOf picks
// a format's decoder (fp8 by flavour, in swizzled stages or not; bf16; MXFP4); WgmmaConfig
// (config.h) replaces it with WgmmaFp8MmaSwizzledDecode / WgmmaFp8MmaSsDecode for e4m3 scores and
// with WgmmaMxfp4StagedDecode for staged MXFP4. The dim and token orders they follow are in
// stage1/wgmma.h's overview.
#pragma once

#include <type_traits>

#include "arch/device.h"
#include "splitkv/formats.h"

namespace mla::splitkv {

// fp8 codes -> f16 A fragments. e4m3fn: the hardware conversion, exact values, codes paired as
// they lie (bytes 0, 1 and 2, 3 of a word). e4m3fnuz (no hardware type): the bit operations of
// arch/fp8.h, values times kScale, codes paired (0, 2) and (1, 3).
//
// What the kernel asks of a format's decoder (WgmmaDecode, WgmmaBf16Decode, WgmmaMxfp4Decode and
// those derived from them; WgmmaDecodeCommon holds the defaults most share):
//   kRowBytes          bytes of a tile row (the cache row; MXFP4: its packed bytes and codes;
//                      with kSeparateV the V row's codes after them)
//   kBlockScales       MXFP4 values: V decoded with per-block scale codes, as K (the kernel then
//                      takes the decoder's v_lane_byte / v_lane_dim / v_code_delta,
//                      v_fragments_all); MXFP4 keys beside fp8 values have K's in load_k only
//   kDimBytes          bytes of a value dim in the tile row (1 fp8, 2 bf16; unused for MXFP4
//                      values)
//   kTokenScales       staged MXFP4 tiles: e4m3fn codes with power-of-two factors per token in
//                      the row's pad (WgmmaMxfp4StagedDecode); the scores' rope part then
//                      accumulates apart
//   kRopeBf16          a bf16 rope beside fp8 latent codes (WgmmaFp8Bf16RopeDecode): the rope
//                      chunk is the bf16 decoder's, scored first (score_products_rope), or
//                      with kRopeLast after the latent chunks (score_products_rope_last)
//   kScoreMma, kValueMma  the wgmma types of S^T = K Q^T and O^T += V^T P^T
//   kQF16              Q^T scaled per row into f16 (fp8 K); else bf16 as loaded
//   kQCodes            Q^T holds Q's e4m3fn codes as stored (S^T on the e4m3 tensor core)
//   kSsScores          K a shared-memory A operand of S^T (descriptors; e4m3 scores at 64 rows)
//   kSwizzledStage     the tile in wgmma's 128-byte swizzle (WgmmaConfig::ss_offset)
//   kSumBias           log2 of the factor the row sums are kept times (staged MXFP4: 40)
//   kSeparateV         V from a separate fp8 cache's rows, kVRowOffset bytes into the tile row
//                      (WgmmaMxfp4Fp8VDecode): the epilogue scales O by v_scale kVScale, not by
//                      kv_scale kScale
//   kStepsPerChunk     MMA k-steps per chunk of 64 dims: 4 (k16), 2 (e4m3 k32)
//   kPParts            P^T buffers per tile: 1 (f16 P), 2 (bf16 P = hi + lo)
//   kScale             the value of a decoded element over the stored one (epilogue, scores)
//   kKLoads            K loads per lane, row and chunk of 64 dims; KLoad, load_k (the load, at
//                      k_load_offset), k_lane_offset (a lane's first byte in a row)
//   k_fragments        the A fragments of a chunk's kStepsPerChunk steps from both rows' loads
//   qt_place           the first k-step (of 36 k16 / 18 k32) and the quad index t of 8 Q dims
//   q_words            two Q^T words (k 2t, 2t+1 and 2t+8, 2t+9) from two bf16 pairs of Q
//   VWord, load_v      a token row's 4 value dims
//   v_fragments        V^T A fragments from 4 token rows' VWords
//   p_words            P of two accumulators as B words (hi, and lo where kPParts == 2)
// What the register-fragment decoders of fp8 and bf16 tiles share (the others derive from them
// and say what differs).
struct WgmmaDecodeCommon {
    static constexpr bool kQCodes = false;
    static constexpr bool kSsScores = false;  // K an A operand in shared memory (descriptors)
    static constexpr bool kSwizzledStage = false;  // the tile in the swizzled layout (ss_offset)
    static constexpr int kStepsPerChunk = 4;
    static constexpr bool kBlockScales = false;
    static constexpr bool kTokenScales = false;
    static constexpr bool kRopeBf16 = false;
    static constexpr bool kRopeLast = false;
    static constexpr float kSumBias = 0.0f;
    static constexpr bool kSeparateV = false;
    static constexpr int kVRowOffset = 0;  // V's first byte in a tile row
    using KLoad = uint4;
};

template <arch::Fp8Flavor kFlavor>
struct WgmmaDecode : WgmmaDecodeCommon {
    static constexpr bool kAdjacentPairs = kFlavor == arch::Fp8Flavor::kE4M3FN;
    static constexpr float kScale = kAdjacentPairs ? 1.0f : arch::kFp8F16Scale<kFlavor>;
    static constexpr int kDimBytes = 1;
    static constexpr arch::MmaType kScoreMma = arch::MmaType::kF16;
    static constexpr arch::MmaType kValueMma = arch::MmaType::kF16;
    static constexpr bool kQF16 = true;
    static constexpr int kPParts = 1;
    static constexpr int kKLoads = 1;
    static constexpr int kRowBytes = kHeadDimQk;
    using VWord = uint32_t;
    MLA_DEVICE static constexpr int k_load_offset(int c, int) { return 64 * c; }
    MLA_DEVICE static constexpr int k_lane_offset(int t4) { return 16 * t4; }
    MLA_DEVICE static KLoad load_k(const uint8_t* row, int c, int l, int) {
        return *reinterpret_cast<const uint4*>(row + k_load_offset(c, l));
    }
    // Dims d0 .. d0 + 7 (d0 % 8 == 0): chunk d0 / 64, quad (d0 % 64) / 16, steps (d0 % 16) / 4
    // and the next.
    MLA_DEVICE static void qt_place(int d0, int& step0, int& t) {
        step0 = (d0 / 64) * 4 + (d0 % 16) / 4;
        t = (d0 % 64) / 16;
    }
    // wa = Q dims (e0, e1), wb = (e2, e3) as bf16 pairs, times up, as f16 pairs in the
    // decoder's order: lo = k indices 2t, 2t+1, hi = 2t+8, 2t+9.
    MLA_DEVICE static void q_words(uint32_t wa, uint32_t wb, float up, uint32_t& lo,
                                   uint32_t& hi) {
        auto f = [&](uint32_t word, int upper) {
            return arch::bf16_to_float(static_cast<uint16_t>(upper ? word >> 16 : word)) * up;
        };
        if constexpr (kAdjacentPairs) {  // k = 2t, 2t+1 <- e0, e1;  k = 2t+8, 2t+9 <- e2, e3
            lo = arch::pack_f16x2(f(wa, 0), f(wa, 1));
            hi = arch::pack_f16x2(f(wb, 0), f(wb, 1));
        } else {  // k = 2t, 2t+1 <- e0, e2;  k = 2t+8, 2t+9 <- e1, e3
            lo = arch::pack_f16x2(f(wa, 0), f(wb, 0));
            hi = arch::pack_f16x2(f(wa, 1), f(wb, 1));
        }
    }
    MLA_DEVICE static void p_words(float e0, float e1, uint32_t& hi, uint32_t&) {
        hi = arch::pack_f16x2(e0, e1);  // P <= 2^kLazyRescaleLog2: f16 holds it to 2^-11
    }
    MLA_DEVICE static VWord load_v(const uint8_t* src) {
        return *reinterpret_cast<const uint32_t*>(src);
    }
#if defined(MLA_ARCH_SM90)
    // The A fragments of the 4 k16 steps of a chunk: a[st] = {row g lo, row g+8 lo, row g hi,
    // row g+8 hi} from word st of each row's load.
    MLA_DEVICE static void k_fragments(const uint4 (&r0)[kKLoads], const uint4 (&r1)[kKLoads],
                                       uint32_t (&a)[kStepsPerChunk][4]) {
        const uint32_t w0[4] = {r0[0].x, r0[0].y, r0[0].z, r0[0].w};
        const uint32_t w1[4] = {r1[0].x, r1[0].y, r1[0].z, r1[0].w};
#pragma unroll
        for (int st = 0; st < 4; ++st) {
            const arch::Quad k0 = pairs(w0[st]);
            const arch::Quad k1 = pairs(w1[st]);
            a[st][0] = k0.lo;
            a[st][1] = k1.lo;
            a[st][2] = k0.hi;
            a[st][3] = k1.hi;
        }
    }
    // Two f16x2 words of the four codes of w: lo = the first pair, hi = the second.
    MLA_DEVICE static arch::Quad pairs(uint32_t w) {
        if constexpr (kAdjacentPairs) {
            arch::Quad q;
            q.lo = arch::sm90::e4m3x2_lo_to_f16x2(w);
            q.hi = arch::sm90::e4m3x2_hi_to_f16x2(w);
            return q;
        } else {
            return arch::decode_fp8x4(w);
        }
    }
    // The codes of dims D..D+3 (bytes 0..3) of the tokens of PV k indices 2t, 2t+1, 2t+8, 2t+9
    // (words w0..w3) as the A fragments of V^T: ax = dims D (rows g) and D+1 (rows g+8), ay =
    // dims D+2 and D+3; each register a k index pair (2t, 2t+1) or (2t+8, 2t+9).
    MLA_DEVICE static void v_fragments(uint32_t w0, uint32_t w1, uint32_t w2, uint32_t w3,
                                       uint32_t (&ax)[4], uint32_t (&ay)[4]) {
        if constexpr (kAdjacentPairs) {
            const uint32_t x01 = arch::byte_perm(w0, w1, 0x5140u);  // dims D, D+1 of 2t, 2t+1
            const uint32_t y01 = arch::byte_perm(w2, w3, 0x5140u);  // ... of 2t+8, 2t+9
            const uint32_t x23 = arch::byte_perm(w0, w1, 0x7362u);
            const uint32_t y23 = arch::byte_perm(w2, w3, 0x7362u);
            ax[0] = arch::sm90::e4m3x2_lo_to_f16x2(x01);
            ax[1] = arch::sm90::e4m3x2_hi_to_f16x2(x01);
            ax[2] = arch::sm90::e4m3x2_lo_to_f16x2(y01);
            ax[3] = arch::sm90::e4m3x2_hi_to_f16x2(y01);
            ay[0] = arch::sm90::e4m3x2_lo_to_f16x2(x23);
            ay[1] = arch::sm90::e4m3x2_hi_to_f16x2(x23);
            ay[2] = arch::sm90::e4m3x2_lo_to_f16x2(y23);
            ay[3] = arch::sm90::e4m3x2_hi_to_f16x2(y23);
        } else {
            // Regrouped per dim as [tok 2t, tok 2t+8, tok 2t+1, tok 2t+9], then decoded: lo =
            // (2t, 2t+1), hi = (2t+8, 2t+9).
            const uint32_t x0 = arch::byte_perm(w0, w2, 0x5140u), x1 = arch::byte_perm(w0, w2, 0x7362u);
            const uint32_t y0 = arch::byte_perm(w1, w3, 0x5140u), y1 = arch::byte_perm(w1, w3, 0x7362u);
            const arch::Quad d0 = arch::decode_fp8x4(arch::byte_perm(x0, y0, 0x5410u));
            const arch::Quad d1 = arch::decode_fp8x4(arch::byte_perm(x0, y0, 0x7632u));
            const arch::Quad d2 = arch::decode_fp8x4(arch::byte_perm(x1, y1, 0x5410u));
            const arch::Quad d3 = arch::decode_fp8x4(arch::byte_perm(x1, y1, 0x7632u));
            ax[0] = d0.lo; ax[1] = d1.lo; ax[2] = d0.hi; ax[3] = d1.hi;
            ay[0] = d2.lo; ay[1] = d3.lo; ay[2] = d2.hi; ay[3] = d3.hi;
        }
    }
#endif
};

// bf16 values as stored: K and V^T fragments are the loaded words (V^T regrouped by byte
// permutes), Q^T is Q's bf16 as loaded, P a bf16 pair hi + lo.
struct WgmmaBf16Decode : WgmmaDecodeCommon {
    static constexpr float kScale = 1.0f;
    static constexpr int kDimBytes = 2;
    static constexpr arch::MmaType kScoreMma = arch::MmaType::kBF16;
    static constexpr arch::MmaType kValueMma = arch::MmaType::kBF16;
    static constexpr bool kQF16 = false;
    static constexpr int kPParts = 2;
    static constexpr int kKLoads = 2;
    static constexpr int kRowBytes = 2 * kHeadDimQk;
    using VWord = uint2;
    // Chunk c (128 bytes): 64 contiguous bytes per row and load (see the header).
    MLA_DEVICE static constexpr int k_load_offset(int c, int l) { return 128 * c + 64 * l; }
    MLA_DEVICE static constexpr int k_lane_offset(int t4) { return 16 * t4; }
    MLA_DEVICE static KLoad load_k(const uint8_t* row, int c, int l, int) {
        return *reinterpret_cast<const uint4*>(row + k_load_offset(c, l));
    }
    // Dims d0 .. d0 + 7 (d0 % 8 == 0): chunk d0 / 64, load (d0 % 64) / 32 (steps 2 l, 2 l + 1),
    // quad (d0 % 32) / 8.
    MLA_DEVICE static void qt_place(int d0, int& step0, int& t) {
        step0 = (d0 / 64) * 4 + 2 * ((d0 % 64) / 32);
        t = (d0 % 32) / 8;
    }
    MLA_DEVICE static void q_words(uint32_t wa, uint32_t wb, float, uint32_t& lo, uint32_t& hi) {
        lo = wa;  // k = 2t, 2t+1 <- e0, e1
        hi = wb;  // k = 2t+8, 2t+9 <- e2, e3
    }
    MLA_DEVICE static VWord load_v(const uint8_t* src) {
        return *reinterpret_cast<const uint2*>(src);
    }
#if defined(MLA_ARCH_SM90)
    // hi = bf16(e) (nearest), lo = bf16(e - hi): e - hi is exact in f32, so hi + lo carries 16
    // significant bits of e (P <= 2^kLazyRescaleLog2; the lo of a P below 2^-133 is lost, far
    // under f32's accumulation of the row sum).
    MLA_DEVICE static void p_words(float e0, float e1, uint32_t& hi, uint32_t& lo) {
        hi = arch::sm90::f32x2_to_bf16x2(e0, e1);
        lo = arch::sm90::f32x2_to_bf16x2(e0 - arch::bits_float(hi << 16),
                                         e1 - arch::bits_float(hi & 0xffff0000u));
    }
    MLA_DEVICE static void k_fragments(const uint4 (&r0)[kKLoads], const uint4 (&r1)[kKLoads],
                                       uint32_t (&a)[kStepsPerChunk][4]) {
#pragma unroll
        for (int l = 0; l < kKLoads; ++l) {
            const uint32_t w0[4] = {r0[l].x, r0[l].y, r0[l].z, r0[l].w};
            const uint32_t w1[4] = {r1[l].x, r1[l].y, r1[l].z, r1[l].w};
#pragma unroll
            for (int h = 0; h < 2; ++h) {  // step 2 l + h: bytes 8h .. 8h + 7 of the load
                a[2 * l + h][0] = w0[2 * h];      // row g,     k 2t, 2t+1   <- dims +0, +1
                a[2 * l + h][1] = w1[2 * h];      // row g + 8
                a[2 * l + h][2] = w0[2 * h + 1];  // row g,     k 2t+8, 2t+9 <- dims +2, +3
                a[2 * l + h][3] = w1[2 * h + 1];  // row g + 8
            }
        }
    }
    // Dims D..D+3 (x: D, D+1; y: D+2, D+3) of the tokens of PV k indices 2t, 2t+1, 2t+8, 2t+9
    // (w0..w3) as the A fragments of V^T: ax = dims D (rows g) and D+1 (rows g+8), ay = dims D+2
    // and D+3; each register a k index pair (2t, 2t+1) or (2t+8, 2t+9), the lower token low.
    MLA_DEVICE static void v_fragments(uint2 w0, uint2 w1, uint2 w2, uint2 w3, uint32_t (&ax)[4],
                                       uint32_t (&ay)[4]) {
        ax[0] = arch::byte_perm(w0.x, w1.x, 0x5410u);
        ax[1] = arch::byte_perm(w0.x, w1.x, 0x7632u);
        ax[2] = arch::byte_perm(w2.x, w3.x, 0x5410u);
        ax[3] = arch::byte_perm(w2.x, w3.x, 0x7632u);
        ay[0] = arch::byte_perm(w0.y, w1.y, 0x5410u);
        ay[1] = arch::byte_perm(w0.y, w1.y, 0x7632u);
        ay[2] = arch::byte_perm(w2.y, w3.y, 0x5410u);
        ay[3] = arch::byte_perm(w2.y, w3.y, 0x7632u);
    }
#endif
};

// e4m3fn Q on an e4m3fn cache with the score product on the e4m3 tensor core (Params::fp8_mma):
// the K codes as loaded are the A fragments of S^T (no decode, m64nNk32: half the steps of f16),
// Q^T holds Q's codes as stored; the value side (V^T decode, f16 P^T) is the e4m3fn decoder's.
// Step st of a chunk takes words 2 st and 2 st + 1 of a row's 16-byte load: k indices 4t .. 4t+3
// <-> dims 64c + 16t + 8st + {0..3}, k 4t+16 .. 4t+19 <-> dims 64c + 16t + 8st + 4 + {0..3}.
// (The base of WgmmaFp8MmaSsDecode and WgmmaFp8MmaSwizzledDecode: no kernel takes it itself.)
struct WgmmaFp8MmaDecode : WgmmaDecode<arch::Fp8Flavor::kE4M3FN> {
    static constexpr arch::MmaType kScoreMma = arch::MmaType::kE4M3;
    static constexpr bool kQF16 = false;
    static constexpr bool kQCodes = true;
    static constexpr int kStepsPerChunk = 2;
    // Dims d0 .. d0 + 7 (d0 % 8 == 0): chunk d0 / 64, step (d0 % 16) / 8 of it, quad
    // (d0 % 64) / 16.
    MLA_DEVICE static void qt_place(int d0, int& step0, int& t) {
        step0 = (d0 / 64) * 2 + (d0 % 16) / 8;
        t = (d0 % 64) / 16;
    }
#if defined(MLA_ARCH_SM90)
    MLA_DEVICE static void k_fragments(const uint4 (&r0)[kKLoads], const uint4 (&r1)[kKLoads],
                                       uint32_t (&a)[kStepsPerChunk][4]) {
        a[0][0] = r0[0].x;  // row g,     k 4t .. 4t+3
        a[0][1] = r1[0].x;  // row g + 8
        a[0][2] = r0[0].y;  // row g,     k 4t+16 .. 4t+19
        a[0][3] = r1[0].y;
        a[1][0] = r0[0].z;
        a[1][1] = r1[0].z;
        a[1][2] = r0[0].w;
        a[1][3] = r1[0].w;
    }
#endif
};

// e4m3 scores at 64 rows with K as the A operand in shared memory: the stage holds each tile in
// wgmma's K-major layout with the 128-byte swizzle (WgmmaConfig::ss_offset), so the score chain
// of a tile is 18 m64n64k32 with both operands by descriptor and no K loads (thirty-sixth
// session, H200: 0.95-0.97x the register form's time). Q^T in natural dim order: k index k of
// k-step j <-> dim 32 j + k.
struct WgmmaFp8MmaSsDecode : WgmmaFp8MmaDecode {
    static constexpr bool kSsScores = true;
    static constexpr bool kSwizzledStage = true;
};

// e4m3 scores at 16 and 32 rows (the seesaw, the long CTAs, 32 rows' solo consumers): the stage
// in the swizzled layout of the f16 kernels (WgmmaSwizzledDecode, below: whole tiles by TMA), K
// loaded into registers as WgmmaFp8MmaDecode's fragments (a lane's 16-byte load of a row holds
// the same dims in either layout). Padded stages until 0.7.30 (variants.h: the A/B).
struct WgmmaFp8MmaSwizzledDecode : WgmmaFp8MmaDecode {
    static constexpr bool kSwizzledStage = true;
};

// fp8 caches with f16 scores at 16 and 64 rows, e4m3fn's at 32 (wgmma_swizzled_stages): the stage
// in the same swizzled layout (so whole tiles come by TMA, as the e4m3 scores' do), K loaded into
// registers and decoded as in the register form. A lane's two A rows g and g + 8 of warp wq hold
// stage rows 16 wq + WgmmaConfig::stage_row(g) and 8 on (see there for the bank conflicts).
template <arch::Fp8Flavor kFlavor>
struct WgmmaSwizzledDecode : WgmmaDecode<kFlavor> {
    static constexpr bool kSwizzledStage = true;
};

// fp8 latent codes beside a bf16 rope (KvFormat::kFp8E4M3FNBf16Rope and kFp8E4M3FNUZBf16Rope,
// DeepSeek-V3.2's split cache), in padded stages: a tile row holds the 512 codes (dims 0..511,
// and V), then the rope's 64 bf16 values (dims 512..575, from the rope rows), 640 bytes. The
// latent chunks 0..7 are the flavour's fp8 decoder's (one 16-byte load a row and chunk, f16
// fragments, Q^T f16 in that decoder's pair order); the rope chunk is the bf16 decoder's (two
// 16-byte loads a row at bytes 512 + 16t and 512 + 64 + 16t, the bf16 values as loaded, Q^T's
// rope dims bf16 in its order, times the row's power of two like the latent's: exact in bf16,
// whose range holds any value f16's does). V is the flavour's fp8 decoder's. The score chain
// (score_products_rope) runs the rope's 4 bf16 steps first, waits for them, multiplies the
// accumulators by 1 / (kv_scale kScale) (the row's coefficient carries kv_scale, which applies
// to the codes only, and kScale, the decoded codes' power of two: 1 for e4m3fn's hardware
// conversion, 128 for e4m3fnuz's bit operations), and the 32 f16 steps of the latent chunks add
// onto them; with kRopeLast (e4m3fnuz) the other way round (score_products_rope_last).
template <arch::Fp8Flavor kFlavor>
struct WgmmaFp8Bf16RopeDecode : WgmmaDecode<kFlavor> {
    using Latent = WgmmaDecode<kFlavor>;
    using typename Latent::KLoad;
    using Latent::kStepsPerChunk;
    static constexpr bool kRopeBf16 = true;
    // The score chain's order (score_products_rope): the rope's steps after the latent chain's
    // (e4m3fnuz), or before (e4m3fn, 0.7.41's order, timed on the H100 and H200). Rope-first
    // adds the latent's 32 steps onto the rope's large sums; on the emulated sm_90a that put one
    // O value of GpuBf16RopeLarge (rope values times 30000) at 1.006x its tolerance with
    // e4m3fnuz codes (seed 53), 0.559x rope-last; e4m3fn's worst 0.592x -> 0.519x (mma16:
    // 0.490 / 0.481). On the H100 (s69): e4m3fnuz rope-last 0.510, e4m3fn rope-first 0.519; an
    // A/B of rope-last for e4m3fn took 1.003x its time (geomean; 1.011x at H128), not kept.
    static constexpr bool kRopeLast = kFlavor == arch::Fp8Flavor::kE4M3FNUZ;
    static constexpr int kRopeDims = kHeadDimQk - kKvLoraRank;
    static constexpr int kRowBytes = kKvLoraRank + 2 * kRopeDims;
    static constexpr int kRopeChunk = kKvLoraRank / 64;  // chunks 0..7: latent codes
    static constexpr int kKLoads = 2;                    // the rope chunk's; the latent's take 1
    MLA_DEVICE static constexpr int k_load_offset(int c, int l) {
        return c < kRopeChunk ? 64 * c : kKvLoraRank + 64 * l;
    }
    MLA_DEVICE static KLoad load_k(const uint8_t* row, int c, int l, int) {
        return *reinterpret_cast<const uint4*>(row + k_load_offset(c, l));
    }
    // Dims d0 .. d0 + 7 (d0 % 8 == 0): the latent decoder's order in the latent chunks, the
    // bf16 one in the rope's.
    MLA_DEVICE static void qt_place(int d0, int& step0, int& t) {
        if (d0 < kKvLoraRank) Latent::qt_place(d0, step0, t);
        else WgmmaBf16Decode::qt_place(d0, step0, t);
    }
#if defined(MLA_ARCH_SM90)
    // The rope dims' Q^T words: the bf16 pairs times `up` (a power of two: exact), in the bf16
    // decoder's order (lo = k 2t, 2t+1 <- e0, e1; hi = 2t+8, 2t+9 <- e2, e3).
    MLA_DEVICE static void rope_q_words(uint32_t wa, uint32_t wb, float up, uint32_t& lo,
                                        uint32_t& hi) {
        const auto scaled = [up](uint32_t w) {
            return arch::sm90::f32x2_to_bf16x2(
                arch::bf16_to_float(static_cast<uint16_t>(w)) * up,
                arch::bf16_to_float(static_cast<uint16_t>(w >> 16)) * up);
        };
        lo = scaled(wa);
        hi = scaled(wb);
    }
    // The rope chunk's A fragments: the bf16 decoder's, from its two loads a row.
    MLA_DEVICE static void rope_fragments(const uint4 (&r0)[kKLoads], const uint4 (&r1)[kKLoads],
                                          uint32_t (&a)[kStepsPerChunk][4]) {
        WgmmaBf16Decode::k_fragments(r0, r1, a);
    }
#endif
};

// MXFP4 caches (e2m1 pairs + an e8m0 scale per 32 dims): decoded in the consumers to bf16,
// exactly, by the per-scale lookup table of arch/mxfp4.h; from there on as a bf16 cache (Q^T
// bf16 as loaded, S^T and O^T bf16 products, P^T a bf16 pair). A tile row holds the 288 packed
// bytes (dims 2i, 2i+1 in byte i), then the row's 18 scale codes (a 32-byte slot).
//   K: lane (g, t) takes 8 bytes per row and chunk, bytes 32c + 8t (dims 64c + 16t .. + 15, one
//     scale block: 2c + t / 2), decoded with the row's table of that block; word s of the 8
//     bytes holds dims 64c + 16t + 8s .. + 7, i.e. steps 2s and 2s + 1, paired as they lie (k
//     index 2t + j + 8e <-> dim 64c + 16t + 4 step + 2e + j): e4m3fn's order, so Q^T is placed
//     as for e4m3fn (and written as bf16, like a bf16 cache's).
//   V: lane g of warp wq in consumer w owns the 8 dims D0 = 256w + 64wq + 8g .. + 7 (one word
//     a token, one scale block: 8w + 2wq + g / 4); m-block 2pp + e of the pair pp holds dims
//     D0 + 4pp + 2e (rows g) and + 1 (rows g + 8). Each token's word is decoded with its own
//     table; dims 4pp .. 4pp + 3 of the 4 tokens of a k-step are then a bf16 cache's V words.
// Cost per element, against ~0.5 for e4m3fn: ~2.5 instructions for K (15 per 8 elements, a
// table per 16), ~3.6 for V (a table per token's 8 elements and the regrouping permutes).
// (The bf16 decoder's facts and its Q^T words, P words and V permutes are inherited.)
struct WgmmaMxfp4Decode : WgmmaBf16Decode {
    static constexpr int kKLoads = 1;
    static constexpr bool kBlockScales = true;
    static constexpr int kScaleOffset = kMxfp4RowBytes;  // the scale codes in a tile row
    static constexpr int kRowBytes = kMxfp4RowBytes + 32;
    struct KLoad {
        uint2 d;        // 16 e2m1 values
        uint32_t code;  // their block's e8m0 scale code
    };
    using VWord = uint32_t;
    MLA_DEVICE static VWord load_v(const uint8_t* src) {
        return *reinterpret_cast<const uint32_t*>(src);
    }
    MLA_DEVICE static constexpr int k_lane_offset(int t4) { return 8 * t4; }
    // row: the lane's K bytes of the row (row start + k_lane_offset(t4)).
    MLA_DEVICE static KLoad load_k(const uint8_t* row, int c, int, int t4) {
        KLoad r;
        r.d = *reinterpret_cast<const uint2*>(row + 32 * c);
        r.code = row[kScaleOffset - 8 * t4 + 2 * c + (t4 >> 1)];
        return r;
    }
    MLA_DEVICE static void qt_place(int d0, int& step0, int& t) {
        WgmmaDecode<arch::Fp8Flavor::kE4M3FN>::qt_place(d0, step0, t);
    }
    // The byte of a token row where the lane's V word starts, and the first of its dims.
    MLA_DEVICE static constexpr int v_lane_byte(int w, int wq, int g) {
        return 128 * w + 32 * wq + 4 * g;
    }
    MLA_DEVICE static constexpr int v_lane_dim(int w, int wq, int g) {
        return 256 * w + 64 * wq + 8 * g;
    }
    // Its scale code, relative to the V word.
    MLA_DEVICE static constexpr int v_code_delta(int w, int wq, int g) {
        return kScaleOffset + 8 * w + 2 * wq + g / 4 - v_lane_byte(w, wq, g);
    }
#if defined(MLA_ARCH_SM90)
    // The tables of K scale codes: one warp-uniform test for the group (codes outside 2..252,
    // subnormal / infinite / NaN products, are rare), so the fast tables and the decodes that
    // use them stay one straight-line block the scheduler can interleave (a per-code branch
    // cost ~2 branch instructions a table and split the decodes into separate blocks).
    template <int K>
    MLA_DEVICE static void tables(const uint32_t (&code)[K], arch::Mxfp4Bf16Table (&t)[K]) {
        bool rare = false;
#pragma unroll
        for (int i = 0; i < K; ++i) rare |= !arch::mxfp4_code_fast(code[i]);
        if (__any_sync(0xffffffffu, rare)) {
#pragma unroll
            for (int i = 0; i < K; ++i) t[i] = arch::mxfp4_bf16_table(code[i]);
        } else {
#pragma unroll
            for (int i = 0; i < K; ++i) t[i] = arch::mxfp4_bf16_table_fast(code[i]);
        }
    }
    MLA_DEVICE static void k_fragments(const KLoad (&r0)[kKLoads], const KLoad (&r1)[kKLoads],
                                       uint32_t (&a)[kStepsPerChunk][4]) {
        uint32_t w0[2][4], w1[2][4];  // [word][bf16x2 pair]
        arch::Mxfp4Bf16Table tk[2];
        tables<2>({r0[0].code, r1[0].code}, tk);
        const arch::Mxfp4Bf16Table& t0 = tk[0];
        const arch::Mxfp4Bf16Table& t1 = tk[1];
        arch::decode_mxfp4x8_bf16(r0[0].d.x, t0, w0[0]);
        arch::decode_mxfp4x8_bf16(r0[0].d.y, t0, w0[1]);
        arch::decode_mxfp4x8_bf16(r1[0].d.x, t1, w1[0]);
        arch::decode_mxfp4x8_bf16(r1[0].d.y, t1, w1[1]);
#pragma unroll
        for (int st = 0; st < kStepsPerChunk; ++st) {
            const int wd = st >> 1, pr = 2 * (st & 1);
            a[st][0] = w0[wd][pr];      // row g,     k 2t, 2t+1   <- dims +0, +1
            a[st][1] = w1[wd][pr];      // row g + 8
            a[st][2] = w0[wd][pr + 1];  // row g,     k 2t+8, 2t+9 <- dims +2, +3
            a[st][3] = w1[wd][pr + 1];
        }
    }
    // The V^T A fragments of one k-step for both m-block pairs from the words and scale codes
    // of the tokens of PV k indices 2t, 2t+1, 2t+8, 2t+9.
    template <int kPairs>
    MLA_DEVICE static void v_fragments_all(const uint32_t (&raw)[4], const uint32_t (&code)[4],
                                           uint32_t (&ax)[kPairs][4], uint32_t (&ay)[kPairs][4]) {
        static_assert(kPairs == 2, "8 dims a lane: two m-block pairs");
        uint2 v[kPairs][4];
        arch::Mxfp4Bf16Table t[4];
        tables<4>(code, t);
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            uint32_t d[4];
            arch::decode_mxfp4x8_bf16(raw[i], t[i], d);
            v[0][i] = make_uint2(d[0], d[1]);
            v[1][i] = make_uint2(d[2], d[3]);
        }
#pragma unroll
        for (int pp = 0; pp < kPairs; ++pp)
            WgmmaBf16Decode::v_fragments(v[pp][0], v[pp][1], v[pp][2], v[pp][3], ax[pp], ay[pp]);
    }
#endif
};

// MXFP4 keys beside a separate fp8 V cache (KvFormat::kMxfp4Fp8E4M3FN / kMxfp4Fp8E4M3FNUZ, the
// design card's MXFP4-K / fp8-V path): a tile row holds the key's MXFP4 row as
// WgmmaMxfp4Decode's (288 packed bytes, the 32-byte code slot), then the V row's 512 codes
// (kVRowOffset), 832 bytes. The scores are WgmmaMxfp4Decode's (K decoded to bf16 in the
// consumers by the block's table, Q^T bf16 as loaded, bf16 S^T; kScale 1); the values the
// flavour's fp8 decoder's (Values: 4-byte V words, f16 V^T fragments, P^T one f16 part, the
// lazy rescale's P <= 2^8 as for fp8 caches), O times v_scale Values::kScale in the epilogue.
// No block scales on V (kBlockScales is MXFP4 V's): K's codes travel in load_k's KLoad.
template <arch::Fp8Flavor kFlavor>
struct WgmmaMxfp4Fp8VDecode : WgmmaMxfp4Decode {
    using Values = WgmmaDecode<kFlavor>;
    static constexpr bool kBlockScales = false;
    static constexpr bool kSeparateV = true;
    static constexpr int kVRowOffset = WgmmaMxfp4Decode::kRowBytes;
    static constexpr int kRowBytes = kVRowOffset + kHeadDimV;
    static constexpr int kDimBytes = 1;  // V's
    static constexpr float kVScale = Values::kScale;
    static constexpr arch::MmaType kValueMma = Values::kValueMma;
    static constexpr int kPParts = Values::kPParts;
    using VWord = typename Values::VWord;
    MLA_DEVICE static VWord load_v(const uint8_t* src) { return Values::load_v(src); }
#if defined(MLA_ARCH_SM90)
    MLA_DEVICE static void p_words(float e0, float e1, uint32_t& hi, uint32_t& lo) {
        Values::p_words(e0, e1, hi, lo);
    }
    MLA_DEVICE static void v_fragments(uint32_t w0, uint32_t w1, uint32_t w2, uint32_t w3,
                                       uint32_t (&ax)[4], uint32_t (&ay)[4]) {
        Values::v_fragments(w0, w1, w2, w3, ax, ay);
    }
#endif
};

// MXFP4 at 16 and 32 rows, staged (WgmmaConfig::kStagedDecode): decoder warpgroups turn a tile
// into e4m3fn codes, exactly, and the consumers run the e4m3fn cache's code on them. An element
// e2m1 * 2^(c - 127) of a token whose largest scale code over its nonzero latent blocks is C is
// written as the e4m3fn code of e2m1 * 2^(c - C + 6) (C: the same over the two rope blocks for
// dims 512..575), so the token's value is that code times 2^(C - 133). e4m3fn holds e2m1 * 2^j
// exactly for j = -8 .. 6, i.e. every block within 14 codes of its token's largest; a block
// further below is rounded to e4m3fn's subnormal grid (an error of at most 2^-16 times
// 2^(C - 127); common quantizers keep a token's codes within a few steps). C is kept
// >= kLowestCode (lower codes are rounded relative to it).
// The per-token factors sit in the row's 16-byte pad (kTokenScaleOffset): {2^(C_lat - 133),
// 2^(C_rope - 133), C_lat - 133, 0} (the last word pads the 16-byte store). The consumer scales
// the latent and rope parts of S^T by them (the rope k-steps accumulate apart), and folds the
// latent factor of V into P: the softmax runs on u = s * coefficient + (C_lat - 133), so P^T
// holds 2^(u - m) (<= 2^8, the lazy rescale's slack) and O^T the sum of P times the codes,
// while the row sum adds 2^(u - m - (C_lat - 133)) = 2^(s * coefficient - m), from its own
// exponent: O / l and LSE m + log2(l) are those of the values. P is f16: a token whose u lies
// more than 24 below the row's running maximum adds nothing to O (its part of O is then under
// 2^-24 of that of the maximum's token, e.g. every normal token beside one whose factor is
// 2^121, e8m0 code 254), though its weight still counts in l.
struct WgmmaMxfp4StagedDecode : WgmmaDecode<arch::Fp8Flavor::kE4M3FN> {
    static constexpr bool kTokenScales = true;
    static constexpr int kTokenScaleOffset = kHeadDimQk;  // in the pad of a 592-byte row
    // C >= 73: e_lat = C - 133 >= -60, so the row sum's terms 2^(s * coef - m + kSumBias)
    // stay below 2^(8 + 60 + 40) (no f32 overflow for 2^19 tokens), while the largest one, the
    // token of the running maximum's own, is >= 2^(-121 + 40) (e_lat <= 121): 37 binades above
    // f32's flush, so no term that matters is lost. Lower codes are rounded relative to 2^-54.
    static constexpr int kLowestCode = 73;
    static constexpr float kSumBias = 40.0f;  // log2: the row sum is kept times 2^40
};

// The decoder of a format: fp8 caches by flavour (kSwizzled: in swizzled stages), bf16 as
// stored, MXFP4 by its block scales, MXFP4 keys beside fp8 values and fp8 codes beside a bf16
// rope by both halves.
template <KvFormat F, bool kSwizzled>
struct WgmmaDecodeOf {
    static_assert(F == KvFormat::kFp8E4M3FN || F == KvFormat::kFp8E4M3FNUZ,
                  "the wgmma variant serves fp8, bf16 and MXFP4 caches (rope in the latent's "
                  "dtype, or bf16 beside fp8 codes; V from the latent rows, or fp8 V beside "
                  "MXFP4 keys)");
    static constexpr arch::Fp8Flavor kFlavor =
        F == KvFormat::kFp8E4M3FNUZ ? arch::Fp8Flavor::kE4M3FNUZ : arch::Fp8Flavor::kE4M3FN;
    using type = std::conditional_t<kSwizzled, WgmmaSwizzledDecode<kFlavor>, WgmmaDecode<kFlavor>>;
};
template <bool kSwizzled>
struct WgmmaDecodeOf<KvFormat::kBf16, kSwizzled> {
    using type = WgmmaBf16Decode;
};
template <bool kSwizzled>
struct WgmmaDecodeOf<KvFormat::kMxfp4, kSwizzled> {
    using type = WgmmaMxfp4Decode;
};
template <bool kSwizzled>
struct WgmmaDecodeOf<KvFormat::kMxfp4Fp8E4M3FN, kSwizzled> {
    using type = WgmmaMxfp4Fp8VDecode<arch::Fp8Flavor::kE4M3FN>;
};
template <bool kSwizzled>
struct WgmmaDecodeOf<KvFormat::kMxfp4Fp8E4M3FNUZ, kSwizzled> {
    using type = WgmmaMxfp4Fp8VDecode<arch::Fp8Flavor::kE4M3FNUZ>;
};
template <bool kSwizzled>
struct WgmmaDecodeOf<KvFormat::kFp8E4M3FNBf16Rope, kSwizzled> {
    static_assert(!kSwizzled, "the bf16 rope's 640-byte rows: padded stages");
    using type = WgmmaFp8Bf16RopeDecode<arch::Fp8Flavor::kE4M3FN>;
};
template <bool kSwizzled>
struct WgmmaDecodeOf<KvFormat::kFp8E4M3FNUZBf16Rope, kSwizzled> {
    static_assert(!kSwizzled, "the bf16 rope's 640-byte rows: padded stages");
    using type = WgmmaFp8Bf16RopeDecode<arch::Fp8Flavor::kE4M3FNUZ>;
};

}  // namespace mla::splitkv
