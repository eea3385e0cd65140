// Test and benchmark inputs: random MLA decode problems in every SPEC format, held in host
// memory, plus the host reference (through the C ABI) to compare GPU results with.
// Shared by tests/ and bench/ (library target mla_test_common); no GoogleTest dependency.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mla_decode.h"

namespace mla_test {

struct ProblemSpec {
    int num_heads = 16;
    std::vector<int> q_lens;   // per batch element; empty = 1 for every element
    std::vector<int> kv_lens;  // per batch element; its size is the batch size
    mla_dtype q_dtype = MLA_DTYPE_BF16;   // BF16, or FP8_* (pre-quantized, per-tensor scale)
    mla_dtype kv_dtype = MLA_DTYPE_BF16;  // BF16, FP8_E4M3FN, FP8_E4M3FNUZ, MXFP4
    // With kv_dtype MXFP4: V from a separate FP8 cache of this dtype (FP8_*), or 0 = V from
    // the MXFP4 cache itself.
    mla_dtype v_dtype = static_cast<mla_dtype>(0);
    int page_size = 1;
    bool paged = false;          // CSR page table with shuffled pages (and spare pages)
    bool poison_unused = true;   // slots no sequence uses hold NaN codes (a stray read shows)
    double q_std = 1.0;          // Q = randn * q_std (before quantization)
    double kv_std = 1.0;         // cache = randn * kv_std (before quantization)
    float sm_scale = 0.041666668f;  // 1/sqrt(576)
    uint64_t seed = 1;
    // Row strides in elements; 0 = packed (q: heads*576, o: heads*512).
    int64_t q_stride_token = 0;
    int64_t o_stride_token = 0;
};

// One problem in host memory. Storage is raw bytes in the SPEC layouts.
struct HostProblem {
    ProblemSpec spec;
    int batch_size = 0;
    int total_q = 0;
    int max_q_len = 0;
    int max_kv_len = 0;
    int64_t num_slots = 0;
    int64_t q_stride_token = 0;  // elements
    int64_t o_stride_token = 0;  // elements

    std::vector<uint8_t> q;          // (total_q, q_stride_token) elements of q_dtype
    float q_scale = 1.0f;
    std::vector<uint8_t> kv;         // (num_slots, kv_stride_slot) storage elements
    int64_t kv_stride_slot = 0;      // storage elements (bytes for FP8 / MXFP4)
    float kv_scale = 1.0f;
    std::vector<uint8_t> kv_block_scales;  // MXFP4: (rows padded, kv_block_scale_stride)
    int64_t kv_block_scale_stride = 0;
    std::vector<uint8_t> v;          // separate FP8 V cache or empty
    int64_t v_stride_slot = 0;
    float v_scale = 1.0f;
    std::vector<int32_t> qo_indptr, kv_indptr;
    std::vector<int32_t> kv_page_indptr, kv_page_indices;  // empty when contiguous

    // mla_decode_params whose pointers are this object's host buffers, writing O to `o`
    // (o_dtype, (total_q, heads, 512) with o_stride_token) and LSE to `lse` (may be NULL).
    mla_decode_params host_params(void* o, mla_dtype o_dtype, float* lse) const;

    size_t o_elements() const;    // total_q * o_stride_token
    size_t lse_elements() const;  // total_q * num_heads
    // Bytes one decode call must move at least: cache rows read once, Q read, O written.
    double min_bytes_moved() const;
};

HostProblem make_problem(const ProblemSpec& spec);

// Host reference through mla_decode_reference, FP32 O (dense: row t, head h at
// (t * heads + h) * 512) and LSE. Aborts the test program (throws std::runtime_error) if the
// reference call fails.
struct Reference {
    std::vector<float> o;
    std::vector<float> lse;
};
Reference run_reference(const HostProblem& problem);

// bf16 bits -> float (exact).
float bf16_bits_to_float(uint16_t bits);

}  // namespace mla_test
