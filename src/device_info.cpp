#include "device_info.h"

#include <cstdio>

#include "arch/runtime.h"
#include "error.h"
#if defined(MLA_HAVE_GPU_RUNTIME)
#include "splitkv/launch.h"  // reduce_can_be_dependent
#endif

namespace mla {

#if defined(MLA_HAVE_GPU_RUNTIME)

namespace {

// The attributes of device `dev` (everything but the ordinal checks).
mla_status query(int dev, DeviceInfo* info) {
    info->device = dev;
    gpu::error_t e = gpu::multiprocessor_count(&info->multiprocessors, dev);
    if (e != gpu::kSuccess || info->multiprocessors <= 0)
        return fail(MLA_STATUS_DEVICE_ERROR, "querying the multiprocessor count failed: %s",
                    gpu::error_string(e));
    e = gpu::compute_capability(&info->cc_major, &info->cc_minor, dev);
    if (e == gpu::kSuccess)
        e = gpu::max_shared_bytes_per_block(&info->max_shared_bytes_per_block, dev);
    if (e == gpu::kSuccess)
        e = gpu::shared_bytes_per_multiprocessor(&info->shared_bytes_per_multiprocessor, dev);
    if (e == gpu::kSuccess)
        e = gpu::reserved_shared_bytes_per_block(&info->reserved_shared_bytes_per_block, dev);
#if defined(MLA_BACKEND_HIP) || (defined(MLA_BACKEND_EMU) && !defined(MLA_EMU_SM90))
    info->amd = true;
    if (e == gpu::kSuccess) e = gpu::gcn_arch_name(info->arch_name, sizeof(info->arch_name), dev);
#else
    std::snprintf(info->arch_name, sizeof(info->arch_name), "sm_%d%d", info->cc_major,
                  info->cc_minor);
#endif
    if (e != gpu::kSuccess)
        return fail(MLA_STATUS_DEVICE_ERROR, "querying the device architecture failed: %s",
                    gpu::error_string(e));
    return MLA_STATUS_SUCCESS;
}

}  // namespace

mla_status current_device_info(DeviceInfo* info, bool query_dependent_reduce) {
    int devices = 0;
    gpu::error_t e = gpu::device_count(&devices);
    if (e != gpu::kSuccess || devices <= 0)
        // A machine without the GPU driver makes the CUDA runtime say "driver version is
        // insufficient": name the possibilities rather than let that read as a version problem.
        return fail(MLA_STATUS_NO_DEVICE,
                    "no GPU device available: no GPU driver, no device, or a driver older than "
                    "the runtime (the runtime says: %s)",
                    e != gpu::kSuccess ? gpu::error_string(e) : "0 devices");
    int dev = 0;
    e = gpu::get_device(&dev);
    if (e != gpu::kSuccess)
        return fail(MLA_STATUS_DEVICE_ERROR, "getting the current device failed: %s",
                    gpu::error_string(e));
    static DeviceInfoCache cache;
    MLA_TRY(cache.get(dev, query, info));
    // Only when asked (by plan options with PDL on: a process with MLA_DECODE_PDL=0 makes no
    // such query), and once per device: the reduce's attributes and the runtime and driver
    // versions do not change in a process, and plan creation and mla_decode_fwd's plan lookup
    // (plan_cache.cpp, every call) stay cheap.
    if (query_dependent_reduce && !info->amd && info->cc_major >= 9)
        info->dependent_reduce =
            cache.dependent_reduce(dev, [](int) { return splitkv::reduce_can_be_dependent(); });
    return MLA_STATUS_SUCCESS;
}

#endif

}  // namespace mla
