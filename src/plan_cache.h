// The process-wide plan cache behind mla_decode_fwd and mla_decode_workspace_size.
#pragma once

#include "mla_decode.h"
#include "plan.h"

namespace mla {

// The plan for `p` (validated for a workspace query) on the current device: a cached one of
// the same key, or a new one made with `options` and kept. GPU builds only.
mla_status cached_plan(const mla_decode_params& p, const PlanOptions& options, DevicePlan* out);

}  // namespace mla
