// Stage 1, Hopper warpgroup variant ("wgmma", sm_90a only): one CTA per (batch element, split,
// block of kRows query rows). The rows of an element are its (query token, head) pairs,
// r = t * num_heads + h, so one CTA serves 16 heads x 4 query tokens, or 64 of 128 heads, and
// every KV tile it reads serves all of them: HBM traffic does not grow with heads x q_len
// (heads 128 take two CTAs that read the same tiles at the same time, the second from L2).
//
// Operands are swapped so that 16 rows waste no matrix work: tokens are wgmma's M (64),
// query rows its N.
//     S^T [64 tokens x N rows]  = K [64 x 576]      * Q^T [576 x N]       (A = K, registers)
//     O^T [512 dims  x N rows] += V^T [512 x 64]    * P^T [64 x N]        (A = V^T, registers)
// A fragments are built in registers from the raw cache tile (fp8 codes decoded to f16 with bit
// operations, arch/fp8.h); B operands (Q^T, P^T) sit in shared memory in the K-major core-matrix
// layout that wgmma reads through a descriptor (arch/nvidia/sm90.h).
//
// Warp roles (setmaxnreg moves registers from the producer to the consumers):
//   consumer warpgroups 0 .. kConsumerWGs-1. kRows = 16: three of them, each taking every third
//     tile for all 16 rows with its own online softmax; the states merge at the end. kRows = 32
//     / 64: two, each taking every tile for half of the rows (N = 16 / 32).
//   the last warpgroup: the producer; it only moves bytes: 16-byte asynchronous copies (cp.async, one
//     warp per 16 rows of a tile, 512 contiguous bytes per instruction) into a kStages-deep ring
//     of shared tiles; each thread's copies complete on the stage's "full" mbarrier
//     (cp.async.mbarrier.arrive), rows past the end are zero-filled by the same copies. Consumer
//     warps release a stage through its "empty" mbarrier. (One bulk copy per 576-byte row was
//     measured first: the copy engine then moved only 2.35 TB/s on bs256 kv8192, 515 us for a
//     295 us floor.)
//
// Dim and token orders. A dot product does not care about the order of its terms, so
//   * the K fragment of lane (g, t) for k-step (chunk c, step s) comes from one 16-byte load of
//     its token row at bytes 64c + 16t; word s of it holds dims 64c + 16t + 4s + {0, 1, 2, 3},
//     which the fp8 decoder pairs as (0, 2) and (1, 3): k index 2t + j + 8e <-> dim
//     64c + 16t + 4s + 2j + e. Q^T is written in shared memory in exactly that order.
//   * S^T row m = 16 w + 8 h + g (warp w of the warpgroup) is tile token 16 w + 8 h + rho(g),
//     rho(g) = 4 (g & 1) + (g >> 1): the two rows one 8-lane phase loads then sit 64 bytes apart
//     modulo 128 and the 16-byte loads are free of bank conflicts (row pitch 592 bytes).
//   * O^T rows: m-blocks 2p and 2p+1 (p = 0..3) are built together from 4-byte loads of
//     4 token rows: lane g of warp w holds dims 128p + 32w + 4g + {0, 1} (m-block 2p, rows g and
//     g+8) and + {2, 3} (m-block 2p+1); PV k index = tile token. So each lane owns 4 consecutive
//     output dims per (p, row): one 8-byte store of bf16 O.
#pragma once

#include "arch/device.h"
#include "splitkv/params.h"
#include "splitkv/epilogue.h"
#include "splitkv/q_prologue.h"
#include "splitkv/softmax.h"
#include "splitkv/variants.h"
#include "splitkv/work.h"

namespace mla::splitkv {

template <KvFormat F, int kRows>
struct WgmmaConfig {
    static_assert(F == KvFormat::kFp8E4M3FN || F == KvFormat::kFp8E4M3FNUZ,
                  "the wgmma variant serves fp8 caches");
    static_assert(kRows == 16 || kRows == 32 || kRows == 64, "16, 32 or 64 rows per CTA");
    static constexpr arch::Fp8Flavor kFlavor =
        F == KvFormat::kFp8E4M3FNUZ ? arch::Fp8Flavor::kE4M3FNUZ : arch::Fp8Flavor::kE4M3FN;

    static constexpr int kTileTokens = kWgmmaTileTokens;  // wgmma's M
    static_assert(kTileTokens == 64, "S^T and V^T fragments assume 64-token tiles");
    static constexpr bool kTokenSplit = kRows == 16;  // warpgroups share the tiles, not the rows
    static constexpr int kWgRows = kTokenSplit ? kRows : kRows / 2;  // N of every wgmma
    static constexpr int kConsumerWGs = kTokenSplit ? 3 : 2;
    static constexpr int kTileStride = kTokenSplit ? kConsumerWGs : 1;
    static constexpr int kConsumerWarps = 4 * kConsumerWGs;
    static constexpr int kProducerWarp = kConsumerWarps;
    static constexpr int kThreads = (kConsumerWarps + 4) * 32;
    // setmaxnreg budgets: 128 x 24 + kConsumerWGs x 128 x kConsumerRegs <= 64 K registers.
    static constexpr int kProducerRegs = kConsumerWGs == 3 ? 32 : 24;
    static constexpr int kConsumerRegs = kConsumerWGs == 3 ? 152 : 240;
    static constexpr int kConsumerThreads = kConsumerWarps * 32;
    static constexpr int kProducerThreads = 128;
    static constexpr int kEmptyArrivals = kTokenSplit ? 4 : 8;  // warps that read a stage
    static constexpr int kCols = kWgRows / 4;  // rows (N columns) a lane holds accumulators of
    // Even and odd k16 steps of S^T in two accumulator chains (N = 16: short products whose
    // latency would otherwise serialize; N = 32 needs the registers for O^T).
    static constexpr bool kSplitSChain = kWgRows == 16;

    // Cache tile: 64 rows of 576 fp8 codes, pitch 592 (see the bank notes above).
    static constexpr int kRowBytes = kHeadDimQk;
    static constexpr int kRowPitch = kRowBytes + 16;
    static constexpr int kStageBytes = kTileTokens * kRowPitch;
    static constexpr int kChunks = kHeadDimQk / 64;    // 16-byte K loads per lane and row
    static constexpr int kQtStepBytes = kRows * 32;    // one k16 step of Q^T: kRows x 16 f16
    static constexpr int kQtBytes = (kHeadDimQk / 16) * kQtStepBytes;
    static constexpr int kPtStepBytes = kWgRows * 32;  // one k16 step of P^T per warpgroup
    static constexpr int kPtBytes = (kTileTokens / 16) * kPtStepBytes;

    // Shared memory: Q^T | P^T per consumer warpgroup | row maxima (per warpgroup x 2 buffers
    // x 4 warps) | row sums | merge (m, l) | per-row score coefficient and token end (8 bytes
    // reserved a row, 4 used) | mbarriers | the stage ring (as many stages as fit, up to 6).
    static constexpr int kOffQt = 0;
    static constexpr int kOffPt = kOffQt + kQtBytes;
    static constexpr int kOffRed = kOffPt + kConsumerWGs * kPtBytes;
    static constexpr int kOffSum = kOffRed + kConsumerWGs * 2 * 4 * kWgRows * 4;
    static constexpr int kOffMerge = kOffSum + kConsumerWGs * 4 * kWgRows * 4;
    static constexpr int kOffCoef = kOffMerge + kConsumerWGs * 2 * kWgRows * 4;
    static constexpr int kOffEnd = kOffCoef + kRows * 4;
    static constexpr int kOffBars = (kOffEnd + kRows * 8 + 15) / 16 * 16;
    static constexpr int kMaxStages = 6;
    static constexpr int kSharedBudget = arch::kMaxSharedBytesPerBlock;
    static constexpr int kStagesFit = (kSharedBudget - kOffBars - 2 * kMaxStages * 8) / kStageBytes;
    static constexpr int kStages = kStagesFit < kMaxStages ? kStagesFit : kMaxStages;
    static_assert(kStages >= 2, "two tiles must fit in shared memory");
    static constexpr int kOffStages = (kOffBars + 2 * kStages * 8 + 127) / 128 * 128;
    static constexpr int kSmemBytes = kOffStages + kStages * kStageBytes;
    static_assert(kSmemBytes <= kSharedBudget, "shared memory budget");
    // The merge of the warpgroups' O^T (kRows = 16) reuses the stage ring.
    static_assert((kConsumerWGs - 1) * 4 * kWgRows * 128 * 4 <= kStages * kStageBytes,
                  "merge area");

    // Tile token of S^T row m (see the header): rows 8 apart mod 128 bytes.
    MLA_DEVICE static int s_row_token(int m) {
        const int g = m & 7;
        return (m & ~7) | ((g & 1) << 2) | (g >> 1);
    }
};

namespace wgmma_detail {

// Q^T, f16: k-step s, row n, k index k at  s * step_bytes + (n/8) * 256 + (k/8) * 128 + (n%8) * 16
// + (k%8) * 2. Writes 8 consecutive dims d0 .. d0+7 (d0 % 8 == 0) of row n, given as bf16 pairs
// w[0..3] (dims (d0, d0+1), ...), scaled by `up` into f16, in the K fragment's dim order.
MLA_DEVICE void write_qt8(uint8_t* qt, int step_bytes, int n, int d0, const uint32_t (&w)[4],
                          float up) {
    const int chunk = d0 / 64, t = (d0 % 64) / 16, s0 = (d0 % 16) / 4;
    auto f = [&](uint32_t word, int hi) {
        return arch::bf16_to_float(static_cast<uint16_t>(hi ? word >> 16 : word)) * up;
    };
    uint8_t* row = qt + (n / 8) * 256 + (n % 8) * 16 + 4 * t;  // k = 2t
#pragma unroll
    for (int s = 0; s < 2; ++s) {  // dims d0 + 4s .. +3: words w[2s] = (e0, e1), w[2s+1] = (e2, e3)
        uint8_t* step = row + (chunk * 4 + s0 + s) * step_bytes;
        // k = 2t, 2t+1 <- dims e0, e2;  k = 2t+8, 2t+9 <- dims e1, e3
        *reinterpret_cast<uint32_t*>(step) = arch::pack_f16x2(f(w[2 * s], 0), f(w[2 * s + 1], 0));
        *reinterpret_cast<uint32_t*>(step + 128) =
            arch::pack_f16x2(f(w[2 * s], 1), f(w[2 * s + 1], 1));
    }
}

// The four e4m3 codes of dims D..D+3 of tokens 2t, 2t+1, 2t+8, 2t+9 (words w0..w3) regrouped per
// dim as [tok 2t, tok 2t+8, tok 2t+1, tok 2t+9], then decoded: dim k gives lo = (2t, 2t+1) and
// hi = (2t+8, 2t+9), the A fragment pairs of V^T.
MLA_DEVICE void v_fragments(uint32_t w0, uint32_t w1, uint32_t w2, uint32_t w3,
                            uint32_t (&ax)[4], uint32_t (&ay)[4]) {
    const uint32_t x0 = arch::byte_perm(w0, w2, 0x5140u), x1 = arch::byte_perm(w0, w2, 0x7362u);
    const uint32_t y0 = arch::byte_perm(w1, w3, 0x5140u), y1 = arch::byte_perm(w1, w3, 0x7362u);
    const arch::Quad d0 = arch::decode_fp8x4(arch::byte_perm(x0, y0, 0x5410u));
    const arch::Quad d1 = arch::decode_fp8x4(arch::byte_perm(x0, y0, 0x7632u));
    const arch::Quad d2 = arch::decode_fp8x4(arch::byte_perm(x1, y1, 0x5410u));
    const arch::Quad d3 = arch::decode_fp8x4(arch::byte_perm(x1, y1, 0x7632u));
    ax[0] = d0.lo; ax[1] = d1.lo; ax[2] = d0.hi; ax[3] = d1.hi;  // rows g (dim +0), g+8 (+1)
    ay[0] = d2.lo; ay[1] = d3.lo; ay[2] = d2.hi; ay[3] = d3.hi;  // rows g (dim +2), g+8 (+3)
}

}  // namespace wgmma_detail

template <KvFormat F, int kRows>
__global__ void __launch_bounds__(WgmmaConfig<F, kRows>::kThreads, 1)
    stage1_wgmma_kernel(const Params p) {
#if defined(MLA_ARCH_SM90)
    using Cfg = WgmmaConfig<F, kRows>;
    namespace hw = arch::sm90;
    constexpr int N = Cfg::kWgRows;

    extern __shared__ __align__(1024) uint8_t smem[];
    uint8_t* qt = smem + Cfg::kOffQt;
    float* s_red = reinterpret_cast<float*>(smem + Cfg::kOffRed);
    float* s_sum = reinterpret_cast<float*>(smem + Cfg::kOffSum);
    float* s_merge = reinterpret_cast<float*>(smem + Cfg::kOffMerge);
    float* s_coef = reinterpret_cast<float*>(smem + Cfg::kOffCoef);
    int* s_end = reinterpret_cast<int*>(smem + Cfg::kOffEnd);
    uint64_t* full = reinterpret_cast<uint64_t*>(smem + Cfg::kOffBars);
    uint64_t* empty = full + Cfg::kStages;
    uint8_t* stages = smem + Cfg::kOffStages;

    // ---- the work of this CTA (work.h): rows [row0, row0 + kRows) of query tokens
    // q_row .. q_row + tokens - 1 -------------------------------------------------------------
    const Stage1Work work = stage1_work<Cfg::kTileTokens, kRows>(p);
    if (!work.active) return;  // no such rows or no such split: nothing to write
    const int row0 = static_cast<int>(blockIdx.x) % p.row_groups * kRows;
    const int t_first = row0 / p.num_heads;  // element-relative query token of row 0
    const int64_t tok_begin = work.tok_begin;
    const int n_tiles = static_cast<int>((work.tok_end - tok_begin + Cfg::kTileTokens - 1) /
                                         Cfg::kTileTokens);

    const int warp = arch::sm90::warp_index();
    const int lane = static_cast<int>(threadIdx.x) % 32;
    if (threadIdx.x == 0) {
        for (int s = 0; s < Cfg::kStages; ++s) {
            hw::mbarrier_init(&full[s], Cfg::kProducerThreads);
            hw::mbarrier_init(&empty[s], Cfg::kEmptyArrivals);
        }
        hw::mbarrier_init_fence();
    }
    __syncthreads();

    // ---- producer warpgroup: the cache rows, kStages tiles ahead --------------------------------
    if (warp >= Cfg::kProducerWarp) {
        hw::warpgroup_registers_dec<Cfg::kProducerRegs>();
        // Warp pw copies rows pw + 4 i (i < 16) of each tile: lanes take 16-byte pieces
        // 0..31, lanes 0..3 also 32..35; a row past the end is zero-filled (source size 0).
        const int pw = warp - Cfg::kProducerWarp;
        constexpr int kPieces = Cfg::kRowBytes / 16;
        for (int t = 0; t < n_tiles; ++t) {
            const int stage = t % Cfg::kStages;
            const int use = t / Cfg::kStages;
            if (use > 0) hw::mbarrier_wait(&empty[stage], (use - 1) & 1);
            const int64_t tile_tok0 = tok_begin + static_cast<int64_t>(t) * Cfg::kTileTokens;
            const int valid =
                static_cast<int>(min(int64_t{Cfg::kTileTokens}, work.tok_end - tile_tok0));
            uint8_t* dst = stages + stage * Cfg::kStageBytes;
            // Slot of row pw + 4 lane (lanes 0..15), then one row at a time.
            int64_t my_slot = 0;
            const int my_row = pw + 4 * (lane & 15);
            if (my_row < valid) my_slot = cache_slot(p, work, tile_tok0 + my_row);
#pragma unroll 4
            for (int i = 0; i < Cfg::kTileTokens / 4; ++i) {
                const int row = pw + 4 * i;
                const int64_t slot = __shfl_sync(0xffffffffu, my_slot, i);
                const bool ok = row < valid;
                const uint8_t* src = p.kv + slot * p.kv_stride_bytes;
                uint8_t* d = dst + row * Cfg::kRowPitch;
                arch::copy_16_async(d + 16 * lane, src + 16 * lane, ok);
                if (lane < kPieces - 32)
                    arch::copy_16_async(d + 16 * (32 + lane), src + 16 * (32 + lane), ok);
            }
            hw::copy_async_arrive_noinc(&full[stage]);
        }
        hw::copy_async_wait_all();  // leave only once this thread's copies have landed
        return;
    }

    // ---- consumers: Q^T into shared memory (f16, per-row power-of-two scale) ------------------
    hw::warpgroup_registers_inc<Cfg::kConsumerRegs>();
    const int wg = warp / 4;      // consumer warpgroup
    const int wq = warp % 4;      // warp within it
    const int g = lane >> 2, t4 = lane & 3;
    {
        const int q_elem_bytes = p.q_format == QFormat::kBf16 ? 2 : 1;
        const float q_coef = p.sm_scale * kLog2e * p.q_scale * p.kv_scale *
                             arch::kFp8F16Scale<Cfg::kFlavor>;
        constexpr int kPieces = kHeadDimQk / 8;  // 8 dims per piece
        constexpr int kPerLane = (kPieces + 31) / 32;
        for (int r = warp; r < kRows; r += Cfg::kConsumerWarps) {
            const int ti = (row0 + r) / p.num_heads - t_first;  // query token, CTA-relative
            const int h = (row0 + r) % p.num_heads;
            const bool valid = ti < work.tokens;
            const uint8_t* q_row =
                static_cast<const uint8_t*>(p.q) +
                ((work.q_row + (valid ? ti : 0)) * p.q_stride_token + h * p.q_stride_head) *
                    q_elem_bytes;
            uint32_t w[kPerLane][4];
            uint32_t amax_bits = 0;
#pragma unroll
            for (int i = 0; i < kPerLane; ++i) {
                const int piece = lane + 32 * i;
#pragma unroll
                for (int k = 0; k < 4; ++k) w[i][k] = 0u;
                if (valid && piece < kPieces) load_q_bf16_words(q_row, p.q_format, 8 * piece, w[i]);
#pragma unroll
                for (int k = 0; k < 4; ++k)
                    amax_bits = max(amax_bits, max(w[i][k] & 0x7fffu, (w[i][k] >> 16) & 0x7fffu));
            }
            float amax = arch::bf16_to_float(static_cast<uint16_t>(amax_bits));
#pragma unroll
            for (int mask = 16; mask > 0; mask >>= 1) amax = fmaxf(amax, arch::shfl_xor(amax, mask));
            const int k = f16_row_scale_exponent(amax);
            const float up = exp2_int(k);
#pragma unroll
            for (int i = 0; i < kPerLane; ++i) {
                const int piece = lane + 32 * i;
                if (piece < kPieces)
                    wgmma_detail::write_qt8(qt, Cfg::kQtStepBytes, r, 8 * piece, w[i], up);
            }
            if (lane == 0) {
                s_coef[r] = q_coef * exp2_int(-k);
                // Token end of this row, relative to tok_begin: its causal limit within the
                // split (nothing if the row is not valid).
                s_end[r] = static_cast<int>(valid ? stage1_token_end(work, ti) - tok_begin : 0);
            }
        }
    }
    hw::fence_proxy_async_smem();
    hw::named_barrier_sync(1, Cfg::kConsumerThreads);

    // ---- consumers: the tile loop -------------------------------------------------------------
    const int wg_row0 = Cfg::kTokenSplit ? 0 : wg * N;  // first CTA row of this warpgroup
    const uint32_t qt_addr = hw::smem_addr(qt) + wg_row0 * 32;
    uint8_t* pt = smem + Cfg::kOffPt + wg * Cfg::kPtBytes;
    const uint32_t pt_addr = hw::smem_addr(pt);
    const uint64_t qt_desc0 = hw::kmajor_desc(qt_addr, 128, 256);
    const uint64_t pt_desc0 = hw::kmajor_desc(pt_addr, 128, 256);

    // Columns this lane holds: n = 8j + 2 t4 + c, column slot jj = 2j + c; their score
    // coefficients and token ends (relative to tok_begin) stay in registers.
    float m_run[Cfg::kCols], l_run[Cfg::kCols], coef[Cfg::kCols];
    int row_end[Cfg::kCols];
#pragma unroll
    for (int jj = 0; jj < Cfg::kCols; ++jj) {
        const int n = wg_row0 + 8 * (jj / 2) + 2 * t4 + (jj & 1);
        m_run[jj] = kNegInf;
        l_run[jj] = 0.0f;
        coef[jj] = s_coef[n];
        row_end[jj] = s_end[n];
    }
    float o[8][N / 2];
#pragma unroll
    for (int mb = 0; mb < 8; ++mb)
#pragma unroll
        for (int i = 0; i < N / 2; ++i) o[mb][i] = 0.0f;
    // Tile tokens of this lane's two S^T rows, and its V rows' byte offset in a tile.
    const int s_tok0 = 16 * wq + Cfg::s_row_token(g);
    const int s_tok1 = s_tok0 + 8;
    const int v_off = (2 * t4) * Cfg::kRowPitch + 32 * wq + 4 * g;

    const int first_tile = Cfg::kTokenSplit ? wg : 0;
    int parity = 0;
    for (int t = first_tile; t < n_tiles; t += Cfg::kTileStride, parity ^= 1) {
        const int stage = t % Cfg::kStages;
        hw::mbarrier_wait(&full[stage], (t / Cfg::kStages) & 1);
        const uint8_t* tile = stages + stage * Cfg::kStageBytes;
        const int tile_tok0 = t * Cfg::kTileTokens;  // relative to tok_begin

        // 1. S^T = K Q^T over 36 k16 steps; A = decoded K, 4 steps per 16-byte load, the next
        //    chunk's loads in flight while this one's products run; even and odd steps
        //    accumulate separately so that consecutive products do not wait on each other.
        float s[N / 2], s_odd[N / 2];
#pragma unroll
        for (int i = 0; i < N / 2; ++i) s[i] = s_odd[i] = 0.0f;
        const uint8_t* k_row0 = tile + s_tok0 * Cfg::kRowPitch + 16 * t4;
        const uint8_t* k_row1 = tile + s_tok1 * Cfg::kRowPitch + 16 * t4;
        uint4 r0 = *reinterpret_cast<const uint4*>(k_row0);
        uint4 r1 = *reinterpret_cast<const uint4*>(k_row1);
#pragma unroll
        for (int c = 0; c < Cfg::kChunks; ++c) {
            const uint32_t w0[4] = {r0.x, r0.y, r0.z, r0.w};
            const uint32_t w1[4] = {r1.x, r1.y, r1.z, r1.w};
            if (c + 1 < Cfg::kChunks) {
                r0 = *reinterpret_cast<const uint4*>(k_row0 + 64 * (c + 1));
                r1 = *reinterpret_cast<const uint4*>(k_row1 + 64 * (c + 1));
            }
            uint32_t a[4][4];
#pragma unroll
            for (int st = 0; st < 4; ++st) {
                const arch::Quad k0 = arch::decode_fp8x4(w0[st]);
                const arch::Quad k1 = arch::decode_fp8x4(w1[st]);
                a[st][0] = k0.lo;
                a[st][1] = k1.lo;
                a[st][2] = k0.hi;
                a[st][3] = k1.hi;
            }
            hw::wgmma_fence();
#pragma unroll
            for (int st = 0; st < 4; ++st) {
                const uint64_t desc = qt_desc0 + (((c * 4 + st) * Cfg::kQtStepBytes) >> 4);
                if (Cfg::kSplitSChain && (st & 1))
                    hw::Wgmma<arch::MmaType::kF16, N>::run(s_odd, a[st], desc, c * 4 + st > 1);
                else
                    hw::Wgmma<arch::MmaType::kF16, N>::run(s, a[st], desc, c + st > 0);
            }
            hw::wgmma_commit();
            hw::wgmma_wait<1>();
        }
        hw::wgmma_wait<0>();
        hw::fence_operands(s);
        hw::fence_operands(s_odd);

        // 2. Scale, mask, tile maxima per row (over lanes g, then the warpgroup's 4 warps).
        float tmax[Cfg::kCols];
#pragma unroll
        for (int jj = 0; jj < Cfg::kCols; ++jj) tmax[jj] = kNegInf;
#pragma unroll
        for (int i = 0; i < N / 2; ++i) {
            const int jj = (i / 4) * 2 + (i & 1);
            const int tok = tile_tok0 + (((i >> 1) & 1) ? s_tok1 : s_tok0);
            const float x = tok < row_end[jj] ? (s[i] + s_odd[i]) * coef[jj] : kNegInf;
            s[i] = x;
            tmax[jj] = fmaxf(tmax[jj], x);
        }
        float* red = s_red + ((wg * 2 + parity) * 4) * N;
#pragma unroll
        for (int jj = 0; jj < Cfg::kCols; ++jj) {
            tmax[jj] = fmaxf(tmax[jj], arch::shfl_xor(tmax[jj], 4));
            tmax[jj] = fmaxf(tmax[jj], arch::shfl_xor(tmax[jj], 8));
            tmax[jj] = fmaxf(tmax[jj], arch::shfl_xor(tmax[jj], 16));
            if (g == 0) red[wq * N + 8 * (jj / 2) + 2 * t4 + (jj & 1)] = tmax[jj];
        }
        // V words of PV k-step kk (its tokens 2 t4 + {0, 1, 8, 9}) for the 4 m-block pairs; the
        // first k-step's loaded while the warps meet.
        const uint8_t* v_tile = tile + v_off;
        uint32_t vw[4][4];
        auto load_v = [&](int kk) {
#pragma unroll
            for (int pp = 0; pp < 4; ++pp) {
                const uint8_t* v = v_tile + (16 * kk) * Cfg::kRowPitch + 128 * pp;
                vw[pp][0] = *reinterpret_cast<const uint32_t*>(v);
                vw[pp][1] = *reinterpret_cast<const uint32_t*>(v + Cfg::kRowPitch);
                vw[pp][2] = *reinterpret_cast<const uint32_t*>(v + 8 * Cfg::kRowPitch);
                vw[pp][3] = *reinterpret_cast<const uint32_t*>(v + 9 * Cfg::kRowPitch);
            }
        };
        load_v(0);
        hw::named_barrier_sync(2 + wg, 128);

        // 3. Online softmax: new maxima, rescale O and l, P = exp2(s - m) -> P^T (f16).
        float alpha[Cfg::kCols], m_use[Cfg::kCols];
#pragma unroll
        for (int jj = 0; jj < Cfg::kCols; ++jj) {
            const int n = 8 * (jj / 2) + 2 * t4 + (jj & 1);
            float tm = red[n];
#pragma unroll
            for (int w = 1; w < 4; ++w) tm = fmaxf(tm, red[w * N + n]);
            const float m_new = fmaxf(m_run[jj], tm);
            m_use[jj] = softmax_offset(m_new);
            alpha[jj] = softmax_rescale(m_run[jj], m_new);
            m_run[jj] = m_new;
            l_run[jj] *= alpha[jj];
        }
#pragma unroll
        for (int i = 0; i < N / 2; ++i) {
            const int jj = (i / 4) * 2 + (i & 1);
            const float pv = arch::fast_exp2(s[i] - m_use[jj]);
            l_run[jj] += pv;
            // P^T[n][token]: PV k-step = token / 16 (= wq), k = token % 16.
            const int n = 8 * (i / 4) + 2 * t4 + (i & 1);
            const int k = 8 * ((i >> 1) & 1) + Cfg::s_row_token(g);
            *reinterpret_cast<uint16_t*>(pt + wq * Cfg::kPtStepBytes + (n / 8) * 256 +
                                         (k / 8) * 128 + (n % 8) * 16 + (k % 8) * 2) =
                static_cast<uint16_t>(arch::pack_f16x2(pv, 0.0f));
        }
#pragma unroll
        for (int mb = 0; mb < 8; ++mb)
#pragma unroll
            for (int i = 0; i < N / 2; ++i) o[mb][i] *= alpha[(i / 4) * 2 + (i & 1)];
        hw::fence_proxy_async_smem();
        hw::named_barrier_sync(2 + wg, 128);

        // 4. O^T += V^T P^T, one k-step (16 tokens) at a time: the 8 m-blocks' products are
        //    independent, so they overlap; the next k-step's words load while they run.
#pragma unroll
        for (int kk = 0; kk < 4; ++kk) {
            uint32_t ax[4][4], ay[4][4];
#pragma unroll
            for (int pp = 0; pp < 4; ++pp)
                wgmma_detail::v_fragments(vw[pp][0], vw[pp][1], vw[pp][2], vw[pp][3], ax[pp], ay[pp]);
            if (kk + 1 < 4) {
                load_v(kk + 1);
            } else {
                // Every read of this stage has been issued: hand it back to the producer.
                __syncwarp();
                if (lane == 0) hw::mbarrier_arrive(&empty[stage]);
            }
            hw::wgmma_fence();
            const uint64_t desc = pt_desc0 + ((kk * Cfg::kPtStepBytes) >> 4);
#pragma unroll
            for (int pp = 0; pp < 4; ++pp) {
                hw::Wgmma<arch::MmaType::kF16, N>::run(o[2 * pp], ax[pp], desc, true);
                hw::Wgmma<arch::MmaType::kF16, N>::run(o[2 * pp + 1], ay[pp], desc, true);
            }
            hw::wgmma_commit();
            hw::wgmma_wait<0>();
        }
        hw::wgmma_wait<0>();
#pragma unroll
        for (int mb = 0; mb < 8; ++mb) hw::fence_operands(o[mb]);
    }

    // ---- epilogue -------------------------------------------------------------------------------
    // Row sums: over lanes g, then over the warpgroup's warps.
#pragma unroll
    for (int jj = 0; jj < Cfg::kCols; ++jj) {
        l_run[jj] += arch::shfl_xor(l_run[jj], 4);
        l_run[jj] += arch::shfl_xor(l_run[jj], 8);
        l_run[jj] += arch::shfl_xor(l_run[jj], 16);
        if (g == 0) s_sum[(wg * 4 + wq) * N + 8 * (jj / 2) + 2 * t4 + (jj & 1)] = l_run[jj];
    }
    hw::named_barrier_sync(1, Cfg::kConsumerThreads);
#pragma unroll
    for (int jj = 0; jj < Cfg::kCols; ++jj) {
        const int n = 8 * (jj / 2) + 2 * t4 + (jj & 1);
        float l = 0.0f;
#pragma unroll
        for (int w = 0; w < 4; ++w) l += s_sum[(wg * 4 + w) * N + n];
        l_run[jj] = l;
    }
    const float v_scale = p.kv_scale * arch::kFp8F16Scale<Cfg::kFlavor>;
    if constexpr (Cfg::kTokenSplit) {
        // Merge the other warpgroups' states into warpgroup 0's, through the (now idle) ring.
        float* xo = reinterpret_cast<float*>(stages);
        const int tid = static_cast<int>(threadIdx.x) % 128;
        constexpr int kOVals = 8 * (N / 2);
        if (wg > 0) {
            if (wq == 0 && g == 0) {
#pragma unroll
                for (int jj = 0; jj < Cfg::kCols; ++jj) {
                    const int n = 8 * (jj / 2) + 2 * t4 + (jj & 1);
                    s_merge[(wg * 2) * N + n] = m_run[jj];
                    s_merge[(wg * 2 + 1) * N + n] = l_run[jj];
                }
            }
#pragma unroll
            for (int mb = 0; mb < 8; ++mb)
#pragma unroll
                for (int i = 0; i < N / 2; ++i)
                    xo[((wg - 1) * kOVals + mb * (N / 2) + i) * 128 + tid] = o[mb][i];
        }
        hw::named_barrier_sync(1, Cfg::kConsumerThreads);
        if (wg > 0) return;
        float w_of[Cfg::kConsumerWGs][Cfg::kCols];
#pragma unroll
        for (int jj = 0; jj < Cfg::kCols; ++jj) {
            const int n = 8 * (jj / 2) + 2 * t4 + (jj & 1);
            float m = m_run[jj];
#pragma unroll
            for (int c = 1; c < Cfg::kConsumerWGs; ++c) m = fmaxf(m, s_merge[(c * 2) * N + n]);
            const float mu = softmax_offset(m);
            w_of[0][jj] = arch::fast_exp2(m_run[jj] - mu);
            float l = l_run[jj] * w_of[0][jj];
#pragma unroll
            for (int c = 1; c < Cfg::kConsumerWGs; ++c) {
                w_of[c][jj] = arch::fast_exp2(s_merge[(c * 2) * N + n] - mu);
                l += s_merge[(c * 2 + 1) * N + n] * w_of[c][jj];
            }
            l_run[jj] = l;
            m_run[jj] = m;
        }
#pragma unroll
        for (int mb = 0; mb < 8; ++mb)
#pragma unroll
            for (int i = 0; i < N / 2; ++i) {
                const int jj = (i / 4) * 2 + (i & 1);
                float x = o[mb][i] * w_of[0][jj];
#pragma unroll
                for (int c = 1; c < Cfg::kConsumerWGs; ++c)
                    x += xo[((c - 1) * kOVals + mb * (N / 2) + i) * 128 + tid] * w_of[c][jj];
                o[mb][i] = x;
            }
    }

    // Store (epilogue.h): the lane holds dims 128p + 32 wq + 4g + {0..3} of each of its rows.
#pragma unroll
    for (int jj = 0; jj < Cfg::kCols; ++jj) {
        const int n = wg_row0 + 8 * (jj / 2) + 2 * t4 + (jj & 1);
        const int ti = (row0 + n) / p.num_heads - t_first;
        if (ti >= work.tokens) continue;
        const int head = (row0 + n) % p.num_heads - work.head0;
        const float l = l_run[jj];
        const float scale = l > 0.0f ? v_scale / l : 0.0f;
        const int i0 = (jj / 2) * 4 + (jj & 1);  // accumulator index of (row g, this column)
        const int dim0 = 32 * wq + 4 * g;
        if (single_split(work)) {
            uint16_t* dst = final_o_row(p, work, ti, head) + dim0;
#pragma unroll
            for (int pp = 0; pp < 4; ++pp) {
                uint2 v;
                v.x = arch::pack_bf16x2(o[2 * pp][i0] * scale, o[2 * pp][i0 + 2] * scale);
                v.y = arch::pack_bf16x2(o[2 * pp + 1][i0] * scale, o[2 * pp + 1][i0 + 2] * scale);
                *reinterpret_cast<uint2*>(dst + 128 * pp) = v;
            }
        } else {
            float* dst = partial_o_row(p, work, ti, head) + dim0;
#pragma unroll
            for (int pp = 0; pp < 4; ++pp)
                *reinterpret_cast<float4*>(dst + 128 * pp) =
                    make_float4(o[2 * pp][i0] * scale, o[2 * pp][i0 + 2] * scale,
                                o[2 * pp + 1][i0] * scale, o[2 * pp + 1][i0 + 2] * scale);
        }
        if (wq == 0 && g == 0) store_lse(p, work, ti, head, m_run[jj], l);
    }
#endif
}

}  // namespace mla::splitkv
