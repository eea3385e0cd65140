// The wgmma variant's solo consumers (stage1/wgmma.h; WgmmaConfig::kSolo): each warpgroup takes
// whole tiles with its own online softmax, and the results of a row merge once at the end.
#pragma once

#include "splitkv/stage1/wgmma/consumer_common.h"

// The roles' code exists only in sm_90a device passes (arch/nvidia/sm90.h).
#if defined(MLA_ARCH_SM90)
namespace mla::splitkv {

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
    const float rope_scale = wgmma_detail::rope_scale_of<Cfg>(p);  // Decode::kRopeBf16
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
            s_rope, full, phase, rope_scale);
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

}  // namespace mla::splitkv
#endif  // MLA_ARCH_SM90
