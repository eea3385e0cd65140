#include "plan_cache.h"

#include "arch/runtime.h"
#include "device_info.h"
#include "error.h"

#if defined(MLA_HAVE_GPU_RUNTIME)
namespace mla {

mla_status cached_plan(const mla_decode_params& p, const PlanOptions& options, DevicePlan* out) {
    static PlanCache cache;
    DeviceInfo device;
    MLA_TRY(current_device_info(&device, options.dependent_launch));
    return cache.get(
        key_of(p, device.device),
        [&](DevicePlan* made) { return plan_create(p, device, options, made); }, out);
}

}  // namespace mla
#endif
