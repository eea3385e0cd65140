#include "kernel_params.h"

#include <cstdint>

#include "validate.h"

namespace mla {

bool reduce_rows_early(const DevicePlan& plan, const mla_decode_params& p) {
    if (plan.num_splits <= 1 || plan.num_splits > splitkv::kReduceRowsEarlyMaxSplits ||
        plan.balanced || (p.flags & MLA_DECODE_FLAG_BATCH_INVARIANT) != 0)
        return false;
    const double traffic = static_cast<double>(p.total_q) * p.num_heads * (plan.num_splits - 1) *
                           splitkv::kHeadDimV * sizeof(float);
    return traffic <= kReduceRowsEarlyBytes;
}

splitkv::Params kernel_params(const DevicePlan& plan, const mla_decode_params& p, void* workspace) {
    splitkv::Params k{};
    k.q = p.q;
    k.q_format = p.q_dtype == MLA_DTYPE_FP8_E4M3FN     ? splitkv::QFormat::kFp8E4M3FN
                 : p.q_dtype == MLA_DTYPE_FP8_E4M3FNUZ ? splitkv::QFormat::kFp8E4M3FNUZ
                                                       : splitkv::QFormat::kBf16;
    k.q_scale = p.q_dtype == MLA_DTYPE_BF16 ? 1.0f : p.q_scale;
    k.fp8_mma = plan.fp8_mma;
    k.q_stride_token = p.q_stride_token;
    k.q_stride_head = p.q_stride_head;
    // The rope part of Q: q_pe (split Q form), or the last 64 dims of q's rows.
    const int q_bytes = dtype_storage_bytes(p.q_dtype);
    const bool split_q = p.q_pe != nullptr;
    k.q_pe = split_q ? p.q_pe
                     : static_cast<const void*>(static_cast<const uint8_t*>(p.q) +
                                                MLA_KV_LORA_RANK * q_bytes);
    k.q_pe_stride_token = split_q ? p.q_pe_stride_token : p.q_stride_token;
    k.q_pe_stride_head = split_q ? p.q_pe_stride_head : p.q_stride_head;
    k.kv = static_cast<const uint8_t*>(p.kv_cache);
    k.kv_stride_bytes = p.kv_stride_slot * dtype_storage_bytes(p.kv_dtype);
    // The rope part of the cache rows: kpe_cache (split cache form, of the latent's dtype on the
    // GPU), or the bytes past the latent's in kv_cache's rows (MXFP4: the packed bytes of dims
    // 512..575; their scales stay in kv_block_scales).
    const bool split_cache = p.kpe_dtype != 0;
    const int64_t latent_bytes = p.kv_dtype == MLA_DTYPE_MXFP4
                                     ? MLA_KV_LORA_RANK / 2
                                     : MLA_KV_LORA_RANK * dtype_storage_bytes(p.kv_dtype);
    k.kpe = split_cache ? static_cast<const uint8_t*>(p.kpe_cache)
                        : (k.kv == nullptr ? nullptr : k.kv + latent_bytes);
    k.kpe_stride_bytes = split_cache ? p.kpe_stride_slot * dtype_storage_bytes(p.kpe_dtype)
                                     : k.kv_stride_bytes;
    k.kv_scale = is_fp8(p.kv_dtype) ? p.kv_scale : 1.0f;
    k.kv_scales = p.kv_block_scales;
    k.kv_scale_stride = p.kv_block_scale_stride;
    const uintptr_t scales = reinterpret_cast<uintptr_t>(p.kv_block_scales);
    const int64_t stride = p.kv_block_scale_stride;
    k.scale_copy = (scales % 16 == 0 && stride % 16 == 0)  ? splitkv::ScaleCopy::k16Bytes
                   : (scales % 4 == 0 && stride % 4 == 0) ? splitkv::ScaleCopy::k4Bytes
                                                          : splitkv::ScaleCopy::kBytes;
    k.v = static_cast<const uint8_t*>(p.v_cache);
    k.v_stride_bytes = p.v_stride_slot;
    k.v_scale = p.v_scale;
    k.qo_indptr = p.qo_indptr;
    k.kv_indptr = p.kv_indptr;
    k.page_indptr = p.kv_page_indptr;
    k.page_indices = p.kv_page_indices;
    k.page_size = p.page_size;
    k.num_slots = p.num_slots;
    k.batch = p.batch_size;
    k.total_q = p.total_q;
    k.num_heads = p.num_heads;
    k.row_groups = plan.row_groups;
    k.rows_per_cta = plan.rows_per_cta;
    k.max_splits = plan.num_splits;
    k.tiles_per_split = plan.tiles_per_split;
    k.tma = plan.tma;
    k.sm_scale = p.sm_scale;
    char* ws = static_cast<char*>(workspace);
    if (plan.num_splits > 1 || plan.balanced) {
        k.split_kv = true;
        k.partial_o = reinterpret_cast<float*>(ws + plan.partial_o_offset);
        k.partial_lse = reinterpret_cast<float*>(ws + plan.partial_lse_offset);
        k.balanced = plan.balanced;
        k.balanced_ctas = plan.balanced_ctas;
        if (plan.balanced)
            k.partial_meta = reinterpret_cast<int32_t*>(ws + plan.partial_meta_offset);
        k.dependent_reduce = plan.dependent_launch;
        k.reduce_shared_bytes = plan.reduce_shared_bytes;
        k.reduce_shared_limit = plan.reduce_shared_limit;
        k.reduce_rows_early = reduce_rows_early(plan, p);
    }
    k.o = static_cast<uint16_t*>(p.o);
    k.o_stride_token = p.o_stride_token;
    k.o_stride_head = p.o_stride_head;
    k.lse = p.lse;
    k.lse_stride_token = p.lse_stride_token != 0 ? p.lse_stride_token : p.num_heads;
    return k;
}

}  // namespace mla
