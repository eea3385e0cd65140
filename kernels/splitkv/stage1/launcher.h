// Host side of launching a stage-1 kernel, for every variant's launcher: the grid (one CTA per
// element, split and row group; work.h) and the once-per-device raise of the kernel's dynamic
// shared memory limit. Compiled in device compilation units only (it launches kernels).
#pragma once

#include <atomic>

#include "arch/runtime.h"
#include "splitkv/params.h"

namespace mla::splitkv {

inline constexpr int kMaxDevices = 64;

// Stage-1 CTAs of a launch: batch x max_splits x row_groups (the balanced schedule:
// balanced_ctas).
inline unsigned stage1_grid(const Params& params) {
    if (params.balanced) return static_cast<unsigned>(params.balanced_ctas);
    return static_cast<unsigned>(params.batch) * static_cast<unsigned>(params.max_splits) *
           static_cast<unsigned>(params.row_groups);
}

// Raises `kernel`'s dynamic shared memory limit to `bytes` on the current device, once per
// device: `done` is the kernel's own flag per device.
template <typename Kernel>
gpu::error_t set_shared_bytes_once(Kernel kernel, int bytes,
                                   std::atomic<bool> (&done)[kMaxDevices]) {
    int dev = 0;
    gpu::error_t e = gpu::get_device(&dev);
    if (e != gpu::kSuccess) return e;
    if (dev >= 0 && dev < kMaxDevices && done[dev].load(std::memory_order_acquire))
        return gpu::kSuccess;
    e = gpu::set_max_dynamic_shared_bytes(kernel, bytes);
    if (e != gpu::kSuccess) {
        (void)gpu::get_last_error();  // reported here, not again by the next launch's check
        return e;
    }
    if (dev >= 0 && dev < kMaxDevices) done[dev].store(true, std::memory_order_release);
    return e;
}

}  // namespace mla::splitkv
