// What the library needs to know of the current GPU: its ordinal, compute units, architecture
// and shared-memory budget. Queried from the runtime once per device (device_info.cpp).
#pragma once

#include <mutex>

#include "mla_decode.h"

namespace mla {

struct DeviceInfo {
    int device = -1;                     // runtime ordinal (the current device)
    int multiprocessors = 0;             // NVIDIA SMs, AMD compute units
    bool amd = false;                    // vendor: AMD (HIP build) or NVIDIA (CUDA build)
    int cc_major = 0, cc_minor = 0;      // compute capability (NVIDIA; HIP's stand-in on AMD)
    char arch_name[64] = {};             // "sm_90" on NVIDIA; gcnArchName on AMD ("gfx942:...")
    int max_shared_bytes_per_block = 0;  // NVIDIA: the opt-in limit; AMD: LDS per workgroup
    int shared_bytes_per_multiprocessor = 0;  // what one SM's (CU's) resident blocks share
    int reserved_shared_bytes_per_block = 0;  // the runtime's share of each resident block
    bool dependent_reduce = false;       // the reduce may be a programmatic dependent launch
                                         // here (splitkv::reduce_can_be_dependent); only set
                                         // when current_device_info is asked for it
};

// Device facts by ordinal, each queried once and shared by every thread: reads and the store
// of a new entry hold the mutex, queries run outside it (two threads missing on one device
// both query it; the facts are the same). Ordinals outside [0, kMaxDevices) are queried every
// time. DeviceInfo::dependent_reduce is a second, lazy fact (dependent_reduce below), queried
// only for callers that ask for it. Host code with no GPU dependency, so host tests run it
// under ThreadSanitizer.
class DeviceInfoCache {
public:
    static constexpr int kMaxDevices = 64;

    // Whether the reduce may be a programmatic dependent launch on device `dev`: the kept
    // answer, or query(dev) (an int -> bool callable), kept. Separate from get so that a process
    // with MLA_DECODE_PDL=0 never makes that query, and one without it makes it once per device.
    template <typename Query>
    bool dependent_reduce(int dev, Query&& query) {
        const bool cacheable = dev >= 0 && dev < kMaxDevices;
        if (cacheable) {
            std::lock_guard<std::mutex> lock(mutex_);
            if (dependent_known_[dev]) return dependent_reduce_[dev];
        }
        const bool fresh = query(dev);
        if (cacheable) {
            std::lock_guard<std::mutex> lock(mutex_);
            dependent_known_[dev] = true;
            dependent_reduce_[dev] = fresh;
        }
        return fresh;
    }

    // *info = the facts of device `dev`: kept ones, or query(dev, info) (an int, DeviceInfo*
    // -> mla_status callable), kept when it succeeds.
    template <typename Query>
    mla_status get(int dev, Query&& query, DeviceInfo* info) {
        const bool cacheable = dev >= 0 && dev < kMaxDevices;
        if (cacheable) {
            std::lock_guard<std::mutex> lock(mutex_);
            if (cached_[dev].device == dev) {
                *info = cached_[dev];
                return MLA_STATUS_SUCCESS;
            }
        }
        DeviceInfo fresh;
        const mla_status status = query(dev, &fresh);
        if (status != MLA_STATUS_SUCCESS) return status;
        if (cacheable) {
            std::lock_guard<std::mutex> lock(mutex_);
            cached_[dev] = fresh;
        }
        *info = fresh;
        return MLA_STATUS_SUCCESS;
    }

private:
    std::mutex mutex_;
    DeviceInfo cached_[kMaxDevices];  // dependent_reduce false in these: kept below
    bool dependent_known_[kMaxDevices] = {};
    bool dependent_reduce_[kMaxDevices] = {};
};

// *info for the current device (cached per device); dependent_reduce is set only with
// query_dependent_reduce (plan options with PDL on: unless MLA_DECODE_PDL=0), queried once per
// device and kept too. NO_DEVICE without a GPU, DEVICE_ERROR when the runtime fails. GPU
// builds only.
mla_status current_device_info(DeviceInfo* info, bool query_dependent_reduce = false);

}  // namespace mla
