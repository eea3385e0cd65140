// The emulated GPU (simt.h): the kernels' extern LDS arrays (the dynamic shared memory of the
// stage-1 kernels and of the reduce's combine), one buffer each, as the declarations name them
// (1024-byte aligned: the sm_90a kernels' swizzled stages).
#include <cstring>

#include "arch/emu/simt.h"

namespace mla::splitkv {
alignas(1024) uint8_t smem[mla::emu::kLdsBytes];
alignas(16) float4 combine_shared[mla::emu::kLdsBytes / sizeof(float4)];
}  // namespace mla::splitkv

namespace mla::emu {
uint8_t* lds_base() { return mla::splitkv::smem; }
void poison_lds() {
    std::memset(mla::splitkv::smem, 0xff, sizeof(mla::splitkv::smem));
    std::memset(mla::splitkv::combine_shared, 0xff, sizeof(mla::splitkv::combine_shared));
}
namespace {
bool all_ff(const void* p, size_t from, size_t bytes) {
    const uint8_t* b = static_cast<const uint8_t*>(p);
    for (size_t i = from; i < bytes; ++i)
        if (b[i] != 0xff) return false;
    return true;
}
}  // namespace
// Whether each array still holds the fill past `bytes` (a launch's dynamic LDS size): writes
// there would fall outside the workgroup's allocation on the GPU.
bool lds_untouched_past(size_t bytes) {
    return all_ff(mla::splitkv::smem, bytes, sizeof(mla::splitkv::smem)) &&
           all_ff(mla::splitkv::combine_shared, bytes, sizeof(mla::splitkv::combine_shared));
}
}  // namespace mla::emu
