#include "plan_cache.h"

#include <mutex>

#include "arch/runtime.h"
#include "device_info.h"
#include "error.h"

#if defined(MLA_HAVE_GPU_RUNTIME)
namespace mla {
namespace {

// A few recent shapes (an engine alternates between a handful per step), replaced
// round-robin. Plans are found by key: options are the process's, the same for every entry.
class PlanCache {
public:
    mla_status get(const mla_decode_params& p, const PlanOptions& options, DevicePlan* out) {
        DeviceInfo device;
        MLA_TRY(current_device_info(&device));
        const PlanKey key = key_of(p, device.device);
        {
            std::lock_guard<std::mutex> lock(mutex_);
            for (int i = 0; i < used_; ++i) {
                if (entries_[i].key == key) {
                    *out = entries_[i];
                    return MLA_STATUS_SUCCESS;
                }
            }
        }
        MLA_TRY(plan_create(p, device, options, out));
        std::lock_guard<std::mutex> lock(mutex_);
        if (used_ < kEntries) {
            entries_[used_++] = *out;
        } else {
            entries_[next_] = *out;
            next_ = (next_ + 1) % kEntries;
        }
        return MLA_STATUS_SUCCESS;
    }

private:
    static constexpr int kEntries = 32;
    std::mutex mutex_;
    DevicePlan entries_[kEntries];
    int used_ = 0, next_ = 0;
};

}  // namespace

mla_status cached_plan(const mla_decode_params& p, const PlanOptions& options, DevicePlan* out) {
    static PlanCache cache;
    return cache.get(p, options, out);
}

}  // namespace mla
#endif
