// Argument validation shared by every ABI entry point that takes mla_decode_params.
#pragma once

#include "mla_decode.h"

namespace mla {

enum class ValidateFor {
    kWorkspaceQuery,  // host-value fields only; pointer fields are not looked at
    kDevice,          // mla_decode_fwd: pointers must be present and aligned (not dereferenced)
    kHostReference,   // mla_decode_reference: as kDevice, plus o_dtype FP32 is allowed
};

// Checks *p against the contract documented in mla_decode.h, in a fixed order (see
// validate.cpp), and returns the first violation's status with a message (mla::fail).
// Never dereferences a pointer field.
mla_status validate_params(const mla_decode_params* p, ValidateFor what);

// O and LSE against the first `entries` entries of kv_page_indices (the host reference passes
// kv_page_indptr[batch_size], a length only it can read: validate_params checks the first entry
// alone); a status and message where they overlap. Call after validate_params passed.
mla_status check_page_list_overlap(const mla_decode_params& p, int64_t entries);

// Bytes of one storage element of `dtype` (MXFP4: 1, a byte of two values); 0 if unknown.
int dtype_storage_bytes(mla_dtype dtype);

// Storage elements in one latent cache row of `dtype` (576, or 288 bytes for MXFP4).
int64_t kv_row_elements(mla_dtype dtype);

bool is_fp8(mla_dtype dtype);

// "BF16", "FP8_E4M3FN", ... for messages; "not an mla_dtype" for other values.
const char* dtype_name(mla_dtype dtype);

}  // namespace mla
