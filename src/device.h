// The GPU side of the ABI: planning, workspace layout and kernel dispatch.
#pragma once

#include <cstddef>

#include "mla_decode.h"

namespace mla {

// Expects `p` validated with ValidateFor::kWorkspaceQuery.
mla_status device_workspace_size(const mla_decode_params& p, size_t* bytes);

// Expects `p` validated with ValidateFor::kDevice. Checks the workspace itself.
mla_status device_decode(const mla_decode_params& p, void* workspace, size_t workspace_bytes,
                         void* stream);

}  // namespace mla
