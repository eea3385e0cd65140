// The GPU side of the ABI's calls (device.cpp): plan creation, prepare and run of a plan, and
// the one-shot calls through the process-wide plan cache.
#pragma once

#include <cstddef>
#include <cstdint>

#include "mla_decode.h"
#include "plan.h"  // DevicePlan

namespace mla {

// Expects `p` validated with ValidateFor::kWorkspaceQuery. NO_DEVICE without a GPU backend.
mla_status device_plan_create(const mla_decode_params& p, DevicePlan* plan);

// Expects `p` validated with ValidateFor::kDevice. Both check that p has the plan's shape and
// the workspace is large enough and aligned.
mla_status device_prepare(const DevicePlan& plan, const mla_decode_params& p, void* workspace,
                          size_t workspace_bytes, void* stream);
mla_status device_run(const DevicePlan& plan, const mla_decode_params& p, void* workspace,
                      size_t workspace_bytes, void* stream);

// mla_decode_workspace_size / mla_decode_fwd: a plan from the process-wide cache.
mla_status device_workspace_size(const mla_decode_params& p, size_t* bytes);
// mla_decode_workspace_bound: plan_workspace_bound on the current device with the process's
// plan options. Expects `max_shape` validated with ValidateFor::kWorkspaceQuery.
mla_status device_workspace_bound(const mla_decode_params& max_shape, size_t* bytes);
mla_status device_decode(const mla_decode_params& p, void* workspace, size_t workspace_bytes,
                         void* stream);

}  // namespace mla
