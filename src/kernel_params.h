// The kernels' parameters (kernels/splitkv/params.h) for one run of a plan.
#pragma once

#include "mla_decode.h"
#include "plan.h"
#include "splitkv/params.h"

namespace mla {

// Params of a run of `plan` with the validated `p`; the split path's records point into
// `workspace` at the plan's offsets.
splitkv::Params kernel_params(const DevicePlan& plan, const mla_decode_params& p, void* workspace);

}  // namespace mla
