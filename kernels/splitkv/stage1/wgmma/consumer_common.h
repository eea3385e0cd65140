// The wgmma variant's consumer pieces (stage1/wgmma.h), used by both consumer forms (the seesaw,
// consumer_seesaw.h; solo consumers, consumer_solo.h): the Q^T prologue, a tile's K loads and
// score products, the tile maxima, the online softmax's row step and P^T, the value products,
// and the epilogue's row outputs and O stores.
#pragma once

#include "splitkv/epilogue.h"
#include "splitkv/params.h"
#include "splitkv/q_prologue.h"
#include "splitkv/softmax.h"
#include "splitkv/work.h"
#include "splitkv/stage1/wgmma/config.h"

// The roles' code exists only in sm_90a device passes (arch/nvidia/sm90.h).
#if defined(MLA_ARCH_SM90)
namespace mla::splitkv {

namespace wgmma_detail {

// Q^T, f16 (bf16 for a bf16 cache): k-step s, row n, k index k at  s * step_bytes + (n/8) * 256
// + (k/8) * 128 + (n%8) * 16 + (k%8) * 2. Writes 8 consecutive dims d0 .. d0+7 (d0 % 8 == 0) of
// row n, given as bf16 pairs w[0..3] (dims (d0, d0+1), ...), in the K fragment's dim order:
// dims d0 + 4s .. +3 are the k indices 2t, 2t+1, 2t+8, 2t+9 of k-step step0 + s (Decode::qt_place),
// scaled by `up` into f16 where Decode::kQF16 (Decode::kRopeBf16: the rope's dims into bf16).
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
        if constexpr (Decode::kRopeBf16) {  // the rope's dims bf16, the latent's f16
            if (d0 >= kKvLoraRank)
                Decode::rope_q_words(w[2 * s], w[2 * s + 1], up, lo, hi);
            else
                Decode::q_words(w[2 * s], w[2 * s + 1], up, lo, hi);
        } else {
            Decode::q_words(w[2 * s], w[2 * s + 1], up, lo, hi);
        }
        *reinterpret_cast<uint32_t*>(step) = lo;          // k = 2t, 2t+1
        *reinterpret_cast<uint32_t*>(step + 128) = hi;    // k = 2t+8, 2t+9
    }
}

// fp8 Q's words widened to bf16 pairs in place, after the loads' arrive (write_q); e4m3 scores
// (Decode::kQCodes) keep the e4m3fn codes as stored, bf16 Q is loaded as bf16.
template <class Cfg, int kWords>
MLA_DEVICE void widen_q_words(const Params& p, uint32_t (&w)[kWords][4]) {
    if (!Cfg::Decode::kQCodes && p.q_format != QFormat::kBf16) {
#pragma unroll
        for (int i = 0; i < kWords; ++i) widen_q_fp8_words(p.q_format, w[i]);
    }
}

// The largest |x| of the bf16 pairs in w, as a float (a lane's share of its row's maximum).
template <int kWords>
MLA_DEVICE float q_words_amax(const uint32_t (&w)[kWords][4]) {
    uint32_t amax_bits = 0;
#pragma unroll
    for (int i = 0; i < kWords; ++i) {
#pragma unroll
        for (int e = 0; e < 4; ++e)
            amax_bits = max(amax_bits, max(w[i][e] & 0x7fffu, (w[i][e] >> 16) & 0x7fffu));
    }
    return arch::bf16_to_float(static_cast<uint16_t>(amax_bits));
}

// Named barrier (Cfg::kQLoadsFirst): the consumers' Q loads are issued (ids 1 .. 1 + kConsumers
// are the consumers').
constexpr int kQIssuedBarrier = 6;

// Q row r of the CTA (rows.row0 + r = token x num_heads + head): its CTA-relative token, whether
// it is a row of this work, and where its Q lies (token 0's for a row that is not).
struct CtaQRow {
    QRow q;
    int ti;
    bool valid;
};
template <class Cfg>
MLA_DEVICE CtaQRow cta_q_row(const Params& p, const Stage1Work& work, const WgmmaRows& rows,
                             int r) {
    CtaQRow c;
    c.ti = (rows.row0 + r) / p.num_heads - rows.t_first;
    const int h = (rows.row0 + r) % p.num_heads;
    c.valid = r < Cfg::N && c.ti < work.tokens;
    c.q = q_row(p, work.q_row + (c.valid ? c.ti : 0), h);
    return c;
}

// Q dims d0 .. d0 + 7 of a row into w: e4m3 scores (Decode::kQCodes) take the e4m3fn codes as
// stored; fp8 Q is loaded as codes too and widened to bf16 after the loads' arrive
// (widen_q_words), so that no warp waits on its loads before it; bf16 Q as bf16 words.
template <class Cfg>
MLA_DEVICE void load_q_piece(const Params& p, const QRow& q, int d0, uint32_t (&w)[4]) {
    if (Cfg::Decode::kQCodes || p.q_format != QFormat::kBf16)
        load_q_codes(q, d0, w);
    else
        load_q_bf16_words(q, d0, w);
}

// From 32 rows the producer copies its first tiles once every consumer warp has issued its Q
// loads (kQIssuedBarrier), so Q is not queued behind them (a CTA's first work only: the balanced
// schedule's later items find the producer ahead).
template <class Cfg>
MLA_DEVICE void announce_q_loads(const WgmmaRows& rows) {
    static_assert(1 + Cfg::kConsumers < kQIssuedBarrier, "the consumers' barriers 2, 3, ...");
    if constexpr (Cfg::kQLoadsFirst) {
        if (rows.announce_q)
            arch::sm90::named_barrier_arrive(kQIssuedBarrier,
                                             Cfg::kConsumerThreads + Cfg::kProducerThreads);
    }
}

// The scores' coefficient before a row's Q^T scale: sm_scale log2(e) and the dequant scales.
template <class Cfg>
MLA_DEVICE float q_score_coef(const Params& p) {
    return p.sm_scale * kLog2e * p.q_scale * p.kv_scale * Cfg::Decode::kScale;
}

// Row r's score coefficient (q_coef over its Q^T scale 2^k) and token end, by one lane of the
// row.
template <class Cfg>
MLA_DEVICE void write_q_row_meta(const Stage1Work& work, const WgmmaShared<Cfg>& sh, int r,
                                 float q_coef, int k, const CtaQRow& c) {
    // Kept >= the least normal float: the softmax scales -inf (masked) scores by it.
    sh.coef[r] = fmaxf(q_coef * exp2_int(-k), 1.17549435e-38f);
    // Token end of this row, relative to tok_begin: its causal limit within the split (nothing
    // if the row is not valid).
    sh.end[r] = static_cast<int>(c.valid ? stage1_token_end(work, c.ti) - work.tok_begin : 0);
}

template <class Cfg>
MLA_DEVICE void write_q_row_lanes(const Params& p, const Stage1Work& work, const WgmmaRows& rows,
                                  const WgmmaShared<Cfg>& sh, int cw, int lane);

// Q prologue of the consumer warps (warp cw of the Cfg::kProducerWarp consumer warps): rows
// cw, cw + Cfg::kProducerWarp, ... as f16 Q^T with a per-row power-of-two scale (bf16 caches:
// bf16 Q^T as loaded), each row's score coefficient and token end. Every row of the warp is
// loaded before the first is written: one memory round trip a warp, not one a row (Q is cold
// and the producer's first tiles are in flight beside it). 64 rows (8 a warp) go to
// write_q_row_lanes instead, a row per lane.
template <class Cfg>
MLA_DEVICE void write_q(const Params& p, const Stage1Work& work, const WgmmaRows& rows,
                        const WgmmaShared<Cfg>& sh, int cw, int lane) {
    if constexpr (Cfg::N == 8 * Cfg::kProducerWarp) {  // 64 rows: 8 a warp
        write_q_row_lanes<Cfg>(p, work, rows, sh, cw, lane);
        return;
    }
    const float q_coef = q_score_coef<Cfg>(p);
    constexpr int kPieces = kHeadDimQk / 8;  // 8 dims per piece
    constexpr int kPerLane = (kPieces + 31) / 32;
    constexpr int kWarpRows = (Cfg::N + Cfg::kProducerWarp - 1) / Cfg::kProducerWarp;
    uint32_t w[kWarpRows][kPerLane][4];
    CtaQRow c[kWarpRows];
#pragma unroll
    for (int j = 0; j < kWarpRows; ++j) {
        c[j] = cta_q_row<Cfg>(p, work, rows, cw + j * Cfg::kProducerWarp);
#pragma unroll
        for (int i = 0; i < kPerLane; ++i) {
            const int piece = lane + 32 * i;
#pragma unroll
            for (int k = 0; k < 4; ++k) w[j][i][k] = 0u;
            if (!c[j].valid || piece >= kPieces) continue;
            load_q_piece<Cfg>(p, c[j].q, 8 * piece, w[j][i]);
        }
    }
    announce_q_loads<Cfg>(rows);
#pragma unroll
    for (int j = 0; j < kWarpRows; ++j) {
        const int r = cw + j * Cfg::kProducerWarp;
        if (r >= Cfg::N) break;
        widen_q_words<Cfg>(p, w[j]);
        int k = 0;  // bf16 Q^T and e4m3 codes: no scale
        if constexpr (Cfg::Decode::kQF16) {
            float amax = q_words_amax(w[j]);
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
        if (lane == 0) write_q_row_meta<Cfg>(work, sh, r, q_coef, k, c[j]);
    }
}

// write_q where a warp has 8 rows (64 rows, 8 consumer warps): lane L takes row 8 cw + L % 8 and
// the quarter g = L / 8 of its 72 pieces of 8 dims, pieces 8 m + 2 g + e (m < 9, e < 2). A store
// of write_qt8 then covers 8 rows (n % 8: 16-byte slots) and, in the f16 Q^T of the fp8 and
// MXFP4 decoders (qt_place), the 4 quads t = g: 32 banks, one wavefront, where one row a warp
// (write_q's form) put 8 lanes on each of 4 banks (s57 timeline: Q^T written 11.2 us into a
// 64-row CTA, tile 0 consumed at 14.2; 8.7 with this form). The e4m3-score layout (kSsScores)
// gets 4 wavefronts an 8-byte store (16 before, 2 at best: pieces 8 m + 4 e + g would reach it
// there, not measured). A load leaves each 32-byte sector half used, its other half one
// instruction later. The row's scale exponent is reduced over its 4 lanes.
template <class Cfg>
MLA_DEVICE void write_q_row_lanes(const Params& p, const Stage1Work& work, const WgmmaRows& rows,
                                  const WgmmaShared<Cfg>& sh, int cw, int lane) {
    const float q_coef = q_score_coef<Cfg>(p);
    constexpr int kPieces = kHeadDimQk / 8;  // 8 dims per piece
    constexpr int kGroups = arch::kWarpSize / 8;  // lanes a row
    constexpr int kPerLane = kPieces / kGroups;
    static_assert(kPieces % (2 * kGroups) == 0 && kGroups == 4, "pieces 8 m + 2 g + e");
    const int r = 8 * cw + lane % 8;
    const int g = lane / 8;
    const auto piece = [g](int i) { return 8 * (i / 2) + 2 * g + i % 2; };
    const CtaQRow c = cta_q_row<Cfg>(p, work, rows, r);
    uint32_t w[kPerLane][4];
#pragma unroll
    for (int i = 0; i < kPerLane; ++i) {
#pragma unroll
        for (int k = 0; k < 4; ++k) w[i][k] = 0u;
        if (!c.valid) continue;
        load_q_piece<Cfg>(p, c.q, 8 * piece(i), w[i]);
    }
    announce_q_loads<Cfg>(rows);
    widen_q_words<Cfg>(p, w);
    int k = 0;  // bf16 Q^T and e4m3 codes: no scale
    if constexpr (Cfg::Decode::kQF16) {
        float amax = q_words_amax(w);
#pragma unroll
        for (int mask = 8; mask < arch::kWarpSize; mask <<= 1)
            amax = fmaxf(amax, arch::shfl_xor(amax, mask));
        k = f16_row_scale_exponent(amax);
    }
    const float up = exp2_int(k);
#pragma unroll
    for (int i = 0; i < kPerLane; ++i)
        write_qt8<typename Cfg::Decode>(sh.qt, Cfg::kQtStepBytes, r, 8 * piece(i), w[i], up);
    if (g == 0) write_q_row_meta<Cfg>(work, sh, r, q_coef, k, c);
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
// (Decode::kRopeBf16 takes score_products_rope instead: score_products.)
template <class Cfg>
MLA_DEVICE void score_products_latent(const KRows& k, int t4, uint64_t qt_desc0,
                                      float (&s)[Cfg::N / 2], float (&s_rope)[Cfg::N / 2],
                                      uint64_t* full, int phase) {
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

// The latent chunks 0..7 of a tile beside a bf16 rope (Decode::kRopeBf16): their 32 f16 steps
// in one chain onto s (from zero where !accumulate), the next chunk's load in flight (chunk 0's,
// n0 / n1, loaded by the caller), at most one chunk's group left pending (the caller waits).
template <class Cfg>
MLA_DEVICE void latent_score_chain(const KRows& k, int t4, uint64_t qt_desc0,
                                   float (&s)[Cfg::N / 2], uint4 n0, uint4 n1, bool accumulate) {
    namespace hw = arch::sm90;
    using Decode = typename Cfg::Decode;
    constexpr int kSteps = Decode::kStepsPerChunk;
    uint32_t a[kSteps][4];
#pragma unroll
    for (int c = 0; c < Decode::kRopeChunk; ++c) {
        const uint4 c0[1] = {n0}, c1[1] = {n1};
        if (c + 1 < Decode::kRopeChunk) {
            n0 = load_k<Cfg>(k, c + 1, 0, 0, t4);
            n1 = load_k<Cfg>(k, c + 1, 0, 1, t4);
        }
        Decode::k_fragments(c0, c1, a);
        hw::wgmma_fence();
#pragma unroll
        for (int st = 0; st < kSteps; ++st) {
            const uint64_t desc = qt_desc0 + (((c * kSteps + st) * Cfg::kQtStepBytes) >> 4);
            hw::Wgmma<Decode::kScoreMma, Cfg::N>::run(s, a[st], desc,
                                                      accumulate || c > 0 || st > 0);
        }
        hw::wgmma_commit();
        hw::wgmma_wait<1>();
    }
}

// The rope chunk of a tile beside an fp8 latent (Decode::kRopeBf16, padded stages): its A
// fragments from two 16-byte loads a row (rope_chunk_fragments), and its 4 bf16 steps onto s
// (from zero where !accumulate), committed as one group (rope_score_steps).
template <class Cfg>
MLA_DEVICE void rope_chunk_fragments(const KRows& k, int t4,
                                     uint32_t (&a)[Cfg::Decode::kStepsPerChunk][4]) {
    using Decode = typename Cfg::Decode;
    static_assert(Decode::kRopeBf16 && !Cfg::kSwizzled && Decode::kRopeChunk == Cfg::kChunks - 1 &&
                      Decode::kKLoads == 2 && Decode::kStepsPerChunk == 4,
                  "latent chunks 0..7 of one load a row, then the rope chunk of two");
    uint4 r0[2], r1[2];
#pragma unroll
    for (int l = 0; l < 2; ++l) {
        r0[l] = load_k<Cfg>(k, Decode::kRopeChunk, l, 0, t4);
        r1[l] = load_k<Cfg>(k, Decode::kRopeChunk, l, 1, t4);
    }
    Decode::rope_fragments(r0, r1, a);
}
template <class Cfg>
MLA_DEVICE void rope_score_steps(const uint32_t (&a)[Cfg::Decode::kStepsPerChunk][4],
                                 uint64_t qt_desc0, float (&s)[Cfg::N / 2], bool accumulate) {
    namespace hw = arch::sm90;
    constexpr int kSteps = Cfg::Decode::kStepsPerChunk, kRope = Cfg::Decode::kRopeChunk;
    hw::wgmma_fence();
#pragma unroll
    for (int st = 0; st < kSteps; ++st) {
        const uint64_t desc = qt_desc0 + (((kRope * kSteps + st) * Cfg::kQtStepBytes) >> 4);
        hw::Wgmma<arch::MmaType::kBF16, Cfg::N>::run(s, a[st], desc, accumulate || st > 0);
    }
    hw::wgmma_commit();
}

// score_products for an fp8 latent beside a bf16 rope (Decode::kRopeBf16, padded stages):
// the rope chunk first, its 4 bf16 steps (A: the rope's values as loaded, two 16-byte loads a
// row; B: Q^T's bf16 rope dims), waited for, and the accumulators times rope_scale (1 /
// (kv_scale Decode::kScale), rope_scale_of: the row's coefficient carries kv_scale, which
// applies to the latent codes only, and kScale, the decoded codes' power of two);
// then the 32 f16 steps of the latent chunks 0..7 add onto them in one chain (the next chunk's
// load in flight). The wait costs the chain the rope steps' latency once a tile; it lets the
// latent steps add onto the scaled rope sums, with no set of accumulators for the rope alone.
// One chain at every N, not Cfg::kSplitSChain's two below 64 rows: on the H100 the split chain
// put 3 of 40960 O values of GpuBf16RopeLarge (rope values times 30000) just past the tolerance
// at 16 and 32 rows, where one chain passes, at the same time (0.997-1.007x, s67; why the split
// chain was the less accurate one is not known). Decode::kRopeLast (e4m3fnuz codes, decode.h)
// takes score_products_rope_last instead, the order turned round.
template <class Cfg>
MLA_DEVICE void score_products_rope(const KRows& k, int t4, uint64_t qt_desc0,
                                    float (&s)[Cfg::N / 2], float rope_scale) {
    namespace hw = arch::sm90;
    uint32_t a[Cfg::Decode::kStepsPerChunk][4];
    rope_chunk_fragments<Cfg>(k, t4, a);
    const uint4 n0 = load_k<Cfg>(k, 0, 0, 0, t4), n1 = load_k<Cfg>(k, 0, 0, 1, t4);
    rope_score_steps<Cfg>(a, qt_desc0, s, false);
    hw::wgmma_wait<0>();
    hw::fence_operands(s);
#pragma unroll
    for (int i = 0; i < Cfg::N / 2; ++i) s[i] *= rope_scale;
    hw::fence_operands(s);  // the scaled sums, before the latent steps read them
    latent_score_chain<Cfg>(k, t4, qt_desc0, s, n0, n1, true);
    hw::wgmma_wait<0>();
    hw::fence_operands(s);
}

// score_products_rope's order turned round (Decode::kRopeLast): the latent chunks' 32 f16 steps
// from zero, waited for, times 1 / rope_scale (into the rope's units); the rope's 4 bf16 steps
// add onto them, waited for, and the sums times rope_scale (back into the latent's units, which
// the coefficient expects). The rope's large products then meet 4 accumulations at their
// magnitude, not the latent chain's 32 (GpuBf16RopeLarge: rope values times 30000).
template <class Cfg>
MLA_DEVICE void score_products_rope_last(const KRows& k, int t4, uint64_t qt_desc0,
                                         float (&s)[Cfg::N / 2], float rope_scale) {
    namespace hw = arch::sm90;
    static_assert(Cfg::Decode::kRopeLast, "the rope-last order");
    latent_score_chain<Cfg>(k, t4, qt_desc0, s, load_k<Cfg>(k, 0, 0, 0, t4),
                            load_k<Cfg>(k, 0, 0, 1, t4), false);
    uint32_t a[Cfg::Decode::kStepsPerChunk][4];
    rope_chunk_fragments<Cfg>(k, t4, a);
    hw::wgmma_wait<0>();
    hw::fence_operands(s);
    const float to_rope = 1.0f / rope_scale;
#pragma unroll
    for (int i = 0; i < Cfg::N / 2; ++i) s[i] *= to_rope;
    hw::fence_operands(s);  // the rescaled sums, before the rope steps read them
    rope_score_steps<Cfg>(a, qt_desc0, s, true);
    hw::wgmma_wait<0>();
    hw::fence_operands(s);
#pragma unroll
    for (int i = 0; i < Cfg::N / 2; ++i) s[i] *= rope_scale;
}

// The rope's scale in both score orders: rope sums times 1 / (kv_scale Decode::kScale) are in
// the latent's units, which the row's coefficient (q_score_coef: kv_scale and kScale) turns into
// scores (score_products_rope scales the rope's sums by it, score_products_rope_last the latent's
// by its inverse and the total by it).
template <class Cfg>
MLA_DEVICE float rope_scale_of(const Params& p) {
    return 1.0f / (p.kv_scale * Cfg::Decode::kScale);
}

// S^T of one tile: score_products_latent, or score_products_rope / score_products_rope_last
// (Decode::kRopeBf16, by Decode::kRopeLast) with rope_scale = rope_scale_of.
template <class Cfg>
MLA_DEVICE void score_products(const KRows& k, int t4, uint64_t qt_desc0, float (&s)[Cfg::N / 2],
                               float (&s_rope)[Cfg::N / 2], uint64_t* full, int phase,
                               float rope_scale) {
    if constexpr (Cfg::Decode::kRopeBf16 && Cfg::Decode::kRopeLast)
        score_products_rope_last<Cfg>(k, t4, qt_desc0, s, rope_scale);
    else if constexpr (Cfg::Decode::kRopeBf16)
        score_products_rope<Cfg>(k, t4, qt_desc0, s, rope_scale);
    else
        score_products_latent<Cfg>(k, t4, qt_desc0, s, s_rope, full, phase);
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
        // (V's dequant scale: the latent rows' kv_scale, or a separate V cache's v_scale.)
        float v_scale = p.kv_scale * Cfg::Decode::kScale;
        if constexpr (Cfg::Decode::kSeparateV) v_scale = p.v_scale * Cfg::Decode::kVScale;
        scale = l > 0.0f ? v_scale * exp2_int(int(bias)) / l : 0.0f;
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

}  // namespace mla::splitkv
#endif  // MLA_ARCH_SM90
