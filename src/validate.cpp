// Argument validation: the checks of mla_decode.h, in a fixed order, first violation wins.
//
//   (a) params NULL                                   -> NULL_POINTER
//   (b) unknown flags bits, reserved fields not zero  -> INVALID_VALUE
//   (c) dtypes                                        -> INVALID_DTYPE (FP32 O off the host
//                                                        reference, and (kv, kpe) dtype pairs
//                                                        a path does not serve -> UNSUPPORTED)
//   (d) sizes                                         -> INVALID_SIZE
//   (e) geometry (heads, head dims)                   -> UNSUPPORTED
//   (f) required pointers (not for a workspace query) -> NULL_POINTER
//   (g) strides and byte extents                      -> INVALID_SIZE
//   (h) scalar values and contradicting fields        -> INVALID_VALUE
//       (last: an output overlapping an input or the other output; not for a workspace query)
//   (i) alignment (not for a workspace query)         -> MISALIGNED
//
// Pointer fields are compared with NULL and their addresses inspected, never dereferenced.
//
// An empty pool (num_slots 0) has no cache rows and no pages: kv_cache, kv_block_scales,
// v_cache and kv_page_indices may then be NULL (every kv length must be 0; the reference
// checks it, the GPU cannot).
//
// Overlap is judged on byte spans computed from host values alone (span_of): from a tensor's
// first byte to one past the last byte any call may touch, whatever lies in between.
//
// Workspace query: the caller may leave every pointer NULL, so a NULL pointer there means
// "not known" and the rules that need a pointer to be present or absent are skipped (a NULL
// v_cache says nothing when v_dtype is FP8; a NULL kv_page_indptr says nothing about
// page_size). A non-NULL pointer is taken at its word: a set v_cache or kv_block_scales
// contradicting kv_dtype or v_dtype is rejected, exactly as for mla_decode_fwd.
//
// Where V comes from is a host fact, v_dtype (so that a plan fixes it): 0 = the latent rows,
// FP8_E4M3FN / FP8_E4M3FNUZ = v_cache (MXFP4 keys only); the v_* fields are checked then.
//
// Input forms (mla_decode.h, "Input forms"): the split Q form (q_pe or a q_pe stride set: q
// is 512 wide, q_pe 64 wide), the split cache form (kpe_dtype set, or a kpe_cache given, which
// (c) then refuses: kv_cache rows 512 wide, kpe_cache rows 64 wide) and the LSE row stride
// (0 = num_heads). Both forms are host facts, so workspace queries check them too.
#include "validate.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <limits>

#include "error.h"

namespace mla {
namespace {

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
// Query rows (total_q x num_heads) a call may have: the planner counts an element's rows and row
// groups in int.
constexpr int64_t kMaxQueryRows = std::numeric_limits<int32_t>::max();

// The integer held by a dtype field, read without assuming it is a valid enumerator.
int raw_dtype(const mla_dtype& field) {
    static_assert(sizeof(mla_dtype) == sizeof(int), "mla_dtype is an int-sized enum");
    int value = 0;
    std::memcpy(&value, &field, sizeof(value));
    return value;
}

const char* dtype_name_of(int value) {
    switch (value) {
        case MLA_DTYPE_BF16: return "BF16";
        case MLA_DTYPE_FP32: return "FP32";
        case MLA_DTYPE_FP8_E4M3FN: return "FP8_E4M3FN";
        case MLA_DTYPE_FP8_E4M3FNUZ: return "FP8_E4M3FNUZ";
        case MLA_DTYPE_MXFP4: return "MXFP4";
    }
    return "not an mla_dtype";
}

bool is_fp8_value(int value) {
    return value == MLA_DTYPE_FP8_E4M3FN || value == MLA_DTYPE_FP8_E4M3FNUZ;
}

bool finite_positive(float x) { return std::isfinite(x) && x > 0.0f; }

bool is_workspace_query(ValidateFor what) { return what == ValidateFor::kWorkspaceQuery; }

// V comes from v_cache: v_dtype says so (or a v_cache is given, which (c) then requires).
bool v_from_cache(const mla_decode_params& p) {
    return p.v_cache != nullptr || is_fp8_value(raw_dtype(p.v_dtype));
}

// The split Q form: q holds q_nope (512 wide), q_pe the rope part (64 wide).
bool split_q(const mla_decode_params& p) {
    return p.q_pe != nullptr || p.q_pe_stride_token != 0 || p.q_pe_stride_head != 0;
}

// The split cache form: kpe_dtype says so (or a kpe_cache is given, which (c) then refuses).
bool split_cache(const mla_decode_params& p) {
    return p.kpe_cache != nullptr || raw_dtype(p.kpe_dtype) != 0;
}

// Elements of a Q row in q, and of a cache row in kv_cache (storage elements), by form.
int64_t q_width(const mla_decode_params& p) {
    return split_q(p) ? MLA_KV_LORA_RANK : MLA_HEAD_DIM_QK;
}
int64_t kv_width(const mla_decode_params& p) {
    return split_cache(p) ? MLA_KV_LORA_RANK : kv_row_elements(p.kv_dtype);
}

// Floats between LSE rows (the stride 0 means dense).
int64_t lse_row_stride(const mla_decode_params& p) {
    return p.lse_stride_token != 0 ? p.lse_stride_token : p.num_heads;
}

// a * b for a, b >= 0; false when the product does not fit in int64.
bool checked_mul(int64_t a, int64_t b, int64_t* product) {
    if (a != 0 && b > kInt64Max / a) return false;
    *product = a * b;
    return true;
}

// count rows of `stride` elements of `element_bytes` fit in int64 bytes, and so does one row's
// stride (with no rows too: later checks multiply the stride by the element's bytes).
bool extent_fits(int64_t count, int64_t stride, int64_t element_bytes) {
    int64_t elements = 0, bytes = 0;
    return checked_mul(std::max<int64_t>(count, 1), stride, &elements) &&
           checked_mul(elements, element_bytes, &bytes);
}

bool aligned(const void* ptr, uintptr_t alignment) {
    return reinterpret_cast<uintptr_t>(ptr) % alignment == 0;
}

// ---- (b) reserved ------------------------------------------------------------------------

mla_status check_reserved(const mla_decode_params& p) {
    const uint32_t unknown =
        p.flags & ~uint32_t{MLA_DECODE_FLAG_BATCH_INVARIANT | MLA_DECODE_FLAG_FP8_MMA};
    if (unknown != 0)
        return fail(MLA_STATUS_INVALID_VALUE,
                    "flags 0x%x has unknown bits 0x%x (known: MLA_DECODE_FLAG_BATCH_INVARIANT = "
                    "0x1, MLA_DECODE_FLAG_FP8_MMA = 0x2)", p.flags, unknown);
    for (int i = 0; i < static_cast<int>(sizeof(p.reserved) / sizeof(p.reserved[0])); ++i) {
        if (p.reserved[i] != 0) {
            return fail(MLA_STATUS_INVALID_VALUE, "reserved[%d] must be 0, got %llu", i,
                        static_cast<unsigned long long>(p.reserved[i]));
        }
    }
    return MLA_STATUS_SUCCESS;
}

// ---- (c) dtypes ----------------------------------------------------------------------------

mla_status check_q_dtype(int q) {
    if (q == MLA_DTYPE_BF16 || is_fp8_value(q)) return MLA_STATUS_SUCCESS;
    return fail(MLA_STATUS_INVALID_DTYPE,
                "q_dtype %d (%s) is not allowed for Q: BF16, FP8_E4M3FN or FP8_E4M3FNUZ", q,
                dtype_name_of(q));
}

mla_status check_kv_dtype(int kv) {
    if (kv == MLA_DTYPE_BF16 || is_fp8_value(kv) || kv == MLA_DTYPE_MXFP4) {
        return MLA_STATUS_SUCCESS;
    }
    return fail(MLA_STATUS_INVALID_DTYPE,
                "kv_dtype %d (%s) is not allowed for the latent cache: BF16, FP8_E4M3FN, "
                "FP8_E4M3FNUZ or MXFP4",
                kv, dtype_name_of(kv));
}

mla_status check_o_dtype(int o, ValidateFor what) {
    if (o == MLA_DTYPE_BF16) return MLA_STATUS_SUCCESS;
    if (o == MLA_DTYPE_FP32) {
        if (what == ValidateFor::kHostReference) return MLA_STATUS_SUCCESS;
        return fail(MLA_STATUS_UNSUPPORTED,
                    "o_dtype FP32 is served by the host reference only; GPU paths write BF16");
    }
    return fail(MLA_STATUS_INVALID_DTYPE, "o_dtype %d (%s) is not allowed for O: BF16 or FP32", o,
                dtype_name_of(o));
}

mla_status check_v_dtype(const mla_decode_params& p) {
    int v = raw_dtype(p.v_dtype);
    if (is_fp8_value(v)) return MLA_STATUS_SUCCESS;
    if (p.v_cache != nullptr) {
        return fail(MLA_STATUS_INVALID_DTYPE,
                    "v_dtype %d (%s) is not allowed with v_cache: FP8_E4M3FN or FP8_E4M3FNUZ", v,
                    dtype_name_of(v));
    }
    if (v == 0) return MLA_STATUS_SUCCESS;  // V from the latent rows
    return fail(MLA_STATUS_INVALID_DTYPE,
                "v_dtype %d (%s) is not allowed: 0 (V from the latent rows) or FP8_E4M3FN / "
                "FP8_E4M3FNUZ (V from v_cache)",
                v, dtype_name_of(v));
}

mla_status check_kpe_dtype(const mla_decode_params& p) {
    const int kpe = raw_dtype(p.kpe_dtype);
    if (kpe == MLA_DTYPE_BF16 || is_fp8_value(kpe)) return MLA_STATUS_SUCCESS;
    if (p.kpe_cache != nullptr) {
        return fail(MLA_STATUS_INVALID_DTYPE,
                    "kpe_dtype %d (%s) is not allowed with kpe_cache: BF16, FP8_E4M3FN or "
                    "FP8_E4M3FNUZ",
                    kpe, dtype_name_of(kpe));
    }
    if (kpe == 0) return MLA_STATUS_SUCCESS;  // 576-wide rows in kv_cache
    return fail(MLA_STATUS_INVALID_DTYPE,
                "kpe_dtype %d (%s) is not allowed: 0 (576-wide rows in kv_cache) or BF16, "
                "FP8_E4M3FN, FP8_E4M3FNUZ (the rope rows in kpe_cache)",
                kpe, dtype_name_of(kpe));
}

// The (kv_dtype, kpe_dtype) pairs of the split cache form each path serves (mla_decode.h).
mla_status check_kpe_pair(const mla_decode_params& p) {
    const int kv = raw_dtype(p.kv_dtype), kpe = raw_dtype(p.kpe_dtype);
    if (!split_cache(p)) return MLA_STATUS_SUCCESS;
    if (kv == MLA_DTYPE_MXFP4) {
        return fail(MLA_STATUS_UNSUPPORTED,
                    "kpe_dtype %s with kv_dtype MXFP4: an MXFP4 row's 18 block scales cover all "
                    "576 dims (the rope's too), so a split MXFP4 cache is not defined; keep the "
                    "rope in the MXFP4 rows (kpe_dtype 0)",
                    dtype_name_of(kpe));
    }
    // The latent's own dtype, or a BF16 rope beside an FP8 latent (the DeepSeek-V3.2 cache):
    // every path serves both.
    if (kpe == kv || (kpe == MLA_DTYPE_BF16 && is_fp8_value(kv))) return MLA_STATUS_SUCCESS;
    return fail(MLA_STATUS_UNSUPPORTED,
                "kpe_dtype %s beside kv_dtype %s: a rope cache is BF16 or the latent's own dtype",
                dtype_name_of(kpe), dtype_name_of(kv));
}

mla_status check_dtypes(const mla_decode_params& p, ValidateFor what) {
    MLA_TRY(check_q_dtype(raw_dtype(p.q_dtype)));
    MLA_TRY(check_kv_dtype(raw_dtype(p.kv_dtype)));
    MLA_TRY(check_o_dtype(raw_dtype(p.o_dtype), what));
    MLA_TRY(check_v_dtype(p));
    MLA_TRY(check_kpe_dtype(p));
    return check_kpe_pair(p);
}

// ---- (d) sizes -----------------------------------------------------------------------------

mla_status require_at_least(const char* field, int64_t value, int64_t minimum) {
    if (value >= minimum) return MLA_STATUS_SUCCESS;
    return fail(MLA_STATUS_INVALID_SIZE, "%s must be >= %lld, got %lld", field,
                static_cast<long long>(minimum), static_cast<long long>(value));
}

mla_status check_sizes(const mla_decode_params& p) {
    MLA_TRY(require_at_least("batch_size", p.batch_size, 1));
    MLA_TRY(require_at_least("total_q", p.total_q, 1));
    MLA_TRY(require_at_least("max_q_len", p.max_q_len, 1));
    if (p.max_q_len > p.total_q) {
        return fail(MLA_STATUS_INVALID_SIZE, "max_q_len %d exceeds total_q %d", p.max_q_len,
                    p.total_q);
    }
    if (static_cast<int64_t>(p.batch_size) * p.max_q_len < p.total_q) {
        return fail(MLA_STATUS_INVALID_SIZE,
                    "total_q %d exceeds batch_size %d * max_q_len %d (no element has more query "
                    "tokens than max_q_len)",
                    p.total_q, p.batch_size, p.max_q_len);
    }
    MLA_TRY(require_at_least("max_kv_len", p.max_kv_len, 0));
    MLA_TRY(require_at_least("num_heads", p.num_heads, 1));
    if (static_cast<int64_t>(p.total_q) * p.num_heads > kMaxQueryRows) {
        return fail(MLA_STATUS_INVALID_SIZE,
                    "total_q %d * num_heads %d query rows exceed 2^31 - 1", p.total_q,
                    p.num_heads);
    }
    MLA_TRY(require_at_least("head_dim_qk", p.head_dim_qk, 1));
    MLA_TRY(require_at_least("head_dim_v", p.head_dim_v, 1));
    MLA_TRY(require_at_least("num_slots", p.num_slots, 0));  // 0: an empty pool
    return require_at_least("page_size", p.page_size, 1);
}

// ---- (e) geometry --------------------------------------------------------------------------

mla_status check_geometry(const mla_decode_params& p) {
    int h = p.num_heads;
    if (h != 8 && h != 16 && h != 32 && h != 64 && h != 128) {
        return fail(MLA_STATUS_UNSUPPORTED, "num_heads %d is not supported: 8, 16, 32, 64 or 128",
                    h);
    }
    if (p.head_dim_qk != MLA_HEAD_DIM_QK) {
        return fail(MLA_STATUS_UNSUPPORTED, "head_dim_qk must be %d (kv_lora_rank + rope), got %d",
                    MLA_HEAD_DIM_QK, p.head_dim_qk);
    }
    if (p.head_dim_v != MLA_HEAD_DIM_V) {
        return fail(MLA_STATUS_UNSUPPORTED, "head_dim_v must be %d (kv_lora_rank), got %d",
                    MLA_HEAD_DIM_V, p.head_dim_v);
    }
    return MLA_STATUS_SUCCESS;
}

// ---- (f) required pointers -----------------------------------------------------------------

mla_status require_pointer(const char* field, const void* ptr) {
    if (ptr != nullptr) return MLA_STATUS_SUCCESS;
    return fail(MLA_STATUS_NULL_POINTER, "%s is NULL", field);
}

// An empty pool (num_slots 0) has no cache rows and no pages, so those pointers may be NULL.
mla_status check_pointers(const mla_decode_params& p) {
    const bool pool = p.num_slots > 0;
    MLA_TRY(require_pointer("q", p.q));
    if (split_q(p) && p.q_pe == nullptr) {
        return fail(MLA_STATUS_NULL_POINTER,
                    "q_pe is NULL in the split Q form (a q_pe stride is set)");
    }
    if (pool) MLA_TRY(require_pointer("kv_cache", p.kv_cache));
    if (pool && split_cache(p) && p.kpe_cache == nullptr) {
        return fail(MLA_STATUS_NULL_POINTER, "kpe_cache is NULL with kpe_dtype %s",
                    dtype_name(p.kpe_dtype));
    }
    MLA_TRY(require_pointer("qo_indptr", p.qo_indptr));
    MLA_TRY(require_pointer("kv_indptr", p.kv_indptr));
    MLA_TRY(require_pointer("o", p.o));
    if (pool && raw_dtype(p.kv_dtype) == MLA_DTYPE_MXFP4 && p.kv_block_scales == nullptr) {
        return fail(MLA_STATUS_NULL_POINTER, "kv_block_scales is NULL with kv_dtype MXFP4");
    }
    if (pool && p.kv_page_indptr != nullptr && p.kv_page_indices == nullptr) {
        return fail(MLA_STATUS_NULL_POINTER, "kv_page_indices is NULL while kv_page_indptr is set");
    }
    return MLA_STATUS_SUCCESS;
}

// ---- (g) strides ---------------------------------------------------------------------------

// stride_token >= num_heads * stride_head, with the product checked for overflow.
mla_status check_token_stride(const char* token_field, int64_t stride_token,
                              const char* head_field, int64_t stride_head, int num_heads) {
    int64_t row = 0;
    if (!checked_mul(num_heads, stride_head, &row)) {
        return fail(MLA_STATUS_INVALID_SIZE, "num_heads * %s overflows int64 (%s = %lld)",
                    head_field, head_field, static_cast<long long>(stride_head));
    }
    if (stride_token < row) {
        return fail(MLA_STATUS_INVALID_SIZE, "%s %lld is below num_heads * %s = %lld", token_field,
                    static_cast<long long>(stride_token), head_field, static_cast<long long>(row));
    }
    return MLA_STATUS_SUCCESS;
}

mla_status require_extent(const char* tensor, int64_t count, int64_t stride,
                          int64_t element_bytes) {
    if (extent_fits(count, stride, element_bytes)) return MLA_STATUS_SUCCESS;
    return fail(MLA_STATUS_INVALID_SIZE,
                "%s byte extent overflows int64 (%lld rows x stride %lld x %lld bytes)", tensor,
                static_cast<long long>(count), static_cast<long long>(stride),
                static_cast<long long>(element_bytes));
}

mla_status check_q_o_strides(const mla_decode_params& p) {
    MLA_TRY(require_at_least("q_stride_head", p.q_stride_head, q_width(p)));
    MLA_TRY(check_token_stride("q_stride_token", p.q_stride_token, "q_stride_head",
                               p.q_stride_head, p.num_heads));
    if (split_q(p)) {
        MLA_TRY(require_at_least("q_pe_stride_head", p.q_pe_stride_head, MLA_QK_ROPE_HEAD_DIM));
        MLA_TRY(check_token_stride("q_pe_stride_token", p.q_pe_stride_token, "q_pe_stride_head",
                                   p.q_pe_stride_head, p.num_heads));
    }
    MLA_TRY(require_at_least("o_stride_head", p.o_stride_head, MLA_HEAD_DIM_V));
    MLA_TRY(check_token_stride("o_stride_token", p.o_stride_token, "o_stride_head",
                               p.o_stride_head, p.num_heads));
    if (p.lse_stride_token != 0) {
        MLA_TRY(require_at_least("lse_stride_token", p.lse_stride_token, p.num_heads));
    }
    return MLA_STATUS_SUCCESS;
}

mla_status check_cache_strides(const mla_decode_params& p) {
    mla_dtype kv = p.kv_dtype;
    MLA_TRY(require_at_least("kv_stride_slot", p.kv_stride_slot, kv_width(p)));
    if (split_cache(p)) {
        MLA_TRY(require_at_least("kpe_stride_slot", p.kpe_stride_slot, MLA_QK_ROPE_HEAD_DIM));
    }
    if (kv == MLA_DTYPE_MXFP4) {
        MLA_TRY(require_at_least("kv_block_scale_stride", p.kv_block_scale_stride,
                                 MLA_MXFP4_ROW_SCALES));
    }
    if (v_from_cache(p)) {
        MLA_TRY(require_at_least("v_stride_slot", p.v_stride_slot, MLA_HEAD_DIM_V));
    }
    return MLA_STATUS_SUCCESS;
}

mla_status check_extents(const mla_decode_params& p) {
    MLA_TRY(require_extent("q", p.total_q, p.q_stride_token, dtype_storage_bytes(p.q_dtype)));
    if (split_q(p)) {
        MLA_TRY(require_extent("q_pe", p.total_q, p.q_pe_stride_token,
                               dtype_storage_bytes(p.q_dtype)));
    }
    MLA_TRY(require_extent("kv_cache", p.num_slots, p.kv_stride_slot,
                           dtype_storage_bytes(p.kv_dtype)));
    if (split_cache(p)) {
        MLA_TRY(require_extent("kpe_cache", p.num_slots, p.kpe_stride_slot,
                               dtype_storage_bytes(p.kpe_dtype)));
    }
    if (p.kv_dtype == MLA_DTYPE_MXFP4) {
        MLA_TRY(require_extent("kv_block_scales", p.num_slots, p.kv_block_scale_stride, 1));
    }
    if (v_from_cache(p)) {
        MLA_TRY(require_extent("v_cache", p.num_slots, p.v_stride_slot, 1));
    }
    MLA_TRY(require_extent("o", p.total_q, p.o_stride_token, dtype_storage_bytes(p.o_dtype)));
    return require_extent("lse", p.total_q, lse_row_stride(p), sizeof(float));
}

mla_status check_strides(const mla_decode_params& p) {
    MLA_TRY(check_q_o_strides(p));
    MLA_TRY(check_cache_strides(p));
    return check_extents(p);
}

// ---- (h) values ----------------------------------------------------------------------------

mla_status require_scale(const char* field, float value) {
    if (finite_positive(value)) return MLA_STATUS_SUCCESS;
    return fail(MLA_STATUS_INVALID_VALUE, "%s must be finite and > 0, got %g", field,
                static_cast<double>(value));
}

mla_status require_unit_scale(const char* field, float value, const char* why) {
    if (value == 1.0f) return MLA_STATUS_SUCCESS;
    return fail(MLA_STATUS_INVALID_VALUE, "%s must be 1 %s, got %g", field, why,
                static_cast<double>(value));
}

mla_status check_scales(const mla_decode_params& p) {
    MLA_TRY(require_scale("sm_scale", p.sm_scale));
    MLA_TRY(require_scale("q_scale", p.q_scale));
    if (p.q_dtype == MLA_DTYPE_BF16) {
        MLA_TRY(require_unit_scale("q_scale", p.q_scale, "for q_dtype BF16"));
    }
    MLA_TRY(require_scale("kv_scale", p.kv_scale));
    if (!is_fp8(p.kv_dtype)) {
        MLA_TRY(require_unit_scale("kv_scale", p.kv_scale, "unless kv_dtype is FP8"));
    }
    // A BF16 rope beside FP8 codes: the Hopper kernels add the rope's scores times 1 / (kv_scale
    // x 1 or 128, the decoded codes' power of two) to the latent's (WgmmaFp8Bf16RopeDecode),
    // which 2^-64 .. 2^64 keeps finite.
    constexpr float kRopeKvScaleMin = 0x1p-64f, kRopeKvScaleMax = 0x1p64f;
    if (split_cache(p) && raw_dtype(p.kpe_dtype) == MLA_DTYPE_BF16 && is_fp8(p.kv_dtype) &&
        (p.kv_scale < kRopeKvScaleMin || p.kv_scale > kRopeKvScaleMax)) {
        return fail(MLA_STATUS_INVALID_VALUE,
                    "kv_scale beside a BF16 rope (kpe_dtype BF16) must lie in [2^-64, 2^64], "
                    "got %g",
                    static_cast<double>(p.kv_scale));
    }
    if (v_from_cache(p)) MLA_TRY(require_scale("v_scale", p.v_scale));
    return MLA_STATUS_SUCCESS;
}

mla_status check_field_agreement(const mla_decode_params& p, ValidateFor what) {
    bool mxfp4 = p.kv_dtype == MLA_DTYPE_MXFP4;
    if (p.v_cache != nullptr && !mxfp4) {
        return fail(MLA_STATUS_INVALID_VALUE, "v_cache is set but kv_dtype is %s (only MXFP4)",
                    dtype_name_of(p.kv_dtype));
    }
    if (v_from_cache(p) && !mxfp4) {
        return fail(MLA_STATUS_INVALID_VALUE,
                    "v_dtype %s takes V from v_cache, but kv_dtype is %s: only MXFP4 keys have a "
                    "separate V cache (v_dtype 0 reads V from the latent rows)",
                    dtype_name_of(p.v_dtype), dtype_name_of(p.kv_dtype));
    }
    if (p.kv_block_scales != nullptr && !mxfp4) {
        return fail(MLA_STATUS_INVALID_VALUE, "kv_block_scales is set but kv_dtype is %s",
                    dtype_name_of(p.kv_dtype));
    }
    if (!mxfp4 && p.kv_block_scale_stride != 0) {
        return fail(MLA_STATUS_INVALID_VALUE,
                    "kv_block_scale_stride must be 0 unless kv_dtype is MXFP4, got %lld",
                    static_cast<long long>(p.kv_block_scale_stride));
    }
    if (!split_cache(p) && p.kpe_stride_slot != 0) {
        return fail(MLA_STATUS_INVALID_VALUE,
                    "kpe_stride_slot must be 0 with kpe_dtype 0 (576-wide rows in kv_cache), "
                    "got %lld",
                    static_cast<long long>(p.kpe_stride_slot));
    }
    if (is_workspace_query(what)) return MLA_STATUS_SUCCESS;  // NULL pointers are "not known"
    if (v_from_cache(p) && p.v_cache == nullptr && p.num_slots > 0) {
        return fail(MLA_STATUS_INVALID_VALUE,
                    "v_dtype %s takes V from v_cache, but v_cache is NULL (v_dtype 0 reads V "
                    "from the latent rows)",
                    dtype_name_of(p.v_dtype));
    }
    if (p.kv_page_indices != nullptr && p.kv_page_indptr == nullptr) {
        return fail(MLA_STATUS_INVALID_VALUE, "kv_page_indices is set without kv_page_indptr");
    }
    if (p.kv_page_indptr == nullptr && p.page_size != 1) {
        return fail(MLA_STATUS_INVALID_VALUE,
                    "page_size must be 1 for a contiguous cache (kv_page_indptr NULL), got %d",
                    p.page_size);
    }
    return MLA_STATUS_SUCCESS;
}

// ---- (h) overlapping outputs ---------------------------------------------------------------

// The bytes a tensor may occupy: [begin, begin + bytes); 0 bytes for an absent or empty one.
struct Span {
    const char* name;
    uintptr_t begin;
    uint64_t bytes;
};

// `outer` x `inner` runs of `width` elements, `outer_stride` / `inner_stride` elements apart:
// from the first byte to one past the last element. Fits in int64 once (g) passed.
Span span_of(const char* name, const void* ptr, int64_t outer, int64_t outer_stride,
             int64_t inner, int64_t inner_stride, int64_t width, int64_t element_bytes) {
    if (ptr == nullptr || outer <= 0 || inner <= 0) return Span{name, 0, 0};
    const int64_t elements = (outer - 1) * outer_stride + (inner - 1) * inner_stride + width;
    return Span{name, reinterpret_cast<uintptr_t>(ptr),
                static_cast<uint64_t>(elements * element_bytes)};
}

// A dense array of `count` elements.
Span span_of(const char* name, const void* ptr, int64_t count, int64_t element_bytes) {
    return span_of(name, ptr, 1, 0, 1, 0, count, element_bytes);
}

bool overlap(const Span& a, const Span& b) {
    if (a.bytes == 0 || b.bytes == 0) return false;
    return a.begin <= b.begin ? b.begin - a.begin < a.bytes : a.begin - b.begin < b.bytes;
}

mla_status check_no_overlap(const Span& out, const Span& other) {
    if (!overlap(out, other)) return MLA_STATUS_SUCCESS;
    return fail(MLA_STATUS_INVALID_VALUE,
                "%s and %s overlap (%s: %llu bytes at %p, %s: %llu bytes at %p): an output may "
                "share memory with no input and not with the other output",
                out.name, other.name, out.name, static_cast<unsigned long long>(out.bytes),
                reinterpret_cast<const void*>(out.begin), other.name,
                static_cast<unsigned long long>(other.bytes),
                reinterpret_cast<const void*>(other.begin));
}

// O and LSE against each other and against every input, on spans of host values: Q and q_pe,
// O (rows x heads x dims), LSE (total_q rows of num_heads at its row stride), the caches
// (num_slots rows; the rope cache too), the indptrs and the
// page list (batch_size + 1 entries), kv_page_indices (its first entry: the length is on the
// device). An empty pool has no rows and no pages: those spans are empty.
Span o_span(const mla_decode_params& p) {
    return span_of("o", p.o, p.total_q, p.o_stride_token, p.num_heads, p.o_stride_head,
                   MLA_HEAD_DIM_V, dtype_storage_bytes(p.o_dtype));
}
Span lse_span(const mla_decode_params& p) {
    return span_of("lse", p.lse, p.total_q, lse_row_stride(p), 1, 0, p.num_heads, sizeof(float));
}

mla_status check_overlaps(const mla_decode_params& p) {
    const int64_t rows = p.total_q, heads = p.num_heads, batch = p.batch_size;
    const int64_t slots = p.num_slots;
    const Span o = o_span(p);
    const Span lse = lse_span(p);
    const int q_bytes = dtype_storage_bytes(p.q_dtype);
    const Span inputs[] = {
        span_of("q", p.q, rows, p.q_stride_token, heads, p.q_stride_head, q_width(p), q_bytes),
        span_of("q_pe", p.q_pe, rows, p.q_pe_stride_token, heads, p.q_pe_stride_head,
                MLA_QK_ROPE_HEAD_DIM, q_bytes),
        span_of("kv_cache", p.kv_cache, slots, p.kv_stride_slot, 1, 0, kv_width(p),
                dtype_storage_bytes(p.kv_dtype)),
        span_of("kpe_cache", p.kpe_cache, slots, p.kpe_stride_slot, 1, 0, MLA_QK_ROPE_HEAD_DIM,
                dtype_storage_bytes(p.kpe_dtype)),
        // Up to the whole last row (min(stride, 32) bytes): the kernels' 16- and 4-byte copies.
        span_of("kv_block_scales", p.kv_block_scales, slots, p.kv_block_scale_stride, 1, 0,
                std::min<int64_t>(p.kv_block_scale_stride, 32), 1),
        span_of("v_cache", p.v_cache, slots, p.v_stride_slot, 1, 0, MLA_HEAD_DIM_V, 1),
        span_of("qo_indptr", p.qo_indptr, batch + 1, sizeof(int32_t)),
        span_of("kv_indptr", p.kv_indptr, batch + 1, sizeof(int32_t)),
        span_of("kv_page_indptr", p.kv_page_indptr, batch + 1, sizeof(int32_t)),
        span_of("kv_page_indices", p.kv_page_indices, slots > 0 ? 1 : 0, sizeof(int32_t)),
    };
    MLA_TRY(check_no_overlap(o, lse));
    for (const Span& out : {o, lse}) {
        for (const Span& in : inputs) MLA_TRY(check_no_overlap(out, in));
    }
    return MLA_STATUS_SUCCESS;
}

mla_status check_values(const mla_decode_params& p, ValidateFor what) {
    MLA_TRY(check_scales(p));
    MLA_TRY(check_field_agreement(p, what));
    if (is_workspace_query(what)) return MLA_STATUS_SUCCESS;  // pointers are not looked at
    return check_overlaps(p);
}

// ---- (i) alignment -------------------------------------------------------------------------

mla_status require_aligned(const char* field, const void* ptr, uintptr_t alignment) {
    if (ptr == nullptr || aligned(ptr, alignment)) return MLA_STATUS_SUCCESS;
    return fail(MLA_STATUS_MISALIGNED, "%s (%p) must be %u-byte aligned", field, ptr,
                static_cast<unsigned>(alignment));
}

mla_status require_stride_bytes_multiple(const char* field, int64_t stride, int64_t element_bytes) {
    int64_t bytes = stride * element_bytes;  // fits: extents were checked in (g)
    if (bytes % 16 == 0) return MLA_STATUS_SUCCESS;
    return fail(MLA_STATUS_MISALIGNED, "%s %lld is %lld bytes, not a multiple of 16", field,
                static_cast<long long>(stride), static_cast<long long>(bytes));
}

mla_status check_pointer_alignment(const mla_decode_params& p) {
    MLA_TRY(require_aligned("q", p.q, 16));
    MLA_TRY(require_aligned("q_pe", p.q_pe, 16));
    MLA_TRY(require_aligned("kv_cache", p.kv_cache, 16));
    MLA_TRY(require_aligned("kpe_cache", p.kpe_cache, 16));
    MLA_TRY(require_aligned("v_cache", p.v_cache, 16));
    MLA_TRY(require_aligned("o", p.o, 16));
    MLA_TRY(require_aligned("lse", p.lse, 4));
    MLA_TRY(require_aligned("qo_indptr", p.qo_indptr, 4));
    MLA_TRY(require_aligned("kv_indptr", p.kv_indptr, 4));
    MLA_TRY(require_aligned("kv_page_indptr", p.kv_page_indptr, 4));
    return require_aligned("kv_page_indices", p.kv_page_indices, 4);
}

mla_status check_stride_alignment(const mla_decode_params& p) {
    int64_t q_bytes = dtype_storage_bytes(p.q_dtype), o_bytes = dtype_storage_bytes(p.o_dtype);
    MLA_TRY(require_stride_bytes_multiple("q_stride_head", p.q_stride_head, q_bytes));
    MLA_TRY(require_stride_bytes_multiple("q_stride_token", p.q_stride_token, q_bytes));
    if (split_q(p)) {
        MLA_TRY(require_stride_bytes_multiple("q_pe_stride_head", p.q_pe_stride_head, q_bytes));
        MLA_TRY(require_stride_bytes_multiple("q_pe_stride_token", p.q_pe_stride_token, q_bytes));
    }
    MLA_TRY(require_stride_bytes_multiple("o_stride_head", p.o_stride_head, o_bytes));
    MLA_TRY(require_stride_bytes_multiple("o_stride_token", p.o_stride_token, o_bytes));
    MLA_TRY(require_stride_bytes_multiple("kv_stride_slot", p.kv_stride_slot,
                                          dtype_storage_bytes(p.kv_dtype)));
    if (split_cache(p)) {
        MLA_TRY(require_stride_bytes_multiple("kpe_stride_slot", p.kpe_stride_slot,
                                              dtype_storage_bytes(p.kpe_dtype)));
    }
    if (p.v_cache != nullptr) {
        MLA_TRY(require_stride_bytes_multiple("v_stride_slot", p.v_stride_slot, 1));
    }
    return MLA_STATUS_SUCCESS;
}

mla_status check_alignment(const mla_decode_params& p) {
    MLA_TRY(check_pointer_alignment(p));
    return check_stride_alignment(p);
}

}  // namespace

int dtype_storage_bytes(mla_dtype dtype) {
    switch (raw_dtype(dtype)) {
        case MLA_DTYPE_BF16: return 2;
        case MLA_DTYPE_FP32: return 4;
        case MLA_DTYPE_FP8_E4M3FN:
        case MLA_DTYPE_FP8_E4M3FNUZ:
        case MLA_DTYPE_MXFP4: return 1;
    }
    return 0;
}

int64_t kv_row_elements(mla_dtype dtype) {
    return raw_dtype(dtype) == MLA_DTYPE_MXFP4 ? MLA_MXFP4_ROW_BYTES : MLA_HEAD_DIM_QK;
}

const char* dtype_name(mla_dtype dtype) { return dtype_name_of(raw_dtype(dtype)); }

bool is_fp8(mla_dtype dtype) { return is_fp8_value(raw_dtype(dtype)); }

mla_status check_page_list_overlap(const mla_decode_params& p, int64_t entries) {
    const Span pages = span_of("kv_page_indices", p.kv_page_indices, entries, sizeof(int32_t));
    MLA_TRY(check_no_overlap(o_span(p), pages));
    return check_no_overlap(lse_span(p), pages);
}

mla_status validate_params(const mla_decode_params* p, ValidateFor what) {
    if (p == nullptr) return fail(MLA_STATUS_NULL_POINTER, "params is NULL");
    MLA_TRY(check_reserved(*p));
    MLA_TRY(check_dtypes(*p, what));
    MLA_TRY(check_sizes(*p));
    MLA_TRY(check_geometry(*p));
    if (!is_workspace_query(what)) MLA_TRY(check_pointers(*p));
    MLA_TRY(check_strides(*p));
    MLA_TRY(check_values(*p, what));
    if (!is_workspace_query(what)) MLA_TRY(check_alignment(*p));
    return MLA_STATUS_SUCCESS;
}

}  // namespace mla
