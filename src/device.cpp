// The GPU side of the ABI's calls: plan creation with the environment's switches, the checks
// of a run against its plan, prepare (the checks only) and run (attention kernels), and
// mla_decode_fwd / mla_decode_workspace_size through the plan cache. Device facts, plans, the
// cache and kernel parameters each have a file of their own (device_info, plan, plan_cache,
// kernel_params).
#include "device.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "error.h"
#include "kernel_params.h"
#include "plan_cache.h"
#include "planner.h"
#include "validate.h"

#if defined(MLA_BACKEND_CUDA) || defined(MLA_BACKEND_HIP) || defined(MLA_BACKEND_EMU)
#include "arch/runtime.h"
#include "splitkv/launch.h"
#endif

namespace mla {

#if !defined(MLA_BACKEND_CUDA) && !defined(MLA_BACKEND_HIP) && !defined(MLA_BACKEND_EMU)

namespace {
mla_status no_backend() {
    return fail(MLA_STATUS_NO_DEVICE,
                "libmla_decode was built without a GPU backend (MLA_BACKEND=none); use "
                "mla_decode_reference for the host computation");
}
}  // namespace

mla_status device_plan_create(const mla_decode_params&, DevicePlan*) { return no_backend(); }
mla_status device_prepare(const DevicePlan&, const mla_decode_params&, void*, size_t, void*) {
    return no_backend();
}
mla_status device_run(const DevicePlan&, const mla_decode_params&, void*, size_t, void*) {
    return no_backend();
}
mla_status device_workspace_size(const mla_decode_params&, size_t*) { return no_backend(); }
mla_status device_workspace_bound(const mla_decode_params&, size_t*) { return no_backend(); }
mla_status device_decode(const mla_decode_params&, void*, size_t, void*) { return no_backend(); }

#else

namespace {

// Environment switches, read once:
//   MLA_DECODE_DEBUG=1          print each call's route, plan and the reason to stderr
//   MLA_DECODE_NUM_SPLITS=<n>   force the split count (calibration of the cost model)
//   MLA_DECODE_ROWS=<n>         force the query rows per stage-1 CTA (16, 32, 64) where a
//                               candidate variant has them (calibration, as the split count;
//                               the GPU tests that check the planner's own choices skip those
//                               checks under it)
//   MLA_DECODE_STAGE1=<name>    force a stage-1 variant (mma16, wgmma) where it can serve; an
//                               unknown name fails plan creation (stage1_select.h)
//   MLA_DECODE_SCHEDULE=balanced  stage 1 on the balanced schedule (kernels/splitkv/balanced.h)
//                               where the plan's kernel has it (wgmma, e4m3fn caches); the
//                               planner does not choose it by itself yet. Other values: the
//                               uniform split layout.
//   MLA_DECODE_PDL=0            launch the reduce plainly after stage 1. Any other value, or
//                               none: as a programmatic dependent of stage 1 where the device,
//                               the loaded reduce and CUDA allow it (plan.cpp), the default
//                               since it was measured on an H200 (competition geomean 52.4 ->
//                               51.2 us, bench/ab.py)
struct EnvSwitches {
    bool debug = false;
    PlanOptions plan;
    EnvSwitches() {
        const char* d = std::getenv("MLA_DECODE_DEBUG");
        debug = d != nullptr && d[0] != '\0' && std::strcmp(d, "0") != 0;
        const char* s = std::getenv("MLA_DECODE_NUM_SPLITS");
        if (s != nullptr) plan.forced_splits = std::atoi(s);
        const char* rows = std::getenv("MLA_DECODE_ROWS");
        if (rows != nullptr) plan.forced_rows = std::atoi(rows);
        plan.stage1 = parse_stage1_request(std::getenv("MLA_DECODE_STAGE1"));
        const char* pdl = std::getenv("MLA_DECODE_PDL");
        plan.dependent_launch = pdl == nullptr || std::strcmp(pdl, "0") != 0;
        const char* schedule = std::getenv("MLA_DECODE_SCHEDULE");
        plan.balanced = schedule != nullptr && std::strcmp(schedule, "balanced") == 0;
        const char* tma = std::getenv("MLA_DECODE_TMA");
        plan.tma = tma == nullptr || std::strcmp(tma, "0") != 0;
    }
};
const EnvSwitches& env() {
    static const EnvSwitches switches;
    return switches;
}

// The options every new plan is made with; an unknown MLA_DECODE_STAGE1 fails here, before the
// device is looked at.
mla_status plan_options(const PlanOptions** options) {
    MLA_TRY(check_stage1_request(env().plan.stage1));
    *options = &env().plan;
    return MLA_STATUS_SUCCESS;
}

mla_status check_run(const DevicePlan& plan, const mla_decode_params& p, void* workspace,
                     size_t workspace_bytes) {
    int dev = 0;
    if (gpu::get_device(&dev) != gpu::kSuccess) dev = -1;
    MLA_TRY(plan_accepts(plan, p, dev));
    const size_t need = plan.workspace_bytes;
    if (workspace_bytes < need)
        return fail(MLA_STATUS_WORKSPACE_TOO_SMALL,
                    "workspace_bytes %zu is smaller than the %zu bytes this problem needs "
                    "(mla_decode_workspace_size)",
                    workspace_bytes, need);
    if (need > 0 && workspace == nullptr)
        return fail(MLA_STATUS_NULL_POINTER, "workspace is NULL but %zu bytes are needed", need);
    if (reinterpret_cast<uintptr_t>(workspace) % kWorkspaceAlignment != 0)
        return fail(MLA_STATUS_MISALIGNED, "workspace must be %zu-byte aligned",
                    kWorkspaceAlignment);
    return MLA_STATUS_SUCCESS;
}

// use(options, device) with the process's plan options and the current device's facts.
template <typename Use>
mla_status on_current_device(Use&& use) {
    const PlanOptions* options = nullptr;
    MLA_TRY(plan_options(&options));
    DeviceInfo device;
    MLA_TRY(current_device_info(&device, options->dependent_launch));
    return use(*options, device);
}

}  // namespace

mla_status device_plan_create(const mla_decode_params& p, DevicePlan* plan) {
    return on_current_device([&](const PlanOptions& options, const DeviceInfo& device) {
        return plan_create(p, device, options, plan);
    });
}

mla_status device_prepare(const DevicePlan& plan, const mla_decode_params& p, void* workspace,
                          size_t workspace_bytes, void* stream) {
    // Nothing is queued: stage 1 and the reduce take the split layout from the indptrs and the
    // plan themselves (kernels/splitkv/work.h). The checks stay, so that a step's prepare still
    // refuses what its runs would.
    (void)stream;
    return check_run(plan, p, workspace, workspace_bytes);
}

mla_status device_run(const DevicePlan& plan, const mla_decode_params& p, void* workspace,
                      size_t workspace_bytes, void* stream) {
    splitkv::note_stage1_tma(false);
    MLA_TRY(check_run(plan, p, workspace, workspace_bytes));
    const gpu::error_t e = splitkv::launch_attention(
        kernel_params(plan, p, workspace), static_cast<splitkv::Stage1Variant>(plan.variant),
        static_cast<splitkv::KvFormat>(plan.kv_format), plan.dependent_launch,
        static_cast<gpu::stream_t>(stream));
    if (env().debug)
        std::fprintf(stderr, "[mla_decode] %s%s\n", plan.description,
                     splitkv::last_stage1_tma() ? "; stage 1 had TMA maps (whole tiles by TMA)"
                                                : "");
    if (e != gpu::kSuccess)
        return fail(MLA_STATUS_DEVICE_ERROR, "kernel launch failed: %s", gpu::error_string(e));
    return MLA_STATUS_SUCCESS;
}

mla_status device_workspace_size(const mla_decode_params& p, size_t* bytes) {
    const PlanOptions* options = nullptr;
    MLA_TRY(plan_options(&options));
    DevicePlan plan;
    MLA_TRY(cached_plan(p, *options, &plan));
    *bytes = plan.workspace_bytes;
    return MLA_STATUS_SUCCESS;
}

mla_status device_workspace_bound(const mla_decode_params& max_shape, size_t* bytes) {
    return on_current_device([&](const PlanOptions& options, const DeviceInfo& device) {
        return plan_workspace_bound(max_shape, device, options, bytes);
    });
}

mla_status device_decode(const mla_decode_params& p, void* workspace, size_t workspace_bytes,
                         void* stream) {
    const PlanOptions* options = nullptr;
    MLA_TRY(plan_options(&options));
    DevicePlan plan;
    MLA_TRY(cached_plan(p, *options, &plan));
    MLA_TRY(device_prepare(plan, p, workspace, workspace_bytes, stream));
    return device_run(plan, p, workspace, workspace_bytes, stream);
}

#endif

}  // namespace mla
