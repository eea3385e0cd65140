// Parameters of the split-KV family (stage 1 + LSE reduce). Plain data, passed by value to the
// kernels, never part of the public ABI. Host- and device-includable.
#pragma once

#include <cstdint>

namespace mla::splitkv {

inline constexpr int kHeadDimQk = 576;
inline constexpr int kHeadDimV = 512;
inline constexpr int kHeadsPerCta = 16;  // one matrix-atom row block of query heads

enum class KvFormat { kBf16, kFp8E4M3FN, kFp8E4M3FNUZ };

struct Params {
    // Q: bf16, row of (token t, head h) at q + t * q_stride_token + h * q_stride_head.
    const uint16_t* q;
    int64_t q_stride_token;  // elements
    int64_t q_stride_head;   // elements

    // Latent cache: row `slot` at kv + slot * kv_stride_bytes (576 elements of the format).
    const uint8_t* kv;
    int64_t kv_stride_bytes;
    float kv_scale;  // fp8 dequant scale (1 for bf16)

    // Batch layout (device). page_indptr == nullptr: contiguous, token j of b in slot
    // kv_indptr[b] + j. Otherwise slot = page_indices[page_indptr[b] + j / page_size] *
    // page_size + j % page_size.
    const int32_t* qo_indptr;   // (batch + 1)
    const int32_t* kv_indptr;   // (batch + 1)
    const int32_t* page_indptr;
    const int32_t* page_indices;
    int32_t page_size;

    int32_t batch;
    int32_t num_splits;  // CTAs per batch element in stage 1
    int32_t total_q;
    float sm_scale;

    // Stage-1 outputs, read by the reduce (workspace):
    //   partial_o  [total_q][num_splits][16][512] fp32, already divided by its split's sum
    //   partial_lse[total_q][num_splits][16] fp32, log2 domain (-inf: split saw no token)
    float* partial_o;
    float* partial_lse;

    // Final outputs: O bf16 at o + t * o_stride_token + h * o_stride_head; lse (may be null)
    // natural log, [total_q][16].
    uint16_t* o;
    int64_t o_stride_token;
    int64_t o_stride_head;
    float* lse;
};

}  // namespace mla::splitkv
