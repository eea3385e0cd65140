// Stage 1, Hopper warpgroup variant ("wgmma", sm_90a only, fp8, bf16 and MXFP4 caches): one CTA
// per (batch element, split, block of kRows query rows). The rows of an element are its (query
// token, head) pairs, r = t * num_heads + h, so one CTA serves 16 heads x 4 query tokens, or 64
// of 128 heads, and every KV tile it reads serves all of them: HBM traffic does not grow with
// heads x q_len (heads 128 take two CTAs that read the same tiles at the same time, the second
// from L2).
//
// Operands are swapped so that 16 rows waste no matrix work: tokens are wgmma's M (64), query
// rows its N.
//     S^T [64 tokens x N rows]  = K [64 x 576]    * Q^T [576 x N]
//     O^T [512 dims  x N rows] += V^T [512 x 64]  * P^T [64 x N]
// A fragments are built in registers from the raw cache tile (fp8 codes decoded to f16: e4m3fn
// by the hardware conversion, e4m3fnuz by bit operations, WgmmaDecode; bf16 values as stored,
// WgmmaBf16Decode; MXFP4 codes decoded to bf16 by per-scale tables, WgmmaMxfp4Decode); B
// operands (Q^T, P^T) sit in shared memory in the K-major core-matrix layout that wgmma reads
// through a descriptor (arch/nvidia/sm90.h). Q^T is f16 after a per-row
// power-of-two scale, exact for bf16 and fp8 Q down to 2^-24 of the row's largest element (f16's
// subnormal floor); every product accumulates in f32.
// MLA_DECODE_FLAG_FP8_MMA (e4m3fn Q on an e4m3fn cache, WgmmaFp8MmaDecode): S^T runs on e4m3
// m64nNk32 instead, the K codes as loaded its A fragments and Q^T Q's codes (18 k-steps a tile,
// no K decode); the tensor core then accumulates with fewer bits than f32 (the header says what
// that costs). O^T is as for fp8 caches.
// bf16 caches (2 bytes a dim: a 64-token tile is twice fp8's): Q^T stays bf16 (no scale: bf16
// has f32's exponent range), S^T and O^T are bf16 products, and P^T is written as a bf16 pair
// hi + lo (P = hi + lo to ~2^-16 relative, more than f16's precision; f16 P would need f16 V,
// which overflows) that O^T adds in two products per k-step. Only 16 and 32 rows: two 74.75 KB
// stages fit beside Q^T of 16 or 32 rows (18 / 36 KB), not beside 64 rows' 72 KB.
//
// Warpgroups (setmaxnreg moves registers from the producer to the consumers):
//   0 and 1 (and 2 in long CTAs), consumers, taking tiles in turn. Solo (WgmmaConfig::kSolo: 32
//     rows, 16 rows of a bf16 cache, and fp8's long CTAs of 16 rows with three consumers,
//     kLongCta; wgmma_consumer_solo): consumer w of C takes tiles w, w + C, ... whole, with its
//     own running maxima and O^T of all 512 value dims, and the C results of a row merge once in
//     the epilogue; nothing passes between the consumers while the tiles stream. Seesaw
//     (wgmma_consumer; 64 rows, fp8 at 16 rows in shorter CTAs, staged MXFP4): consumer w
//     computes S^T of tiles 2i + w for all rows (K decoded once per tile), takes
//     the running row maxima from the other one's previous tile, and writes P^T, the rescale
//     factors and the new maxima into its own buffer; both then add every tile to O^T for their
//     half of the value dims (w: dims 256 w .. 256 w + 255). So the score work is split over both
//     warpgroups, the value work too, and V is decoded once per tile. A row's step of the online
//     softmax (new maximum, rescale factor, exp2 offset) is done once per tile by the row's owner,
//     thread n of the consumer, not by each of the 32 threads that hold the row's scores (tokens
//     are M: a row's 64 scores lie in 8 lanes x 4 warps): bs64 kv4096 H128 185 -> 166 us.
//   2 (3 in long CTAs), producer: moves bytes only: 16-byte asynchronous copies (cp.async,
//     one warp per 16 rows of a tile, a row's 512 latent bytes per instruction, the 64 rope
//     bytes of 8 rows per instruction in CTAs of many tiles, with each row's latent copy in
//     short ones) into a kStages-deep ring of shared tiles that complete on the stage's "full"
//     mbarrier (cp.async.mbarrier.arrive; one per consumer and stage where kFullSets > 1);
//     rows past the end are zero-filled by the same copies. Consumer warps release a stage
//     through its "empty" mbarrier. (One bulk copy per 576-byte row was measured first: the
//     copy engine then moved only 2.35 TB/s on bs256 kv8192, 515 us for a 295 us floor.)
//     Swizzled stages (WgmmaConfig::kSwizzled: 64 rows of fp8, long CTAs) take each whole tile
//     of a contiguous cache or of pages of a multiple of 64 tokens by TMA instead
//     (wgmma_producer_tiles_ss): one thread issues 5 boxes of two tensor maps
//     (arch/nvidia/tma.h) that write the swizzled layout as it is (thirty-eighth session, H200,
//     against the copies: 0.93-0.95x on H128 q1 and q2 and H16 q4, 0.95x on 64-token pages,
//     0.94-0.97x in long CTAs).
//   3 and 4 (MXFP4 at 16 rows) or 3 (at 32 rows), decoders (WgmmaConfig::kStagedDecode,
//     wgmma_decoder): the producer then fills a 2-deep raw ring of MXFP4 tiles, and these
//     decode each tile once into e4m3fn codes and per-token factors (WgmmaMxfp4StagedDecode)
//     that the consumers read as an e4m3fn cache's, the factors applied to the scores and P.
//     They arrive on the stage's "front" mbarrier once its first kFrontChunks chunks (dims
//     0..255) are written, and the owning consumer's score chain starts on those before it
//     waits for "full". (64 rows: the consumers decode MXFP4 to bf16, WgmmaMxfp4Decode.)
// Hand-over between the seesaw's consumers (solo ones have none): "p_full[w]" (consumer w's P^T,
// factors and maxima of its latest tile are written), "m_full[0]" (consumer 0's owners have
// published that tile's maxima: all consumer 1's owners wait for; m_full[1] is never arrived
// on) and "p_empty[w]" (the other consumer has added that tile to its O).
//
// Dim and token orders. A dot product does not care about the order of its terms, so
//   * the K fragment of lane (g, t) for k-step (chunk c, step s) comes from one 16-byte load of
//     its token row at bytes 64c + 16t; word s of it holds dims 64c + 16t + 4s + {0, 1, 2, 3},
//     which the decoder pairs as (0, 1) and (2, 3) for e4m3fn (k index 2t + j + 8e <-> dim
//     64c + 16t + 4s + 2e + j) and as (0, 2) and (1, 3) for e4m3fnuz (k index 2t + j + 8e <->
//     dim 64c + 16t + 4s + 2j + e). Q^T is written in shared memory in exactly that order.
//     bf16 (128 bytes a chunk): two 16-byte loads at bytes 128c + 16t and 128c + 64 + 16t, so
//     the 4 lanes of a row read 64 contiguous bytes; step s takes 8 bytes (s % 2) of load s / 2,
//     dims 64c + 32 (s / 2) + 8t + 4 (s % 2) + {0..3}, paired as they lie (k index 2t + j + 8e
//     <-> dim ... + 2e + j): bf16x2 words are A registers as loaded.
//   * S^T row m = 16 w + 8 h + g (warp w of the warpgroup) is tile token 16 w + T(g, h),
//     T(g, h) = g + h for even g, ((g + 3) mod 8) + 8 + h for odd g; its P is PV k index 8 h + g
//     of k-step w, so P^T is stored by stmatrix.trans straight from the S^T fragments. With the
//     row pitch of 592 bytes (80 mod 128; bf16: 1168, 16 mod 128) this order keeps every shared
//     load free of bank conflicts: the two rows of one 8-lane phase of the 16-byte K loads
//     (g = 2i, 2i+1) are 4 or 12 rows (64 bytes mod 128) apart, and each 4-byte V load reads 4
//     rows of one parity. bf16's 8-byte V loads (16-lane phases, lanes g < 4 or g >= 4): lane
//     (g, t) reads row r(t) at 8g bytes, the rows r(t) of t = 0..3 are 2t (+ 1) or 12, 14, 8, 10
//     (+ 1): 16 r(t) mod 128 = 0, 32, 64, 96 in some order, so 16 lanes fill 128 bytes once.
//     Swizzled stages (WgmmaConfig::kSwizzled: 64 rows of fp8, long CTAs) have no pad: stage
//     row m holds token m, and S^T row 8 h + g of warp w reads stage row 16 w +
//     WgmmaConfig::stage_row(8 h + g), an order free of bank conflicts in the swizzle.
//   * O^T rows: m-blocks 2p and 2p+1 (p = 0..3; consumer p / 2) are built together from 4-byte
//     loads of 4 token rows (those of PV k indices 2t, 2t+1, 2t+8, 2t+9): lane g of warp w holds
//     dims 128p + 32w + 4g + {0, 1} (m-block 2p, rows g and g+8) and + {2, 3} (m-block 2p+1). So
//     each lane owns 4 consecutive output dims per (p, row): one 8-byte store of bf16 O. bf16
//     caches: 8-byte loads (the same 4 dims, 2 bytes each), regrouped by byte permutes.
#pragma once

#include <type_traits>

#include "arch/device.h"
#include "arch/nvidia/tma.h"
#include "splitkv/params.h"
#include "splitkv/epilogue.h"
#include "splitkv/launch.h"  // note_stage1_tma
#include "splitkv/q_prologue.h"
#include "splitkv/softmax.h"
#include "splitkv/stage1/launcher.h"
#include "splitkv/variants.h"
#include "splitkv/work.h"

namespace mla::splitkv {

// fp8 codes -> f16 A fragments. e4m3fn: the hardware conversion, exact values, codes paired as
// they lie (bytes 0, 1 and 2, 3 of a word). e4m3fnuz (no hardware type): the bit operations of
// arch/fp8.h, values times kScale, codes paired (0, 2) and (1, 3).
//
// What the kernel asks of a format's decoder (WgmmaDecode, WgmmaBf16Decode, WgmmaMxfp4Decode):
//   kRowBytes          bytes of a tile row (the cache row; MXFP4: its packed bytes and codes)
//   kBlockScales       MXFP4: K and V decoded with per-block scale codes (the kernel then takes
//                      the decoder's v_lane_byte / v_lane_dim / v_code_delta, v_fragments_all)
//   kDimBytes          bytes of a dim in the cache row (1 fp8, 2 bf16; unused for MXFP4)
//   kTokenScales       staged MXFP4 tiles: e4m3fn codes with power-of-two factors per token in
//                      the row's pad (WgmmaMxfp4StagedDecode); the scores' rope part then
//                      accumulates apart
//   kScoreMma, kValueMma  the wgmma types of S^T = K Q^T and O^T += V^T P^T
//   kQF16              Q^T scaled per row into f16 (fp8 K); else bf16 as loaded
//   kQCodes            Q^T holds Q's e4m3fn codes as stored (S^T on the e4m3 tensor core)
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
template <arch::Fp8Flavor kFlavor>
struct WgmmaDecode {
    static constexpr bool kAdjacentPairs = kFlavor == arch::Fp8Flavor::kE4M3FN;
    static constexpr float kScale = kAdjacentPairs ? 1.0f : arch::kFp8F16Scale<kFlavor>;
    static constexpr int kDimBytes = 1;
    static constexpr arch::MmaType kScoreMma = arch::MmaType::kF16;
    static constexpr arch::MmaType kValueMma = arch::MmaType::kF16;
    static constexpr bool kQF16 = true;
    static constexpr bool kQCodes = false;
    static constexpr bool kSsScores = false;  // K an A operand in shared memory (descriptors)
    static constexpr bool kSwizzledStage = false;  // the tile in the swizzled layout (ss_offset)
    static constexpr int kStepsPerChunk = 4;
    static constexpr int kPParts = 1;
    static constexpr int kKLoads = 1;
    static constexpr bool kBlockScales = false;
    static constexpr bool kTokenScales = false;
    static constexpr float kSumBias = 0.0f;
    static constexpr int kRowBytes = kHeadDimQk;
    using VWord = uint32_t;
    using KLoad = uint4;
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
struct WgmmaBf16Decode {
    static constexpr float kScale = 1.0f;
    static constexpr int kDimBytes = 2;
    static constexpr arch::MmaType kScoreMma = arch::MmaType::kBF16;
    static constexpr arch::MmaType kValueMma = arch::MmaType::kBF16;
    static constexpr bool kQF16 = false;
    static constexpr bool kQCodes = false;
    static constexpr bool kSsScores = false;
    static constexpr bool kSwizzledStage = false;
    static constexpr int kStepsPerChunk = 4;
    static constexpr int kPParts = 2;
    static constexpr int kKLoads = 2;
    static constexpr bool kBlockScales = false;
    static constexpr bool kTokenScales = false;
    static constexpr float kSumBias = 0.0f;
    static constexpr int kRowBytes = 2 * kHeadDimQk;
    using VWord = uint2;
    using KLoad = uint4;
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

// fp8 caches at 64 rows and in long CTAs (16 rows), f16 scores: the stage in the same swizzled
// layout (so whole tiles come by TMA, as the e4m3 scores' do), K loaded into registers and
// decoded as in the register form. A lane's two A rows g and g + 8 of warp wq hold stage rows
// 16 wq + WgmmaConfig::stage_row(g) and 8 on (see there for the bank conflicts).
template <arch::Fp8Flavor kFlavor>
struct WgmmaSwizzledDecode : WgmmaDecode<kFlavor> {
    static constexpr bool kSwizzledStage = true;
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
// stored, MXFP4 by its block scales.
template <KvFormat F, bool kSwizzled>
struct WgmmaDecodeOf {
    static_assert(F == KvFormat::kFp8E4M3FN || F == KvFormat::kFp8E4M3FNUZ,
                  "the wgmma variant serves fp8, bf16 and MXFP4 caches (rope in the latent's "
                  "dtype, V from the latent rows)");
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

// kLongCta: the long-CTA kernel of 16-row fp8 plans (variants.h, wgmma_long_cta): three solo
// consumers.
template <KvFormat F, int kRows, bool kFp8Mma = false, bool kLongCta = false>
struct WgmmaConfig {
    static_assert(kRows == 16 || kRows == 32 || kRows == 64, "16, 32 or 64 rows per CTA");
    static_assert(F != KvFormat::kBf16 || kRows <= 32,
                  "bf16 caches: 16 or 32 rows (two bf16 stages do not fit beside 64 rows' Q^T)");
    static constexpr int N = kRows;  // wgmma's N: every product covers all rows
    static_assert(!kFp8Mma || F == KvFormat::kFp8E4M3FN, "e4m3 MMA: e4m3fn caches only");
    // MXFP4 at 16 and 32 rows: decoder warpgroups (16 rows: two, warps 12..19; 32 rows: one,
    // warps 12..15) turn each MXFP4 tile (the producer's raw ring) into e4m3fn codes with
    // per-token factors, and the consumers run the e4m3fn cache's code on it
    // (WgmmaMxfp4StagedDecode): each element is decoded once to e4m3fn, off the consumers.
    // (64 rows: the consumers decode to bf16, WgmmaMxfp4Decode; their 240 registers leave none
    // for a decoder warpgroup.)
    static constexpr bool kMxfp4Rows = F == KvFormat::kMxfp4;
    static constexpr bool kStagedDecode = kMxfp4Rows && kRows <= 32;
    using Decode = std::conditional_t<
        kFp8Mma, std::conditional_t<kRows == 64, WgmmaFp8MmaSsDecode, WgmmaFp8MmaDecode>,
        std::conditional_t<kStagedDecode, WgmmaMxfp4StagedDecode,
                           typename WgmmaDecodeOf<F, wgmma_swizzled_stages(
                                                         F, kFp8Mma, kRows, kLongCta)>::type>>;

    static constexpr int kTileTokens = kWgmmaTileTokens;  // wgmma's M
    static_assert(kTileTokens == 64, "S^T and V^T fragments assume 64-token tiles");
    // The producer's consecutive-slot loop (wgmma_producer_tiles' kConsecutive, for caches
    // whose tiles lie in consecutive slots: contiguous caches, pages of a multiple of 64
    // tokens) at 32 rows of bf16 and MXFP4 (other page sizes keep the shuffled loop). 64 rows
    // of fp8 and long CTAs took it until 0.7.20 (long CTAs on a contiguous cache from 112
    // tiles); their stages are swizzled now (kSwizzled: wgmma_producer_tiles_ss). A/B on
    // the H200 against the shuffled loop (twenty-seventh session, every kernel): 64 rows
    // 0.923-0.927 (bs64 kv4096 H128 156.2 -> 144.3 us, bs128 kv4096 H16 q4 163.0 -> 151.0);
    // bf16 32 rows 0.983-0.995 (H128 320.2 -> 315.1); fp8 32 rows 1.008-1.014; the 16-row
    // seesaw 1.01-1.13, most at 4-8 tiles a CTA (bs4 kv8192 18.9 -> 21.3 us; bf16 16 rows
    // 1.00-1.03). Twenty-eighth session: MXFP4 32 rows 0.984-0.989, its 16 rows 1.00-1.02
    // contiguous (0.99 on 64-token pages); long CTAs (bs256 H16) 1.020 / 1.015 / 1.003 / 0.993
    // at 40 / 64 / 96 / 128 tiles, and on 64-token pages 0.937 at 128 (351.5 -> 329.4 us: the
    // shuffled loop's per-lane page-table loads). Why the faster producer costs short CTAs is
    // not measured.
    static constexpr bool kConsecutiveRows =
        kRows == 32 && (F == KvFormat::kBf16 || F == KvFormat::kMxfp4);
    // Long CTAs of 16-row fp8 plans: three solo consumers, each taking every third tile;
    // consumers 0 and 1 store the output's halves after the merge.
    static_assert(!kLongCta || wgmma_long_cta(F, kFp8Mma, kRows, kWgmmaLongCtaTiles),
                  "the long-CTA kernel: 16 rows of fp8 caches with bf16 scores");
    static constexpr int kConsumers = kLongCta ? 3 : 2;
    // From 32 rows the producer starts once the consumers have issued their Q loads (write_q):
    // its first tiles otherwise queue ahead of Q, whose wait opens every CTA (fp8 H16 q2 0.97x,
    // H16 q4 0.98x, H128 q1 0.99x on H200). At 16 rows the early tiles paid more (1.03-1.08x).
    static constexpr bool kQLoadsFirst = kRows >= 32;
    static constexpr int kValueDims = kHeadDimV / 2;  // per storing consumer (0 and 1)
    static constexpr int kPairs = kValueDims / 128;            // O^T m-block pairs per consumer
    static constexpr int kProducerWarp = 4 * kConsumers;
    static constexpr int kDecoderWarp = kProducerWarp + 4;  // kStagedDecode: warps 12..
    // kStagedDecode: 16 rows two decoder warpgroups (4 threads a tile row), 32 rows one (2 a
    // row): the consumers, with twice 16 rows' work a tile, then get 200 registers, not 160
    // (ptxas: they spill below ~160).
    static constexpr int kDecoderThreads = kStagedDecode ? (kRows == 16 ? 256 : 128) : 0;
    static constexpr int kThreads = kDecoderWarp * 32 + kDecoderThreads;
    static constexpr int kConsumerThreads = kProducerWarp * 32;
    static constexpr int kProducerThreads = 128;
    // setmaxnreg budgets. The consumers' increase is served only from what the producer's
    // (and the decoders') decrease frees of the CTA's launch allocation (kLaunchRegs per
    // thread, what __launch_bounds__(kThreads, 1) leaves: 96 at 640 threads, 128 at 512, 168 at
    // 384); asking for more blocks forever.
    static constexpr int kLaunchRegs = 65536 / kThreads / 8 * 8;
    // kStagedDecode: the producer's MXFP4 row loop unrolled kMxfp4RowUnroll times (in 32
    // registers at 16 rows, 40 at 32): the producer issued that loop ~85 % of its time (ncu,
    // sixteenth session) and bounded the staged kernel then.
    static constexpr int kMxfp4RowUnroll = kStagedDecode ? 8 : 1;
    // (Three solo consumers: the producer spilled 36 / 72 bytes at 24; 32 fits, and leaves the
    // consumers their 160.)
    static constexpr int kProducerRegs =
        kStagedDecode ? (kRows == 16 ? 32 : 40) : (kLongCta ? 32 : 24);
    // 16 rows: 96 - 32 and 2 x (96 - 64) free 64 x 128 + 32 x 256 for 64 x 256 more (160;
    // the decoders, with their rope pieces apart, spill at 48 and 56, the producer fits 32).
    // 32 rows: 128 - 40 and 128 - 72 free 88 x 128 + 56 x 128 for 72 x 256 more (200); the
    // decoder holds its 9 pieces in 72 (64 spilled), the consumers need ~160 (152 spilled).
    static constexpr int kDecoderRegs = kStagedDecode ? (kRows == 16 ? 64 : 72) : 56;
    // Three solo consumers: 128 - 32 free 96 x 128 for 32 x 384 more (160; exact).
    static constexpr int kConsumerRegs =
        kStagedDecode ? (kRows == 16 ? 160 : 200) : (kLongCta ? 160 : 240);
    static_assert((kLaunchRegs - kProducerRegs) * kProducerThreads +
                          (kLaunchRegs - kDecoderRegs) * kDecoderThreads >=
                      (kConsumerRegs - kLaunchRegs) * kConsumerThreads,
                  "the consumers' registers come from the producer's (and the decoder's)");
    static constexpr int kCols = N / 4;  // rows (N columns) a lane holds accumulators of
    // Even and odd k16 steps of S^T in two accumulator chains where the registers allow.
    static constexpr bool kSplitSChain = N <= 32 && !kLongCta;

    // Cache tile: 64 rows of 576 fp8 codes (bf16 values; MXFP4: 288 packed bytes and the 32-byte
    // code slot), pitch 592 (1168; MXFP4 336, 80 mod 128 as 592; see the bank notes
    // above: 16 mod 32).
    static constexpr int kRowBytes = Decode::kRowBytes;
    static constexpr int kRowPitch = kRowBytes + 16;
    static_assert(kRowPitch % 32 == 16, "rows 4 apart in opposite halves of the banks");
    // Decode::kSwizzledStage (64 rows of fp8, long CTAs): the tile in wgmma's K-major layout,
    // stage row m holding token m, no pad (ss_offset): the latent bytes in 4 blocks of 128 bytes
    // a row (kSsBlockBytes each) of 1 KB atoms (8 rows) with the 128-byte swizzle, then the
    // rope's 64 bytes a row in 512-byte atoms with the 64-byte swizzle; the layout TMA writes,
    // and with Decode::kSsScores (e4m3 scores) the A operand of the score product as it is.
    // (Without a swizzle, core matrices of 8 rows x 16 bytes, e4m3 scores ran 1.36-1.5x slower:
    // thirty-sixth session.)
    static constexpr bool kSsScores = Decode::kSsScores;
    static constexpr bool kSwizzled = Decode::kSwizzledStage;
    static_assert(kSwizzled || !kSsScores, "e4m3 scores from shared memory: a swizzled stage");
    static_assert(kSwizzled == wgmma_swizzled_stages(F, kFp8Mma, kRows, kLongCta),
                  "the host's view of which kernels take TMA (variants.h, plans)");
    static constexpr int kSsBlockBytes = kTileTokens * 128;
    static constexpr int kStageBytes =
        kSwizzled ? kTileTokens * kRowBytes : kTileTokens * kRowPitch;
    static constexpr int kChunks = kHeadDimQk / 64;  // chunks of 4 k16 (2 e4m3 k32) steps
    static constexpr int kQtStepBytes = N * 32;      // one k-step of Q^T: N rows x 32 bytes
    static constexpr int kQtBytes = kChunks * Decode::kStepsPerChunk * kQtStepBytes;
    static constexpr int kPtStepBytes = N * 32;      // one k16 step of P^T: N rows x 16 halves
    static constexpr int kPtBytes = (kTileTokens / 16) * kPtStepBytes;  // one part
    static constexpr int kPParts = Decode::kPParts;  // per tile: P, or bf16 hi and lo

    // The softmax's per-row work is done once per row and tile, by the row's owner: thread n of
    // the consumer whose tile it is (kOwnerWarps warps own the N rows).
    static constexpr int kOwnerWarps = (N + 31) / 32;
    static_assert(kOwnerWarps <= 2, "the flag words: two per consumer and round parity");

    // Shared memory: Q^T | P^T per consumer (kPParts parts) | per consumer and round parity:
    // rescale factors, maxima, rescale flags (one word per owner warp) | per consumer: each
    // row's score coefficient and exp2 offset | tile maxima (per consumer x 2 buffers x 4
    // warps) | row sums | score coefficient | token end | mbarriers | the stage ring (as many
    // stages as fit, up to 6).
    static constexpr int kOffQt = 0;
    static constexpr int kOffPt = kOffQt + kQtBytes;
    static constexpr int kOffAlpha = kOffPt + kConsumers * kPParts * kPtBytes;
    static constexpr int kOffMax = kOffAlpha + kConsumers * 2 * N * 4;
    static constexpr int kOffFlag = kOffMax + kConsumers * 2 * N * 4;
    static constexpr int kOffScale = kOffFlag + kConsumers * 2 * 2 * 4;
    static constexpr int kOffRed = kOffScale + kConsumers * N * 8;
    static constexpr int kOffSum = kOffRed + kConsumers * 2 * 4 * N * 4;
    static_assert(kOffRed % 8 == 0 && 8 * N <= kOffSum - kOffRed, "the epilogue's N row addresses");
    static constexpr int kOffCoef = kOffSum + kConsumers * 4 * N * 4;
    static constexpr int kOffEnd = kOffCoef + N * 4;
    static constexpr int kOffBars = (kOffEnd + N * 4 + 15) / 16 * 16;
    static constexpr int kMaxStages = 6;
    // kStagedDecode: the raw ring of MXFP4 tiles (rows of 288 packed bytes and the 32-byte code
    // slot, pitch 336 as WgmmaMxfp4Decode's) after the e4m3fn stages.
    static constexpr int kRawStages = kStagedDecode ? 2 : 0;
    static constexpr int kRawRowPitch = WgmmaMxfp4Decode::kRowBytes + 16;
    static constexpr int kRawStageBytes = kTileTokens * kRawRowPitch;
    // Where the producer puts MXFP4 rows: the raw ring, or the stages the consumers decode.
    static constexpr int kMxfp4Pitch = kStagedDecode ? kRawRowPitch : kRowPitch;
    // kStagedDecode: the decoder arrives on a stage's "front" barrier once the tile's first
    // kFrontChunks chunks of 64 dims are written, so the score chain can start on them.
    static constexpr int kFrontChunks = 4;
    static_assert(kFrontChunks >= 1 && kFrontChunks < kChunks, "the full wait inside the chain");
    static constexpr int kFrontBars = kStagedDecode ? kMaxStages : 0;
    // Solo consumers (wgmma_consumer_solo): consumer w of C takes tiles w, w + C, ... whole (its
    // own running maxima, O^T of all 512 value dims), and the C results merge once per CTA: no
    // hand-over between the consumers. Where it won (A/B on the H200): 32 rows of fp8 and bf16
    // caches (fp8 H16 q2 bs128 kv4096 0.95x, bf16 bs64 kv4096 H128 0.78x) and 16 rows of bf16
    // (bs256 kv8192 0.82x); 16 rows of fp8 lost 1-8 %, so they keep the seesaw but for long
    // CTAs (kLongCta: three solo consumers, 0.969x at bs256 kv8192). Not with the
    // staged MXFP4 decode (its consumers' 200 registers hold no O of 512 dims), not at 64 rows
    // (O of 512 dims would be 256 registers). With e4m3 scores at 32 rows (5 stages) and three
    // consumers (kLongCta) a stage serves the consumers in turn: the per-consumer full barriers
    // below. (Twenty-sixth session: e4m3 scores at 32 rows solo 0.984x at bs128 kv4096 H16 q2.)
    static constexpr bool kSolo =
        kLongCta || (!kStagedDecode && (kRows == 32 || (kRows == 16 && F == KvFormat::kBf16)));
    // Full and empty barriers: kMaxStages each, and solo kernels room for a full barrier per
    // consumer and stage (kFullSets).
    static constexpr int kFullEmptyBars = (kSolo ? kConsumers + 1 : 2) * kMaxStages;
    static constexpr int kBarBytes =
        (kFullEmptyBars + 2 * kRawStages + kFrontBars + 3 * kConsumers) * 8;
    static constexpr int kSharedBudget = arch::kMaxSharedBytesPerBlock;
    // (kSwizzled: the swizzle atoms' 1 KB alignment; the shared memory starts 1 KB-aligned.)
    static constexpr int kStageAlign = kSwizzled ? 1024 : 128;
    static constexpr int kStagesFit =
        (kSharedBudget - kOffBars - kBarBytes - (kStageAlign - 1) - kRawStages * kRawStageBytes) /
        kStageBytes;
    static constexpr int kStages = kStagesFit < kMaxStages ? kStagesFit : kMaxStages;
    static_assert(kStages >= 2, "two tiles must fit in shared memory");
    // Solo with a stage count the consumers do not divide (5 stages for 2 or 3 consumers): a
    // stage's uses go round the consumers, and a consumer's parity wait on a phase it is not
    // the next waiter of is not exact (a phase behind has the same parity; waiting on the
    // phases between can block on a phase already passed). So each stage then has a "full"
    // barrier per consumer: tile t completes on full[t % kStages][t % kConsumers], whose
    // phases are that consumer's uses of the stage alone (t / (kStages * kConsumers)).
    static constexpr int kFullSets = kSolo && kStages % kConsumers != 0 ? kConsumers : 1;
    static_assert(kFullSets * kStages <= (kSolo ? kConsumers : 1) * kMaxStages,
                  "the full barriers' room");
    static_assert(kFullSets == 1 || kConsumers <= 3,
                  "per-consumer full barriers need kStages and kConsumers coprime: for 2 or 3 "
                  "consumers, not dividing is enough");
    static constexpr int kEmptyArrivals = kSolo ? 4 : 4 * kConsumers;  // warps that read a stage
    static constexpr int kOffStages =
        (kOffBars + kBarBytes + kStageAlign - 1) / kStageAlign * kStageAlign;
    static_assert(kOffStages % kStageAlign == 0 && kStageBytes % kStageAlign == 0,
                  "every stage at the alignment (kSwizzled: the swizzle atoms')");
    static constexpr int kOffRaw = kOffStages + kStages * kStageBytes;
    static constexpr int kSmemBytes = kOffRaw + kRawStages * kRawStageBytes;
    static_assert(kSmemBytes <= kSharedBudget, "shared memory budget");

    // The first byte (of a token row) and dim of a consumer lane's V words, and the dims between
    // its m-block pairs: 4 consecutive dims per pair, 128 apart (MXFP4: 8 consecutive).
    MLA_DEVICE static constexpr int v_lane_byte(int w, int wq, int g) {
        if constexpr (Decode::kBlockScales) return Decode::v_lane_byte(w, wq, g);
        else return Decode::kDimBytes * v_lane_dim(w, wq, g);
    }
    MLA_DEVICE static constexpr int v_lane_dim(int w, int wq, int g) {
        if constexpr (Decode::kBlockScales) return Decode::v_lane_dim(w, wq, g);
        else return kValueDims * w + 32 * wq + 4 * g;
    }
    static constexpr int kVPairDims = Decode::kBlockScales ? 4 : 128;
    // The lazy rescale's slack (softmax.h): P <= 2^8. MXFP4 values reach 1.5 * 2^127 (e8m0
    // code 254), and one such value times P > 1.33 overflows the f32 accumulators of O, so MXFP4
    // keeps the exact running max (P <= 1), as mma16 does; bf16 values above 2^120 would need
    // the same (not done: no bf16 test holds such values). The staged MXFP4 tile
    // (Decode::kTokenScales) holds e4m3fn codes (<= 448) with the token factors folded into P,
    // so it keeps the lazy rescale.
    static constexpr float kLazyLog2 =
        kMxfp4Rows && !Decode::kTokenScales ? 0.0f : kLazyRescaleLog2;
    // Bytes between a token row's words of two m-block pairs (MXFP4: one word serves both).
    MLA_DEVICE static constexpr int v_pair_bytes() {
        if constexpr (Decode::kBlockScales) return 0;
        else if constexpr (kSwizzled) return ss_offset(0, kVPairDims);
        else return kVPairDims * Decode::kDimBytes;
    }
    // Bytes between the V words of tokens 16 apart (a k-step), and of a token and the next
    // (kSwizzled: of PV k indices 8 apart, stage_row).
    static constexpr int kVStepBytes = kSwizzled ? 2 * 1024 : 16 * kRowPitch;
    static constexpr int kVNextTokenBytes = kSwizzled ? 1024 : kRowPitch;

    // Token (of the warp's 16) of S^T row g + 8 h, and PV k index 8 h + g (see the header).
    MLA_DEVICE static int s_row_token(int g, int h) {
        return ((g & 1) ? (((g & 6) + 4) & 7) + 8 : (g & 6)) + h;
    }
    // kSwizzled: the stage row (tile token, of the warp's 16) of S^T row j = g + 8 h, PV k index
    // j: j itself for e4m3 scores (wgmma reads the stage's rows as its M rows), and for K loaded
    // into registers j with bit 2 flipped where j is odd. Then the 16-byte K loads of one 8-lane
    // phase (rows g = 2i, 2i + 1: stage rows 5 apart mod 8, t = 0..3) meet 8 distinct 16-byte
    // slots of the 128-byte swizzle (and for the rope the two 64-byte halves of the banks), and
    // the 4-byte V loads of a warp (4 rows stage_row(2t (+1)) with distinct bits 1-2) 8 distinct
    // slots too; k index j + 8 is stage row stage_row(j) + 8, 1 KB on.
    MLA_DEVICE static constexpr int stage_row(int j) { return kSsScores ? j : j ^ (4 * (j & 1)); }
    // The byte of stage row m's byte b.
    static_assert(!kSwizzled || kRowBytes == 576, "512 latent and 64 rope bytes a row");
    MLA_DEVICE static constexpr int ss_offset(int m, int b) {
        if (b < 512)
            return (b / 128) * kSsBlockBytes + (m / 8) * 1024 + (m % 8) * 128 +
                   ((((b / 16) % 8) ^ (m % 8)) * 16) + b % 16;
        return 4 * kSsBlockBytes + (m / 8) * 512 + (m % 8) * 64 +
               ((((b - 512) / 16) ^ ((m % 8) / 2)) * 16) + b % 16;
    }
    // Column (query row) of accumulator i of a lane with quad index t (D layout, sm90.h), its
    // column slot (0 .. kCols-1), and the column of a slot.
    MLA_DEVICE static int col_of(int i, int t) { return 8 * (i / 4) + 2 * t + (i & 1); }
    MLA_DEVICE static int slot_of(int i) { return (i / 4) * 2 + (i & 1); }
    MLA_DEVICE static int col_of_slot(int jj, int t) { return 8 * (jj / 2) + 2 * t + (jj & 1); }
};

// The shared-memory pieces every role sees.
template <class Cfg>
struct WgmmaShared {
    uint8_t* qt;
    uint8_t* pt;      // per consumer: Cfg::kPParts x Cfg::kPtBytes
    // Seesaw: per consumer w and round parity r, at (2 w + r) * N (flag: (2 w + r) * 2): what
    // its tile of round i (r = i % 2) did to each row (written by the row's owner). Solo: per
    // consumer w at w * N (flag: w * 2), its latest tile's; max holds its final maxima.
    float* alpha;     // the rescale factor of everything before the tile
    float* max;       // the running maximum after the tile
    int* flag;        // per owner warp: 1 if a factor of its rows is not 1 (and matters)
    float2* scale;    // per consumer: N x {score coefficient, -exp2 offset} of its latest tile
    // The epilogue reuses red (N row addresses) and coef (N row scales); the solo one also
    // alpha (the merge factors f_w of row n at w * N + n) and the stages (the O exchange).
    float* red;       // per consumer: 2 buffers x 4 warps x N tile maxima
    float* sum;       // per consumer: 4 warps x N row sums
    float* coef;      // N
    int* end;         // N
    uint64_t* full;   // kStages
    uint64_t* empty;  // kStages
    uint64_t* p_full;   // per consumer
    uint64_t* p_empty;  // per consumer
    uint64_t* m_full;   // per consumer
    uint64_t* raw_full;   // kRawStages (kStagedDecode)
    uint64_t* raw_empty;  // kRawStages
    uint64_t* front;      // kStages (kStagedDecode): the first kFrontChunks chunks are written
    uint8_t* stages;
    uint8_t* raw;
    const arch::tma::KvMaps* tma;  // the kernel's maps (a __grid_constant__ parameter)

    MLA_DEVICE WgmmaShared(uint8_t* smem, const arch::tma::KvMaps* maps)
        : qt(smem + Cfg::kOffQt),
          pt(smem + Cfg::kOffPt),
          alpha(reinterpret_cast<float*>(smem + Cfg::kOffAlpha)),
          max(reinterpret_cast<float*>(smem + Cfg::kOffMax)),
          flag(reinterpret_cast<int*>(smem + Cfg::kOffFlag)),
          scale(reinterpret_cast<float2*>(smem + Cfg::kOffScale)),
          red(reinterpret_cast<float*>(smem + Cfg::kOffRed)),
          sum(reinterpret_cast<float*>(smem + Cfg::kOffSum)),
          coef(reinterpret_cast<float*>(smem + Cfg::kOffCoef)),
          end(reinterpret_cast<int*>(smem + Cfg::kOffEnd)),
          full(reinterpret_cast<uint64_t*>(smem + Cfg::kOffBars)),
          empty(full + Cfg::kStages * Cfg::kFullSets),
          p_full(empty + Cfg::kStages),
          p_empty(p_full + Cfg::kConsumers),
          m_full(p_empty + Cfg::kConsumers),
          raw_full(m_full + Cfg::kConsumers),
          raw_empty(raw_full + Cfg::kRawStages),
          front(raw_empty + Cfg::kRawStages),
          stages(smem + Cfg::kOffStages),
          raw(smem + Cfg::kOffRaw),
          tma(maps) {}
};

struct WgmmaRows {
    int row0;     // first element-relative row of the CTA
    int t_first;  // element-relative query token of row 0
    int n_tiles;
};

// The roles' code exists only in sm_90a device passes (arch/nvidia/sm90.h).
#if defined(MLA_ARCH_SM90)
namespace wgmma_detail {

// Q^T, f16 (bf16 for a bf16 cache): k-step s, row n, k index k at  s * step_bytes + (n/8) * 256
// + (k/8) * 128 + (n%8) * 16 + (k%8) * 2. Writes 8 consecutive dims d0 .. d0+7 (d0 % 8 == 0) of
// row n, given as bf16 pairs w[0..3] (dims (d0, d0+1), ...), in the K fragment's dim order:
// dims d0 + 4s .. +3 are the k indices 2t, 2t+1, 2t+8, 2t+9 of k-step step0 + s (Decode::qt_place),
// scaled by `up` into f16 where Decode::kQF16.
// e4m3 Q^T (Decode::kQCodes: w[0], w[1] hold the 8 codes): k index k of k-step s at s *
// step_bytes + (n/8) * 256 + (k/16) * 128 + (n%8) * 16 + k%16; dims d0 .. d0+3 are k indices
// 4t .. 4t+3 of k-step step0, dims d0+4 .. d0+7 k indices 4t+16 .. 4t+19.
template <class Decode>
MLA_DEVICE void write_qt8(uint8_t* qt, int step_bytes, int n, int d0, const uint32_t (&w)[4],
                          float up) {
    if constexpr (Decode::kSsScores) {  // natural order: dims d0 .. d0 + 7 at k = d0 % 32 ..
        uint8_t* row = qt + (d0 / 32) * step_bytes + (n / 8) * 256 + ((d0 % 32) / 16) * 128 +
                       (n % 8) * 16 + d0 % 16;
        *reinterpret_cast<uint2*>(row) = make_uint2(w[0], w[1]);
        return;
    }
    int step0 = 0, t = 0;
    Decode::qt_place(d0, step0, t);
    if constexpr (Decode::kQCodes) {
        uint8_t* row = qt + step0 * step_bytes + (n / 8) * 256 + (n % 8) * 16 + 4 * t;
        *reinterpret_cast<uint32_t*>(row) = w[0];
        *reinterpret_cast<uint32_t*>(row + 128) = w[1];
        return;
    }
    uint8_t* row = qt + (n / 8) * 256 + (n % 8) * 16 + 4 * t;  // k = 2t
#pragma unroll
    for (int s = 0; s < 2; ++s) {  // dims d0 + 4s .. +3: words w[2s] = (e0, e1), w[2s+1] = (e2, e3)
        uint8_t* step = row + (step0 + s) * step_bytes;
        uint32_t lo, hi;
        Decode::q_words(w[2 * s], w[2 * s + 1], up, lo, hi);
        *reinterpret_cast<uint32_t*>(step) = lo;          // k = 2t, 2t+1
        *reinterpret_cast<uint32_t*>(step + 128) = hi;    // k = 2t+8, 2t+9
    }
}

// Named barrier (Cfg::kQLoadsFirst): the consumers' Q loads are issued (ids 1 .. 1 + kConsumers
// are the consumers').
constexpr int kQIssuedBarrier = 6;

// Q prologue of the consumer warps (warp cw of the Cfg::kProducerWarp consumer warps): rows
// cw, cw + Cfg::kProducerWarp, ... as f16 Q^T with a per-row power-of-two scale (bf16 caches:
// bf16 Q^T as loaded), each row's score coefficient and token end. Every row of the warp is
// loaded before the first is written: one memory round trip a warp, not one a row (a 64-row
// CTA's warp has 8 rows; Q is cold and the producer's first tiles are in flight beside it).
template <class Cfg>
MLA_DEVICE void write_q(const Params& p, const Stage1Work& work, const WgmmaRows& rows,
                        const WgmmaShared<Cfg>& sh, int cw, int lane) {
    const float q_coef =
        p.sm_scale * kLog2e * p.q_scale * p.kv_scale * Cfg::Decode::kScale;
    constexpr int kPieces = kHeadDimQk / 8;  // 8 dims per piece
    constexpr int kPerLane = (kPieces + 31) / 32;
    constexpr int kWarpRows = (Cfg::N + Cfg::kProducerWarp - 1) / Cfg::kProducerWarp;
    static_assert(1 + Cfg::kConsumers < kQIssuedBarrier, "the consumers' barriers 2, 3, ...");
    uint32_t w[kWarpRows][kPerLane][4];
    bool valid[kWarpRows];
    int ti[kWarpRows];
#pragma unroll
    for (int j = 0; j < kWarpRows; ++j) {
        const int r = cw + j * Cfg::kProducerWarp;
        ti[j] = (rows.row0 + r) / p.num_heads - rows.t_first;  // CTA-relative token
        const int h = (rows.row0 + r) % p.num_heads;
        valid[j] = r < Cfg::N && ti[j] < work.tokens;
        const QRow q = q_row(p, work.q_row + (valid[j] ? ti[j] : 0), h);
#pragma unroll
        for (int i = 0; i < kPerLane; ++i) {
            const int piece = lane + 32 * i;
#pragma unroll
            for (int k = 0; k < 4; ++k) w[j][i][k] = 0u;
            if (!valid[j] || piece >= kPieces) continue;
            // e4m3 scores (Decode::kQCodes) take e4m3fn codes as stored; fp8 Q is widened to
            // bf16 after the arrive below, so that no warp waits on its loads before it.
            if (Cfg::Decode::kQCodes || p.q_format != QFormat::kBf16)
                load_q_codes(q, 8 * piece, w[j][i]);
            else
                load_q_bf16_words(q, 8 * piece, w[j][i]);
        }
    }
    // From 32 rows the producer copies its first tiles once every consumer warp has issued
    // these loads (kQIssuedBarrier), so Q is not queued behind them.
    if constexpr (Cfg::kQLoadsFirst)
        arch::sm90::named_barrier_arrive(kQIssuedBarrier,
                                         Cfg::kConsumerThreads + Cfg::kProducerThreads);
#pragma unroll
    for (int j = 0; j < kWarpRows; ++j) {
        const int r = cw + j * Cfg::kProducerWarp;
        if (r >= Cfg::N) break;
        if (!Cfg::Decode::kQCodes && p.q_format != QFormat::kBf16) {
#pragma unroll
            for (int i = 0; i < kPerLane; ++i) widen_q_fp8_words(p.q_format, w[j][i]);
        }
        int k = 0;  // bf16 Q^T and e4m3 codes: no scale
        if constexpr (Cfg::Decode::kQF16) {
            uint32_t amax_bits = 0;
#pragma unroll
            for (int i = 0; i < kPerLane; ++i) {
#pragma unroll
                for (int e = 0; e < 4; ++e)
                    amax_bits = max(amax_bits,
                                    max(w[j][i][e] & 0x7fffu, (w[j][i][e] >> 16) & 0x7fffu));
            }
            float amax = arch::bf16_to_float(static_cast<uint16_t>(amax_bits));
#pragma unroll
            for (int mask = 16; mask > 0; mask >>= 1)
                amax = fmaxf(amax, arch::shfl_xor(amax, mask));
            k = f16_row_scale_exponent(amax);
        }
        const float up = exp2_int(k);
#pragma unroll
        for (int i = 0; i < kPerLane; ++i) {
            const int piece = lane + 32 * i;
            if (piece < kPieces)
                write_qt8<typename Cfg::Decode>(sh.qt, Cfg::kQtStepBytes, r, 8 * piece, w[j][i],
                                                up);
        }
        if (lane == 0) {
            // Kept >= the least normal float: the softmax scales -inf (masked) scores by it.
            sh.coef[r] = fmaxf(q_coef * exp2_int(-k), 1.17549435e-38f);
            // Token end of this row, relative to tok_begin: its causal limit within the split
            // (nothing if the row is not valid).
            sh.end[r] = static_cast<int>(valid[j] ? stage1_token_end(work, ti[j]) - work.tok_begin
                                                  : 0);
        }
    }
}

// Where a lane's K loads of a tile lie: in the register form its two token rows from the lane's
// first byte (a: S^T row g's, b: row g + 8's); in a swizzled stage (Cfg::kSwizzled) the shared
// address of its latent bytes of chunk 0 (a_s) and of its rope bytes (rope_s) in S^T row g's
// stage row r (row g + 8's: 8 rows on, 1 KB in the latent blocks, 512 bytes in the rope's).
// (ss_offset(r, 64 c + 16 t) = (c / 2) kSsBlockBytes + ss_offset(r, 16 t) ^ 64 (c % 2): the
// swizzle flips bit 2 of the 16-byte slot t ^ r % 8 for odd chunks; the stage is 1 KB-aligned,
// so the odd chunks' address is a_s ^ 64.)
struct KRows {
    const uint8_t* a;
    const uint8_t* b;
    uint32_t a_s, rope_s;
};
template <class Cfg>
MLA_DEVICE KRows k_rows(const uint8_t* tile, int s_tok0, int s_tok1, int t4) {
    KRows k{};
    if constexpr (Cfg::kSwizzled) {
        const uint32_t tile_s = arch::sm90::smem_addr(tile);
        k.a_s = tile_s + Cfg::ss_offset(s_tok0, 16 * t4);
        k.rope_s = tile_s + Cfg::ss_offset(s_tok0, 512 + 16 * t4);
    } else {
        const int k_lane = Cfg::Decode::k_lane_offset(t4);
        k.a = tile + s_tok0 * Cfg::kRowPitch + k_lane;
        k.b = tile + s_tok1 * Cfg::kRowPitch + k_lane;
    }
    return k;
}
// Load l of chunk c of the lane's S^T row g (row = 0) or g + 8 (row = 1).
template <class Cfg>
MLA_DEVICE typename Cfg::Decode::KLoad load_k(const KRows& k, int c, int l, int row, int t4) {
    if constexpr (Cfg::kSwizzled) {
        static_assert(Cfg::Decode::kKLoads == 1, "one 16-byte load a row and chunk");
        const uint32_t lat = ((c & 1) ? k.a_s ^ 64u : k.a_s) + (c / 2) * Cfg::kSsBlockBytes;
        return arch::sm90::load_shared_16(c < Cfg::kChunks - 1 ? lat + 1024 * row
                                                               : k.rope_s + 512 * row);
    } else {
        return Cfg::Decode::load_k(row == 0 ? k.a : k.b, c, l, t4);
    }
}

// S^T of one tile over 36 k16 steps (18 e4m3 k32 steps; unscaled): A = K of the lane's two token
// rows (decoded where fp8 on f16), Decode::kStepsPerChunk steps per chunk of Decode::kKLoads
// 16-byte loads, the next chunk's loads in
// flight while this one's products run; with Cfg::kSplitSChain even and odd steps accumulate
// separately (summed into s). Decode::kTokenScales: the rope chunk's steps accumulate into
// s_rope instead (its token factor differs from the latent dims'); otherwise s_rope is unused.
template <class Cfg>
MLA_DEVICE void score_products(const KRows& k, int t4, uint64_t qt_desc0, float (&s)[Cfg::N / 2],
                               float (&s_rope)[Cfg::N / 2], uint64_t* full, int phase) {
    namespace hw = arch::sm90;
    using Decode = typename Cfg::Decode;
    constexpr int N = Cfg::N;
    constexpr int L = Decode::kKLoads;
    float s_odd[N / 2];
#pragma unroll
    for (int i = 0; i < N / 2; ++i) s[i] = s_odd[i] = 0.0f;
    if constexpr (Decode::kTokenScales) {
#pragma unroll
        for (int i = 0; i < N / 2; ++i) s_rope[i] = 0.0f;
    }
    using KLoad = typename Decode::KLoad;
    KLoad r0[L], r1[L];
#pragma unroll
    for (int l = 0; l < L; ++l) {
        r0[l] = load_k<Cfg>(k, 0, l, 0, t4);
        r1[l] = load_k<Cfg>(k, 0, l, 1, t4);
    }
#pragma unroll
    for (int c = 0; c < Cfg::kChunks; ++c) {
        KLoad c0[L], c1[L];
#pragma unroll
        for (int l = 0; l < L; ++l) {
            c0[l] = r0[l];
            c1[l] = r1[l];
        }
        if (c + 1 < Cfg::kChunks) {
            // kStagedDecode: the consumer waited for the tile's front chunks only.
            if (Cfg::kStagedDecode && c + 1 == Cfg::kFrontChunks) hw::mbarrier_wait(full, phase);
#pragma unroll
            for (int l = 0; l < L; ++l) {
                r0[l] = load_k<Cfg>(k, c + 1, l, 0, t4);
                r1[l] = load_k<Cfg>(k, c + 1, l, 1, t4);
            }
        }
        constexpr int kSteps = Decode::kStepsPerChunk;
        uint32_t a[kSteps][4];
        Decode::k_fragments(c0, c1, a);
        hw::wgmma_fence();
#pragma unroll
        for (int st = 0; st < kSteps; ++st) {
            const uint64_t desc = qt_desc0 + (((c * kSteps + st) * Cfg::kQtStepBytes) >> 4);
            if (Decode::kTokenScales && c == Cfg::kChunks - 1)
                hw::Wgmma<Decode::kScoreMma, N>::run(s_rope, a[st], desc, st > 0);
            else if (Cfg::kSplitSChain && (st & 1))
                hw::Wgmma<Decode::kScoreMma, N>::run(s_odd, a[st], desc, c * kSteps + st > 1);
            else
                hw::Wgmma<Decode::kScoreMma, N>::run(s, a[st], desc, c + st > 0);
        }
        hw::wgmma_commit();
        hw::wgmma_wait<1>();
    }
    hw::wgmma_wait<0>();
    hw::fence_operands(s);
    hw::fence_operands(s_odd);
    if constexpr (Decode::kTokenScales) hw::fence_operands(s_rope);
    if constexpr (Cfg::kSplitSChain) {
#pragma unroll
        for (int i = 0; i < N / 2; ++i) s[i] += s_odd[i];
    }
}

// kSsScores: S^T of one tile (the stage at shared address tile_s) as 18 m64nNk32 e4m3 products
// with both operands by descriptor (A: k-step j at 32 (j % 4) in latent block j / 4, or at
// 32 (j - 16) in the rope block; B: Q^T's k-step j), committed as one group; the caller waits.
template <class Cfg>
MLA_DEVICE void score_products_ss(uint32_t tile_s, uint64_t qt_desc0, float (&s)[Cfg::N / 2]) {
    namespace hw = arch::sm90;
    constexpr int kSteps = kHeadDimQk / 32;
#pragma unroll
    for (int j = 0; j < kSteps; ++j) {
        const uint64_t a_desc =
            j < 16 ? hw::kmajor_swizzled_desc<128>(
                         tile_s + (j / 4) * Cfg::kSsBlockBytes + 32 * (j % 4), 1024)
                   : hw::kmajor_swizzled_desc<64>(tile_s + 4 * Cfg::kSsBlockBytes + 32 * (j - 16),
                                                  512);
        const uint64_t b_desc = qt_desc0 + ((j * Cfg::kQtStepBytes) >> 4);
        hw::WgmmaSs<Cfg::N>::run(s, a_desc, b_desc, j > 0);
    }
    hw::wgmma_commit();
}

// The warp's tile maxima per row: a lane's kCols slot maxima (its rows col_of_slot(jj, t4))
// reduced over the 8 lanes g that share t4 (lane bits 2..4), by halving: in each of the three
// shuffle rounds a lane keeps half of its values (the half its lane bit names) and takes the
// other lanes' maxima of that half, so the rounds cost kCols / 2, kCols / 4, kCols / 8
// shuffles (not kCols each). The lanes then hold every row's maximum once and write it to
// red[row]. (16 rows: the third round reduces in full, so lanes g and g ^ 1 hold the same row's
// maximum; the half with lane bit 2 set returns without writing, each row is written once.)
template <class Cfg>
MLA_DEVICE void reduce_tile_maxima(float (&v)[Cfg::kCols], int lane, float* red) {
    constexpr int K = Cfg::kCols;
    static_assert(K >= 4 && K % 4 == 0, "16, 32 or 64 rows");
    constexpr int h0 = K / 2, h1 = K / 4, h2 = K / 8;  // h2 == 0: 16 rows
    int base = 0;  // the slot of v[0]
    auto halve = [&](auto h_const, int mask) {
        constexpr int h = decltype(h_const)::value;
        const bool up = (lane & mask) != 0;
#pragma unroll
        for (int i = 0; i < h; ++i) {
            const float send = up ? v[i] : v[i + h];
            const float keep = up ? v[i + h] : v[i];
            v[i] = fmaxf(keep, arch::shfl_xor(send, mask));
        }
        if (up) base += h;
    };
    halve(std::integral_constant<int, h0>{}, 16);
    halve(std::integral_constant<int, h1>{}, 8);
    if constexpr (h2 > 0) {
        halve(std::integral_constant<int, h2>{}, 4);
    } else {
        v[0] = fmaxf(v[0], arch::shfl_xor(v[0], 4));
        if (lane & 4) return;  // lanes g and g ^ 1 hold the same row
    }
    constexpr int kLeft = h2 > 0 ? h2 : 1;
    const int t4 = lane & 3;
#pragma unroll
    for (int i = 0; i < kLeft; ++i) red[Cfg::col_of_slot(base + i, t4)] = v[i];
}

// Four consecutive dims of an O row: bf16 in the final O, fp32 in a split's partial O.
MLA_DEVICE void store_o4(uint16_t* dst, float a, float b, float c, float d) {
    uint2 v;
    v.x = arch::pack_bf16x2(a, b);
    v.y = arch::pack_bf16x2(c, d);
    *reinterpret_cast<uint2*>(dst) = v;
}
MLA_DEVICE void store_o4(float* dst, float a, float b, float c, float d) {
    *reinterpret_cast<float4*>(dst) = make_float4(a, b, c, d);
}

// The epilogue's stores of one consumer thread: for each of its column slots, the row's
// address (0: no such row) and scale from the per-row pass, then its O^T accumulators of that
// row, 4 consecutive dims per m-block pair, at dims dim0 + Cfg::kVPairDims pp.
template <class Cfg, class T>
MLA_DEVICE void store_o_slots(const float (&o)[2 * Cfg::kPairs][Cfg::N / 2],
                              const uint64_t* row_ptr, const float* row_scale, int t4, int dim0) {
#pragma unroll
    for (int jj = 0; jj < Cfg::kCols; ++jj) {
        const int n = Cfg::col_of_slot(jj, t4);
        const uint64_t row = row_ptr[n];
        if (row == 0) continue;
        const float scale = row_scale[n];
        const int i0 = (jj / 2) * 4 + (jj & 1);  // accumulator index of (row g, this column)
        T* dst = reinterpret_cast<T*>(row) + dim0;
#pragma unroll
        for (int pp = 0; pp < Cfg::kPairs; ++pp)
            store_o4(dst + Cfg::kVPairDims * pp, o[2 * pp][i0] * scale, o[2 * pp][i0 + 2] * scale,
                     o[2 * pp + 1][i0] * scale, o[2 * pp + 1][i0 + 2] * scale);
    }
}

}  // namespace wgmma_detail

// ---- producer warpgroup: the cache rows, kStages tiles ahead --------------------------------
namespace wgmma_detail {

// The producer's copies of one tile, warp pw: rows pw + 4 i (i < kTileTokens / 4), each row's
// 16-byte pieces 0..31 (the latent dims, from the latent row: src of row pw + 4 i is lane i's
// my_src) by one instruction, a lane a piece, and pieces 32..35 (the rope dims, from the rope
// row: the same row further on for a 576-wide cache). A row past `valid` is zero-filled (source
// size 0). Two ways to copy the rope pieces:
//   * in blocks: after each block of 8 rows' latent pieces, the rope pieces of those 8 rows by
//     one instruction (lane l: row 8 b + l / 4, piece l % 4);
//   * per row: lanes 0..3 with each row's latent copy (4 lanes of a 32-lane instruction).
// The per-row copies are ~31 shared wavefronts each by ncu (44 % of all at 16 rows). In blocks,
// A/B on the H200: bs256 kv8192 H16 390 -> 359 us, H128 189 -> 184, but CTAs of <= 16 tiles
// 2-6 % slower (bs4 kv8192 21.3 -> 22.5), whether the rope copies go first, last or per block.
// ncu: the same cycles at its locked base clock (bs4 kv8192: 23.8k vs 23.7k), 8 % more at boost
// clock (26.9k vs 24.9k): a latency effect, not understood yet (docs/notes/stage1_wgmma.md).
// So the producer picks by its CTA's tile count; the threshold from A/Bs of 17, 33 and 9 (9:
// bs4 kv8192 22.4 -> 20.7, bs32 kv1024 21.3 -> 19.7, bs64 kv1024 28.4 -> 27.6 us; 16-tile
// CTAs lose per row: bs1 kv65536 36.5 -> 41.4 at 17). bf16 tiles take the same threshold
// (not measured for them).
constexpr int kRopeBlockMinTiles = 9;
// Threads a tile row in the producer on pages of 1, 2, 4 and 8 tokens (kOwnPageLanes; each
// thread 4 rows, a warp's copy 4 rows' 128 bytes): fp8 at 64 rows and (bf16 scores) 32, bf16 at
// 16 (and 16-token pages) and 32. Thirty-fifth session, against the shuffled loop: fp8 at 32
// rows (bs128 kv4096 H16 q2) 0.978 / 0.985 on pages of 1 / 4 (113.3 -> 110.8 us; contiguous
// 105.3); bf16 at 16 rows (bs32 kv8192 H16) 0.921-0.926 on 1-token pages (103.7 -> 96.0;
// contiguous 94.1), 0.965 on 16-token pages, at 32 rows (bs128 kv4096 H16 q2) 0.970 / 0.968 on
// 1 / 4; e4m3 scores at 32 rows 0.977 there but 1.034 in CTAs of 8 tiles (bs32 kv2048 H16 q2:
// 30.1 -> 31.2), not taken. 64 rows, A/B on the H200 against the shuffled loop (thirty-fourth
// session, H128 q1 bs64 kv4096): bf16 scores 0.921-0.928 (1-token pages 160.0 -> 147.7 us;
// 16-token pages 144.6, contiguous ~142), H16 q4 bs128 kv4096 0.912-0.916; e4m3 scores 0.973 /
// 0.984 / 0.988 / 1.006 on pages of 1 / 2 / 4 / 8, H16 q4 0.950-0.957. With 4 threads a row (8
// rows' 64 bytes a copy): bf16 scores 0.96-0.97, e4m3 scores 1.02-1.09; 16 spilled 120 bytes
// at the producer's 24 registers.
constexpr int kOwnPageRowThreads = 8;

// The 16-byte pieces of a tile row as the producer's copies take them (copy_tile_rows,
// copy_tile_rows_consecutive): the latent ones kLatentPerLane a lane, the rope ones of
// kBlockRows rows per instruction in blocks.
template <class Cfg>
struct TileRowPieces {
    static constexpr int kPieces = Cfg::kRowBytes / 16;
    static constexpr int kLatentPieces = kKvLoraRank * Cfg::Decode::kDimBytes / 16;
    static constexpr int kRopePieces = kPieces - kLatentPieces;
    static constexpr int kLatentPerLane = kLatentPieces / 32;
    static_assert(kLatentPieces % 32 == 0 && 32 % kRopePieces == 0,
                  "whole latent pieces per lane, the rope pieces of whole rows per instruction");
    static constexpr int kBlockRows = 32 / kRopePieces;
    static_assert((Cfg::kTileTokens / 4) % kBlockRows == 0, "whole blocks of rows per warp");
};

// bf16 rows (72 pieces): two latent pieces per lane and row (lane, lane + 32), the rope pieces
// of 4 rows per instruction in blocks, or lanes 0..7 per row.
template <class Cfg, bool kRopeBlocks>
MLA_DEVICE void copy_tile_rows(uint8_t* dst, const uint8_t* my_src, const uint8_t* my_rope,
                               int valid, int pw, int lane) {
    using R = TileRowPieces<Cfg>;
    constexpr int kLatentPieces = R::kLatentPieces, kRopePieces = R::kRopePieces;
    constexpr int kLatentPerLane = R::kLatentPerLane, kBlockRows = R::kBlockRows;
#pragma unroll 1
    for (int b = 0; b < Cfg::kTileTokens / 4 / kBlockRows; ++b) {
#pragma unroll
        for (int j = 0; j < kBlockRows; ++j) {
            const int i = kBlockRows * b + j;
            const int row = pw + 4 * i;
            const uint8_t* src = reinterpret_cast<const uint8_t*>(
                __shfl_sync(0xffffffffu, reinterpret_cast<uintptr_t>(my_src), i));
            uint8_t* d = dst + row * Cfg::kRowPitch;
#pragma unroll
            for (int k = 0; k < kLatentPerLane; ++k)
                arch::copy_16_async(d + 16 * (lane + 32 * k), src + 16 * (lane + 32 * k),
                                    row < valid);
            if (!kRopeBlocks) {
                const uint8_t* rope = reinterpret_cast<const uint8_t*>(
                    __shfl_sync(0xffffffffu, reinterpret_cast<uintptr_t>(my_rope), i));
                if (lane < kRopePieces)
                    arch::copy_16_async(d + 16 * (kLatentPieces + lane), rope + 16 * lane,
                                        row < valid);
            }
        }
        if (kRopeBlocks) {
            const int i = kBlockRows * b + lane / kRopePieces;
            const int piece = lane % kRopePieces;
            const int row = pw + 4 * i;
            const uint8_t* rope = reinterpret_cast<const uint8_t*>(
                __shfl_sync(0xffffffffu, reinterpret_cast<uintptr_t>(my_rope), i));
            arch::copy_16_async(dst + row * Cfg::kRowPitch + 16 * (kLatentPieces + piece),
                                rope + 16 * piece, row < valid);
        }
    }
}

// copy_tile_rows where the tile's rows lie in consecutive cache slots (wgmma_producer_tiles'
// kConsecutive: 32 rows of bf16, WgmmaConfig::kConsecutiveRows (until 0.7.20 also 64 rows of
// fp8 and long CTAs); with kWarpRun fp8 at 32 rows on pages of a multiple of 16): the
// same copies, each row's source 4 rows' strides after the previous one of the warp, from the
// warp's first row (src0, rope0: row pw's, or row 0's where the warp has no valid row) instead
// of a lane's shuffled address. It was written from ncu of the 16-row long-CTA kernel (bs256
// kv8192), where in the shuffled loop a chain of shuffle, address add and copy per row at the
// producer's 32 registers kept it issuing ~90 % of its time; there it paid only from ~112 tiles
// a CTA on contiguous caches (0.993-0.996 at 128) and on 64-token pages (0.935-0.952 at 40-128
// tiles), at 64 rows it did (0.92-0.94). Rows past `valid` (zero-filled) keep the last valid
// row's address. kWarpRun: warp pw takes the tile's rows 16 pw .. 16 pw + 15 instead of pw,
// pw + 4, ... (the caller's steps are then one row's strides): on pages of a multiple of 16
// tokens (and on a contiguous cache) the warp's rows lie in consecutive slots
// (wgmma_producer_tiles' kWarpRun).
template <class Cfg, bool kRopeBlocks, bool kWarpRun = false>
MLA_DEVICE void copy_tile_rows_consecutive(uint8_t* dst, const uint8_t* src0,
                                           const uint8_t* rope0, int64_t src_step,
                                           int64_t rope_step, int valid, int pw, int lane) {
    using R = TileRowPieces<Cfg>;
    constexpr int kLatentPieces = R::kLatentPieces, kRopePieces = R::kRopePieces;
    constexpr int kLatentPerLane = R::kLatentPerLane, kBlockRows = R::kBlockRows;
    constexpr int kRowStep = kWarpRun ? 1 : 4;  // tile rows between a warp's consecutive rows
    const int row0 = kWarpRun ? pw * (Cfg::kTileTokens / 4) : pw;
    const uint8_t* src = src0;
    const uint8_t* rope = rope0;
#pragma unroll 1
    for (int b = 0; b < Cfg::kTileTokens / 4 / kBlockRows; ++b) {
        const uint8_t* block_rope = rope;  // the warp's row kBlockRows b (kRopeBlocks)
#pragma unroll
        for (int j = 0; j < kBlockRows; ++j) {
            const int row = row0 + kRowStep * (kBlockRows * b + j);
            uint8_t* d = dst + row * Cfg::kRowPitch;
#pragma unroll
            for (int k = 0; k < kLatentPerLane; ++k)
                arch::copy_16_async(d + 16 * (lane + 32 * k), src + 16 * (lane + 32 * k),
                                    row < valid);
            if (!kRopeBlocks && lane < kRopePieces)
                arch::copy_16_async(d + 16 * (kLatentPieces + lane), rope + 16 * lane,
                                    row < valid);
            if (row + kRowStep < valid) {
                src += src_step;
                rope += rope_step;
            }
        }
        if (kRopeBlocks) {
            const int i = lane / kRopePieces;  // of the block's rows
            const int piece = lane % kRopePieces;
            const int row = row0 + kRowStep * (kBlockRows * b + i);
            arch::copy_16_async(dst + row * Cfg::kRowPitch + 16 * (kLatentPieces + piece),
                                (row < valid ? block_rope + i * rope_step : block_rope) +
                                    16 * piece,
                                row < valid);
        }
    }
}

// fp8 and bf16 rows on pages of 1, 2, 4 or 8 tokens, and 16 for bf16 at 16 rows (a power of two
// up to 128 / L; wgmma_producer_tiles' kOwnPageLanes = L, threads a row): thread pt of the
// producer warpgroup copies rows q + (128 / L) j (q = pt / L, j < L / 2), each from its own
// page (pages[j], the row at in_page in it: no shuffle), its
// latent pieces s, s + L, .. (s = pt % L; 32 / L of fp8's 32, 64 / L of bf16's 64) and, where
// s < kRopePieces (4, 8), rope piece s, all at immediate offsets from the row's one address: a
// warp's instruction covers 32 / L rows' 16 L contiguous bytes. Rows past `valid` are
// zero-filled (source size 0). dst_s: the stage's shared address.
template <class Cfg, int L>
MLA_DEVICE void copy_tile_rows_own_pages(uint32_t dst_s, const Params& p,
                                         const int32_t (&pages)[L / 2], int page_shift,
                                         int64_t in_page, int valid, int q, int s) {
    using R = TileRowPieces<Cfg>;
    static_assert(R::kLatentPieces % L == 0 && R::kRopePieces <= L,
                  "whole latent pieces a thread, at most one rope piece");
    static_assert(L == 4 || L == 8 || L == 16, "4, 8 or 16 threads a row");
#pragma unroll
    for (int j = 0; j < L / 2; ++j) {
        const int row = q + (128 / L) * j;
        const bool ok = row < valid;
        const int64_t slot = (int64_t{pages[j]} << page_shift) | in_page;
        const uint8_t* src = p.kv + slot * p.kv_stride_bytes + 16 * s;
        const uint8_t* rope = p.kpe + slot * p.kpe_stride_bytes + 16 * s;
        const uint32_t d = dst_s + row * Cfg::kRowPitch + 16 * s;
#pragma unroll
        for (int k = 0; k < R::kLatentPieces / L; ++k)
            arch::copy_16_async(d + 16 * L * k, src + 16 * L * k, ok);
        arch::copy_16_async_if(d + 16 * R::kLatentPieces, rope, ok, s < R::kRopePieces);
    }
}

// Cfg::kSwizzled (64 rows of fp8, long CTAs): producer thread pt copies stage rows m = r + 16 j
// (r = pt / 8, j < 4) of the tile, token m, its 16-byte piece c = pt % 8 of each 128-byte
// latent block and (c < kRopePieces) rope piece c, to ss_offset: a warp's instruction reads 4
// rows' 128 contiguous bytes and, through the swizzle, writes them without bank conflicts. The
// slot of token t of the warp's 16 rows is t plus lane l < 16's `page`, taken by shuffle: a
// paged cache's page offsets (ss_tile_page, loaded a tile ahead), a contiguous cache's first
// slot. Rows past `valid` are zero-filled.
template <class Cfg>
MLA_DEVICE void copy_tile_rows_ss(uint32_t dst_s, const Params& p, int64_t tile_tok0, int valid,
                                  int pt, int32_t page) {
    using R = TileRowPieces<Cfg>;
    static_assert(R::kLatentPieces == 32 && R::kRopePieces <= 8, "4 blocks of 8 pieces a row");
    const int r = pt / 8, c = pt % 8;
    // (Row m = r + 16 j: m % 8 = r % 8, so its pieces lie 16 rows, two 1 KB latent atoms and
    // two 512-byte rope atoms, further on each j.)
    const int tok_r = r;
    const uint32_t lat_s = dst_s + Cfg::ss_offset(r, 16 * c);
    const uint32_t rope_s = dst_s + Cfg::ss_offset(r, 512 + 16 * (c % 4));
#pragma unroll 1
    for (int j = 0; j < 4; ++j) {
        const int tok = tok_r + 16 * j;
        const bool ok = tok < valid;
        const int64_t t = tile_tok0 + (ok ? tok : 0);
        const int32_t delta = __shfl_sync(0xffffffffu, page, (pt % 32) / 8 + 4 * j);
        const int64_t slot = t + delta;
        const uint8_t* src = p.kv + slot * p.kv_stride_bytes + 16 * c;
        const uint32_t d = lat_s + 2048 * j;
#pragma unroll
        for (int k = 0; k < 4; ++k)
            arch::copy_16_async(d + k * Cfg::kSsBlockBytes, src + 128 * k, ok);
        arch::copy_16_async_if(rope_s + 1024 * j, p.kpe + slot * p.kpe_stride_bytes + 16 * c, ok,
                               c < R::kRopePieces);
    }
}
// The slot of copy_tile_rows_ss's row j = l / 4 of r = 4 pw + l % 4 (lane l < 16 of producer
// warp pw; lanes 16..31 repeat lanes 0..15) of the tile at tile_tok0, less its token.
template <class Cfg>
MLA_DEVICE int32_t ss_tile_page(const Params& p, const Stage1Work& work, int64_t tile_tok0,
                                int valid, int pw, int lane) {
    const int32_t* list = p.page_indices + p.page_indptr[work.batch];
    const int tok = 4 * pw + lane % 4 + 16 * ((lane % 16) / 4);
    const int32_t t = static_cast<int32_t>(tile_tok0) + (tok < valid ? tok : 0);
    const int32_t page = t / p.page_size;
    // (A cache's slots number below 2^31: its rows are 576 bytes or more.)
    return (list[page] - page) * p.page_size;
}

// MXFP4 rows: the 18 packed pieces of the 288-byte row (an MXFP4 cache is never split into
// latent and rope rows: the validation refuses it, and Params::kpe is kv + 256) and the row's
// scale codes into the 32-byte slot after them, one row per instruction: lanes 0..17 the
// pieces, lanes 18.. the codes, by the alignment of the scale tensor (Params::ScaleCopy): two
// 16-byte or five 4-byte copies, or byte by byte as plain loads and stores (the producer then
// arrives on the stage's barrier only after them: wgmma_producer). Rows past `valid` are
// zero-filled, codes too (code 0: zeros, never NaN, where P is 0). Lane i < 16 holds the cache
// slot of row pw + 4 i; each lane forms its own address from the shuffled slot (shuffling the
// two addresses instead spilled the producer's 24 registers). At 16 and 32 rows (staged
// decode) the loop is unrolled Cfg::kMxfp4RowUnroll times (Cfg::kProducerRegs). Row pitch
// Cfg::kMxfp4Pitch (the raw ring's where decoder warpgroups decode the tiles).
// kConsecutive (the tile's rows in consecutive cache slots; 16- and 4-byte scale copies; 32
// rows): my_slot is instead the warp's first row's (warp-uniform, in every lane; row 0's where
// the warp has no valid row), and each lane walks its own source 4 rows' strides a row, as
// copy_tile_rows_consecutive (no shuffle, no slot product a row); rows past `valid` keep the
// last valid row's address.
template <class Cfg, ScaleCopy kMode, bool kConsecutive = false>
MLA_DEVICE void copy_tile_rows_mxfp4(uint8_t* dst, const Params& p, int64_t my_slot, int valid,
                                     int pw, int lane) {
    static_assert(!kConsecutive || kMode != ScaleCopy::kBytes, "byte-wise codes: shuffled loop");
    // The copies' shared addresses from one conversion per tile (a generic pointer converted
    // per row cost two S2UR SR_CgaCtaId and their dependent ULEAs a row: ncu, sixteenth session).
    const uint32_t dst_s = arch::sm90::smem_addr(dst);
    constexpr int kPieces = kMxfp4RowBytes / 16;
    constexpr int kCodeLanes = 32 - kPieces;
    static_assert(kCodeLanes >= 5, "the 4-byte scale copies in one instruction");
    // Per lane, fixed over the tile: what it copies (a data piece, a piece of codes, or nothing),
    // from which tensor (base, row stride) to which offset of the row. Each row is then one
    // predicated copy instruction of the warp (two in the 4-byte mode) with no branch: the
    // if / else of data and code lanes made every row a divergent branch and its
    // reconvergence, ~37 instructions a row, and the producer's issue bounded the staged kernel
    // (ncu, nineteenth session: 97 % of its time in the row loop, stalls on fixed latencies and
    // branch resolution, none on memory).
    const bool data = lane < kPieces;
    const int j = lane - kPieces;
    constexpr int kCodeBytes = kMode == ScaleCopy::k16Bytes ? 16 : 4;  // per copy
    const bool code = !data && j < (kMode == ScaleCopy::k16Bytes ? 2 : 5);
    const int code_off = kCodeBytes * (code ? j : 0);
    const uint8_t* base = data ? p.kv + 16 * lane : p.kv_scales + code_off;
    const int64_t stride = data ? p.kv_stride_bytes : p.kv_scale_stride;
    const uint32_t lane_off = data ? 16 * lane : WgmmaMxfp4Decode::kScaleOffset + code_off;
    const uint8_t* walk = base + my_slot * stride;  // kConsecutive: this lane's source row
#pragma unroll(Cfg::kMxfp4RowUnroll)
    for (int i = 0; i < Cfg::kTileTokens / 4; ++i) {
        const int row = pw + 4 * i;
        const bool ok = row < valid;
        const uint8_t* src = walk;
        int64_t slot = 0;  // (the shuffled loop's)
        if constexpr (kConsecutive) {
            if (row + 4 < valid) walk += 4 * stride;
        } else {
            slot = __shfl_sync(0xffffffffu, my_slot, i);
        }
        const uint32_t d = dst_s + row * Cfg::kMxfp4Pitch + lane_off;
        if constexpr (!kConsecutive) src = base + slot * stride;
        if constexpr (kMode == ScaleCopy::k16Bytes) {
            arch::copy_16_async_if(d, src, ok, data || code);
        } else if constexpr (kMode == ScaleCopy::k4Bytes) {
            arch::copy_16_async_if(d, src, ok, data);
            arch::copy_4_async_if(d, src, ok, code);
        } else {
            arch::copy_16_async_if(d, src, ok, data);
            if (!data) {  // byte by byte as plain loads and stores (scale rows not 4-byte aligned)
                const uint8_t* codes = p.kv_scales + slot * p.kv_scale_stride;
                uint8_t* sg = dst + row * Cfg::kMxfp4Pitch + WgmmaMxfp4Decode::kScaleOffset;
                for (int k = j; k < kMxfp4RowScales; k += kCodeLanes)
                    sg[k] = ok ? codes[k] : uint8_t{0};
            }
        }
    }
}

// The full barrier that tile t's copies complete on: its stage's, or with per-consumer full
// barriers (solo, Cfg::kFullSets) the stage's of the tile's consumer.
template <class Cfg>
MLA_DEVICE int producer_full_bar(int stage, int t) {
    return Cfg::kStagedDecode || Cfg::kFullSets == 1
               ? stage
               : stage * Cfg::kFullSets + t % Cfg::kConsumers;
}

}  // namespace wgmma_detail

// The producer's tile loop; kMode: MXFP4's scale-copy mode (a template argument, so that the
// producer's registers, Cfg::kProducerRegs, hold one mode's copy code only; other formats
// ignore it). It fills the consumers' stages, or with Cfg::kStagedDecode the raw ring.
// kConsecutive (Cfg::kConsecutiveRows: 32 rows of bf16 and MXFP4; and with kWarpRun, fp8 at
// 32 rows on pages of a multiple of 16; chosen per CTA by
// wgmma_producer): every tile's rows lie in consecutive cache slots (a contiguous cache, or
// pages of a multiple of the tile's tokens: tiles start at multiples of it), so a warp's rows
// are found from its first row's slot (copy_tile_rows_consecutive, MXFP4's
// copy_tile_rows_mxfp4).
// kWarpRun (with kConsecutive; (bf16 scores) 32 rows of fp8, 32 of bf16, on pages of a
// multiple of 16 tokens): warp pw copies the tile's rows 16 pw .. 16 pw + 15, which lie in one page
// (tiles start at multiples of 64 tokens: stage1_work), from that page's slot, one row's strides
// a row; with kPagedAhead that page is loaded a tile ahead, after the tile's copies (late).
// kOwnPageLanes = L > 0 (pages of 1 to 8 tokens, 16 for bf16 at 16 rows: wgmma_producer; a
// thread's rows are 128 / L apart, so pages of at most 128 / L tokens): L threads a row, each
// thread L / 2 rows from their own pages (copy_tile_rows_own_pages), loaded a tile ahead after
// the tile's copies (late). Tiles start at multiples of 64 tokens, so row r lies at page(r) *
// page_size + r % page_size.
template <class Cfg, ScaleCopy kMode, bool kConsecutive = false, bool kPagedAhead = false,
          bool kWarpRun = false, int kOwnPageLanes = 0>
MLA_DEVICE void wgmma_producer_tiles(const Params& p, const Stage1Work& work,
                                     const WgmmaRows& rows, const WgmmaShared<Cfg>& sh, int pw,
                                     int lane) {
    namespace hw = arch::sm90;
    constexpr bool kRaw = Cfg::kStagedDecode;
    constexpr int kRing = kRaw ? Cfg::kRawStages : Cfg::kStages;
    constexpr int kRingBytes = kRaw ? Cfg::kRawStageBytes : Cfg::kStageBytes;
    uint64_t* const full = kRaw ? sh.raw_full : sh.full;
    uint64_t* const empty = kRaw ? sh.raw_empty : sh.empty;
    uint8_t* const ring = kRaw ? sh.raw : sh.stages;
    const bool rope_blocks = rows.n_tiles >= wgmma_detail::kRopeBlockMinTiles;
    // kPagedAhead (a paged cache, shuffled loop): the page of row pw + 4 lane (lanes 0..15) of
    // tile t + 1 is loaded before tile t is copied ("early"), so that the page-table load's
    // latency is not in front of each tile's copies.
    // With kWarpRun the look-ahead loads the page of the warp's first row of tile t + 1 (every
    // lane the same; page 0 where the warp has no valid row there) after tile t's copies
    // ("late"), so its latency hides behind the wait on a free stage. (Late was measured at 64
    // rows of fp8, whose producer has 24 registers, before their stages were swizzled: early
    // 1.011-1.017x with 16-token pages, late 0.968x with 1-token pages, 1.000x with 16; late at
    // 16 / 32 rows in the shuffled loop 1.05-1.15x.)
    constexpr bool kAheadLate = kWarpRun;
    const int ahead_row = kWarpRun ? pw * (Cfg::kTileTokens / 4) : pw + 4 * (lane & 15);
    const auto page_of_tile = [&](int t) -> int32_t {
        const int64_t tok0 = work.tok_begin + static_cast<int64_t>(t) * Cfg::kTileTokens;
        if (ahead_row >= work.tok_end - tok0) return 0;
        return p.page_indices[int64_t{p.page_indptr[work.batch]} +
                              static_cast<int32_t>(tok0 + ahead_row) / p.page_size];
    };
    int32_t next_page = 0;
    if constexpr (kPagedAhead) next_page = page_of_tile(0);
    // kOwnPageLanes: this thread's rows q + (128 / L) j, their pages in the tile to come (0 for
    // rows at or past the CTA's token end), and the page size as a shift (a power of two up to
    // 128 / L: 8, or 16 for bf16 at 16 rows).
    constexpr int kOwnL = kOwnPageLanes > 0 ? kOwnPageLanes : 4;
    const int own_q = (pw * 32 + lane) / kOwnL;
    const int page_shift = kOwnPageLanes > 0 ? __ffs(p.page_size) - 1 : 0;
    const auto own_pages = [&](int t, int32_t (&pages)[kOwnL / 2]) {
        const int64_t tok0 = work.tok_begin + static_cast<int64_t>(t) * Cfg::kTileTokens;
        const int32_t* list = p.page_indices + p.page_indptr[work.batch];
#pragma unroll
        for (int j = 0; j < kOwnL / 2; ++j) {
            const int row = own_q + (128 / kOwnL) * j;
            pages[j] = row < work.tok_end - tok0
                           ? list[static_cast<int32_t>(tok0 + row) >> page_shift]
                           : 0;
        }
    };
    int32_t own_page[kOwnL / 2] = {};
    if constexpr (kOwnPageLanes > 0) own_pages(0, own_page);
    for (int t = 0; t < rows.n_tiles; ++t) {
        const int stage = t % kRing;
        const int use = t / kRing;
        if (use > 0) hw::mbarrier_wait(&empty[stage], (use - 1) & 1);
        const int64_t tile_tok0 = work.tok_begin + static_cast<int64_t>(t) * Cfg::kTileTokens;
        const int valid = static_cast<int>(min(int64_t{Cfg::kTileTokens}, work.tok_end - tile_tok0));
        uint8_t* dst = ring + stage * kRingBytes;
        const int32_t my_page = next_page;
        if constexpr (kPagedAhead && !kAheadLate) {
            if (t + 1 < rows.n_tiles) next_page = page_of_tile(t + 1);
        }
        if constexpr (kOwnPageLanes > 0) {
            // (Every row of the thread lies at the same offset in its page, q % page size: the
            // tile's first token and (128 / L) are multiples of the page size.)
            wgmma_detail::copy_tile_rows_own_pages<Cfg, kOwnL>(
                hw::smem_addr(dst), p, own_page, page_shift, own_q & (p.page_size - 1), valid,
                own_q, lane % kOwnL);
            hw::copy_async_arrive_noinc(&full[wgmma_detail::producer_full_bar<Cfg>(stage, t)]);
            if (t + 1 < rows.n_tiles) own_pages(t + 1, own_page);
            continue;
        } else if constexpr (kConsecutive && kWarpRun) {
            // The warp's first row (a uniform value: one page-table load a warp), 1 row a step.
            const int first = pw * (Cfg::kTileTokens / 4);
            const int64_t slot0 =
                kPagedAhead ? int64_t{my_page} * p.page_size +
                                  static_cast<int32_t>(tile_tok0 + first) % p.page_size
                            : cache_slot(p, work, tile_tok0 + (first < valid ? first : 0));
            if (rope_blocks)
                wgmma_detail::copy_tile_rows_consecutive<Cfg, true, true>(
                    dst, p.kv + slot0 * p.kv_stride_bytes, p.kpe + slot0 * p.kpe_stride_bytes,
                    p.kv_stride_bytes, p.kpe_stride_bytes, valid, pw, lane);
            else
                wgmma_detail::copy_tile_rows_consecutive<Cfg, false, true>(
                    dst, p.kv + slot0 * p.kv_stride_bytes, p.kpe + slot0 * p.kpe_stride_bytes,
                    p.kv_stride_bytes, p.kpe_stride_bytes, valid, pw, lane);
            hw::copy_async_arrive_noinc(&full[wgmma_detail::producer_full_bar<Cfg>(stage, t)]);
            if constexpr (kPagedAhead && kAheadLate) {
                if (t + 1 < rows.n_tiles) next_page = page_of_tile(t + 1);
            }
            continue;
        } else if constexpr (kConsecutive) {
            // The warp's first row (a uniform value: one page-table load a warp), 4 rows a step.
            const int64_t slot0 = cache_slot(p, work, tile_tok0 + (pw < valid ? pw : 0));
            if constexpr (Cfg::kMxfp4Rows) {
                wgmma_detail::copy_tile_rows_mxfp4<Cfg, kMode, true>(dst, p, slot0, valid, pw,
                                                                     lane);
            } else {
                const uint8_t* src0 = p.kv + slot0 * p.kv_stride_bytes;
                const uint8_t* rope0 = p.kpe + slot0 * p.kpe_stride_bytes;
                const int64_t src_step = 4 * p.kv_stride_bytes;
                const int64_t rope_step = 4 * p.kpe_stride_bytes;
                if (rope_blocks)
                    wgmma_detail::copy_tile_rows_consecutive<Cfg, true>(
                        dst, src0, rope0, src_step, rope_step, valid, pw, lane);
                else
                    wgmma_detail::copy_tile_rows_consecutive<Cfg, false>(
                        dst, src0, rope0, src_step, rope_step, valid, pw, lane);
            }
            hw::copy_async_arrive_noinc(&full[wgmma_detail::producer_full_bar<Cfg>(stage, t)]);
            continue;
        }
        // Addresses of row pw + 4 lane (lanes 0..15), then one row at a time.
        const int my_row = pw + 4 * (lane & 15);
        int64_t my_slot = 0;
        if (my_row < valid) {
            if constexpr (kPagedAhead) {
                my_slot = int64_t{my_page} * p.page_size +
                          static_cast<int32_t>(tile_tok0 + my_row) % p.page_size;
            } else {
                my_slot = cache_slot(p, work, tile_tok0 + my_row);
            }
        }
        const uint8_t* my_src = p.kv + my_slot * p.kv_stride_bytes;
        const uint8_t* my_rope = p.kpe + my_slot * p.kpe_stride_bytes;
        if constexpr (Cfg::kMxfp4Rows) {
            wgmma_detail::copy_tile_rows_mxfp4<Cfg, kMode>(dst, p, my_slot, valid, pw, lane);
            if constexpr (kMode == ScaleCopy::kBytes) {
                // The codes were plain stores: a release arrive once this thread's copies of
                // the tile have landed too (the asynchronous arrive orders only the copies).
                hw::copy_async_wait_all();
                hw::mbarrier_arrive(&full[stage]);
                continue;
            }
        } else if (rope_blocks) {
            wgmma_detail::copy_tile_rows<Cfg, true>(dst, my_src, my_rope, valid, pw, lane);
        } else {
            wgmma_detail::copy_tile_rows<Cfg, false>(dst, my_src, my_rope, valid, pw, lane);
        }
        hw::copy_async_arrive_noinc(&full[wgmma_detail::producer_full_bar<Cfg>(stage, t)]);
        if constexpr (kPagedAhead && kAheadLate) {
            if (t + 1 < rows.n_tiles) next_page = page_of_tile(t + 1);
        }
    }
    hw::copy_async_wait_all();  // leave only once this thread's copies have landed
}

// Cfg::kSwizzled (64 rows of fp8, long CTAs): the producer's tile loop, for every cache form.
// A whole tile of a contiguous cache or of pages of a multiple of 64 tokens (the only caches
// the maps exist for; tiles start at multiples of 64 tokens, so its slots are consecutive from
// its first token's, tile_tok0 + ss_page of lane 0 of warp 0): four latent boxes and the rope's
// by one thread, which announces the stage's bytes, the other producer threads only arriving.
// Other tiles: copy_tile_rows_ss (a tile's rows past `valid` must be zeros, not the next slots,
// which may hold NaN). Token counts in 32 bits (an element's tokens number below 2^31), in the
// producer's 24 registers.
template <class Cfg>
MLA_DEVICE void wgmma_producer_tiles_ss(const Params& p, const Stage1Work& work,
                                        const WgmmaRows& rows, const WgmmaShared<Cfg>& sh, int pw,
                                        int lane) {
    namespace hw = arch::sm90;
    constexpr int kTile = Cfg::kTileTokens;
    const int tok_begin = static_cast<int>(work.tok_begin);
    const int tok_end = static_cast<int>(work.tok_end);
    // The slot of each of the warp's rows less its token (copy_tile_rows_ss): a contiguous
    // cache's first slot (slots number below 2^31), or on a paged cache the pages of the tile
    // to come, loaded a tile ahead (ss_tile_page). A CTA without tiles (an empty element) reads
    // no page list: its list may be the next element's or past the end, or NULL in an empty
    // pool.
    const auto pages_of_tile = [&](int tile_tok0) {
        return wgmma_detail::ss_tile_page<Cfg>(p, work, tile_tok0,
                                               min(kTile, tok_end - tile_tok0), pw, lane);
    };
    int32_t ss_page = static_cast<int32_t>(work.kv_begin);
    if (p.page_indptr != nullptr && rows.n_tiles > 0) ss_page = pages_of_tile(tok_begin);
    const uint32_t ring = hw::smem_addr(sh.stages);
    for (int t = 0; t < rows.n_tiles; ++t) {
        const int stage = t % Cfg::kStages;
        const int use = t / Cfg::kStages;
        if (use > 0) hw::mbarrier_wait(&sh.empty[stage], (use - 1) & 1);
        const int tile_tok0 = tok_begin + t * kTile;
        const int valid = min(kTile, tok_end - tile_tok0);
        const uint32_t dst = ring + stage * Cfg::kStageBytes;
        uint64_t* const bar = &sh.full[wgmma_detail::producer_full_bar<Cfg>(stage, t)];
        if (sh.tma->ok != 0 && valid == kTile) {
            if (pw == 0 && lane == 0) {
                hw::mbarrier_arrive_expect_tx(bar, Cfg::kStageBytes);
                const int y = tile_tok0 + ss_page;  // the slot of the tile's first token
#pragma unroll
                for (int k = 0; k < 4; ++k)
                    hw::tma_load_2d(dst + k * Cfg::kSsBlockBytes, sh.tma->kv, 128 * k, y, bar);
                hw::tma_load_2d(dst + 4 * Cfg::kSsBlockBytes, sh.tma->kpe, 0, y, bar);
            } else {
                hw::mbarrier_arrive(bar);
            }
        } else {
            wgmma_detail::copy_tile_rows_ss<Cfg>(dst, p, tile_tok0, valid, pw * 32 + lane,
                                                 ss_page);
            hw::copy_async_arrive_noinc(bar);
        }
        // The next tile's pages, late (their latency behind the wait on a free stage).
        if (p.page_indptr != nullptr && t + 1 < rows.n_tiles)
            ss_page = pages_of_tile(tile_tok0 + kTile);
    }
    hw::copy_async_wait_all();  // leave only once this thread's copies have landed
}

template <class Cfg>
MLA_DEVICE void wgmma_producer(const Params& p, const Stage1Work& work, const WgmmaRows& rows,
                               const WgmmaShared<Cfg>& sh, int pw, int lane) {
    // The consecutive-slot loop where it pays (Cfg::kConsecutiveRows) and every tile's rows lie
    // in consecutive slots (a contiguous cache, or whole-tile pages).
    if constexpr (Cfg::kMxfp4Rows) {
        constexpr ScaleCopy k16 = ScaleCopy::k16Bytes, k4 = ScaleCopy::k4Bytes;
        const bool consecutive = Cfg::kConsecutiveRows &&
                                 (p.page_indptr == nullptr || p.page_size % Cfg::kTileTokens == 0);
        if (p.scale_copy == k16)
            return consecutive ? wgmma_producer_tiles<Cfg, k16, true>(p, work, rows, sh, pw, lane)
                               : wgmma_producer_tiles<Cfg, k16>(p, work, rows, sh, pw, lane);
        if (p.scale_copy == k4)
            return consecutive ? wgmma_producer_tiles<Cfg, k4, true>(p, work, rows, sh, pw, lane)
                               : wgmma_producer_tiles<Cfg, k4>(p, work, rows, sh, pw, lane);
        return wgmma_producer_tiles<Cfg, ScaleCopy::kBytes>(p, work, rows, sh, pw, lane);
    } else {
        if constexpr (Cfg::kSwizzled)  // one loop for every cache form
            return wgmma_producer_tiles_ss<Cfg>(p, work, rows, sh, pw, lane);
        // (64 rows of fp8 took the loops below until 0.7.20; the measurements of them are
        // kept.) Pages of a multiple of 16 tokens: a run of 16 rows a warp in one page
        // (kWarpRun). At 64 rows of fp8 on the H200 (thirty-second session), H128 q1 bs64 kv4096, bf16 Q:
        // against the shuffled loop 0.932-0.935 (159.5 -> 149.1 us on 16-token pages; H16 q4
        // bs128 kv4096 0.938), and with each warp's page loaded a tile ahead (late) another
        // 0.977-0.986 on pages of 16, 32 and 64 tokens (147.5 -> 144.1 us on 16; 64-token
        // pages took the 4-row-step loop before; loaded early: 1.04-1.06x). e4m3 scores: the
        // runs 0.971-0.973 on pages of 16 and 32, the look-ahead 1.002-1.008 (not taken; since
        // the thirty-third session their runs also serve contiguous caches and 64-token
        // pages). bf16 caches' 32-row kernel (shuffled loop with the early look-ahead before;
        // 4-row steps on 64-token pages): H128 q1 bs64 kv4096 0.941-0.944 on pages of 16 and 32
        // (323.5 -> 305.4 us), 0.969 on 64 (contiguous 307.6), H16 q2 bs128 kv4096 0.939 on 16.
        // (The page runs of pages of 4 to 32 tokens from a shuffled slot, with a test per row,
        // had lost 1.5-2 %; a page walk by shuffled page numbers lost 3 % on 16-token pages and
        // 16 / 35 % on 4-token ones; pages of 1-8 tokens as runs whose rows' addresses are
        // staged in shared memory 0.989-0.994 (thirty-third session), not kept.)
        // Pages of 1, 2, 4 or 8 tokens (32 rows of fp8 with bf16 scores, and 64 rows until
        // 0.7.20; bf16 at 16 and 32 rows): kOwnPageRowThreads threads a row, each row from
        // its own page, no shuffles (kOwnPageLanes; the shuffled loop cost these 5-12 % over
        // contiguous caches, pages in order or not: thirty-fourth and thirty-fifth sessions'
        // probes, docs/notes/stage1_wgmma.md). Other page sizes below 16 (3, 12, ...) keep the
        // shuffled loop, as do bf16's 16 rows on pages of more than 16 tokens (no runs). Pages
        // of a multiple of 16: the runs below, also for fp8 at 32 rows (bs128 kv4096 H16 q2:
        // 0.977 on 16-token pages, 0.950 on 64; runs on a contiguous cache lost, 1.018-1.024).
        // bf16 at 16 rows takes its own-page rows on 16-token pages too (bs32 kv8192 H16 0.965,
        // bs32 kv1024 0.974; runs there spilled its producer). e4m3 scores at 32 rows keep the
        // shuffled loop: own-page rows and runs (64-token pages) ran 0.95-0.98 in CTAs of 64
        // tiles (bs128 kv4096 H16 q2) but 1.034-1.044 in CTAs of 8 (bs32 kv2048 H16 q2), as
        // faster producers did in the 16-row seesaw's short CTAs.
        if constexpr (!Cfg::kMxfp4Rows &&
                      (Cfg::Decode::kDimBytes == 2 || (Cfg::N == 32 && !Cfg::Decode::kQCodes))) {
            // (A thread's rows are 128 / kOwnPageRowThreads = 16 apart: pages up to 16 tokens.
            // bf16 at 16 rows takes 16-token pages here: the runs spilled its producer.)
            constexpr int kMaxPage = Cfg::N == 16 ? 16 : 8;
            static_assert(128 / wgmma_detail::kOwnPageRowThreads % kMaxPage == 0, "");
            if (p.page_indptr != nullptr && p.page_size <= kMaxPage &&
                (p.page_size & (p.page_size - 1)) == 0)
                return wgmma_producer_tiles<Cfg, ScaleCopy::k16Bytes, false, false, false,
                                            wgmma_detail::kOwnPageRowThreads>(
                    p, work, rows, sh, pw, lane);
        }
        if constexpr (Cfg::N == 32 && !Cfg::kMxfp4Rows && !Cfg::Decode::kQCodes) {
            if (p.page_indptr != nullptr && p.page_size % (Cfg::kTileTokens / 4) == 0)
                return wgmma_producer_tiles<Cfg, ScaleCopy::k16Bytes, true, true, true>(
                    p, work, rows, sh, pw, lane);
        }
        // (e4m3 scores at 64 rows took the runs on contiguous caches and on pages of a multiple
        // of 16 until 0.7.18; since 0.7.19 copy_tile_rows_ss, above. bf16 scores' runs on a
        // contiguous cache measured 0.993-0.999 against the 4-row-step loop: not taken.)
        if constexpr (Cfg::kConsecutiveRows) {
            if (p.page_indptr == nullptr || p.page_size % Cfg::kTileTokens == 0)
                return wgmma_producer_tiles<Cfg, ScaleCopy::k16Bytes, true>(p, work, rows, sh,
                                                                            pw, lane);
        }
        // A paged cache in the shuffled loop: the page-table look-ahead (1-token pages 0.80-0.93x,
        // 16-token pages 0.94-0.97x on H200; fp8 at 64 rows loaded it late until 0.7.20: 0.968x /
        // 1.000x).
        // Not for bf16 at 16 rows (its producer spills 4 bytes with it).
        if constexpr (Cfg::Decode::kDimBytes == 1 || Cfg::N > 16) {
            if (p.page_indptr != nullptr)
                return wgmma_producer_tiles<Cfg, ScaleCopy::k16Bytes, false, true>(
                    p, work, rows, sh, pw, lane);
        }
        return wgmma_producer_tiles<Cfg, ScaleCopy::k16Bytes>(p, work, rows, sh, pw, lane);
    }
}

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

// ---- what both consumer forms share (wgmma_consumer, the seesaw; wgmma_consumer_solo) ---------
namespace wgmma_detail {

// Where a consumer lane's S^T rows and V words lie in a tile.
struct ConsumerLanes {
    int s_tok0, s_tok1;  // tile tokens of the lane's two S^T rows
    int v_off;           // byte offset of its first V word in a tile (dims from v_lane_byte)
    int v_pair;          // bytes from the token of PV k index 2t to that of 2t + 1
    int v_code;          // MXFP4: the scale code of a V word, relative to it
};
template <class Cfg>
MLA_DEVICE ConsumerLanes consumer_lanes(int w_dims, int wq, int g, int t4) {
    ConsumerLanes c;
    // (kSwizzled: stage row m holds token m; S^T row g + 8 is stage row stage_row(g) + 8.)
    c.s_tok0 = 16 * wq + (Cfg::kSwizzled ? Cfg::stage_row(g) : Cfg::s_row_token(g, 0));
    c.s_tok1 = c.s_tok0 + (Cfg::kSwizzled ? 8 : 1);
    // V^T fragments of k indices 2t, 2t+1, 2t+8, 2t+9 (t = t4): tokens s_row_token(2t, 0),
    // s_row_token(2t+1, 0) (v_pair rows further on) and the next token of each (kSwizzled: the
    // stage rows 8 on).
    const int v_row = Cfg::s_row_token(2 * t4, 0);
    // (kSwizzled: k index 2t is stage row stage_row(2t), the pair's stage_row(2t + 1); the
    // swizzle puts the 4 t's and the two 16-byte pieces of a warp's words in 8 different bank
    // quads.)
    const int vb = Cfg::v_lane_byte(w_dims, wq, g);
    c.v_off = Cfg::kSwizzled ? Cfg::ss_offset(Cfg::stage_row(2 * t4), vb)
                             : v_row * Cfg::kRowPitch + vb;
    c.v_code = 0;
    if constexpr (Cfg::Decode::kBlockScales) c.v_code = Cfg::Decode::v_code_delta(w_dims, wq, g);
    c.v_pair = Cfg::kSwizzled ? Cfg::ss_offset(Cfg::stage_row(2 * t4 + 1), vb) - c.v_off
                              : (Cfg::s_row_token(2 * t4 + 1, 0) - v_row) * Cfg::kRowPitch;
    return c;
}

// What a consumer thread sets up before its tiles: the descriptors of Q^T and of the P^T
// buffers, the smallest token end of the CTA's valid rows (tiles below it need no mask), and
// the row it owns (ct < N: Cfg::kOwnerWarps warps own the N rows), with its row sums zeroed.
struct ConsumerSetup {
    uint64_t qt_desc0, pt_desc0;
    int min_end;
    int ct;
    bool owner;
};
template <class Cfg>
MLA_DEVICE ConsumerSetup consumer_setup(const Params& p, const Stage1Work& work,
                                        const WgmmaRows& rows, const WgmmaShared<Cfg>& sh,
                                        int wq, int lane, float (&l_run)[Cfg::kCols]) {
    namespace hw = arch::sm90;
    ConsumerSetup c;
    c.qt_desc0 = hw::kmajor_desc(hw::smem_addr(sh.qt), 128, 256);
    c.pt_desc0 = hw::kmajor_desc(hw::smem_addr(sh.pt), 128, 256);
#pragma unroll
    for (int jj = 0; jj < Cfg::kCols; ++jj) l_run[jj] = 0.0f;
    c.min_end = 1 << 30;
    for (int n = 0; n < Cfg::N; ++n) {
        const int ti = (rows.row0 + n) / p.num_heads - rows.t_first;
        if (ti < work.tokens) c.min_end = min(c.min_end, sh.end[n]);
    }
    c.ct = wq * 32 + lane;
    c.owner = c.ct < Cfg::N;
    return c;
}

// mask_scores: masks the scores of tokens at or past their row's end (tile tokens from
// tile_tok0, relative to tok_begin) where the tile reaches min_end; tile_maxima: writes the
// warp's tile maxima per row to red_warp (reduce_tile_maxima); mask_and_tile_maxima: both.
template <class Cfg>
MLA_DEVICE void mask_scores(float (&s)[Cfg::N / 2], const ConsumerLanes& c, int tile_tok0,
                            int min_end, const int* end, int t4) {
    if (tile_tok0 + Cfg::kTileTokens > min_end) {
#pragma unroll
        for (int k = 0; k < Cfg::N / 2; ++k) {
            const int tok = tile_tok0 + (((k >> 1) & 1) ? c.s_tok1 : c.s_tok0);
            if (tok >= end[Cfg::col_of(k, t4)]) s[k] = kNegInf;
        }
    }
}
template <class Cfg>
MLA_DEVICE void tile_maxima(const float (&s)[Cfg::N / 2], int lane, float* red_warp) {
    float tmax[Cfg::kCols];
#pragma unroll
    for (int jj = 0; jj < Cfg::kCols; ++jj) tmax[jj] = kNegInf;
#pragma unroll
    for (int k = 0; k < Cfg::N / 2; ++k)
        tmax[Cfg::slot_of(k)] = fmaxf(tmax[Cfg::slot_of(k)], s[k]);
    reduce_tile_maxima<Cfg>(tmax, lane, red_warp);
}
template <class Cfg>
MLA_DEVICE void mask_and_tile_maxima(float (&s)[Cfg::N / 2], const ConsumerLanes& c,
                                     int tile_tok0, int min_end, const int* end, int t4,
                                     int lane, float* red_warp) {
    mask_scores<Cfg>(s, c, tile_tok0, min_end, end, t4);
    tile_maxima<Cfg>(s, lane, red_warp);
}

// The factors {coefficient, -maximum} of the lane's rows (slots) from a consumer's `scale` (N
// rows): what write_pt and exceeds_lazy_bound take.
template <class Cfg>
MLA_DEVICE void load_row_scales(const float2* scale, int t4, float2 (&sc)[Cfg::kCols]) {
#pragma unroll
    for (int jj = 0; jj < Cfg::kCols; ++jj) sc[jj] = scale[Cfg::col_of_slot(jj, t4)];
}

// Whether a lane's (masked, unscaled) scores pass the lazy bound of their rows' running maxima:
// sc holds each slot's {coefficient, -maximum} (finite maxima). Exactly owner_step's test:
// the pair maximum's RN(s * coefficient) - m is the row's tm - m_prev where the pair holds the
// row's largest score, and no more elsewhere (rounding is monotonic). NaN scores pass no bound,
// as fmaxf ignores them there.
template <class Cfg>
MLA_DEVICE bool exceeds_lazy_bound(const float (&s)[Cfg::N / 2],
                                   const float2 (&sc)[Cfg::kCols]) {
    bool any = false;
#pragma unroll
    for (int k = 0; k < Cfg::N / 2; k += 4) {
#pragma unroll
        for (int h = 0; h < 2; ++h) {  // slot_of(k + h) == slot_of(k + h + 2)
            const int jj = Cfg::slot_of(k + h);
            const float m = fmaxf(s[k + h], s[k + h + 2]);
            any |= __fadd_rn(__fmul_rn(m, sc[jj].x), sc[jj].y) > Cfg::kLazyLog2;
        }
    }
    return any;
}

// A row owner's step of the online softmax: the tile maximum (red: the 4 warps' maxima of row
// n, unscaled) times the row's coefficient against the running maximum m_prev. Lazy rescale:
// the running max moves only when a score passes it by more than kLazyLog2, so O is rescaled
// rarely once the maxima settle; P stays at most 2^kLazyLog2 (to a rounding of the product
// that forms its exponent; f16 holds it with full precision), and every quotient O / l and
// LSE m + log2(l) is the same for any reference max. (tm - m, not tm > m + 8: m + 8 rounds for
// |m| >= 2^27; -inf - -inf is NaN, so an all-masked row stays at -inf.) Writes the rescale
// factor of what came before (alpha; kTokenScales: its square root: a maximum can move by more
// than 126 binades there, a token with e8m0 code 254 after ordinary ones, and the factor
// itself would then flush to 0 with every earlier token's weight in l; each half stays normal
// for moves up to 252) and the row's {coefficient, -exp2 offset}; returns the new maximum and
// whether it moved from a finite value (sums and O under m_prev = -inf are still 0).
template <class Cfg>
MLA_DEVICE float owner_step(const float* red, int n, float coef_own, float m_prev, bool owner,
                            float* alpha, float2* scale, bool& moved) {
    constexpr int N = Cfg::N;
    float tm = fmaxf(fmaxf(red[n], red[N + n]), fmaxf(red[2 * N + n], red[3 * N + n]));
    tm = tm == kNegInf ? kNegInf : tm * coef_own;
    const float m_new = tm - m_prev > Cfg::kLazyLog2 ? fmaxf(m_prev, tm) : m_prev;
    moved = owner && m_new != m_prev && m_prev != kNegInf;
    if (owner) {
        const float half = Cfg::Decode::kTokenScales ? 0.5f : 1.0f;
        alpha[n] = moved ? arch::fast_exp2(half * (m_prev - softmax_offset(m_new))) : 1.0f;
        scale[n] = make_float2(coef_own, -softmax_offset(m_new));
    }
    return m_new;
}

// Rescales the row sums and O^T by the factors of a tile's owners (alpha, per row; kTokenScales:
// their square roots).
template <class Cfg, int kBlocks>
MLA_DEVICE void rescale_rows(const float* alpha_rows, int t4, float (&l_run)[Cfg::kCols],
                             float (&o)[kBlocks][Cfg::N / 2]) {
    float alpha[Cfg::kCols];
#pragma unroll
    for (int jj = 0; jj < Cfg::kCols; ++jj) {
        alpha[jj] = alpha_rows[Cfg::col_of_slot(jj, t4)];
        if constexpr (Cfg::Decode::kTokenScales) {
            l_run[jj] = l_run[jj] * alpha[jj] * alpha[jj];  // in this order
            alpha[jj] *= alpha[jj];  // O: a factor below 2^-126 may flush to 0
        } else {
            l_run[jj] *= alpha[jj];
        }
    }
#pragma unroll
    for (int mb = 0; mb < kBlocks; ++mb)
#pragma unroll
        for (int k = 0; k < Cfg::N / 2; ++k) o[mb][k] *= alpha[Cfg::slot_of(k)];
}

// P = exp2(s * coefficient - offset) of the lane's scores (sc: its slots' {coefficient,
// -offset}) into P^T (f16; bf16 hi and lo) at pt_lane, their sums added to l.
template <class Cfg>
MLA_DEVICE void write_pt(const float (&s)[Cfg::N / 2], const float2 (&sc)[Cfg::kCols],
                         const float (&e_tok)[2], float (&l)[Cfg::kCols], uint32_t pt_lane) {
    namespace hw = arch::sm90;
    constexpr int N = Cfg::N;
    // P as 8x8 blocks: (row block h, column block j) at 2j + h; part 1: bf16 lo
    uint32_t pf[Cfg::kPParts][N / 4];
#pragma unroll
    for (int k = 0; k < N / 2; k += 2) {
        const int jj = Cfg::slot_of(k);
        // RN(s * coefficient) - m, not an fma: m is the rounded product of the row's largest
        // score, so its own exponent is exactly 0 and every other one <= 0 (rounding is
        // monotonic): P <= 1 under the exact max whatever the scores' size (an fma keeps the
        // product's rounding error: P of the max token 1.4 at scores of 2^23, inf from ~2^31).
        const float x0 = __fadd_rn(__fmul_rn(s[k], sc[jj].x), sc[jj].y);
        const float x1 = __fadd_rn(__fmul_rn(s[k + 1], sc[jj + 1].x), sc[jj + 1].y);
        const float e0 = arch::fast_exp2(x0);
        const float e1 = arch::fast_exp2(x1);
        if constexpr (Cfg::Decode::kTokenScales) {
            // The row sum adds 2^(u - m - e_lat) = 2^(s * coefficient - m), formed from its own
            // exponent, not as P * 2^-e_lat: beside a token with a factor ~2^120 (e8m0 code 254)
            // the others' P fall below f32's range (flushed to 0) while their share of the sum
            // does not (k and k + 1 are one token). (Times 2^kSumBias: see
            // WgmmaMxfp4StagedDecode.)
            const float b = Cfg::Decode::kSumBias - e_tok[(k >> 1) & 1];
            l[jj] += arch::fast_exp2(x0 + b);
            l[jj + 1] += arch::fast_exp2(x1 + b);
        } else {
            l[jj] += e0;
            l[jj + 1] += e1;
        }
        Cfg::Decode::p_words(e0, e1, pf[0][k / 2], pf[Cfg::kPParts - 1][k / 2]);
    }
    // P^T[n][kk] of PV k-step wq, kk = 8 h + g: block (h, j) transposed is the core matrix
    // (n / 8 = j, kk / 8 = h) at 256 j + 128 h; lane L gives row L % 8 of block 4 G + L / 8,
    // which is 16 L bytes into the step, + 512 G.
#pragma unroll
    for (int part = 0; part < Cfg::kPParts; ++part)
#pragma unroll
        for (int gq = 0; gq < N / 16; ++gq)
            hw::stmatrix_x4_trans(pt_lane + part * Cfg::kPtBytes + 512 * gq, pf[part][4 * gq],
                                  pf[part][4 * gq + 1], pf[part][4 * gq + 2],
                                  pf[part][4 * gq + 3]);
}

// O^T += V^T P^T of one tile (v_tile: the stage plus the lane's v_off; its P^T: buffer pt_tile
// of those at descriptor pt_desc0) in kPasses passes of Cfg::kPairs m-block pairs (o: kPasses x
// 2 kPairs m-blocks; pass q takes the pairs kPairs q .. kPairs q + kPairs - 1, kVPairDims
// apart), one k-step (16 tokens) at a time, the next k-step's words loading while the products
// run. Once the lane's last words are loaded its warp releases the stage (empty).
template <class Cfg, int kPasses>
MLA_DEVICE void value_products(float (&o)[2 * Cfg::kPairs * kPasses][Cfg::N / 2],
                               const uint8_t* v_tile, const ConsumerLanes& c, uint64_t pt_desc0,
                               int pt_tile, uint64_t* empty, int lane) {
    namespace hw = arch::sm90;
    constexpr int N = Cfg::N;
    constexpr int kPairs = Cfg::kPairs;
    constexpr bool kBlockScales = Cfg::Decode::kBlockScales;
    static_assert(!kBlockScales || kPasses == 1, "MXFP4 words hold both pairs' dims");
    constexpr int kUnits = 4 * kPasses;  // unit u: pass u / 4, k-step u % 4
    // The words of one k-step's 4 tokens, per m-block pair (MXFP4: one word of 8 dims per token
    // in vw[0], and the tokens' scale codes).
    typename Cfg::Decode::VWord vw[kPairs][4];
    uint32_t vcode[4];
    auto load_v = [&](int u) {
#pragma unroll
        for (int pp = 0; pp < (kBlockScales ? 1 : kPairs); ++pp) {
            const uint8_t* src = v_tile + (u % 4) * Cfg::kVStepBytes +
                                 Cfg::v_pair_bytes() * (kPairs * (u / 4) + pp);
            vw[pp][0] = Cfg::Decode::load_v(src);
            vw[pp][1] = Cfg::Decode::load_v(src + c.v_pair);
            vw[pp][2] = Cfg::Decode::load_v(src + Cfg::kVNextTokenBytes);
            vw[pp][3] = Cfg::Decode::load_v(src + c.v_pair + Cfg::kVNextTokenBytes);
            if constexpr (kBlockScales) {
                vcode[0] = src[c.v_code];
                vcode[1] = src[c.v_pair + c.v_code];
                vcode[2] = src[Cfg::kRowPitch + c.v_code];
                vcode[3] = src[c.v_pair + Cfg::kRowPitch + c.v_code];
            }
        }
    };
    load_v(0);
    uint32_t ax[2][kPairs][4], ay[2][kPairs][4];  // unit u in [u & 1]
#pragma unroll
    for (int u = 0; u < kUnits; ++u) {
        const int f = u & 1;
        if constexpr (kBlockScales) {
            Cfg::Decode::template v_fragments_all<kPairs>(vw[0], vcode, ax[f], ay[f]);
        } else {
#pragma unroll
            for (int pp = 0; pp < kPairs; ++pp)
                Cfg::Decode::v_fragments(vw[pp][0], vw[pp][1], vw[pp][2], vw[pp][3], ax[f][pp],
                                          ay[f][pp]);
        }
        if (u + 1 < kUnits) {
            load_v(u + 1);
        } else {
            // Every read of this stage by this warp has been issued: release it.
            __syncwarp();
            if (lane == 0) hw::mbarrier_arrive(empty);
        }
        hw::wgmma_fence();
        constexpr arch::MmaType kType = Cfg::Decode::kValueMma;
#pragma unroll
        for (int part = 0; part < Cfg::kPParts; ++part) {  // bf16: P = hi + lo
            // (The tile's P^T buffer inside the shift: a descriptor formed from a tile base first
            // made ptxas spill 28 bytes in the 16-row fp8 seesaw.)
            const uint64_t desc = pt_desc0 + (((pt_tile * Cfg::kPParts + part) * Cfg::kPtBytes +
                                               (u % 4) * Cfg::kPtStepBytes) >> 4);
#pragma unroll
            for (int pp = 0; pp < kPairs; ++pp) {
                const int hp = kPairs * (u / 4) + pp;  // the pair of o
                hw::Wgmma<kType, N>::run(o[2 * hp], ax[f][pp], desc, true);
                hw::Wgmma<kType, N>::run(o[2 * hp + 1], ay[f][pp], desc, true);
            }
        }
        hw::wgmma_commit();
        // The products of unit u - 1 are done: their fragments may be rewritten.
        hw::wgmma_wait<1>();
    }
    hw::wgmma_wait<0>();
#pragma unroll
    for (int mb = 0; mb < 2 * kPairs * kPasses; ++mb) hw::fence_operands(o[mb]);
}

// The lane's row sums reduced over its 8 lanes g, into sum at (w * 4 + wq) * N + row.
template <class Cfg>
MLA_DEVICE void publish_row_sums(float (&l_run)[Cfg::kCols], int g, int t4, float* sum_warp) {
#pragma unroll
    for (int jj = 0; jj < Cfg::kCols; ++jj) {
        l_run[jj] += arch::shfl_xor(l_run[jj], 4);
        l_run[jj] += arch::shfl_xor(l_run[jj], 8);
        l_run[jj] += arch::shfl_xor(l_run[jj], 16);
        if (g == 0) sum_warp[Cfg::col_of_slot(jj, t4)] = l_run[jj];
    }
}

// Row n's output (epilogue, one thread a row): its LSE from max m and sum l (bias: log2 of the
// factor l is kept times), its O row's address (0: no such row) and scale into row_ptr /
// row_scale.
template <class Cfg>
MLA_DEVICE void row_output(const Params& p, const Stage1Work& work, const WgmmaRows& rows, int n,
                           float m, float l, float bias, uint64_t* row_ptr, float* row_scale) {
    const int ti = (rows.row0 + n) / p.num_heads - rows.t_first;
    uint64_t dst = 0;
    float scale = 0.0f;
    if (ti < work.tokens) {
        const int head = (rows.row0 + n) % p.num_heads - work.head0;
        scale = l > 0.0f ? p.kv_scale * Cfg::Decode::kScale * exp2_int(int(bias)) / l : 0.0f;
        dst = single_split(work) ? reinterpret_cast<uint64_t>(final_o_row(p, work, ti, head))
                                 : reinterpret_cast<uint64_t>(partial_o_row(p, work, ti, head));
        store_lse(p, work, ti, head, rows.n_tiles > 0 ? m - bias : kNegInf, l);
    }
    row_ptr[n] = dst;
    row_scale[n] = scale;
}

// The consumer's O^T rows (4 consecutive dims per m-block pair from dim0), bf16 in the final O
// or fp32 in a split's partial O.
template <class Cfg>
MLA_DEVICE void store_o(const Stage1Work& work, const float (&o)[2 * Cfg::kPairs][Cfg::N / 2],
                        const uint64_t* row_ptr, const float* row_scale, int t4, int dim0) {
    if (single_split(work))
        store_o_slots<Cfg, uint16_t>(o, row_ptr, row_scale, t4, dim0);
    else
        store_o_slots<Cfg, float>(o, row_ptr, row_scale, t4, dim0);
}

}  // namespace wgmma_detail

// ---- consumer warpgroup w: S^T of tiles 2i + w, O^T of dims 256 w .. 256 w + 255 -----------
template <class Cfg>
MLA_DEVICE void wgmma_consumer(const Params& p, const Stage1Work& work, const WgmmaRows& rows,
                               const WgmmaShared<Cfg>& sh, int w, int wq, int lane) {
    namespace hw = arch::sm90;
    static_assert(Cfg::kFullSets == 1 && Cfg::kConsumers == 2,
                  "the seesaw: two consumers on one full barrier per stage");
    constexpr int N = Cfg::N;
    constexpr int kPairs = Cfg::kPairs;
    const int g = lane >> 2, t4 = lane & 3;
    const int other = 1 - w;
    // This consumer's share of the row sums, per column slot, under the running maxima (which
    // live in shared memory, kept by the rows' owners). Row ct of the CTA is owned by thread ct
    // of each consumer (ct < N): for that consumer's tiles, it alone turns the row's tile
    // maximum into the new running maximum, the rescale factor and the exp2 offset (the other
    // 31 threads that hold the row's scores read them).
    float l_run[Cfg::kCols];
    const auto [qt_desc0, pt_desc0, min_end, ct, owner] =
        wgmma_detail::consumer_setup<Cfg>(p, work, rows, sh, wq, lane, l_run);
    constexpr bool kTokenScales = Cfg::Decode::kTokenScales;
    // kTokenScales: each thread scales its own scores (u, see WgmmaMxfp4StagedDecode), so the
    // owners' coefficient is 1; coef_slot holds the rows' coefficients of the lane's slots.
    const float coef_own = kTokenScales ? 1.0f : sh.coef[owner ? ct : 0];  // > 0 (write_q)
    float coef_slot[Cfg::kCols];
#pragma unroll
    for (int jj = 0; jj < Cfg::kCols; ++jj)
        coef_slot[jj] = kTokenScales ? sh.coef[Cfg::col_of_slot(jj, t4)] : 1.0f;
    float o[2 * kPairs][N / 2];
#pragma unroll
    for (int mb = 0; mb < 2 * kPairs; ++mb)
#pragma unroll
        for (int i = 0; i < N / 2; ++i) o[mb][i] = 0.0f;
    const wgmma_detail::ConsumerLanes lanes = wgmma_detail::consumer_lanes<Cfg>(w, wq, g, t4);
    for (int i = 0; 2 * i < rows.n_tiles; ++i) {
        const int t_own = 2 * i + w;
        const int par = i & 1;
        float l_tile[Cfg::kCols];  // the own tile's exp2 sums, added to l_run at its O step
        float e_tok[2] = {0.0f, 0.0f};  // kTokenScales: e_lat of the lane's two tokens
#pragma unroll
        for (int jj = 0; jj < Cfg::kCols; ++jj) l_tile[jj] = 0.0f;
        if (t_own < rows.n_tiles) {
            // 1. S^T of the own tile (unscaled; masked scores -inf), tile maxima per row (lanes
            //    g, then 4 warps). The coefficient is > 0, so the maximum of the scaled scores is
            //    the scaled maximum: the owner scales it (kTokenScales: the lanes scale their
            //    scores into u first, and the owners' coefficient is 1).
            const int stage = t_own % Cfg::kStages;
            const int phase = (t_own / Cfg::kStages) & 1;
            const uint8_t* tile = sh.stages + stage * Cfg::kStageBytes;
            float s[N / 2], s_rope[N / 2];
            if constexpr (Cfg::kSsScores) {
                hw::mbarrier_wait(&sh.full[stage], phase);
                hw::fence_proxy_async_smem();  // cp.async's (generic) writes, read by wgmma
                hw::wgmma_fence();
                wgmma_detail::score_products_ss<Cfg>(hw::smem_addr(tile), qt_desc0, s);
                hw::wgmma_wait<0>();
                hw::fence_operands(s);
            } else {
                hw::mbarrier_wait(Cfg::kStagedDecode ? &sh.front[stage] : &sh.full[stage],
                                  phase);
                wgmma_detail::score_products<Cfg>(
                    wgmma_detail::k_rows<Cfg>(tile, lanes.s_tok0, lanes.s_tok1, t4), t4,
                    qt_desc0, s, s_rope, &sh.full[stage], phase);
            }
            if constexpr (kTokenScales) {
                // u = s_latent * coefficient * 2^e_lat + s_rope * coefficient * 2^e_rope + e_lat
                // per token (the factors from the decoders' row pads), then the l factor.
                const float4 f0 = *reinterpret_cast<const float4*>(
                    tile + lanes.s_tok0 * Cfg::kRowPitch + Cfg::Decode::kTokenScaleOffset);
                const float4 f1 = *reinterpret_cast<const float4*>(
                    tile + lanes.s_tok1 * Cfg::kRowPitch + Cfg::Decode::kTokenScaleOffset);
#pragma unroll
                for (int k = 0; k < N / 2; ++k) {
                    const float4& f = ((k >> 1) & 1) ? f1 : f0;
                    const float c = coef_slot[Cfg::slot_of(k)];
                    s[k] = fmaf(s[k], c * f.x, s_rope[k] * (c * f.y)) + f.z;
                }
                e_tok[0] = f0.z;
                e_tok[1] = f1.z;
            }
            // (Two buffers by round parity; since the owners read red before the second named
            // barrier of the step, one would do.)
            float* red = sh.red + (w * 2 + par) * 4 * N;
            wgmma_detail::mask_and_tile_maxima<Cfg>(s, lanes, t_own * Cfg::kTileTokens, min_end,
                                                    sh.end, t4, lane, red + wq * N);
            hw::named_barrier_sync(2 + w, 128);

            // 2. The owners: the running maximum before this tile (consumer 1: after consumer
            //    0's tile 2i, once it is published; consumer 0: after consumer 1's tile 2i - 1,
            //    which it waited for when it added that tile last round), then the online
            //    softmax's row step.
            if (wq < Cfg::kOwnerWarps) {
                const int n = owner ? ct : 0;
                float m_prev = kNegInf;
                if (w == 1) {
                    hw::mbarrier_wait(&sh.m_full[0], i & 1);
                    m_prev = sh.max[par * N + n];
                } else if (i > 0) {
                    m_prev = sh.max[(2 + (par ^ 1)) * N + n];
                }
                bool moved = false;
                const float m_new = wgmma_detail::owner_step<Cfg>(
                    red, n, coef_own, m_prev, owner, sh.alpha + (2 * w + par) * N,
                    sh.scale + w * N, moved);
                if (owner) sh.max[(2 * w + par) * N + n] = m_new;
                const unsigned any = __ballot_sync(0xffffffffu, moved);
                if (lane == 0) sh.flag[(2 * w + par) * 2 + wq] = any != 0u ? 1 : 0;
                // The maxima are out: the other consumer's owners need nothing else of this
                // step (P^T and the factors follow on p_full). Only consumer 1 waits for them
                // (consumer 0 reads consumer 1's maxima after its p_full), so only consumer 0
                // arrives: arrivals on m_full[1] completed phases no thread waited for, which
                // compute-sanitizer's synccheck reports as a missing wait.
                if (w == 0) hw::mbarrier_arrive(&sh.m_full[0]);
            }
            hw::named_barrier_sync(2 + w, 128);

            // 3. P^T (f16; bf16 hi and lo) into this consumer's buffer, once the other consumer
            //    has added its previous tile; P = exp2(s * coefficient - offset).
            float2 sc[Cfg::kCols];
            wgmma_detail::load_row_scales<Cfg>(sh.scale + w * N, t4, sc);
            if (i > 0) hw::mbarrier_wait(&sh.p_empty[w], (i - 1) & 1);
            wgmma_detail::write_pt<Cfg>(
                s, sc, e_tok, l_tile,
                hw::smem_addr(sh.pt + w * Cfg::kPParts * Cfg::kPtBytes + wq * Cfg::kPtStepBytes +
                              16 * lane));
            hw::fence_proxy_async_smem();
            hw::mbarrier_arrive(&sh.p_full[w]);
        }

        // 4. O^T += V^T P^T for tiles 2i and 2i + 1 in order, each after its rescale.
#pragma unroll 1
        for (int b = 0; b < 2; ++b) {
            const int t = 2 * i + b;
            if (t >= rows.n_tiles) break;
            // P^T of tile t is complete (for the own tile too: all 4 warps have written it), and
            // so are its factors and maxima.
            hw::mbarrier_wait(&sh.p_full[b], i & 1);
            const int stage = t % Cfg::kStages;
            if (b == other) hw::mbarrier_wait(&sh.full[stage], (t / Cfg::kStages) & 1);
            // The sums and O so far are under the maxima before tile t: rescale them where tile
            // t moved a maximum (mostly nowhere once the maxima settle), then add the own tile's
            // sums.
            int moved = 0;
#pragma unroll
            for (int ow = 0; ow < Cfg::kOwnerWarps; ++ow) moved |= sh.flag[(2 * b + par) * 2 + ow];
            if (moved) wgmma_detail::rescale_rows<Cfg>(sh.alpha + (2 * b + par) * N, t4, l_run, o);
            if (b == w) {
#pragma unroll
                for (int jj = 0; jj < Cfg::kCols; ++jj) l_run[jj] += l_tile[jj];
            }
            wgmma_detail::value_products<Cfg, 1>(
                o, sh.stages + stage * Cfg::kStageBytes + lanes.v_off, lanes,
                pt_desc0, b, &sh.empty[stage], lane);
            if (b == other) {  // its P^T is read: the other consumer may write it again
                __syncwarp();
                if (lane == 0) hw::mbarrier_arrive(&sh.p_empty[b]);
            }
        }
    }

    // ---- epilogue: row sums of both consumers, then each stores its half of O -------------------
    // What depends on the row alone (its sum, scale, LSE and output address) is done once per row
    // in a rolled pass and handed over in shared memory, so the unrolled per-slot stores stay
    // short: the epilogue runs once per CTA from a cold instruction cache.
    wgmma_detail::publish_row_sums<Cfg>(l_run, g, t4, sh.sum + (w * 4 + wq) * N);
    hw::named_barrier_sync(1, Cfg::kConsumerThreads);  // both consumers are past their last tile
    // The maxima after the last tile: in the buffer of the consumer and round that had it.
    const int t_last = rows.n_tiles - 1;
    const float* m_final = sh.max + (2 * (t_last & 1) + ((t_last >> 1) & 1)) * N;
    uint64_t* row_ptr = reinterpret_cast<uint64_t*>(sh.red);  // N output rows (0: no row)
    float* row_scale = sh.coef;                               // N
    const int n_me = (w * 4 + wq) * 32 + lane;
    if (n_me < N) {
        float l = 0.0f;
        for (int v = 0; v < 4 * Cfg::kConsumers; ++v) l += sh.sum[v * N + n_me];
        // kTokenScales: l is kept times 2^kSumBias (<= 2^121 / l then, no overflow).
        const float bias = kTokenScales ? Cfg::Decode::kSumBias : 0.0f;
        wgmma_detail::row_output<Cfg>(p, work, rows, n_me, m_final[n_me], l, bias, row_ptr,
                                      row_scale);
    }
    hw::named_barrier_sync(1, Cfg::kConsumerThreads);
    wgmma_detail::store_o<Cfg>(work, o, row_ptr, row_scale, t4, Cfg::v_lane_dim(w, wq, g));
}

// ---- solo consumer warpgroup w (Cfg::kSolo): tiles w, w + C, ... whole, then a merge ---------
// Each consumer runs the online softmax of its own tiles alone (its row owners keep the running
// maxima in a register), writes P^T into its own buffer and adds each tile to O^T of all 512
// value dims (two passes of two m-block pairs a k-step: the V fragments take no more registers
// than the seesaw's). While the tiles stream the consumers share nothing but the stage ring;
// a consumer's only waits are on full stages and its own named barrier (tile maxima, the
// owners' step, P^T written). After the last tile the C (m, l, O) of a row merge:
// m = max over the consumers of m_c, f_w = 2^(m_w - m); consumer w sends f_w times its O of the
// dims it does not store through shared memory (the idle stages: consumer 2 of a long CTA sends
// both halves) and consumers 0 and 1 keep dims 256 w .. 256 w + 255, the seesaw's epilogue
// layout, and add what the others sent.
template <class Cfg>
MLA_DEVICE void wgmma_consumer_solo(const Params& p, const Stage1Work& work,
                                    const WgmmaRows& rows, const WgmmaShared<Cfg>& sh, int w,
                                    int wq, int lane) {
    namespace hw = arch::sm90;
    constexpr int N = Cfg::N;
    constexpr int kSent = 2 * Cfg::kPairs;  // m-blocks kept (dims 256 w ..) and sent
    static_assert(Cfg::kSolo, "solo consumers");
    static_assert(!Cfg::kSsScores, "solo consumers load K into registers (score_products)");
    constexpr int C = Cfg::kConsumers;
    static_assert(!Cfg::Decode::kBlockScales && !Cfg::Decode::kTokenScales,
                  "solo consumers: fp8 or bf16 tiles");
    const int g = lane >> 2, t4 = lane & 3;
    const uint32_t pt_lane = hw::smem_addr(sh.pt + w * Cfg::kPParts * Cfg::kPtBytes +
                                           wq * Cfg::kPtStepBytes + 16 * lane);
    float l_run[Cfg::kCols];
    const auto [qt_desc0, pt_desc0, min_end, ct, owner] =
        wgmma_detail::consumer_setup<Cfg>(p, work, rows, sh, wq, lane, l_run);
    const float coef_own = sh.coef[owner ? ct : 0];
    float m_run = kNegInf;  // the owner's running maximum of row ct over this consumer's tiles
    float o[2 * kSent][N / 2];  // every value dim: m-blocks 0 .. kSent - 1 are dims 0 .. 255
#pragma unroll
    for (int mb = 0; mb < 2 * kSent; ++mb)
#pragma unroll
        for (int i = 0; i < N / 2; ++i) o[mb][i] = 0.0f;
    const wgmma_detail::ConsumerLanes lanes = wgmma_detail::consumer_lanes<Cfg>(0, wq, g, t4);
    float* const red = sh.red + w * 2 * 4 * N;
    float* const alpha = sh.alpha + w * N;
    float2* const scale = sh.scale + w * N;
    int* const flag = sh.flag + w * 2;
    const float e_tok[2] = {0.0f, 0.0f};
    // Settled maxima (from 32 rows; at 16 the vote cost the long CTAs 0.8 % and short bf16 CTAs
    // 1.7 %): once every row's running maximum is finite (m_unset clear) a tile whose scores
    // pass no row's lazy bound moves no maximum, so the owners' step would change nothing; one
    // vote of the 128 threads (named_barrier_any) says so, and the tile skips the tile maxima,
    // the owners' step and both its barriers. The factors {coefficient, -maximum} in `scale`
    // are then the ones the step would write. Bit for bit the results of the step.
    constexpr bool kSettled = N > 16;
    bool m_unset = true;

    for (int t = w; t < rows.n_tiles; t += C) {
        const int stage = t % Cfg::kStages;
        uint64_t* const full = &sh.full[stage * Cfg::kFullSets + (Cfg::kFullSets > 1 ? w : 0)];
        const int phase = (t / (Cfg::kStages * Cfg::kFullSets)) & 1;
        hw::mbarrier_wait(full, phase);
        const uint8_t* tile = sh.stages + stage * Cfg::kStageBytes;
        float s[N / 2], s_rope[N / 2];
        wgmma_detail::score_products<Cfg>(
            wgmma_detail::k_rows<Cfg>(tile, lanes.s_tok0, lanes.s_tok1, t4), t4, qt_desc0, s,
            s_rope, full, phase);
        wgmma_detail::mask_scores<Cfg>(s, lanes, t * Cfg::kTileTokens, min_end, sh.end, t4);
        float2 sc[Cfg::kCols];
        bool settled = false;
        if constexpr (kSettled) {
            wgmma_detail::load_row_scales<Cfg>(scale, t4, sc);
            settled = !hw::named_barrier_any(
                2 + w, 128, m_unset || wgmma_detail::exceeds_lazy_bound<Cfg>(s, sc));
        }
        if (!settled) {
            wgmma_detail::tile_maxima<Cfg>(s, lane, red + wq * N);
            hw::named_barrier_sync(2 + w, 128);
            bool unset = false;
            if (wq < Cfg::kOwnerWarps) {
                bool moved = false;
                m_run = wgmma_detail::owner_step<Cfg>(red, owner ? ct : 0, coef_own, m_run,
                                                      owner, alpha, scale, moved);
                unset = owner && m_run == kNegInf;
                const unsigned any = __ballot_sync(0xffffffffu, moved);
                if (lane == 0) flag[wq] = any != 0u ? 1 : 0;
            }
            if constexpr (kSettled) {
                m_unset = hw::named_barrier_any(2 + w, 128, unset);
            } else {
                hw::named_barrier_sync(2 + w, 128);
            }
            // What came before, rescaled where a maximum moved; then P^T and the tile's sums.
            int moved = 0;
#pragma unroll
            for (int ow = 0; ow < Cfg::kOwnerWarps; ++ow) moved |= flag[ow];
            if (moved) wgmma_detail::rescale_rows<Cfg>(alpha, t4, l_run, o);
            wgmma_detail::load_row_scales<Cfg>(scale, t4, sc);
        }
        wgmma_detail::write_pt<Cfg>(s, sc, e_tok, l_run, pt_lane);
        hw::fence_proxy_async_smem();
        hw::named_barrier_sync(2 + w, 128);  // P^T of all 4 warps written
        wgmma_detail::value_products<Cfg, 2>(o, sh.stages + stage * Cfg::kStageBytes + lanes.v_off,
                                             lanes, pt_desc0, w, &sh.empty[stage], lane);
    }

    // ---- epilogue: each row's merge, then consumer w stores dims 256 w .. 256 w + 255 --------
    wgmma_detail::publish_row_sums<Cfg>(l_run, g, t4, sh.sum + (w * 4 + wq) * N);
    if (owner) sh.max[w * N + ct] = m_run;
    hw::named_barrier_sync(1, Cfg::kConsumerThreads);  // every consumer is past its last tile
    uint64_t* row_ptr = reinterpret_cast<uint64_t*>(sh.red);  // N output rows (0: no row)
    float* row_scale = sh.coef;                               // N
    float* const factor = sh.alpha;                           // f_w of row n at w * N + n
    const int n_me = (w * 4 + wq) * 32 + lane;
    if (n_me < N) {
        float m = kNegInf;
        for (int c = 0; c < C; ++c) m = fmaxf(m, sh.max[c * N + n_me]);
        // m_w = -inf: no finite score. Then l_w and O_w are 0, or NaN where the consumer saw NaN
        // scores or NaN values (at masked tokens too: P = 0 times NaN); f_w = 0 multiplies them
        // so that a NaN survives into O and LSE: do not skip the products.
        float l = 0.0f;
        for (int c = 0; c < C; ++c) {
            const float mc = sh.max[c * N + n_me];
            const float fc = mc == m ? 1.0f : (mc == kNegInf ? 0.0f : arch::fast_exp2(mc - m));
            factor[c * N + n_me] = fc;
            float lc = 0.0f;
            for (int v = 0; v < 4; ++v) lc += sh.sum[(4 * c + v) * N + n_me];
            l += lc * fc;
        }
        wgmma_detail::row_output<Cfg>(p, work, rows, n_me, m, l, 0.0f, row_ptr, row_scale);
    }
    hw::named_barrier_sync(1, Cfg::kConsumerThreads);
    // The exchange, slot (sender w, storer s) at [w][s][m-block][k][thread] (conflict-free), in
    // the stages: every tile's full barrier was waited before barrier 1 and nothing is copied
    // past the last tile, so no one reads or writes them any more. Storer s (consumers 0, 1)
    // keeps m-blocks 4 s .. 4 s + 3 (dims 256 s ..), every other consumer sends them.
    float fw[Cfg::kCols];
#pragma unroll
    for (int jj = 0; jj < Cfg::kCols; ++jj) fw[jj] = factor[w * N + Cfg::col_of_slot(jj, t4)];
    static_assert(C * 2 * kSent * (N / 2) * 128 * 4 <= Cfg::kStages * Cfg::kStageBytes,
                  "the exchange fits in the stages");
    float* const xs = reinterpret_cast<float*>(sh.stages);
    const int tid = wq * 32 + lane;
    float kept[kSent][N / 2];
#pragma unroll
    for (int s = 0; s < 2; ++s) {  // constant indices into o: registers, not memory
#pragma unroll
        for (int mb = 0; mb < kSent; ++mb)
#pragma unroll
            for (int k = 0; k < N / 2; ++k) {
                const float v = o[kSent * s + mb][k] * fw[Cfg::slot_of(k)];
                if (s == w)
                    kept[mb][k] = v;
                else
                    xs[(((w * 2 + s) * kSent + mb) * (N / 2) + k) * 128 + tid] = v;
            }
    }
    hw::named_barrier_sync(1, Cfg::kConsumerThreads);
    if (w >= 2) return;  // the third consumer stores nothing
    for (int c = 0; c < C; ++c) {
        if (c == w) continue;
#pragma unroll
        for (int mb = 0; mb < kSent; ++mb)
#pragma unroll
            for (int k = 0; k < N / 2; ++k)
                kept[mb][k] += xs[(((c * 2 + w) * kSent + mb) * (N / 2) + k) * 128 + tid];
    }
    wgmma_detail::store_o<Cfg>(work, kept, row_ptr, row_scale, t4, Cfg::v_lane_dim(w, wq, g));
}

#endif  // MLA_ARCH_SM90

template <KvFormat F, int kRows, bool kFp8Mma, bool kLongCta>
__global__ void __launch_bounds__(WgmmaConfig<F, kRows, kFp8Mma, kLongCta>::kThreads, 1)
    stage1_wgmma_kernel(const Params p, const __grid_constant__ arch::tma::KvMaps tma) {
#if defined(MLA_ARCH_SM90)
    using Cfg = WgmmaConfig<F, kRows, kFp8Mma, kLongCta>;
    namespace hw = arch::sm90;
    extern __shared__ __align__(1024) uint8_t smem[];
    const WgmmaShared<Cfg> sh(smem, &tma);

    // The work of this CTA (work.h): rows [row0, row0 + kRows) of query tokens q_row ..
    // q_row + tokens - 1.
    const Stage1Work work = stage1_work<Cfg::kTileTokens, kRows>(p);
    if (!work.active) {  // no such rows or no such split: at most -inf LSEs to write
        if (work.empty_split) stage1_write_empty_split<kRows>(p, work);
        return;
    }
    stage1_allow_reduce(p);
    WgmmaRows rows;
    rows.row0 = static_cast<int>(blockIdx.x) % p.row_groups * kRows;
    rows.t_first = rows.row0 / p.num_heads;
    rows.n_tiles = static_cast<int>((work.tok_end - work.tok_begin + Cfg::kTileTokens - 1) /
                                    Cfg::kTileTokens);

    const int warp = hw::warp_index();
    const int lane = static_cast<int>(threadIdx.x) % 32;
    if (threadIdx.x == 0) {
        for (int s = 0; s < Cfg::kStages * Cfg::kFullSets; ++s)
            hw::mbarrier_init(&sh.full[s],
                              Cfg::kStagedDecode ? Cfg::kDecoderThreads : Cfg::kProducerThreads);
        for (int s = 0; s < Cfg::kStages; ++s) hw::mbarrier_init(&sh.empty[s], Cfg::kEmptyArrivals);
        for (int c = 0; c < Cfg::kConsumers; ++c) {
            hw::mbarrier_init(&sh.p_full[c], 128);  // every thread of the writing consumer
            hw::mbarrier_init(&sh.p_empty[c], 4);   // the warps of the other consumer
            hw::mbarrier_init(&sh.m_full[c], 32 * Cfg::kOwnerWarps);  // its owner warps
        }
        // kStagedDecode: the decoder's threads fill the stages (full, as the producer's would),
        // the producer's fill the raw ring, whose stages the decoder's warps release.
        for (int s = 0; s < Cfg::kRawStages; ++s) {
            hw::mbarrier_init(&sh.raw_full[s], Cfg::kProducerThreads);
            hw::mbarrier_init(&sh.raw_empty[s], Cfg::kDecoderThreads / 32);
        }
        for (int s = 0; s < (Cfg::kStagedDecode ? Cfg::kStages : 0); ++s)
            hw::mbarrier_init(&sh.front[s], Cfg::kDecoderThreads);
        hw::mbarrier_init_fence();
    }
    __syncthreads();

    if constexpr (Cfg::kStagedDecode) {
        if (warp >= Cfg::kDecoderWarp) {
            hw::warpgroup_registers_dec<Cfg::kDecoderRegs>();
            wgmma_decoder<Cfg>(rows, sh, static_cast<int>(threadIdx.x) - 32 * Cfg::kDecoderWarp);
            return;
        }
    }
    if (warp >= Cfg::kProducerWarp) {
        hw::warpgroup_registers_dec<Cfg::kProducerRegs>();
        if constexpr (Cfg::kQLoadsFirst)  // after the consumers' Q loads (write_q)
            hw::named_barrier_sync(wgmma_detail::kQIssuedBarrier,
                                   Cfg::kConsumerThreads + Cfg::kProducerThreads);
        wgmma_producer<Cfg>(p, work, rows, sh, warp - Cfg::kProducerWarp, lane);
        return;
    }
    hw::warpgroup_registers_inc<Cfg::kConsumerRegs>();
    wgmma_detail::write_q<Cfg>(p, work, rows, sh, warp, lane);
    hw::fence_proxy_async_smem();
    hw::named_barrier_sync(1, Cfg::kConsumerThreads);
    if constexpr (Cfg::kSolo)
        wgmma_consumer_solo<Cfg>(p, work, rows, sh, warp / 4, warp % 4, lane);
    else
        wgmma_consumer<Cfg>(p, work, rows, sh, warp / 4, warp % 4, lane);
#endif
}

namespace wgmma_detail {
template <KvFormat F, int kRows, bool kFp8Mma, bool kLongCta = false>
gpu::error_t launch_rows(const Params& params, gpu::stream_t stream) {
    using Cfg = WgmmaConfig<F, kRows, kFp8Mma, kLongCta>;
    static std::atomic<bool> prepared[kMaxDevices];
    const gpu::error_t e = set_shared_bytes_once(
        stage1_wgmma_kernel<F, kRows, kFp8Mma, kLongCta>, Cfg::kSmemBytes, prepared);
    if (e != gpu::kSuccess) return e;
    // Swizzled stages (64 rows of fp8, long CTAs) of a contiguous cache or of pages of a
    // multiple of 64 tokens: whole tiles by TMA (arch/nvidia/tma.h).
    arch::tma::KvMaps maps{};
#if defined(MLA_BACKEND_CUDA)
    if constexpr (Cfg::kSwizzled) {
        if (params.tma &&
            (params.page_indptr == nullptr || params.page_size % Cfg::kTileTokens == 0))
            maps = arch::tma::encode_kv_maps(params.kv, params.kv_stride_bytes, params.kpe,
                                             params.kpe_stride_bytes, params.num_slots);
    }
#endif
    stage1_wgmma_kernel<F, kRows, kFp8Mma, kLongCta>
        <<<stage1_grid(params), Cfg::kThreads, Cfg::kSmemBytes, stream>>>(params, maps);
    const gpu::error_t launched = gpu::get_last_error();
    note_stage1_tma(launched == gpu::kSuccess && maps.ok != 0);
    return launched;
}
}  // namespace wgmma_detail

// The launcher, instantiated per format in instantiations/stage1_wgmma_*.hip: the kernel of
// params.rows_per_cta; kFp8Mma: scores on the e4m3 tensor core (e4m3fn Q and cache,
// Params::fp8_mma). bf16 has no 64-row kernel (two bf16 stages do not fit beside 64 rows'
// Q^T; the planner never asks for it: stage1_shape). 16-row fp8 plans of long splits take the
// long-CTA kernel (variants.h, wgmma_long_cta; the plan's description says so).
template <KvFormat F, bool kFp8Mma>
gpu::error_t launch_stage1_wgmma(const Params& params, gpu::stream_t stream) {
    switch (params.rows_per_cta) {
        case 16:
            if constexpr (wgmma_long_cta(F, kFp8Mma, 16, kWgmmaLongCtaTiles)) {
                if (wgmma_long_cta(F, kFp8Mma, 16, params.tiles_per_split))
                    return wgmma_detail::launch_rows<F, 16, false, true>(params, stream);
            }
            return wgmma_detail::launch_rows<F, 16, kFp8Mma>(params, stream);
        case 32: return wgmma_detail::launch_rows<F, 32, kFp8Mma>(params, stream);
        case 64:
            if constexpr (F != KvFormat::kBf16)
                return wgmma_detail::launch_rows<F, 64, kFp8Mma>(params, stream);
            break;
        default: break;
    }
    return gpu::kErrorInvalidValue;
}

}  // namespace mla::splitkv
