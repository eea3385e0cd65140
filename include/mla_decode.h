/*
 * libmla_decode: decode-step Multi-head Latent Attention (DeepSeek-V2/V3/R1 "absorbed" MLA).
 *
 * Public C ABI. This header is valid C99 and C++; it includes only <stddef.h> and <stdint.h>.
 *
 * The operation (per batch element b, query token t of b, head h):
 *
 *     q_len_b  = qo_indptr[b+1] - qo_indptr[b]          query tokens of element b
 *     kv_len_b = kv_indptr[b+1] - kv_indptr[b]          cached latent tokens of element b
 *     score[j] = sm_scale * dot(Q[t,h,0:576], K[j,0:576])          K = latent cache row j
 *     O[t,h,:] = sum_j softmax_j(score[j]) * V[j,0:512]             V = first 512 dims of row j
 *     LSE[t,h] = log(sum_j exp(score[j]))                           natural log, fp32
 *
 * with one shared KV head, head_dim_qk = 576 = kv_lora_rank (512) + qk_rope_head_dim (64) and
 * head_dim_v = 512 = kv_lora_rank. For q_len_b > 1 the mask is causal against the end of the
 * cache: query i (0-based inside its element) sees cache positions 0 .. kv_len_b - q_len_b + i.
 * A query that sees no token gets O = 0 and LSE = -inf (never NaN).
 *
 * Conventions used by every function below:
 *  - Every function returns an mla_status; on failure it also sets a thread-local message
 *    (mla_last_error_message) and writes nothing to any output: not to O, LSE, the workspace
 *    nor any out-parameter.
 *  - Arguments are checked before the device is looked at, so an invalid argument gets its
 *    status even on a machine without a GPU. With several problems the first failing check
 *    wins, in this order: params NULL; flags and reserved fields; dtypes (FP32 O outside the host
 *    reference, and dtype pairs of a split cache a path does not serve: UNSUPPORTED); sizes;
 *    geometry (heads, head dims); required pointers; strides and extents; scalar values and
 *    contradicting fields, then overlapping outputs (see "Memory overlap" below); alignment;
 *    then the device.
 *  - No function exits, aborts, or lets a C++ exception cross this boundary. Besides the statuses
 *    each function lists, any of them may return MLA_STATUS_INTERNAL_ERROR (a library bug; the
 *    message says where).
 *  - Every function is thread-safe: any threads may call any functions at the same time. The
 *    library's shared state (facts of each device, the plan cache behind mla_decode_fwd, the
 *    environment switches, read once) is locked or immutable; the last-error message is per
 *    thread. Calls in flight at once (mla_decode_fwd, mla_decode_plan_prepare / _run, on one
 *    stream or several) must each have their own workspace and outputs. A plan is immutable once
 *    made and may be used by several threads at once; destroying it must not race with its use.
 *  - "Device pointer" means memory of the current HIP device (CUDA device in an NVIDIA build),
 *    as returned by hipMalloc / cudaMalloc; "host pointer" means ordinary process memory.
 *  - Sizes are in elements of the tensor's storage type unless the field says bytes. The storage
 *    element of MLA_DTYPE_MXFP4 data is one byte holding two e2m1 values.
 */
#ifndef MLA_DECODE_H_
#define MLA_DECODE_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------------------------ */
/* Export macro and version                                                                     */
/* ------------------------------------------------------------------------------------------ */

#if defined(MLA_DECODE_STATIC)
#define MLA_API
#elif defined(_WIN32)
#if defined(MLA_DECODE_BUILDING)
#define MLA_API __declspec(dllexport)
#else
#define MLA_API __declspec(dllimport)
#endif
#elif defined(__GNUC__) || defined(__clang__)
#define MLA_API __attribute__((visibility("default")))
#else
#define MLA_API
#endif

#define MLA_DECODE_VERSION_MAJOR 0
#define MLA_DECODE_VERSION_MINOR 7
#define MLA_DECODE_VERSION_PATCH 44
/* Single comparable number: major * 10000 + minor * 100 + patch. */
#define MLA_DECODE_VERSION                                                                      \
    (MLA_DECODE_VERSION_MAJOR * 10000 + MLA_DECODE_VERSION_MINOR * 100 + MLA_DECODE_VERSION_PATCH)

/* ------------------------------------------------------------------------------------------ */
/* Fixed MLA geometry (DeepSeek-V2/V3/R1)                                                        */
/* ------------------------------------------------------------------------------------------ */

#define MLA_KV_LORA_RANK 512      /* latent (value) width, = head_dim_v                      */
#define MLA_QK_ROPE_HEAD_DIM 64   /* rotary part appended to the latent for scores           */
#define MLA_HEAD_DIM_QK 576       /* MLA_KV_LORA_RANK + MLA_QK_ROPE_HEAD_DIM                 */
#define MLA_HEAD_DIM_V 512        /* = MLA_KV_LORA_RANK                                      */
#define MLA_MXFP4_BLOCK_SIZE 32   /* values sharing one e8m0 scale                           */
#define MLA_MXFP4_ROW_BYTES 288   /* MLA_HEAD_DIM_QK / 2: packed e2m1 bytes per cache row    */
#define MLA_MXFP4_ROW_SCALES 18   /* MLA_HEAD_DIM_QK / 32: e8m0 scales per cache row         */

/* ------------------------------------------------------------------------------------------ */
/* Status                                                                                        */
/* ------------------------------------------------------------------------------------------ */

/* Values are fixed; a value once published is never reused for another meaning. */
typedef enum mla_status {
    MLA_STATUS_SUCCESS = 0,
    MLA_STATUS_NULL_POINTER = 1,        /* a required pointer is NULL                           */
    MLA_STATUS_INVALID_DTYPE = 2,       /* a dtype field holds no mla_dtype value, or one that
                                           tensor cannot have (e.g. MXFP4 for Q)                */
    MLA_STATUS_INVALID_SIZE = 3,        /* a size or stride is negative, zero where it may not
                                           be, too small for the tensor, or overflows int64     */
    MLA_STATUS_INVALID_VALUE = 4,       /* a scalar is out of its domain (sm_scale or a scale
                                           not finite and > 0), an unknown flags bit, reserved
                                           fields not zero, fields contradicting each other, or
                                           an output overlapping an input or the other output */
    MLA_STATUS_UNSUPPORTED = 5,         /* valid input this build or path does not implement
                                           (head count, head dims, dtype combination, ...)      */
    MLA_STATUS_MISALIGNED = 6,          /* a pointer or stride breaks the alignment stated for
                                           its field                                            */
    MLA_STATUS_WORKSPACE_TOO_SMALL = 7, /* workspace_bytes below what the call needs:
                                           mla_decode_workspace_size() for fwd, the plan's
                                           mla_decode_plan_workspace_size() for prepare / run   */
    MLA_STATUS_NO_DEVICE = 8,           /* no GPU, or a library built without a GPU backend     */
    MLA_STATUS_DEVICE_ERROR = 9,        /* the HIP/CUDA runtime reported an error               */
    MLA_STATUS_OUT_OF_MEMORY = 10,      /* a host allocation failed (the host reference, plan
                                           creation, workspace queries); never device memory:
                                           the library allocates none                           */
    MLA_STATUS_INTERNAL_ERROR = 11      /* a bug in the library; the message says where         */
} mla_status;

/* ------------------------------------------------------------------------------------------ */
/* Data types                                                                                    */
/* ------------------------------------------------------------------------------------------ */

/*
 * Sources of the formats:
 *  - BF16: bfloat16, the upper 16 bits of an IEEE-754 binary32.
 *  - FP32: IEEE-754 binary32.
 *  - FP8_E4M3FN: OCP 8-bit Floating Point Specification (OFP8) rev 1.0, E4M3: bias 7, max 448,
 *    NaN = S.1111.111, no infinities. Native on NVIDIA Hopper and AMD MI355 (gfx950).
 *  - FP8_E4M3FNUZ: the E4M3 variant of AMD CDNA3 (MI300, gfx942) and LLVM's Float8E4M3FNUZ:
 *    bias 8, max 240, 0x80 is the only NaN, no negative zero, no infinities.
 *  - MXFP4: OCP Microscaling Formats (MX) Specification v1.0: E2M1 elements (magnitudes 0, 0.5,
 *    1, 1.5, 2, 3, 4, 6 for codes 0..7, bit 3 = sign), two per byte with the even index in the
 *    low nibble, and one E8M0 scale (value 2^(code-127); code 0 is 2^-127, code 255 is NaN) per
 *    block of 32 consecutive values.
 */
typedef enum mla_dtype {
    MLA_DTYPE_NONE = 0,         /* no dtype: valid only as v_dtype and kpe_dtype, where it
                                   means the default form (V from the latent rows; 576-wide
                                   cache rows); elsewhere INVALID_DTYPE                        */
    MLA_DTYPE_BF16 = 1,
    MLA_DTYPE_FP32 = 2,         /* outputs of the host reference only                          */
    MLA_DTYPE_FP8_E4M3FN = 3,
    MLA_DTYPE_FP8_E4M3FNUZ = 4,
    MLA_DTYPE_MXFP4 = 5         /* latent cache only: e2m1 pairs + e8m0 block scales           */
} mla_dtype;

/* ------------------------------------------------------------------------------------------ */
/* Arguments                                                                                     */
/* ------------------------------------------------------------------------------------------ */

/*
 * Everything one decode call reads and writes. Fill it with mla_decode_params_init() first,
 * then set the fields. The same struct serves mla_decode_workspace_size (which reads only the
 * host-value fields), mla_decode_fwd (device pointers) and mla_decode_reference (host pointers).
 *
 * Latent cache addressing. A cache is a table of `num_slots` rows ("slots"); a row holds one
 * token's 576 latent values. Token j of batch element b lives in slot
 *   - contiguous (kv_page_indptr == NULL):  kv_indptr[b] + j
 *   - paged:  kv_page_indices[kv_page_indptr[b] + j / page_size] * page_size + j % page_size
 * The paged form is the CSR page table of FlashInfer and aiter; pages may come in any order.
 * Element b needs ceil(kv_len_b / page_size) pages; its list may hold more (they are not read).
 * Row layout by kv_dtype:
 *   - BF16 / FP8_*: 576 elements; value = element (BF16) or element * kv_scale (FP8).
 *   - MXFP4: 288 bytes of e2m1 pairs, plus row `slot` of kv_block_scales (18 e8m0 codes used;
 *     quantizers pad the scale tensor, so its row stride is a field).
 * Where V comes from is said by v_dtype, a host value (so a plan fixes it, see Plan-then-run):
 *   - v_dtype MLA_DTYPE_NONE (0, the mla_decode_params_init default): V is the first 512 dims
 *     of the same row; v_cache must be NULL and the other v_* fields are ignored.
 *   - v_dtype FP8_E4M3FN / FP8_E4M3FNUZ (MXFP4 keys with fp8 values; kv_dtype must be MXFP4):
 *     V of slot s is the first 512 elements of row s of v_cache, times v_scale; v_cache must
 *     be set for mla_decode_fwd and mla_decode_reference (it may be NULL where only host fields
 *     are read: workspace size, plan creation, and in an empty pool).
 *
 * Empty pool (num_slots 0): an engine's warm-up or graph-capture step before any cache exists.
 * Every kv length must then be 0; kv_cache, kv_block_scales, v_cache and kv_page_indices may
 * be NULL, and nothing is read through them. Every row gets O = 0 and LSE = -inf, on every path.
 * The host reference checks the lengths (a kv length above 0: INVALID_VALUE). The GPU paths
 * cannot (the lengths live on the device): a kv length above 0 with num_slots 0 reads outside
 * the pool, like any slot >= num_slots, which is undefined behaviour (typically a device fault;
 * kernels that load whole tiles by TMA, whose tensor maps end at num_slots, read zeros there).
 *
 * Input forms. Q, the cache and the LSE each come in the form the engine holds them in:
 *   - Q: one tensor, q = (total_q, num_heads, 576) (the default: q_pe NULL, q_pe_stride_token
 *     and q_pe_stride_head 0); or the split form, two tensors as vLLM holds them: q holds q_nope
 *     (total_q, num_heads, 512) with q_stride_token / q_stride_head, and q_pe holds the rope part
 *     (total_q, num_heads, 64) with q_pe_stride_token / q_pe_stride_head:
 *       Q[t, h, 0:512] = q[t, h, :],  Q[t, h, 512:576] = q_pe[t, h, :].
 *     Setting q_pe or either q_pe stride selects the split form. Both halves have q_dtype and
 *     q_scale. Every path serves both forms, with the same numbers.
 *   - Cache: one table of 576-wide rows, kv_cache (the default: kpe_dtype NONE (0), kpe_cache
 *     NULL, kpe_stride_slot 0); or the split form (FlashInfer's ckv / kpe layout), chosen by
 *     kpe_dtype: kv_cache holds 512-wide latent rows (K dims 0..511, and V), kpe_cache holds
 *     64-wide rope rows (K dims 512..575) of kpe_dtype, each table with its own slot stride
 *     (kv_stride_slot, kpe_stride_slot). Both are addressed by the same slot (the same
 *     contiguous or paged addressing above) and hold num_slots rows:
 *       K[slot, 0:512] = kv_cache row slot,  K[slot, 512:576] = kpe_cache row slot.
 *     An FP8 rope's value is code * kv_scale (one scale for the whole key); a BF16 rope's value
 *     is the element itself (kv_scale applies to the FP8 latent codes only). The dtype pairs:
 *       kv_dtype          kpe_dtype                 host reference    GPU paths
 *       BF16              BF16                      yes               yes
 *       FP8_E4M3FN(UZ)    the same FP8 dtype        yes               yes
 *       FP8_E4M3FN(UZ)    BF16 (DeepSeek-V3.2)      yes               yes (see below)
 *       MXFP4             any                       UNSUPPORTED       UNSUPPORTED
 *       any other pair (an FP8 rope beside a BF16 latent, FP8 flavours mixed): UNSUPPORTED.
 *     Why: the GPU kernels read a rope of the latent's dtype into the same shared-memory tile
 *     as the latent rows (the 16-byte pieces past dim 512 come from kpe_cache). A BF16 rope
 *     beside FP8 codes has kernels of its own (640-byte tile rows: 512 codes, then 64 bf16
 *     values; the rope's scores on the bf16 matrix product, f32 accumulation, added to the
 *     latent's after their kv_scale; no f16 range limit on the rope), on the warp-level stage-1
 *     variant (mma16). sm_90a builds on a Hopper GPU also have warpgroup (wgmma) kernels for
 *     FP8_E4M3FN latents (0.7.41) and FP8_E4M3FNUZ ones (0.7.43), which plans choose by cost
 *     like the other formats' (each after its first GPU run). An MXFP4 row's 18 block scales
 *     cover all 576 dims (scales 16 and 17 are the rope's), so a split MXFP4 cache has no
 *     defined scale layout.
 *   - LSE: rows lse_stride_token floats apart (0, the default: num_heads, dense); the heads of a
 *     row are contiguous. LSE[t, h] = lse[t * lse_stride_token + h].
 * Split forms change no plan, except a BF16 rope beside an FP8 latent: the kernels read the
 * 576-wide and split forms of one dtype alike, so q_pe, the new strides and a kpe_dtype of 0 or
 * the latent's own dtype are not part of a plan's shape; the rope's dtype is (kpe_dtype BF16
 * beside an FP8 kv_dtype picks other kernels): a plan made with one refuses runs with the other
 * (INVALID_VALUE). Make plans with the runs' params.
 *
 * Memory overlap. Outputs must not share memory with inputs or with each other; every call
 * that takes pointers (mla_decode_fwd, mla_decode_plan_prepare / _run, mla_decode_reference)
 * refuses an overlap with INVALID_VALUE, a message naming both fields, and nothing written.
 * Overlap is judged on byte spans computed from host values, from a tensor's first byte to one
 * past the last byte a call may touch (everything in between counts, e.g. the row padding of
 * Q when q_stride_token > num_heads * q_stride_head):
 *   Q    ((total_q - 1) * q_stride_token + (num_heads - 1) * q_stride_head + W) elements,
 *        W = 576 (512 in the split Q form)
 *   q_pe ((total_q - 1) * q_pe_stride_token + (num_heads - 1) * q_pe_stride_head + 64)
 *        elements (split Q form)
 *   O    ((total_q - 1) * o_stride_token + (num_heads - 1) * o_stride_head + 512) elements
 *   LSE  (total_q - 1) * lse_stride_token + num_heads floats (when lse is set; the stride 0
 *        counts as num_heads)
 *   kv_cache         (num_slots - 1) * kv_stride_slot + W elements, W = 576 (512 in the split
 *                    cache form; 288 bytes for MXFP4)
 *   kpe_cache        (num_slots - 1) * kpe_stride_slot + 64 elements of kpe_dtype
 *   kv_block_scales  (num_slots - 1) * kv_block_scale_stride + min(kv_block_scale_stride, 32)
 *                    bytes: up to the whole last row (the kernels copy a row's 18 codes in 16-
 *                    or 4-byte pieces where the address and stride allow; num_slots *
 *                    kv_block_scale_stride bytes always suffice). Before 0.7.1 this said
 *                    "+ 18 bytes", less than the kernels read.
 *   v_cache          (num_slots - 1) * v_stride_slot + 512 bytes
 *   qo_indptr, kv_indptr, kv_page_indptr   batch_size + 1 int32 each
 *   kv_page_indices  its first int32 (its length lives on the device); mla_decode_reference,
 *                    which reads the lengths on the host, its kv_page_indptr[batch_size] int32
 *                    (since 0.7.43: before, an O over later entries could be read as page ids)
 *     (the spans of the four caches and of kv_page_indices are empty when num_slots is 0)
 * O and LSE may share no byte with each other nor with any of the input spans. Spans that only
 * touch (one ends where the other begins) are fine; inputs may overlap each other (they are only
 * read). The workspace is not compared with them, but must not overlap them either.
 */
typedef struct mla_decode_params {
    /* ---- problem size: host values ---------------------------------------------------- */
    int32_t batch_size;   /* sequences in the batch, >= 1                                     */
    int32_t total_q;      /* query rows = qo_indptr[batch_size], >= 1, <= batch_size *
                             max_q_len; total_q * num_heads <= 2^31 - 1 (INVALID_SIZE
                             otherwise, since 0.7.43)                                       */
    int32_t max_q_len;    /* >= 1 and must be >= every q_len_b. The host reference checks it;
                             the GPU cannot (lengths live on the device) and leaves the rows
                             of query tokens past max_q_len unwritten                       */
    int32_t max_kv_len;   /* >= every kv_len_b, >= 0. Used for planning only: results stay
                             correct if it is exceeded, the work split may then be poor       */
    int32_t num_heads;    /* query heads sharing the one KV head: 8, 16, 32, 64 or 128 (8: a
                             128-head model split 16 ways); others: UNSUPPORTED            */
    int32_t head_dim_qk;  /* must be MLA_HEAD_DIM_QK (576)                                    */
    int32_t head_dim_v;   /* must be MLA_HEAD_DIM_V (512)                                     */
    float sm_scale;       /* score scale, finite and > 0 (DeepSeek: 1/sqrt(576) * YaRN mscale) */

    /* ---- query ---------------------------------------------------------------------------- */
    const void* q;        /* (total_q, num_heads, 576), dims contiguous; 16-byte aligned. In
                             the split Q form (see Input forms): q_nope, (total_q, num_heads,
                             512)                                                           */
    mla_dtype q_dtype;    /* BF16, FP8_E4M3FN or FP8_E4M3FNUZ (q_pe too)                      */
    float q_scale;        /* FP8 Q: value = code * q_scale (finite, > 0); must be 1 for BF16   */
    int64_t q_stride_token; /* elements between consecutive query rows, >= num_heads * q_stride_head */
    int64_t q_stride_head;  /* elements between heads of one row, >= 576 (>= 512 in the split Q
                               form); multiples of 16 bytes                                   */

    /* ---- latent cache --------------------------------------------------------------------- */
    const void* kv_cache;      /* (num_slots, row) as described above; 16-byte aligned; may
                                  be NULL when num_slots is 0                                 */
    mla_dtype kv_dtype;        /* BF16, FP8_E4M3FN, FP8_E4M3FNUZ or MXFP4                      */
    float kv_scale;            /* FP8: value = code * kv_scale (finite, > 0; beside a BF16 rope
                                  2^-64 .. 2^64); must be 1 otherwise */
    int64_t kv_stride_slot;    /* storage elements (bytes for FP8/MXFP4) between slots, >= row
                                  width (576, 512 in the split cache form, 288 for MXFP4), a
                                  multiple of 16 bytes                                        */
    const uint8_t* kv_block_scales; /* MXFP4 only (NULL otherwise; may be NULL with num_slots
                                       0): e8m0 codes, (>= num_slots,
                                       kv_block_scale_stride) bytes, scale k of slot s at
                                       [s * kv_block_scale_stride + k] for values 32k..32k+31  */
    int64_t kv_block_scale_stride;  /* MXFP4 only: bytes between scale rows, >= 18; 0 otherwise */
    const void* v_cache;       /* NULL with v_dtype 0 (V from kv_cache). With an FP8 v_dtype:
                                  (num_slots, >= 512) values of that dtype, kv_dtype MXFP4
                                  only; 16-byte aligned                                       */
    mla_dtype v_dtype;         /* the V source: 0 = the latent rows; FP8_E4M3FN or
                                  FP8_E4M3FNUZ = v_cache. Other values: INVALID_DTYPE; an FP8
                                  v_dtype without v_cache (fwd, reference) or with another
                                  kv_dtype than MXFP4: INVALID_VALUE                          */
    float v_scale;             /* FP8 v_dtype: value = code * v_scale (finite, > 0)           */
    int64_t v_stride_slot;     /* FP8 v_dtype: bytes between slots, >= 512, multiple of 16    */
    int64_t num_slots;         /* rows in the cache (num_pages * page_size), >= 0; 0 = an empty
                                  pool (see above): every kv length 0, cache pointers may be
                                  NULL                                                         */
    const int32_t* kv_page_indptr;  /* (batch_size + 1) offsets into kv_page_indices, from 0,
                                       non-decreasing; or NULL for a contiguous cache          */
    const int32_t* kv_page_indices; /* physical page ids, (kv_page_indptr[batch_size]); NULL
                                       when kv_page_indptr is NULL (and may be with num_slots
                                       0), set otherwise                                       */
    int32_t page_size;         /* tokens per page, >= 1; must be 1 for a contiguous cache      */

    /* ---- batch layout --------------------------------------------------------------------- */
    const int32_t* qo_indptr;  /* (batch_size + 1), non-decreasing, qo_indptr[0] = 0           */
    const int32_t* kv_indptr;  /* (batch_size + 1), from >= 0, non-decreasing; differences are
                                  kv lengths (a contiguous cache: slots kv_indptr[b] ..)      */

    /* ---- outputs -------------------------------------------------------------------------- */
    void* o;                   /* (total_q, num_heads, 512), dims contiguous; 16-byte aligned  */
    mla_dtype o_dtype;         /* BF16 (every path); FP32 (host reference only)               */
    int64_t o_stride_token;    /* elements between rows, >= num_heads * o_stride_head          */
    int64_t o_stride_head;     /* elements between heads, >= 512; multiples of 16 bytes       */
    float* lse;                /* optional (NULL = not written): (total_q, num_heads) fp32,
                                  rows lse_stride_token floats apart (0: dense), heads
                                  contiguous, natural log; 4-byte aligned                    */

    /* ---- options ------------------------------------------------------------------------- */
    uint32_t flags;            /* host value: 0 (the default) or MLA_DECODE_FLAG_* bits ORed;
                                  an unknown bit: INVALID_VALUE. Part of a plan's shape       */

    /* ---- input forms (see "Input forms" above). Taken from the reserved block, so the struct
     *      keeps its size and every older field its offset; every field is 0 / NULL in the
     *      default forms, which is what mla_decode_params_init sets and what a caller built
     *      against an older header (reserved zeroed) passes ----------------------------------- */
    mla_dtype kpe_dtype;       /* host value. 0 (default): 576-wide cache rows in kv_cache, and
                                  kpe_cache must be NULL, kpe_stride_slot 0. BF16, FP8_E4M3FN
                                  or FP8_E4M3FNUZ: the split cache form, the rope rows in
                                  kpe_cache of this dtype. Other values (FP32, MXFP4, not an
                                  mla_dtype), or 0 with kpe_cache set: INVALID_DTYPE. Pairs
                                  with kv_dtype that a path does not serve (table above):
                                  UNSUPPORTED. Part of a plan's shape only as BF16 beside an
                                  FP8 kv_dtype (see Plan-then-run)                             */
    const void* q_pe;          /* split Q form: the rope part of Q, (total_q, num_heads, 64) of
                                  q_dtype, dims contiguous; device pointer for the GPU calls,
                                  host pointer for the reference; 16-byte aligned. NULL in the
                                  one-tensor form. A split form without it: NULL_POINTER (not
                                  for the host-value calls: workspace size and bound, plan
                                  creation, which may leave every pointer NULL)               */
    int64_t q_pe_stride_token; /* split Q form: elements between query rows of q_pe, >=
                                  num_heads * q_pe_stride_head (INVALID_SIZE); a multiple of
                                  16 bytes (MISALIGNED). 0 in the one-tensor form             */
    int64_t q_pe_stride_head;  /* split Q form: elements between heads of q_pe, >= 64
                                  (INVALID_SIZE); a multiple of 16 bytes (MISALIGNED). 0 in
                                  the one-tensor form. A form is split when q_pe or either
                                  q_pe stride is set                                          */
    const void* kpe_cache;     /* split cache form: (num_slots, >= 64) rope rows of kpe_dtype,
                                  row `slot` at kpe_cache + slot * kpe_stride_slot elements;
                                  device / host pointer as q_pe; 16-byte aligned. Required
                                  (NULL_POINTER) with kpe_dtype set and num_slots > 0, except
                                  in the host-value calls; may be NULL in an empty pool. Set
                                  with kpe_dtype 0: INVALID_DTYPE                             */
    int64_t kpe_stride_slot;   /* split cache form: elements of kpe_dtype between rope rows,
                                  >= 64 (INVALID_SIZE), a multiple of 16 bytes (MISALIGNED).
                                  Must be 0 with kpe_dtype 0 (INVALID_VALUE)                  */
    int64_t lse_stride_token;  /* floats between LSE rows: 0 (default) = num_heads (dense);
                                  otherwise >= num_heads (INVALID_SIZE for less, or negative).
                                  A host value, checked even when lse is NULL (then unused)   */
    uint64_t reserved[1];      /* must be zero (mla_decode_params_init zeroes it)              */
} mla_decode_params;

/*
 * MLA_DECODE_FLAG_BATCH_INVARIANT (flags bit 0): batch-invariant mode, for engines that need
 * reproducible generation. Guarantee: the O and LSE rows of a batch element are bitwise
 * identical in every call of this library build on GPUs of the same architecture that has the
 * same num_heads, dtypes, sm_scale, scales, the element's q_len and kv_len, its Q rows and the
 * values of its cache tokens, whatever else the call holds: the other elements (their number,
 * lengths, contents and order), batch_size, total_q, max_q_len, max_kv_len (as long as it is
 * >= the element's kv_len, as required anyway), where the element's tokens lie (slots, pages,
 * page_size), strides, the number of compute units of the device, and whether mla_decode_fwd
 * or the plan API (captured in a graph or not) ran it.
 * How: every element is cut into splits at fixed token boundaries (every 1024 tokens, so its
 * split count is ceil(kv_len_b / 1024) and depends on nothing else), every plan uses the
 * split-KV route (stage 1 + LSE reduce, also for an element of one split) with the
 * stage-1 variant mma16 (16 heads of one query token per CTA; each row's arithmetic involves
 * only its own Q row), and the reduce combines an element's splits in one fixed order
 * (chunks of 8 consecutive splits into 4 partial sums, each in split order, then added in
 * order), whichever of its kernels the batch gets. The environment switches
 * MLA_DECODE_NUM_SPLITS, MLA_DECODE_ROWS and MLA_DECODE_STAGE1 do not apply.
 * Cost: no faster variant (wgmma) and no split count fitted to the batch, so calls can take
 * longer than in the default mode, most for few elements on short caches (idle compute units)
 * and for fp8, bf16 and MXFP4 caches with 128 heads or q_len > 1 (wgmma's shapes): mla_bench
 * --mla_batch_invariant measures it per shape. The results are as accurate as the default
 * mode's (the same numerics), not bitwise equal to them. The host reference accepts the flag
 * and ignores it (its rows never depend on the batch).
 */
#define MLA_DECODE_FLAG_BATCH_INVARIANT 1u

/*
 * MLA_DECODE_FLAG_FP8_MMA (flags bit 1): the fp8 route for an fp8 Q on an fp8 cache of the same
 * flavour (V from the latent rows, no bf16 rope): products run on the fp8 tensor core where the
 * library has a kernel for it, trading f32-exact accumulation for speed. The score product Q.K
 * then multiplies the e4m3 codes of Q and K as stored (no widening, half the MMA steps), and
 * mla_decode_plan_describe says "(e4m3 scores)" after the variant. The value product P.V is
 * unchanged (f16 products, f32 accumulation).
 *   - Where, by the plan's stage-1 variant:
 *       wgmma (sm_90a builds on Hopper): q_dtype FP8_E4M3FN on kv_dtype FP8_E4M3FN.
 *       mma16, in builds whose every device target has the instruction (CUDA architectures
 *       89 and later; AMD gfx940-gfx942 and gfx950): FP8_E4M3FN on FP8_E4M3FN on NVIDIA sm_89
 *       and later (mma.sync .e4m3) and on AMD gfx950 / MI355 (MFMA fp8, OCP e4m3); FP8_E4M3FNUZ
 *       on FP8_E4M3FNUZ on AMD gfx940-gfx942 / MI300 (MFMA fp8, e4m3fnuz); CUDA 12.4+. For
 *       now only where MLA_DECODE_STAGE1=mma16 forces the variant: on the H200 (e4m3fn) they
 *       meet the fp8-Q rule, but the planner has no cost for them yet (below), and the AMD
 *       atoms have not yet run on a GPU (no AMD GPU is available to the project).
 *     Everywhere else (other dtypes or pairs, devices and builds, batch-invariant mode) the
 *     flag is accepted and changes nothing.
 *   - Speed (wgmma; H200, mla_bench, SPEC method, 0.6.2): 0.74-0.75x the time at 128 heads or
 *     q_len 4 (bs64 kv4096 H128 168 -> 125 us; q_len 2 326 -> 240), 0.88x on the competition
 *     shapes (geomean 50.2 -> 44.2 us), against the same e4m3fn Q without the flag; 0.7.31
 *     (H200): competition geomean 42.7 us (44.1 with a bf16 Q), bs256 kv8192 H16 313 us (316),
 *     bs64 kv4096 H128 107 us (133), H16 q_len 2 / 4 bs128 kv4096 93 / 114 us (93 / 138). mma16
 *     (H200, forced, 0.7.25): 0.85-0.87x the time where a CTA takes 1-2 tiles (bs4 kv1024 H16
 *     15.7 -> 13.7 us), 1.05-1.07x on long CTAs (bs32 kv8192 H16 93.7 -> 98.6 us).
 *   - Accuracy (measured on wgmma): the tensor core keeps fewer bits than f32 while it adds
 *     the products, so a score is off by up to ~1e-2 of its size. Against the bf16 reference
 *     (Q not quantized, SPEC's comparison) that is lost in the error the fp8 Q already has:
 *     where the fp8 Q puts O or LSE over SPEC's rule (unit randn and larger inputs), the worst
 *     element's error moved by < 1 %; at randn * 0.02 both stay under 0.15 of the rule (GPU
 *     test GpuFp8Mma, 16 / 64 / 128 heads, Q std 0.02 / 1 / 10 / 100). Against the exact result
 *     of the same fp8 values, O and LSE stay within SPEC's fp8-Q rule (|error| <= 8e-3 +
 *     2e-2 |exact|) for randn * 0.02 and unit randn inputs (at most 0.25 of it); with larger
 *     logits LSE does, O does not: up to ~5x the rule at Q std 10 and ~50x at Q std 100 (where
 *     the fp8 Q alone, computed exactly, is ~100x and ~370x over it against a bf16 Q).
 *   - NaN codes (e4m3fn S.1111.111, e4m3fnuz 0x80) in the K rows a query row sees make its O
 *     and LSE NaN with e4m3 scores; without the flag they decode to finite values.
 * Without the flag the scores are exact f16 products of Q widened, accumulated in f32, as for a
 * bf16 Q. Like every flag it is part of a plan's shape: a plan refuses runs whose flags differ
 * (INVALID_VALUE), even where the flag changes nothing. The host reference accepts the flag and
 * ignores it.
 */
#define MLA_DECODE_FLAG_FP8_MMA 2u

/* ------------------------------------------------------------------------------------------ */
/* Functions                                                                                     */
/* ------------------------------------------------------------------------------------------ */

/* MLA_DECODE_VERSION of the library actually loaded (compare with the header's macro). */
MLA_API int mla_version(void);

/* "major.minor.patch" of the loaded library. Static storage; never NULL. */
MLA_API const char* mla_version_string(void);

/* sizeof(mla_decode_params) in the library actually loaded. A binding or a program built
 * against another header compares it with its own sizeof to detect a mismatched header. */
MLA_API size_t mla_decode_params_size(void);

/* The GPU backend this library was built with: "hip", "cuda", "none", or "emu" (a test build:
   the AMD or the NVIDIA kernels run on the CPU, on an emulated gfx942 or sm_90a device). Never
   NULL. */
MLA_API const char* mla_backend_name(void);

/* A short English name of a status ("MLA_STATUS_SUCCESS", ...); "unknown status" for values
 * outside the enum. Static storage; never NULL. */
MLA_API const char* mla_status_string(mla_status status);

/* The message of this thread's most recent library call if it failed: every entry point clears
 * the message first, so after a successful call it is "". The pointer stays valid until the next
 * library call on the same thread. Never NULL. */
MLA_API const char* mla_last_error_message(void);

/*
 * Fill *params with defaults: every pointer NULL, every size 0, head_dim_qk = 576,
 * head_dim_v = 512, q_dtype = kv_dtype = o_dtype = BF16, v_dtype = 0 (V from the latent
 * rows), kpe_dtype = 0 (576-wide cache rows), sm_scale and every other scale 1, page_size = 1,
 * strides 0 (set them; the q_pe, kpe and LSE strides may stay 0: one-tensor Q, 576-wide cache
 * rows, dense LSE), flags 0 (the default mode), reserved zero.
 * Returns: SUCCESS; NULL_POINTER if params is NULL.
 */
MLA_API mla_status mla_decode_params_init(mla_decode_params* params);

/*
 * Bytes of device workspace that mla_decode_fwd needs for this problem on the current device
 * (0 is possible). Reads only the host-value fields of *params and validates them like
 * mla_decode_fwd; device pointer fields may be NULL here.
 * Returns: SUCCESS; NULL_POINTER (params or bytes NULL); INVALID_DTYPE; INVALID_SIZE;
 * INVALID_VALUE; UNSUPPORTED (no GPU path for this problem); NO_DEVICE; DEVICE_ERROR.
 */
MLA_API mla_status mla_decode_workspace_size(const mla_decode_params* params, size_t* bytes);

/*
 * One workspace for every problem up to a largest shape, for an engine that captures one
 * HIP/CUDA graph per batch size (a plan per graph) and wants one workspace for all of them.
 * *bytes >= the workspace (mla_decode_workspace_size, mla_decode_plan_workspace_size) of every
 * problem on the current device in this process whose
 *   - batch_size, max_q_len, max_kv_len (0 included) and total_q are at most those of
 *     *max_shape, with total_q <= batch_size * max_q_len (what qo_indptr implies: total_q is
 *     the sum of batch_size lengths of at most max_q_len), and whose
 *   - num_heads, q_dtype, kv_dtype, v_dtype, o_dtype and flags equal those of *max_shape.
 * The other fields (pointers, strides, scales, num_slots, page_size, sm_scale, the input
 * forms) do not change a workspace. Reads only the host-value fields of *max_shape, validated like
 * mla_decode_workspace_size (so *max_shape must itself be a valid problem: max_q_len <=
 * total_q, strides set, ...), except that a total_q above batch_size * max_q_len (maxima set
 * apart, e.g. a token budget) is taken as that product. Host arithmetic on the device's facts;
 * no device memory.
 * How tight: in batch-invariant mode, and with MLA_DECODE_NUM_SPLITS set, it is the largest
 * shape's own workspace (exact: a workspace there grows with every maximum). Otherwise it comes
 * from the planner's cost model (what a plan that splits implies about its total_q and split
 * count), not from a table of shapes: in the project's tests it equals the largest workspace
 * of a problem under *max_shape for about half the largest shapes tried, is within 1.3 times it
 * for 9 in 10 and never above 2.5 times (2.25 the worst seen).
 * That largest workspace often belongs to a mid-size batch: *max_shape's own workspace may be
 * smaller, even 0 (a batch that fills the device needs no split).
 * Host time: a search over the planner's decisions (no device work): for batch_size 1024 and
 * 128K tokens about 0.1 to 0.4 ms per stage-1 kernel the plans choose from (one for bf16 and
 * MXFP4 caches, four for fp8 on Hopper: up to about 2 ms), more for longer max_q_len. It grows
 * with max_kv_len's tiles too: measured with one element of 64 heads, MXFP4 (one kernel), 25 ms
 * at 2^20 tokens, 0.45 s at 2^24, 76 s at 2^31 - 1 (0.7.43, one core of the CI machine). Call it
 * once, at start-up, not per step, with the longest cache the engine will serve.
 * Returns: SUCCESS; NULL_POINTER (max_shape or bytes NULL); INVALID_DTYPE; INVALID_SIZE;
 * INVALID_VALUE; UNSUPPORTED (no GPU path for such problems); NO_DEVICE; DEVICE_ERROR.
 */
MLA_API mla_status mla_decode_workspace_bound(const mla_decode_params* max_shape, size_t* bytes);

/*
 * Run the decode on the GPU, ordered on `stream` (a hipStream_t, or cudaStream_t in an NVIDIA
 * build; NULL = the default stream). Asynchronous: returns once the work is queued. All pointer
 * fields of *params are device pointers; `workspace` is device memory of at least
 * mla_decode_workspace_size() bytes, 256-byte aligned (NULL allowed when that size is 0), not
 * used by another call in flight. Device-resident index contents (indptrs, page ids) are not
 * checked: they must describe slots below num_slots (so with num_slots 0, every kv length is 0).
 * GPU paths of this release: every valid problem with o_dtype BF16: num_heads 8, 16, 32, 64, 128;
 * any q_len (causal, mixed through qo_indptr); q_dtype BF16 or FP8; kv_dtype BF16, FP8_E4M3FN,
 * FP8_E4M3FNUZ or MXFP4 (V from the MXFP4 rows, or from an FP8 v_cache); contiguous or paged;
 * Q in one tensor or split (q_nope + q_pe); the cache in 576-wide rows or split into latent +
 * rope rows of one dtype (BF16, or the same FP8); LSE rows at any stride (see Input forms).
 * The route (single-split, or split-KV with a reduce), the stage-1 kernel ("variant")
 * and the split count come from a cost model of the device; MLA_DECODE_DEBUG=1 prints them (see
 * mla_decode_plan_describe). With MLA_DECODE_FLAG_BATCH_INVARIANT in flags they are fixed
 * instead, so that a row's result does not depend on the batch (see the flag). Debugging
 * switch: the environment variable MLA_DECODE_STAGE1=<name> (mma16, wgmma) forces a stage-1
 * variant wherever it can serve the problem on the device and build (elsewhere, and in
 * batch-invariant mode, the plan keeps its own and its description says why); an unknown name
 * makes every call that makes a plan fail with INVALID_VALUE. MLA_DECODE_ROWS=<n> (16, 32, 64:
 * query rows per stage-1 CTA, a calibration switch like MLA_DECODE_NUM_SPLITS) keeps only the
 * candidate kernels with n rows where one serves (otherwise the plan's own, and its description
 * says so). MLA_DECODE_SCHEDULE=balanced runs stage 1 on the balanced schedule where the plan's
 * kernel has it (the sm_90a wgmma kernels of FP8_E4M3FN caches): gangs of CTAs walk the tiles of
 * every batch element in equal shares whatever the lengths, and the reduce combines the pieces
 * (the description says route=balanced; the planner does not choose it by itself yet).
 * By default the split-KV route's reduce is a programmatic dependent launch on
 * NVIDIA sm_90+ with sm_90 code and CUDA 12.3+ (its launch overlaps the end of stage 1, also in
 * a captured graph); MLA_DECODE_PDL=0 makes it a plain launch after stage 1. The results are
 * the same either way. MLA_DECODE_TMA=0 makes stage 1 copy every cache tile itself where by
 * default whole tiles come by TMA (NVIDIA sm_90 kernels of swizzled stages, on a contiguous
 * cache or pages of a multiple of 64 tokens); the kernel's stages hold the same bytes either
 * way.
 * Numerics: scores and O accumulate in fp32 over exactly decoded cache values (bf16; fp8 in f16;
 * MXFP4 with its block scale in bf16, except an MXFP4 cache of K and V (v_dtype 0) on the sm_90a
 * wgmma variant at 16 or 32 query rows per CTA, which the plan picks for most shapes of 16 heads
 * and q_len 1 to 4 and for more heads on some (MLA_DECODE_DEBUG=1 prints the choice; MXFP4 keys
 * beside an FP8 V cache stay bf16): there an element becomes an e4m3fn code times a power of
 * two per token, one for its 512 latent dims and one for its 64 rope dims, set by C, the largest
 * scale code among that part's nonzero blocks or 73 if that is larger; exact for every block whose
 * code is within 14 of C, and a block further below is rounded to a multiple of 2^(C - 142), an
 * error of at most 2^-16 of 2^(C - 127) (so a token whose blocks all have codes below 55 reads as
 * 0); the token's latent power of two rides on P, so beside a token whose factor is more than 2^24
 * larger at a similar score, e.g. one with e8m0 code 254 among normal ones, a token's values drop
 * out of O, though not its weight); Q keeps its value (bf16, or
 * fp8 widened exactly; against an fp8 cache, and an MXFP4 cache in that e4m3fn form, it is scaled
 * by a power of two per head into f16, so only elements below 2^-28 of their row's largest
 * magnitude lose bits); P reaches the value product with f16 precision. fp8 codes that mean NaN (in
 * the cache or in Q) are not propagated (they decode as finite values), except on the sm_90a wgmma
 * variant with an e4m3fn cache (the default there) or an e4m3fn V cache beside MXFP4 keys (the
 * default there since 0.7.44), which decode cache codes 0x7F / 0xFF with the hardware conversion:
 * such a code in a token a query row sees makes that row's O and LSE NaN, and in the first 512 dims
 * (any V dim) also the O of the other rows its CTA serves (e.g. an earlier query token's, q_len >
 * 1). Valid caches hold no such codes. MXFP4 values of magnitude >= 2^128 (e8m0 codes 253, 254 with
 * large elements) become infinite (in the e4m3fn form above they stay finite), and scale code 255
 * (NaN) makes its block NaN, and so the O and LSE of every query row that sees the token
 * (GPU-tested on both variants since 0.7.5; before, such a row's LSE read -inf and the split-KV
 * path left the split out); as with the NaN codes above, such a value among a token's first 512
 * dims also makes NaN the O of the rows its CTA serves that do not see the token (0 x inf). O can
 * also overflow to infinity where several tokens of similar score carry values near 2^127.
 * Returns: SUCCESS; NULL_POINTER; INVALID_DTYPE; INVALID_SIZE; INVALID_VALUE; UNSUPPORTED;
 * MISALIGNED; WORKSPACE_TOO_SMALL; NO_DEVICE; DEVICE_ERROR (a launch failed; the message holds
 * the runtime's error string).
 */
MLA_API mla_status mla_decode_fwd(const mla_decode_params* params, void* workspace,
                                  size_t workspace_bytes, void* stream);

/*
 * The host reference: the same operation computed on the CPU in double precision from the
 * stored values decoded exactly, for every format, page table, q_len and LSE. All pointer
 * fields of *params are host pointers, and the index arrays are read and checked (monotone,
 * slots below num_slots, page ids in range) before anything is written. O is rounded once
 * from double to o_dtype (BF16 round-to-nearest-even, or FP32). Blocking; spreads its work over
 * the host's hardware threads. The alignment rules of the fields (16-byte Q, caches and O)
 * apply to the host pointers too (C99 has no aligned allocator: POSIX posix_memalign, C11
 * aligned_alloc, or malloc where the C library's alignment is 16 bytes, as glibc's on 64-bit
 * targets).
 * Returns: SUCCESS; NULL_POINTER; INVALID_DTYPE; INVALID_SIZE; INVALID_VALUE (also for index
 * arrays that contradict the sizes, a kv length above 0 with num_slots 0, and overlapping
 * outputs); UNSUPPORTED; MISALIGNED; OUT_OF_MEMORY.
 */
MLA_API mla_status mla_decode_reference(const mla_decode_params* params);

/* ------------------------------------------------------------------------------------------ */
/* Plan-then-run                                                                                */
/* ------------------------------------------------------------------------------------------ */

/*
 * A plan fixes, for one problem shape on one device, the GPU path, its kernels and the split-KV
 * layout: made once per decode step, then reused by every layer's run. The shape of a plan is
 * the host-value fields batch_size, total_q, max_q_len, max_kv_len, num_heads, q_dtype,
 * kv_dtype, v_dtype, o_dtype and flags, the rope's dtype (kpe_dtype where it is BF16 beside an
 * FP8 kv_dtype, otherwise the latent's dtype), and the current device; every run must pass
 * params with the same shape and run on that device (the input forms are not part of the shape
 * otherwise: see Input forms). In particular the V source is fixed by the plan's v_dtype: a run
 * with an FP8 v_dtype (V from its v_cache) on a plan made with v_dtype 0, or with v_dtype 0 on
 * a plan made with an FP8 v_dtype, is refused with INVALID_VALUE (nothing is written); so is a
 * run whose flags differ from the plan's (batch-invariant mode is fixed by the plan), and a run
 * with a BF16 rope beside an FP8 latent on a plan made without one, or the other way round.
 * Everything else may change between runs: pointers (the v_cache pointer included), strides,
 * scales, num_slots, page table, and the device-resident lengths (every q_len_b <= max_q_len;
 * kv lengths above max_kv_len stay correct, only less well balanced, and lose the
 * batch-invariant guarantee).
 *
 * Per step:   mla_decode_plan_prepare   checks the step's fields against the plan (since
 *                                       0.7.0 it queues nothing: the kernels take which CTA
 *                                       handles which tokens from the device-resident
 *                                       qo_indptr / kv_indptr themselves);
 * per layer:  mla_decode_plan_run       launches the attention kernels.
 * Neither synchronizes with the host nor allocates memory, so a step can be captured into a
 * HIP/CUDA graph once and replayed with new lengths in the same device buffers. A workspace
 * belongs to one plan at a time: runs on it must follow a prepare of the same plan on the same
 * stream order, with the indptrs unchanged in between. Two plans may be alive and in use at
 * once, on different streams with different workspaces.
 *
 * mla_decode_fwd is prepare + run with a plan taken from a process-wide cache keyed by shape
 * and device (the cache is bounded; it never allocates device memory).
 */
typedef struct mla_decode_plan mla_decode_plan;

/*
 * Make a plan for the shape of *params on the current device. Reads only the host-value fields
 * (pointer fields may be NULL), validated like mla_decode_workspace_size. Host memory only.
 * *plan is set only on success; free it with mla_decode_plan_destroy.
 * Returns: SUCCESS; NULL_POINTER (params or plan NULL); INVALID_DTYPE; INVALID_SIZE;
 * INVALID_VALUE; UNSUPPORTED; NO_DEVICE; DEVICE_ERROR; OUT_OF_MEMORY.
 */
MLA_API mla_status mla_decode_plan_create(const mla_decode_params* params,
                                          mla_decode_plan** plan);

/* Free a plan (NULL is allowed and does nothing). Work already queued with it is unaffected.
 * Returns: SUCCESS. */
MLA_API mla_status mla_decode_plan_destroy(mla_decode_plan* plan);

/* Device workspace bytes that prepare and run of this plan need (may be 0).
 * Returns: SUCCESS; NULL_POINTER (plan or bytes NULL). */
MLA_API mla_status mla_decode_plan_workspace_size(const mla_decode_plan* plan, size_t* bytes);

/*
 * Write a one-line, NUL-terminated description of the plan's route and the reason it was
 * chosen (path, stage-1 variant with its rows per CTA and tile, split count, predicted time,
 * device compute units, what the environment forced) into buffer, truncated to buffer_bytes.
 * The same line is printed to stderr for every call when the environment variable
 * MLA_DECODE_DEBUG=1 is set.
 * Returns: SUCCESS; NULL_POINTER (plan or buffer NULL); INVALID_SIZE (buffer_bytes 0).
 */
MLA_API mla_status mla_decode_plan_describe(const mla_decode_plan* plan, char* buffer,
                                            size_t buffer_bytes);

/*
 * Prepare a step: check *params against the plan and `workspace` (device memory of at least
 * mla_decode_plan_workspace_size bytes, 256-byte aligned) as mla_decode_plan_run would. Since
 * 0.7.0 nothing is queued on `stream` (the kernels read qo_indptr / kv_indptr themselves);
 * the call stays part of the contract, so that a later version may place per-step work here.
 * Returns: as mla_decode_fwd, plus INVALID_VALUE when *params does not have the plan's shape
 * (and NULL_POINTER for a NULL plan).
 */
MLA_API mla_status mla_decode_plan_prepare(const mla_decode_plan* plan,
                                           const mla_decode_params* params, void* workspace,
                                           size_t workspace_bytes, void* stream);

/*
 * Run the decode with a prepared workspace, ordered on `stream`; otherwise exactly as
 * mla_decode_fwd.
 * Returns: as mla_decode_plan_prepare.
 */
MLA_API mla_status mla_decode_plan_run(const mla_decode_plan* plan,
                                       const mla_decode_params* params, void* workspace,
                                       size_t workspace_bytes, void* stream);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* MLA_DECODE_H_ */
