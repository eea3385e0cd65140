// Parameters of the split-KV family (stage 1, LSE reduce). Plain data, passed
// by value to the kernels, never part of the public ABI. Host- and device-includable.
#pragma once

#include <cstdint>

#include "splitkv/formats.h"  // KvFormat, the geometry

namespace mla::splitkv {

// Q storage (run-time: only the prologue that loads Q depends on it).
enum class QFormat : int32_t { kBf16 = 0, kFp8E4M3FN = 1, kFp8E4M3FNUZ = 2 };

// How stage 1 copies a tile's MXFP4 scale rows (run-time, from the scale tensor's alignment).
enum class ScaleCopy : int32_t { k16Bytes = 0, k4Bytes = 1, kBytes = 2 };

// The most splits whose rows the reduce loads beside the LSEs (Params::reduce_rows_early):
// reduce_kernel's 32 and reduce_split_parallel_kernel's one round of two groups (reduce.h).
inline constexpr int kReduceRowsEarlyMaxSplits = 64;

struct Params {
    // Q of (token t, head h): dims 0..511 at q + (t * q_stride_token + h * q_stride_head)
    // elements, dims 512..575 at q_pe + (t * q_pe_stride_token + h * q_pe_stride_head). For a
    // 576-wide Q the host sets q_pe = q + 512 elements with q's strides (kernel_params.cpp).
    const void* q;
    const void* q_pe;
    QFormat q_format;
    float q_scale;           // fp8 Q dequant scale (1 for bf16)
    // Scores on e4m3 codes (DevicePlan::fp8_mma, MLA_DECODE_FLAG_FP8_MMA): e4m3fn Q on an
    // e4m3fn cache on the wgmma variant; Q and cache of one flavour on mma16 where the device
    // multiplies it (mla::stage1_e4m3_scores). Otherwise Q is widened and the score product runs
    // on f16 / bf16.
    bool fp8_mma;
    int64_t q_stride_token;  // elements
    int64_t q_stride_head;   // elements
    int64_t q_pe_stride_token;  // elements
    int64_t q_pe_stride_head;   // elements

    // Latent cache: row `slot` at kv + slot * kv_stride_bytes. MXFP4: 288 bytes of e2m1 pairs,
    // scales at kv_scales + slot * kv_scale_stride. The row's bytes from the rope dims (512) on
    // are read at kpe + slot * kpe_stride_bytes instead: the split cache's rope rows (the same
    // dtype as the latent), or, for 576-wide rows, kv + the latent's bytes with kv's stride.
    const uint8_t* kv;
    int64_t kv_stride_bytes;
    const uint8_t* kpe;
    int64_t kpe_stride_bytes;
    float kv_scale;  // fp8 dequant scale (1 otherwise)
    const uint8_t* kv_scales;
    int64_t kv_scale_stride;
    ScaleCopy scale_copy;
    // Separate fp8 V cache (kMxfp4Fp8*): row `slot` at v + slot * v_stride_bytes.
    const uint8_t* v;
    int64_t v_stride_bytes;
    float v_scale;

    // Batch layout (device). page_indptr == nullptr: contiguous, token j of b in slot
    // kv_indptr[b] + j. Otherwise slot = page_indices[page_indptr[b] + j / page_size] *
    // page_size + j % page_size.
    const int32_t* qo_indptr;   // (batch + 1)
    const int32_t* kv_indptr;   // (batch + 1)
    const int32_t* page_indptr;
    const int32_t* page_indices;
    int32_t page_size;
    int64_t num_slots;  // rows of the cache (the extent of arch/nvidia/tma.h's maps)

    int32_t batch;
    int32_t total_q;
    int32_t num_heads;        // 8, 16, 32, 64 or 128
    int32_t row_groups;       // stage-1 CTAs per (element, split): the element's query rows
                              // (max_q_len * num_heads) over the variant's rows per CTA (work.h)
    int32_t rows_per_cta;     // the plan's rows per CTA (a variant may have kernels for several)
    int32_t max_splits;       // stage-1 CTAs per element and row group (grid bound)
    int32_t tiles_per_split;  // the plan's split length, for elements up to max_kv_len
    float sm_scale;

    // The split-KV path (the plan's num_splits > 1): stage 1 writes partial rows, the reduce
    // combines them. false: the single-split path, where stage 1 writes O and LSE itself and
    // there is no reduce. The split layout needs no metadata (work.h): query row r (global),
    // split s writes partial row r * max_splits + s, every split of the grid writes its rows'
    // LSE (-inf where the element has fewer splits), and the reduce reads max_splits rows.
    bool split_kv;
    // The reduce is a programmatic dependent launch of stage 1 (DevicePlan::dependent_launch:
    // split path on NVIDIA sm_90+ unless MLA_DECODE_PDL=0): stage 1 then allows it early and it
    // waits for stage 1; otherwise neither instruction runs.
    bool dependent_reduce;
    // Dynamic shared memory each reduce CTA reserves (0: none), only so that a dependent
    // reduce spreads over the SMs (reduce_spread_shared_bytes, launch.h); the kernel uses none.
    // reduce_shared_limit: the largest such reservation on this device, the kernel's raised
    // limit.
    int reduce_shared_bytes;
    int reduce_shared_limit;
    // The reduce (reduce_kernel, and reduce_split_parallel_kernel up to 64 splits) loads every
    // split's partial O row beside the LSEs (one round trip to L2, not two) rather than only the
    // rows whose weight counts after them; a split past its element's last then writes its rows
    // as zeros and they are read for nothing, so the host allows it only where that traffic is
    // bounded (kernel_params.cpp: not batch-invariant, not balanced, total_q x heads x
    // (max_splits - 1) rows of 2 KB within 4 MB, at most kReduceRowsEarlyMaxSplits splits).
    bool reduce_rows_early;
    // Host side: stage 1 may take whole tiles by TMA where its kernel takes them
    // (wgmma_tiles_by_tma: swizzled stages, at 16 rows 8 tiles a split or more) and the cache
    // allows it (DevicePlan::tma; false under MLA_DECODE_TMA=0: the kernel copies every tile,
    // the same bytes into the same stages).
    bool tma;

    // Stage-1 outputs read by the reduce (workspace), per partial row r and head h:
    //   partial_o  [r][num_heads][512] fp32, already divided by its split's sum (where
    //              partial_lse is -inf the reduce never adds it: written as zeros under
    //              reduce_rows_early, else left unwritten)
    //   partial_lse[r][num_heads] fp32, log2 domain (-inf: the split saw no token)
    float* partial_o;
    float* partial_lse;
    // The balanced schedule (balanced.h; the plan's DevicePlan::balanced, split path only):
    // stage 1 launches balanced_ctas CTAs that walk items across elements, the partial rows are
    // its compact slots (of rows_per_cta rows, not r * max_splits + s), and partial_meta (int32
    // pairs per query token and head block) tells the reduce where each row's splits are.
    bool balanced;
    int32_t balanced_ctas;
    int32_t* partial_meta;

    // Final outputs: O bf16 at o + t * o_stride_token + h * o_stride_head; lse (may be null)
    // natural log at lse + t * lse_stride_token + h.
    uint16_t* o;
    int64_t o_stride_token;
    int64_t o_stride_head;
    float* lse;
    int64_t lse_stride_token;  // floats (num_heads when the caller's stride is 0)
};

}  // namespace mla::splitkv
