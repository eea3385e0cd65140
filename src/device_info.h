// What the library needs to know of the current GPU: its ordinal, compute units, architecture
// and shared-memory budget. Queried from the runtime once per device (device_info.cpp).
#pragma once

#include "mla_decode.h"

namespace mla {

struct DeviceInfo {
    int device = -1;                     // runtime ordinal (the current device)
    int multiprocessors = 0;             // NVIDIA SMs, AMD compute units
    bool amd = false;                    // vendor: AMD (HIP build) or NVIDIA (CUDA build)
    int cc_major = 0, cc_minor = 0;      // compute capability (NVIDIA; HIP's stand-in on AMD)
    char arch_name[64] = {};             // "sm_90" on NVIDIA; gcnArchName on AMD ("gfx942:...")
    int max_shared_bytes_per_block = 0;  // NVIDIA: the opt-in limit; AMD: LDS per workgroup
};

// *info for the current device (cached per device). NO_DEVICE without a GPU, DEVICE_ERROR when
// the runtime fails. GPU builds only.
mla_status current_device_info(DeviceInfo* info);

}  // namespace mla
