// The wgmma variant's seesaw consumers (stage1/wgmma.h): two warpgroups take alternate tiles'
// scores for all rows and hand maxima, rescale factors and P^T to each other; both add every
// tile to their half of O^T.
#pragma once

#include "splitkv/stage1/wgmma/consumer_common.h"

// The roles' code exists only in sm_90a device passes (arch/nvidia/sm90.h).
#if defined(MLA_ARCH_SM90)
namespace mla::splitkv {

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
    const float rope_scale = wgmma_detail::rope_scale_of<Cfg>(p);  // Decode::kRopeBf16
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
            const int stage = (rows.tile0 + t_own) % Cfg::kStages;
            const int phase = ((rows.tile0 + t_own) / Cfg::kStages) & 1;
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
                    qt_desc0, s, s_rope, &sh.full[stage], phase, rope_scale);
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
            const int stage = (rows.tile0 + t) % Cfg::kStages;
            if (b == other)
                hw::mbarrier_wait(&sh.full[stage], ((rows.tile0 + t) / Cfg::kStages) & 1);
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

}  // namespace mla::splitkv
#endif  // MLA_ARCH_SM90
