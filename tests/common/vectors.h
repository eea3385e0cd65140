// Loader of the known-answer vectors in tests/data/vectors (see its README.md): each case is a
// folder with manifest.txt ("key = value" lines, "file NAME = DESCRIPTION shape=AxB" lines)
// and raw little-endian .bin files. No GoogleTest dependency; errors throw std::runtime_error.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mla_decode.h"
#include "mla_problem.h"

namespace mla_test {

struct VectorCase {
    // ---- manifest fields ----
    std::string name;             // folder name
    std::string comment;          // the manifest's '#' line
    int batch = 0;
    int heads = 0;
    int d_qk = 0;
    int d_v = 0;
    int total_q = 0;
    float sm_scale = 0.0f;
    std::string kv_format;        // bf16, fp8_e4m3fn, fp8_e4m3fnuz, mxfp4, mxfp4_k_fp8_v
    int page_size = 1;
    int64_t total_cache_slots = 0;
    std::vector<int> q_lens, kv_lens;

    // ---- decoded from kv_format and the file descriptions ----
    mla_dtype q_dtype = MLA_DTYPE_BF16;
    mla_dtype kv_dtype = MLA_DTYPE_BF16;
    mla_dtype v_dtype = MLA_DTYPE_NONE;  // FP8_* for mxfp4_k_fp8_v

    // ---- raw buffers ----
    std::vector<uint8_t> q;                 // (total_q, heads, 576) of q_dtype
    std::vector<int32_t> qo_indptr, kv_indptr;
    std::vector<int32_t> page_indptr, page_indices;  // empty when contiguous
    std::vector<uint8_t> kv;                // (slots, kv_stride_slot) storage elements
    int64_t kv_stride_slot = 0;             // elements (bytes for FP8 / MXFP4)
    float kv_scale = 1.0f;                  // FP8 cache
    std::vector<uint8_t> kv_block_scales;   // MXFP4: (padded rows, kv_block_scale_stride)
    int64_t kv_block_scale_stride = 0;
    std::vector<uint8_t> v;                 // mxfp4_k_fp8_v: (slots, v_stride_slot) FP8
    int64_t v_stride_slot = 0;
    float v_scale = 1.0f;

    // ---- expected outputs (fp64 math, cast to fp32) ----
    std::vector<float> expected_o;    // (total_q, heads, 512)
    std::vector<float> expected_lse;  // (total_q, heads); -inf when nothing is visible

    bool paged() const { return !page_indptr.empty(); }
    int max_q_len() const;
    int max_kv_len() const;

    // The case's inputs as a HostProblem (copies of the buffers, packed Q/O rows), so that
    // everything built for random problems (DeviceProblem, ...) serves the vectors too.
    HostProblem to_problem() const;

    // Params over this case's host buffers, writing dense O ((total_q, heads, 512) of o_dtype)
    // to `o` and LSE to `lse` (may be NULL).
    mla_decode_params host_params(void* o, mla_dtype o_dtype, float* lse) const;
};

// Loads MLA_TEST_DATA_DIR/<name>. Throws std::runtime_error on a missing or malformed file.
VectorCase load_vector_case(const std::string& name);

// The case folders under MLA_TEST_DATA_DIR (those holding a manifest.txt), sorted.
std::vector<std::string> vector_case_names();

// MLA_TEST_DATA_DIR as compiled in.
std::string vector_data_dir();

}  // namespace mla_test
