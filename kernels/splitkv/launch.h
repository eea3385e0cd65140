// Host-side entry points of the split-KV family. Includable from plain C++ (no device code).
//   launch.hip                  the dispatch: stage-1 variant x format, then the reduce
//   instantiations/*.hip        one small file per kernel family member: the reduce, stage 1
//                               per variant and format
#pragma once

#include "arch/runtime.h"
#include "splitkv/params.h"
#include "splitkv/variants.h"

#if defined(MLA_HAVE_GPU_RUNTIME)
namespace mla::splitkv {

// What a plan needs to know of a stage-1 variant in this build for a cache format: the query
// rows per CTA it has kernels for (work.h; the plan picks one, Params::rows_per_cta), and cache
// tokens per tile (the split granularity). tile_tokens 0: this build has no such kernel. (Which
// formats a variant serves at all is stage1_can_serve's: src/stage1_select.cpp.)
struct Stage1Shape {
    static constexpr int kMaxRowOptions = 3;
    int rows_per_cta[kMaxRowOptions];  // 0 = unused slot
    int tile_tokens;
};
Stage1Shape stage1_shape(Stage1Variant variant, KvFormat format);

// Queues stage 1 of `variant` for `format` (batch * max_splits * row_groups CTAs) and, on the
// split path (params.split_kv), the reduce; `dependent_reduce`: the reduce as a
// programmatic dependent of stage 1 (the plan's DevicePlan::dependent_launch: NVIDIA sm_90+
// only, the default there; MLA_DECODE_PDL=0 turns it off). Returns the runtime's error for the
// launches (invalid value for a variant or format this build does not have).
gpu::error_t launch_attention(const Params& params, Stage1Variant variant, KvFormat format,
                              bool dependent_reduce, gpu::stream_t stream);

// Whether the calling thread's last stage-1 launch had tensor maps (arch/nvidia/tma.h), so that its
// kernel took the whole tiles of its splits by TMA (a launch whose splits hold no whole tile still
// counts): false after a kernel that takes no TMA (wgmma_tiles_by_tma: padded stages, or the 16-row
// seesaw below 8 tiles a split), a cache the maps cannot address (pages of other than a multiple of
// 64 tokens, a misaligned base or stride, a refused map), with Params::tma false
// (MLA_DECODE_TMA=0), or a failed launch. For tests and MLA_DECODE_DEBUG. note_stage1_tma
// records it: launch_attention clears it, the stage-1 launchers set it, and the library's run
// clears it before its checks, so that a run that fails before launching reads false.
bool last_stage1_tma();
void note_stage1_tma(bool tma);

// ---- per kernel (instantiations/) ------------------------------------------------------------
// `dependent`: through gpu::launch_dependent, so that it may start while stage 1 finishes;
// its CTAs then reserve params.reduce_shared_bytes of shared memory each.
gpu::error_t launch_reduce(const Params& params, bool dependent, gpu::stream_t stream);
// CTAs of the reduce for `rows` (query row, head) pairs of `max_splits` splits.
int64_t reduce_ctas(int64_t rows, int max_splits);

// The shared memory each CTA of a dependent reduce reserves (bytes, 0: none) so that at most
// ceil(ctas / multiprocessors) of them are resident on one multiprocessor. A dependent reduce
// is scheduled while stage 1 still holds most SMs (one CTA each, with most of their shared
// memory); without a cap every CTA it has fits on the few SMs stage 1 leaves idle and the
// whole reduce runs there. Measured on the H200, bs4 kv8192 H16 (128 stage-1 CTAs on 132 SMs,
// 64 reduce CTAs): 24.1 -> 21.0 us. `shared_per_mp`: a multiprocessor's shared memory;
// `reserved_per_block`: what the runtime adds to each resident block (1 KB on NVIDIA sm_80+);
// `max_per_block`: the opt-in limit of one block. A block's shared memory is allocated in units
// of kSharedAllocUnit bytes, so the reservation is a multiple of it (else one CTA fewer fits).
inline constexpr int kSharedAllocUnit = 128;
inline int reduce_spread_shared_bytes(int64_t ctas, int multiprocessors, int shared_per_mp,
                                      int reserved_per_block, int max_per_block) {
    if (ctas <= 0 || multiprocessors <= 0 || shared_per_mp <= 0) return 0;
    const int64_t per_mp = (ctas + multiprocessors - 1) / multiprocessors;
    const int64_t bytes =
        (shared_per_mp / per_mp - reserved_per_block) / kSharedAllocUnit * kSharedAllocUnit;
    if (bytes <= 0) return 0;
    return static_cast<int>(bytes < max_per_block ? bytes : max_per_block);
}
// Whether the reduce may be a programmatic dependent launch on the current device: its loaded
// code waits for the prior grid (it came from sm_90+ PTX: a build for sm_80 alone runs sm_80
// PTX there, without the wait, and would read partial rows stage 1 is still writing), and the
// runtime and driver can capture such a launch into a graph (CUDA 12.3+). False on HIP.
bool reduce_can_be_dependent();

// Variant mma16, every format. kE4M3: the score product on e4m3 codes (Params::fp8_mma; fp8
// caches of 576 fp8 dims, Q of the cache's flavour, where the device multiplies that flavour:
// mla::stage1_e4m3_scores).
template <KvFormat F, bool kE4M3 = false>
gpu::error_t launch_stage1_mma16(const Params& params, gpu::stream_t stream);
// Instantiated in instantiations/stage1_mma16_*.hip only (each format compiled once).
extern template gpu::error_t launch_stage1_mma16<KvFormat::kBf16>(const Params&, gpu::stream_t);
extern template gpu::error_t launch_stage1_mma16<KvFormat::kFp8E4M3FN>(const Params&,
                                                                       gpu::stream_t);
extern template gpu::error_t launch_stage1_mma16<KvFormat::kFp8E4M3FNUZ>(const Params&,
                                                                         gpu::stream_t);
extern template gpu::error_t launch_stage1_mma16<KvFormat::kFp8E4M3FN, true>(const Params&,
                                                                             gpu::stream_t);
extern template gpu::error_t launch_stage1_mma16<KvFormat::kFp8E4M3FNUZ, true>(const Params&,
                                                                               gpu::stream_t);
extern template gpu::error_t launch_stage1_mma16<KvFormat::kMxfp4>(const Params&, gpu::stream_t);
extern template gpu::error_t launch_stage1_mma16<KvFormat::kMxfp4Fp8E4M3FN>(const Params&,
                                                                           gpu::stream_t);
extern template gpu::error_t launch_stage1_mma16<KvFormat::kMxfp4Fp8E4M3FNUZ>(const Params&,
                                                                             gpu::stream_t);
extern template gpu::error_t launch_stage1_mma16<KvFormat::kFp8E4M3FNBf16Rope>(const Params&,
                                                                              gpu::stream_t);
extern template gpu::error_t launch_stage1_mma16<KvFormat::kFp8E4M3FNUZBf16Rope>(const Params&,
                                                                                gpu::stream_t);

// Variant wgmma (sm_90a builds only, MLA_HAVE_STAGE1_WGMMA): fp8, bf16 and MXFP4 caches, MXFP4
// keys beside a separate fp8 V cache of either flavour, and fp8 codes of either flavour beside a
// bf16 rope; the kernel of params.rows_per_cta (16, 32 or 64 rows per CTA; bf16: 16 or 32).
// kFp8Mma: the score product on the e4m3 tensor core (e4m3fn Q and cache; Params::fp8_mma).
template <KvFormat F, bool kFp8Mma>
gpu::error_t launch_stage1_wgmma(const Params& params, gpu::stream_t stream);
extern template gpu::error_t launch_stage1_wgmma<KvFormat::kFp8E4M3FN, false>(const Params&,
                                                                              gpu::stream_t);
extern template gpu::error_t launch_stage1_wgmma<KvFormat::kFp8E4M3FN, true>(const Params&,
                                                                             gpu::stream_t);
extern template gpu::error_t launch_stage1_wgmma<KvFormat::kBf16, false>(const Params&,
                                                                         gpu::stream_t);
extern template gpu::error_t launch_stage1_wgmma<KvFormat::kFp8E4M3FNUZ, false>(const Params&,
                                                                                gpu::stream_t);
extern template gpu::error_t launch_stage1_wgmma<KvFormat::kMxfp4, false>(const Params&,
                                                                          gpu::stream_t);
extern template gpu::error_t launch_stage1_wgmma<KvFormat::kMxfp4Fp8E4M3FN, false>(
    const Params&, gpu::stream_t);
extern template gpu::error_t launch_stage1_wgmma<KvFormat::kMxfp4Fp8E4M3FNUZ, false>(
    const Params&, gpu::stream_t);
extern template gpu::error_t launch_stage1_wgmma<KvFormat::kFp8E4M3FNBf16Rope, false>(
    const Params&, gpu::stream_t);
extern template gpu::error_t launch_stage1_wgmma<KvFormat::kFp8E4M3FNUZBf16Rope, false>(
    const Params&, gpu::stream_t);

}  // namespace mla::splitkv
#endif
