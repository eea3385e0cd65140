// Stage 1, Hopper warpgroup variant ("wgmma", sm_90a only, fp8, bf16 and MXFP4 caches, MXFP4 keys
// beside a separate fp8 V cache, WgmmaMxfp4Fp8VDecode, and fp8 codes beside a bf16 rope,
// WgmmaFp8Bf16RopeDecode): one CTA per (batch element, split, block of
// kRows query rows). The rows of an element are its (query token, head) pairs, r = t * num_heads
// + h, so one CTA serves 16 heads x 4 query tokens, or 64 of 128 heads, and every KV tile it reads
// serves all of them: HBM traffic does not grow with heads x q_len (heads 128 take two CTAs that
// read the same tiles at the same time, the second from L2).
//
// Operands are swapped so that 16 rows waste no matrix work: tokens are wgmma's M (64), query
// rows its N.
//     S^T [64 tokens x N rows]  = K [64 x 576]    * Q^T [576 x N]
//     O^T [512 dims  x N rows] += V^T [512 x 64]  * P^T [64 x N]
// A fragments are built in registers from the raw cache tile (fp8 codes decoded to f16: e4m3fn
// by the hardware conversion, e4m3fnuz by bit operations, WgmmaDecode; bf16 values as stored,
// WgmmaBf16Decode; MXFP4 codes decoded to bf16 by per-scale tables, WgmmaMxfp4Decode, whose
// keys beside a separate fp8 V cache take fp8's values, the V rows copied after the key rows); B
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
//     Swizzled stages (WgmmaConfig::kSwizzled: fp8 at 16 and 64 rows and e4m3fn at 32, with
//     bf16 or e4m3 scores) take each whole tile of a contiguous cache or of pages of
//     a multiple of 64 tokens by TMA instead, where the plan's kernel takes TMA
//     (wgmma_tiles_by_tma: the 16-row seesaw only where a split takes 8 tiles or more; then
//     every whole tile of every CTA, shorter CTAs of the plan's last split or short elements
//     included) (wgmma_producer_tiles_ss): one thread issues 5 boxes of two tensor maps
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
//     Swizzled stages (WgmmaConfig::kSwizzled: fp8 at 16 and 64 rows and e4m3fn at 32, with
//     bf16 or e4m3 scores) have no pad: stage row m holds token m, and S^T row 8 h + g of warp w
//     reads stage row 16 w + WgmmaConfig::stage_row(8 h + g), an order free of bank conflicts in
//     the swizzle.
//   * O^T rows: m-blocks 2p and 2p+1 (p = 0..3; consumer p / 2) are built together from 4-byte
//     loads of 4 token rows (those of PV k indices 2t, 2t+1, 2t+8, 2t+9): lane g of warp w holds
//     dims 128p + 32w + 4g + {0, 1} (m-block 2p, rows g and g+8) and + {2, 3} (m-block 2p+1). So
//     each lane owns 4 consecutive output dims per (p, row): one 8-byte store of bf16 O. bf16
//     caches: 8-byte loads (the same 4 dims, 2 bytes each), regrouped by byte permutes.
//
// Balanced schedule (Params::balanced, WgmmaConfig::kBalanced; e4m3fn caches: variants.h,
// wgmma_balanced): a CTA walks items (runs of one element's tiles for its row group,
// splitkv/balanced.h) one after the other in the same roles (balanced_cta below); with seesaw
// consumers (16 and 64 rows) the pipeline runs on across items (balanced_cta_continuous), solo
// consumers (32 rows) drain it between items. Measured slower than the uniform layout on every
// shape timed (fifty-fourth and fifty-fifth sessions; the continuous pipeline gained nothing
// measurable: the reduce over every row and the cut items' partial O cost more than the idle
// units it saves), so plans take it only when MLA_DECODE_SCHEDULE=balanced forces it.
//
// The pieces, in stage1/wgmma/: decode.h (the decoders of each format), config.h (WgmmaConfig,
// WgmmaShared), producer.h (the producer warpgroup), decoder.h (MXFP4's decoder warpgroups),
// consumer_common.h (what both consumer forms share), consumer_seesaw.h and consumer_solo.h (the
// two consumer forms). This file holds the kernel, which gives each warpgroup its role, and the
// launcher.
#pragma once

#include "splitkv/launch.h"  // note_stage1_tma
#include "splitkv/stage1/launcher.h"
#include "splitkv/stage1/wgmma/config.h"
#include "splitkv/stage1/wgmma/consumer_common.h"
#include "splitkv/stage1/wgmma/consumer_seesaw.h"
#include "splitkv/stage1/wgmma/consumer_solo.h"
#include "splitkv/stage1/wgmma/decoder.h"
#include "splitkv/stage1/wgmma/producer.h"
#include "splitkv/work.h"

namespace mla::splitkv {

#if defined(MLA_ARCH_SM90)
namespace wgmma_detail {

// Thread 0: the maps into the TMA unit's descriptor cache before the Q prologue, not at the
// first tile's copy: after the flush a map is a memory round trip away, which the first tile
// would otherwise wait for besides its own bytes.
template <class Cfg>
MLA_DEVICE void prefetch_maps(const arch::tma::KvMaps& tma) {
    if constexpr (Cfg::kSwizzled) {
        if (tma.ok != 0) {
            arch::sm90::prefetch_tensormap(&tma.kv);
            arch::sm90::prefetch_tensormap(&tma.kpe);
        }
    }
}

// An mbarrier of `arrivals`; kAgain: ended first (mbarrier_inval: the balanced schedule's next
// item, after a barrier that follows every wait on it and every arrival).
template <bool kAgain>
MLA_DEVICE void init_barrier(uint64_t* bar, uint32_t arrivals) {
    if constexpr (kAgain) arch::sm90::mbarrier_inval(bar);
    arch::sm90::mbarrier_init(bar, arrivals);
}

// Thread 0: the consumers' own mbarriers (P^T and maxima hand-over), without the fence.
template <class Cfg, bool kAgain = false>
MLA_DEVICE void init_consumer_barriers(const WgmmaShared<Cfg>& sh) {
    for (int c = 0; c < Cfg::kConsumers; ++c) {
        init_barrier<kAgain>(&sh.p_full[c], 128);  // every thread of the writing consumer
        init_barrier<kAgain>(&sh.p_empty[c], 4);   // the warps of the other consumer
        init_barrier<kAgain>(&sh.m_full[c], 32 * Cfg::kOwnerWarps);  // its owner warps
    }
}

// Thread 0: the CTA's mbarriers; kAgain: once more, each ended first (the balanced schedule's
// next item, after a block-wide barrier that follows every wait on them).
template <class Cfg, bool kAgain = false>
MLA_DEVICE void init_barriers(const WgmmaShared<Cfg>& sh) {
    namespace hw = arch::sm90;
    for (int s = 0; s < Cfg::kStages * Cfg::kFullSets; ++s)
        init_barrier<kAgain>(&sh.full[s], Cfg::kStagedDecode ? Cfg::kDecoderThreads
                                                             : Cfg::kProducerThreads);
    for (int s = 0; s < Cfg::kStages; ++s) init_barrier<kAgain>(&sh.empty[s], Cfg::kEmptyArrivals);
    init_consumer_barriers<Cfg, kAgain>(sh);
    // kStagedDecode: the decoder's threads fill the stages (full, as the producer's would),
    // the producer's fill the raw ring, whose stages the decoder's warps release.
    for (int s = 0; s < Cfg::kRawStages; ++s) {
        init_barrier<kAgain>(&sh.raw_full[s], Cfg::kProducerThreads);
        init_barrier<kAgain>(&sh.raw_empty[s], Cfg::kDecoderThreads / 32);
    }
    for (int s = 0; s < (Cfg::kStagedDecode ? Cfg::kStages : 0); ++s)
        init_barrier<kAgain>(&sh.front[s], Cfg::kDecoderThreads);
    hw::mbarrier_init_fence();
}

// A consumer thread's work of a CTA (or of an item): the Q prologue, then its form's tiles and
// epilogue.
template <class Cfg>
MLA_DEVICE void consume(const Params& p, const Stage1Work& work, const WgmmaRows& rows,
                        const WgmmaShared<Cfg>& sh, int warp, int lane) {
    namespace hw = arch::sm90;
    write_q<Cfg>(p, work, rows, sh, warp, lane);
    hw::fence_proxy_async_smem();
    hw::named_barrier_sync(1, Cfg::kConsumerThreads);
    if constexpr (Cfg::kSolo)
        wgmma_consumer_solo<Cfg>(p, work, rows, sh, warp / 4, warp % 4, lane);
    else
        wgmma_consumer<Cfg>(p, work, rows, sh, warp / 4, warp % 4, lane);
}

// Every thread, once all roles have finished the item in *st: the next one, or false where the
// CTA's run has ended. The pipeline drains between items (the stages, the barriers and, for
// solo consumers, the merge's use of the stages are free once every thread is here), and the
// barriers start again at phase 0. The generic proxy's writes to the stages (the solo merge)
// are ordered before the next item's tensor copies into them by the proxy fence.
// kLeader: the caller's warpgroup holds thread 0, which does it (the consumers; the producer's
// code then holds none of it, in its few registers).
template <class Cfg, bool kLeader>
MLA_DEVICE bool next_item(const Params& p, const WgmmaShared<Cfg>& sh, BalancedState* st) {
    arch::sm90::fence_proxy_async_smem();
    __syncthreads();
    if constexpr (kLeader) {
        if (threadIdx.x == 0) {
            balanced_next<Cfg::kTileTokens, Cfg::N>(p, st);
            if (st->element >= 0) init_barriers<Cfg, true>(sh);
        }
    }
    __syncthreads();
    return st->element >= 0;
}

// Named barrier of the producer warpgroup (the consumers' are 1 .. 1 + kConsumers, and
// kQIssuedBarrier).
constexpr int kProducerBarrier = 7;
static_assert(kProducerBarrier != kQIssuedBarrier, "");

// The consumers' shared pointers, warp and lane made anew for each item (an empty asm the
// compiler cannot move out of the loop), so that nothing derived from them lives across items:
// hoisted, they spilled the 64-row consumers (ptxas: 116 bytes of stores, 12 now). Only an
// offset of 0 passes through the asm: the pointers stay known as shared memory (a pointer
// through it became a generic one, and every access generic).
template <class Cfg>
MLA_DEVICE void consume_item(const Params& p, const Stage1Work& work, const WgmmaRows& rows,
                             const WgmmaShared<Cfg>& sh, uint8_t* smem) {
    int zero = 0;
    asm volatile("" : "+r"(zero));
    const WgmmaShared<Cfg> ish(smem + zero, sh.tma);
    const int w = arch::sm90::warp_index();
    const int l = static_cast<int>(threadIdx.x) % 32;
    consume<Cfg>(p, work, rows, ish, w, l);
}

// The work of the item in *st for this CTA's row group, and its rows.
template <class Cfg>
MLA_DEVICE Stage1Work balanced_item(const Params& p, const BalancedState& st, WgmmaRows& rows) {
    const Stage1Work work = balanced_item_work<Cfg::kTileTokens, Cfg::N>(p, st, &rows.row0);
    rows.t_first = rows.row0 / p.num_heads;
    rows.n_tiles = wgmma_tile_count<Cfg>(work);
    return work;
}

// One thread of a role, once the role is past the item of `walk`: the next item, after the
// ring's tiles of this one. kOutputs: the walk of the role that writes the outputs (balanced_fill).
template <class Cfg, bool kOutputs>
MLA_DEVICE void advance_walk(const Params& p, BalancedWalk* walk) {
    WgmmaRows rows{};
    if (balanced_item<Cfg>(p, walk->item, rows).active) {
        walk->tile0 += rows.n_tiles;
        walk->announced = 1;
    }
    balanced_next<Cfg::kTileTokens, Cfg::N, kOutputs>(p, &walk->item);
}

// Cfg::kContinuous: the balanced CTA's pipeline runs on across items. Each role walks the items
// with its own BalancedWalk (the consumers' also writes the reduce's entries), advanced by one
// thread of the role between two barriers of the role, so neither role waits for the other at an
// item's end: the producer copies item k + 1's first tiles while the consumers finish item k,
// its softmax and epilogue. The stage ring counts its tiles over the CTA (WgmmaRows::tile0), so
// its full and empty barriers run on across items; the consumers' own barriers (P^T, maxima)
// start again at phase 0 for each item, made again by thread 0 once every consumer is past the
// item. Both roles skip the same items (no rows of this group) and announce / wait for the Q
// loads (kQLoadsFirst) at the same, first active, item.
template <class Cfg>
MLA_DEVICE void balanced_cta_continuous(const Params& p, const WgmmaShared<Cfg>& sh,
                                        uint8_t* smem, BalancedWalk* walks) {
    namespace hw = arch::sm90;
    static_assert(Cfg::kContinuous && Cfg::kSwizzled && !Cfg::kMxfp4Rows && !Cfg::kStagedDecode,
                  "seesaw consumers; the swizzled stages' producer counts WgmmaRows::tile0 (the "
                  "other producer loops and MXFP4's decoders index the stages by t alone)");
    const int warp = hw::warp_index();
    if (warp >= Cfg::kProducerWarp) {
        hw::warpgroup_registers_dec<Cfg::kProducerRegs>();
        BalancedWalk* const walk = walks + 1;
        const int pw = warp - Cfg::kProducerWarp;
        const int lane = static_cast<int>(threadIdx.x) % 32;
        do {
            WgmmaRows rows{};
            const Stage1Work work = balanced_item<Cfg>(p, walk->item, rows);
            if (work.active) {
                rows.tile0 = walk->tile0;
                if constexpr (Cfg::kQLoadsFirst) {  // after the consumers' Q loads (write_q)
                    if (walk->announced == 0)
                        hw::named_barrier_sync(kQIssuedBarrier,
                                               Cfg::kConsumerThreads + Cfg::kProducerThreads);
                }
                wgmma_producer<Cfg>(p, work, rows, sh, pw, lane);
            }
            hw::named_barrier_sync(kProducerBarrier, Cfg::kProducerThreads);
            if (pw == 0 && lane == 0) advance_walk<Cfg, false>(p, walk);
            hw::named_barrier_sync(kProducerBarrier, Cfg::kProducerThreads);
        } while (walk->item.element >= 0);
        return;
    }
    hw::warpgroup_registers_inc<Cfg::kConsumerRegs>();
    BalancedWalk* const walk = walks;
    do {
        WgmmaRows rows{};
        const Stage1Work work = balanced_item<Cfg>(p, walk->item, rows);
        if (work.active) {
            rows.tile0 = walk->tile0;
            rows.announce_q = walk->announced == 0;
            consume_item<Cfg>(p, work, rows, sh, smem);
        }
        hw::named_barrier_sync(1, Cfg::kConsumerThreads);  // every consumer is past the item
        if (threadIdx.x == 0) {
            advance_walk<Cfg, true>(p, walk);
            if (walk->item.element >= 0) {
                init_consumer_barriers<Cfg, true>(sh);
                hw::mbarrier_init_fence();
            }
        }
        hw::named_barrier_sync(1, Cfg::kConsumerThreads);
    } while (walk->item.element >= 0);
}

// The balanced schedule's CTA (Params::balanced, balanced.h): its items one after the other,
// each with its own Q prologue, tiles and epilogue, the roles as in the uniform kernel;
// Cfg::kContinuous: balanced_cta_continuous, else the pipeline drains between items.
template <class Cfg>
MLA_DEVICE void balanced_cta(const Params& p, const WgmmaShared<Cfg>& sh, uint8_t* smem) {
    static_assert(!Cfg::kStagedDecode, "no decoder warpgroups in the balanced kernels");
    namespace hw = arch::sm90;
    stage1_allow_reduce(p);
    // (Cfg::kContinuous: the consumers' walk, whose item comes first.)
    BalancedState* const st = reinterpret_cast<BalancedState*>(smem + Cfg::kOffItem);
    // The stages are free until the barriers exist: the start's scratch.
    balanced_start<Cfg::kTileTokens, Cfg::N>(p, reinterpret_cast<int64_t*>(sh.stages), st);
    __syncthreads();
    if (threadIdx.x == 0) {
        if (st->element >= 0) balanced_fill<Cfg::kTileTokens, Cfg::N>(p, st);
        if constexpr (Cfg::kContinuous) {
            BalancedWalk* const walks = reinterpret_cast<BalancedWalk*>(st);
            walks[0].tile0 = 0;
            walks[0].announced = 0;
            walks[1] = walks[0];  // the producer's
        }
        prefetch_maps<Cfg>(*sh.tma);
        init_barriers<Cfg>(sh);
    }
    __syncthreads();
    if (st->element < 0) return;  // no units for this CTA (T below the CTAs launched)
    if constexpr (Cfg::kContinuous) {
        balanced_cta_continuous<Cfg>(p, sh, smem, reinterpret_cast<BalancedWalk*>(st));
        return;
    }
    const int warp = hw::warp_index();
    const int lane = static_cast<int>(threadIdx.x) % 32;
    if (warp >= Cfg::kProducerWarp) {
        hw::warpgroup_registers_dec<Cfg::kProducerRegs>();
        do {
            WgmmaRows rows{};
            const Stage1Work work = balanced_item<Cfg>(p, *st, rows);
            if (!work.active) continue;  // no such rows in this element: to the next item
            if constexpr (Cfg::kQLoadsFirst)  // after the consumers' Q loads (write_q)
                hw::named_barrier_sync(kQIssuedBarrier,
                                       Cfg::kConsumerThreads + Cfg::kProducerThreads);
            wgmma_producer<Cfg>(p, work, rows, sh, warp - Cfg::kProducerWarp, lane);
        } while (next_item<Cfg, false>(p, sh, st));
        return;
    }
    hw::warpgroup_registers_inc<Cfg::kConsumerRegs>();
    do {
        WgmmaRows rows{};
        const Stage1Work work = balanced_item<Cfg>(p, *st, rows);
        if (!work.active) continue;  // (a continue goes to the loop's condition: next_item)
        consume_item<Cfg>(p, work, rows, sh, smem);
    } while (next_item<Cfg, true>(p, sh, st));
}

}  // namespace wgmma_detail
#endif  // MLA_ARCH_SM90

template <KvFormat F, int kRows, bool kFp8Mma, bool kLongCta, bool kBalanced>
__global__ void __launch_bounds__(WgmmaConfig<F, kRows, kFp8Mma, kLongCta, kBalanced>::kThreads, 1)
    stage1_wgmma_kernel(const Params p, const __grid_constant__ arch::tma::KvMaps tma) {
#if defined(MLA_ARCH_SM90)
    using Cfg = WgmmaConfig<F, kRows, kFp8Mma, kLongCta, kBalanced>;
    namespace hw = arch::sm90;
    extern __shared__ __align__(1024) uint8_t smem[];
    const WgmmaShared<Cfg> sh(smem, &tma);
    if constexpr (kBalanced) {
        wgmma_detail::balanced_cta<Cfg>(p, sh, smem);
    } else {
        // The work of this CTA (work.h): rows [row0, row0 + kRows) of query tokens q_row ..
        // q_row + tokens - 1.
        const Stage1Work work = stage1_work<Cfg::kTileTokens, kRows>(p);
        if (!work.active) {  // no such rows or no such split: at most -inf LSEs (and zero rows,
                             // Params::reduce_rows_early) to write
            if (work.empty_split) stage1_write_empty_split<kRows>(p, work);
            return;
        }
        stage1_allow_reduce(p);
        WgmmaRows rows;
        rows.row0 = static_cast<int>(blockIdx.x) % p.row_groups * kRows;
        rows.t_first = rows.row0 / p.num_heads;
        rows.n_tiles = wgmma_tile_count<Cfg>(work);

        const int warp = hw::warp_index();
        const int lane = static_cast<int>(threadIdx.x) % 32;
        if (threadIdx.x == 0) {
            wgmma_detail::prefetch_maps<Cfg>(tma);
            wgmma_detail::init_barriers<Cfg>(sh);
        }
        __syncthreads();

        if constexpr (Cfg::kStagedDecode) {
            if (warp >= Cfg::kDecoderWarp) {
                hw::warpgroup_registers_dec<Cfg::kDecoderRegs>();
                wgmma_decoder<Cfg>(rows, sh,
                                   static_cast<int>(threadIdx.x) - 32 * Cfg::kDecoderWarp);
                return;
            }
        }
        if (warp >= Cfg::kProducerWarp) {
            hw::warpgroup_registers_dec<Cfg::kProducerRegs>();
            if constexpr (Cfg::kQLoadsFirst)  // after the consumers' Q loads (write_q)
                hw::named_barrier_sync(wgmma_detail::kQIssuedBarrier,
                                       Cfg::kConsumerThreads + Cfg::kProducerThreads);
            if constexpr (Cfg::kProducerDerivesWork) {
                const Stage1Work pwork = stage1_work<Cfg::kTileTokens, kRows>(p);
                WgmmaRows prows{};
                prows.n_tiles = wgmma_tile_count<Cfg>(pwork);
                const WgmmaShared<Cfg> psh(smem, &tma);
                wgmma_producer<Cfg>(p, pwork, prows, psh, warp - Cfg::kProducerWarp, lane);
            } else {
                wgmma_producer<Cfg>(p, work, rows, sh, warp - Cfg::kProducerWarp, lane);
            }
            return;
        }
        hw::warpgroup_registers_inc<Cfg::kConsumerRegs>();
        wgmma_detail::consume<Cfg>(p, work, rows, sh, warp, lane);
    }
#endif
}

namespace wgmma_detail {
template <KvFormat F, int kRows, bool kFp8Mma, bool kLongCta = false, bool kBalanced = false>
gpu::error_t launch_rows(const Params& params, gpu::stream_t stream) {
    using Cfg = WgmmaConfig<F, kRows, kFp8Mma, kLongCta, kBalanced>;
    const auto kernel = stage1_wgmma_kernel<F, kRows, kFp8Mma, kLongCta, kBalanced>;
    static std::atomic<bool> prepared[kMaxDevices];
    const gpu::error_t e = set_shared_bytes_once(kernel, Cfg::kSmemBytes, prepared);
    if (e != gpu::kSuccess) return e;
    // Swizzled stages (wgmma_swizzled_stages) of a contiguous cache or of pages of a
    // multiple of 64 tokens: whole tiles by TMA (arch/nvidia/tma.h).
    arch::tma::KvMaps maps{};
#if defined(MLA_HAVE_TMA_ENCODER)
    if constexpr (Cfg::kSwizzled) {
        if (params.tma &&
            (params.page_indptr == nullptr || params.page_size % Cfg::kTileTokens == 0))
            maps = arch::tma::encode_kv_maps(params.kv, params.kv_stride_bytes, params.kpe,
                                             params.kpe_stride_bytes, params.num_slots);
    }
#endif
    MLA_LAUNCH(kernel, stage1_grid(params), Cfg::kThreads, Cfg::kSmemBytes, stream)(params, maps);
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
    if (params.balanced) {  // e4m3fn caches only (wgmma_balanced)
        if constexpr (wgmma_balanced(F)) {
            using wgmma_detail::launch_rows;
            switch (params.rows_per_cta) {
                case 16: return launch_rows<F, 16, kFp8Mma, false, true>(params, stream);
                case 32: return launch_rows<F, 32, kFp8Mma, false, true>(params, stream);
                case 64: return launch_rows<F, 64, kFp8Mma, false, true>(params, stream);
                default: break;
            }
        }
        return gpu::kErrorInvalidValue;
    }
    switch (params.rows_per_cta) {
        case 16:
            if constexpr (wgmma_long_cta(F, 16, kWgmmaLongCtaTiles)) {
                if (wgmma_long_cta(F, 16, params.tiles_per_split))
                    return wgmma_detail::launch_rows<F, 16, kFp8Mma, true>(params, stream);
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
