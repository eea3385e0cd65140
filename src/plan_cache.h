// The process-wide plan cache behind mla_decode_fwd and mla_decode_workspace_size.
#pragma once

#include <mutex>

#include "mla_decode.h"
#include "plan.h"

namespace mla {

// A few recent plans by key (an engine alternates between a handful of shapes per step),
// replaced round-robin. Shared by every thread: lookups and insertions hold the mutex, plans are
// made outside it (two threads missing on one key both make it; either copy is kept). Host code
// with no GPU dependency, so host tests run it under ThreadSanitizer.
class PlanCache {
public:
    static constexpr int kEntries = 32;

    // *out = the kept plan of `key`, or make(out) (a DevicePlan* -> mla_status callable), kept
    // when it succeeds.
    template <typename Make>
    mla_status get(const PlanKey& key, Make&& make, DevicePlan* out) {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            for (int i = 0; i < used_; ++i) {
                if (entries_[i].key == key) {
                    *out = entries_[i];
                    return MLA_STATUS_SUCCESS;
                }
            }
        }
        DevicePlan made;
        const mla_status status = make(&made);
        if (status != MLA_STATUS_SUCCESS) return status;
        *out = made;
        std::lock_guard<std::mutex> lock(mutex_);
        if (used_ < kEntries) {
            entries_[used_++] = made;
        } else {
            entries_[next_] = made;
            next_ = (next_ + 1) % kEntries;
        }
        return MLA_STATUS_SUCCESS;
    }

private:
    std::mutex mutex_;
    DevicePlan entries_[kEntries];
    int used_ = 0, next_ = 0;
};

// The plan for `p` (validated for a workspace query) on the current device: a cached one of
// the same key, or a new one made with `options` and kept. Plans are found by key: options are
// the process's, the same for every entry. GPU builds only.
mla_status cached_plan(const mla_decode_params& p, const PlanOptions& options, DevicePlan* out);

}  // namespace mla
