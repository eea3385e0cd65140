// The kernels' parameters (kernels/splitkv/params.h) for one run of a plan.
#pragma once

#include "mla_decode.h"
#include "plan.h"
#include "splitkv/params.h"

namespace mla {

// Params::reduce_rows_early: the reduce loads every split's partial O row beside the LSEs (one
// round trip to L2, not two), and a split past its element's last writes its rows as zeros for
// it. At worst (every element of one split) that is total_q x heads x (max_splits - 1) rows of
// 2 KB written and then read for nothing, so it is allowed only where that is within
// kReduceRowsEarlyBytes (4 MiB each way, ~1-3 us of traffic at worst), never in batch-invariant
// mode (its split count follows the longest element, whatever the batch) nor on the balanced
// schedule (compact slots, its own reduce) nor past kReduceRowsEarlyMaxSplits splits.
inline constexpr double kReduceRowsEarlyBytes = 4.0 * 1024 * 1024;
bool reduce_rows_early(const DevicePlan& plan, const mla_decode_params& p);

// Params of a run of `plan` with the validated `p`; the split path's records point into
// `workspace` at the plan's offsets.
splitkv::Params kernel_params(const DevicePlan& plan, const mla_decode_params& p, void* workspace);

}  // namespace mla
