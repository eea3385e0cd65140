// The one place where host code meets the GPU runtime: thin inline wrappers in mla::gpu over
// the HIP runtime, or over the CUDA runtime in an NVIDIA build (Debian's HIP nvidia_detail
// headers do not compile against CUDA 13, so we map the few calls we use ourselves).
// Host code of the library, tests and benchmark include this, never a vendor header directly.
#pragma once

#include <cstddef>
#include <tuple>    // MLA_LAUNCH's emu form
#include <utility>  // std::forward (launch_dependent)

#if defined(MLA_BACKEND_CUDA)
#include <cuda_runtime.h>
#define MLA_RT(name) cuda##name
#elif defined(MLA_BACKEND_HIP)
#include <hip/hip_runtime.h>
#define MLA_RT(name) hip##name
#endif

#if defined(MLA_BACKEND_CUDA) || defined(MLA_BACKEND_HIP)
#define MLA_HAVE_GPU_RUNTIME 1

namespace mla::gpu {

using error_t = MLA_RT(Error_t);
using stream_t = MLA_RT(Stream_t);
using event_t = MLA_RT(Event_t);
inline constexpr error_t kSuccess = MLA_RT(Success);
inline constexpr error_t kErrorInvalidValue = MLA_RT(ErrorInvalidValue);

inline const char* error_string(error_t e) { return MLA_RT(GetErrorString)(e); }
inline error_t get_last_error() { return MLA_RT(GetLastError)(); }
inline error_t device_count(int* n) { return MLA_RT(GetDeviceCount)(n); }
inline error_t get_device(int* d) { return MLA_RT(GetDevice)(d); }
inline error_t set_device(int d) { return MLA_RT(SetDevice)(d); }  // tests binding a thread
inline error_t device_synchronize() { return MLA_RT(DeviceSynchronize)(); }
// One integer attribute of device `dev`, named by its CUDA and its HIP suffix
// (cudaDevAttr<cuda>, hipDeviceAttribute<hip>).
#if defined(MLA_BACKEND_CUDA)
#define MLA_DEVICE_ATTRIBUTE(cuda, hip) cudaDevAttr##cuda
#else
#define MLA_DEVICE_ATTRIBUTE(cuda, hip) hipDeviceAttribute##hip
#endif
template <typename Attribute>
inline error_t device_attribute(int* n, Attribute attribute, int dev) {
    return MLA_RT(DeviceGetAttribute)(n, attribute, dev);
}
// Multiprocessors (NVIDIA SMs, AMD compute units) of device `dev`.
inline error_t multiprocessor_count(int* n, int dev) {
    return device_attribute(n, MLA_DEVICE_ATTRIBUTE(MultiProcessorCount, MultiprocessorCount), dev);
}
// Compute capability of device `dev` (NVIDIA; HIP reports a stand-in on AMD, 9.4 for gfx942).
inline error_t compute_capability(int* major, int* minor, int dev) {
    const error_t e = device_attribute(
        major, MLA_DEVICE_ATTRIBUTE(ComputeCapabilityMajor, ComputeCapabilityMajor), dev);
    if (e != kSuccess) return e;
    return device_attribute(
        minor, MLA_DEVICE_ATTRIBUTE(ComputeCapabilityMinor, ComputeCapabilityMinor), dev);
}
// Shared memory of one multiprocessor of device `dev`, bytes (what its resident blocks share).
inline error_t shared_bytes_per_multiprocessor(int* n, int dev) {
    return device_attribute(
        n, MLA_DEVICE_ATTRIBUTE(MaxSharedMemoryPerMultiprocessor, MaxSharedMemoryPerMultiprocessor),
        dev);
}
// Shared memory the runtime reserves for each resident block on device `dev`, bytes (NVIDIA:
// 1 KB since sm_80; AMD: none).
inline error_t reserved_shared_bytes_per_block(int* n, int dev) {
#if defined(MLA_BACKEND_CUDA)
    return device_attribute(n, cudaDevAttrReservedSharedMemoryPerBlock, dev);
#else
    (void)dev;
    *n = 0;
    return kSuccess;
#endif
}
// Shared memory one block may use on device `dev`, bytes: NVIDIA's opt-in limit (what a kernel
// gets after raising its dynamic limit); on AMD the LDS per workgroup (there is no opt-in).
inline error_t max_shared_bytes_per_block(int* n, int dev) {
    return device_attribute(
        n, MLA_DEVICE_ATTRIBUTE(MaxSharedMemoryPerBlockOptin, MaxSharedMemoryPerBlock), dev);
}
#undef MLA_DEVICE_ATTRIBUTE
#if defined(MLA_BACKEND_HIP)
// The AMD architecture name of device `dev` (gcnArchName, e.g. "gfx942:sramecc+:xnack-"),
// NUL-terminated and truncated to `bytes`.
inline error_t gcn_arch_name(char* name, size_t bytes, int dev) {
    hipDeviceProp_t prop;
    const error_t e = hipGetDeviceProperties(&prop, dev);
    if (e != kSuccess || bytes == 0) return e;
    size_t i = 0;
    for (; i + 1 < bytes && prop.gcnArchName[i] != '\0'; ++i) name[i] = prop.gcnArchName[i];
    name[i] = '\0';
    return e;
}
#endif
inline error_t l2_cache_bytes(int* n, int dev) {
#if defined(MLA_BACKEND_CUDA)
    return cudaDeviceGetAttribute(n, cudaDevAttrL2CacheSize, dev);
#else
    return hipDeviceGetAttribute(n, hipDeviceAttributeL2CacheSize, dev);
#endif
}
inline error_t malloc(void** p, size_t bytes) { return MLA_RT(Malloc)(p, bytes); }
inline error_t free(void* p) { return MLA_RT(Free)(p); }
inline error_t memcpy_to_device(void* dst, const void* src, size_t bytes) {
    return MLA_RT(Memcpy)(dst, src, bytes, MLA_RT(MemcpyHostToDevice));
}
inline error_t memcpy_to_host(void* dst, const void* src, size_t bytes) {
    return MLA_RT(Memcpy)(dst, src, bytes, MLA_RT(MemcpyDeviceToHost));
}
inline error_t memset(void* p, int value, size_t bytes) { return MLA_RT(Memset)(p, value, bytes); }
inline error_t memset_async(void* p, int value, size_t bytes, stream_t s) {
    return MLA_RT(MemsetAsync)(p, value, bytes, s);
}
inline error_t stream_create(stream_t* s) { return MLA_RT(StreamCreate)(s); }
inline error_t stream_destroy(stream_t s) { return MLA_RT(StreamDestroy)(s); }
inline error_t stream_synchronize(stream_t s) { return MLA_RT(StreamSynchronize)(s); }
inline error_t event_create(event_t* e) { return MLA_RT(EventCreate)(e); }
inline error_t event_destroy(event_t e) { return MLA_RT(EventDestroy)(e); }
inline error_t event_record(event_t e, stream_t s) { return MLA_RT(EventRecord)(e, s); }
inline error_t event_synchronize(event_t e) { return MLA_RT(EventSynchronize)(e); }
inline error_t event_elapsed_ms(float* ms, event_t start, event_t stop) {
    return MLA_RT(EventElapsedTime)(ms, start, stop);
}
// Raise the dynamic shared memory limit of a kernel (needed above 48 KiB on NVIDIA).
template <typename Kernel>
inline error_t set_max_dynamic_shared_bytes(Kernel kernel, int bytes) {
#if defined(MLA_BACKEND_CUDA)
    return cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
#else
    return hipFuncSetAttribute(reinterpret_cast<const void*>(kernel),
                               hipFuncAttributeMaxDynamicSharedMemorySize, bytes);
#endif
}

// The PTX (virtual architecture) version the loaded code of `kernel` came from on the current
// device, major * 10 + minor: 90 for sm_90 code, 80 where an sm_80 PTX was JIT-compiled.
template <typename Kernel>
inline error_t kernel_ptx_version(Kernel kernel, int* version) {
    MLA_RT(FuncAttributes) attributes{};
    const error_t e = MLA_RT(FuncGetAttributes)(&attributes, reinterpret_cast<const void*>(kernel));
    *version = e == kSuccess ? attributes.ptxVersion : 0;
    return e;
}
// Runtime and driver versions (CUDA: 1000 * major + 10 * minor; 12030 = 12.3).
inline error_t runtime_version(int* v) { return MLA_RT(RuntimeGetVersion)(v); }
inline error_t driver_version(int* v) { return MLA_RT(DriverGetVersion)(v); }

// Queues kernel<<<grid, block, shared_bytes, stream>>>(args...) as a programmatic dependent of
// the kernel before it in `stream` (CUDA 12+, sm_90+ devices; the caller decides where): it may
// be scheduled once every CTA of that kernel has called arch::allow_dependent_launch() or
// exited, so each of its CTAs must call arch::wait_prior_grid() before reading what that kernel
// wrote. Under stream capture it becomes a programmatic edge of the graph (CUDA 12.3+), so
// engines may capture it. CUDA only: HIP has no such launch (plans never ask for one there).
#if defined(MLA_BACKEND_CUDA)
template <typename... Formals, typename... Actuals>
inline error_t launch_dependent(void (*kernel)(Formals...), dim3 grid, dim3 block,
                                size_t shared_bytes, stream_t stream, Actuals&&... args) {
    cudaLaunchAttribute attribute[1] = {};
    attribute[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attribute[0].val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t config = {};
    config.gridDim = grid;
    config.blockDim = block;
    config.dynamicSmemBytes = shared_bytes;
    config.stream = stream;
    config.attrs = attribute;
    config.numAttrs = 1;
    // Its error is also kept as the runtime's last error: taken here, as for <<<>>>, so that it
    // is not reported again by the next launch's check.
    (void)cudaLaunchKernelEx(&config, kernel, std::forward<Actuals>(args)...);
    return cudaGetLastError();
}
#endif

}  // namespace mla::gpu

#undef MLA_RT
#endif

// ---- the emulated GPU (MLA_BACKEND=emu; kernels/arch/emu/simt.h) ------------------------------
// One device (ordinal 0) with the attributes of an MI300X (gfx942) or, with MLA_EMU_SM90, of an
// H200 (sm_90), host memory as its memory, every operation synchronous; kernels run on the CPU,
// one launch at a time in the process.
#if defined(MLA_BACKEND_EMU)
#define MLA_HAVE_GPU_RUNTIME 1

#include <cstring>
#include <functional>
#include <memory>
#include <vector>

namespace mla::emu {
#if defined(MLA_EMU_SM90)
inline constexpr int kLdsBytes = 227 * 1024;  // shared memory of a CTA (sm_90, opt-in)
inline constexpr int kMultiprocessors = 132;  // H100 / H200 SXM
inline constexpr int kCcMajor = 9, kCcMinor = 0;
#else
inline constexpr int kLdsBytes = 64 * 1024;  // LDS of a workgroup (gfx942)
inline constexpr int kMultiprocessors = 304;  // MI300X
inline constexpr int kCcMajor = 9, kCcMinor = 4;  // HIP's stand-in for gfx942
#endif
}  // namespace mla::emu

namespace mla::gpu {

enum error_t : int {
    kSuccess = 0,
    kErrorInvalidValue = 1,
    kErrorMemoryAllocation = 2,
    kErrorInvalidDevice = 101,
    kErrorLaunchFailure = 719,
};
// A stream in capture records its launches and asynchronous memsets (a graph) instead of running
// them: the tests' graph replay (tests/common/gpu_graph.h).
struct EmuStream {
    std::shared_ptr<std::vector<std::function<void()>>> capture;
};
struct EmuEvent;
using stream_t = EmuStream*;
using event_t = EmuEvent*;

const char* error_string(error_t e);
error_t get_last_error();
inline error_t device_count(int* n) {
    *n = 1;
    return kSuccess;
}
error_t get_device(int* d);
error_t set_device(int d);
inline error_t device_synchronize() { return kSuccess; }
inline error_t multiprocessor_count(int* n, int) {
    *n = emu::kMultiprocessors;
    return kSuccess;
}
inline error_t compute_capability(int* major, int* minor, int) {
    *major = emu::kCcMajor;
    *minor = emu::kCcMinor;
    return kSuccess;
}
inline error_t shared_bytes_per_multiprocessor(int* n, int) {
#if defined(MLA_EMU_SM90)
    *n = 228 * 1024;
#else
    *n = emu::kLdsBytes;
#endif
    return kSuccess;
}
inline error_t reserved_shared_bytes_per_block(int* n, int) {
#if defined(MLA_EMU_SM90)
    *n = 1024;
#else
    *n = 0;
#endif
    return kSuccess;
}
inline error_t max_shared_bytes_per_block(int* n, int) {
    *n = emu::kLdsBytes;
    return kSuccess;
}
inline error_t gcn_arch_name(char* name, size_t bytes, int) {
    if (bytes > 0) {
        std::strncpy(name, "gfx942:sramecc+:xnack-", bytes - 1);
        name[bytes - 1] = '\0';
    }
    return kSuccess;
}
inline error_t l2_cache_bytes(int* n, int) {
    *n = 4 * 1024 * 1024;
    return kSuccess;
}
error_t malloc(void** p, size_t bytes);
error_t free(void* p);
inline error_t memcpy_to_device(void* dst, const void* src, size_t bytes) {
    if (bytes > 0) std::memmove(dst, src, bytes);
    return kSuccess;
}
inline error_t memcpy_to_host(void* dst, const void* src, size_t bytes) {
    return memcpy_to_device(dst, src, bytes);
}
inline error_t memset(void* p, int value, size_t bytes) {
    if (bytes > 0) std::memset(p, value, bytes);
    return kSuccess;
}
inline error_t memset_async(void* p, int value, size_t bytes, stream_t s) {
    if (s != nullptr && s->capture) {
        s->capture->push_back([=] { (void)memset(p, value, bytes); });
        return kSuccess;
    }
    return memset(p, value, bytes);
}
inline error_t stream_create(stream_t* s) {
    *s = new EmuStream{};
    return kSuccess;
}
inline error_t stream_destroy(stream_t s) {
    delete s;
    return kSuccess;
}
inline error_t stream_synchronize(stream_t) { return kSuccess; }
error_t event_create(event_t* e);
error_t event_destroy(event_t e);
error_t event_record(event_t e, stream_t s);
inline error_t event_synchronize(event_t) { return kSuccess; }
error_t event_elapsed_ms(float* ms, event_t start, event_t stop);
template <typename Kernel>
inline error_t set_max_dynamic_shared_bytes(Kernel, int bytes) {
    return bytes <= emu::kLdsBytes ? kSuccess : kErrorInvalidValue;
}
inline error_t runtime_version(int* v) {
    *v = 0;
    return kSuccess;
}
inline error_t driver_version(int* v) {
    *v = 0;
    return kSuccess;
}

}  // namespace mla::gpu

namespace mla::emu {
// Runs body(context) as every work-item of `grid` workgroups of `block` work-items, workgroup
// after workgroup (simt.cpp). An error (a bad shape, a hang) is also the next get_last_error.
gpu::error_t launch(unsigned grid, unsigned block, size_t shared_bytes, void (*body)(void*),
                    void* context);
gpu::error_t take_last_error();

// MLA_LAUNCH's emu form: kernel(args...) run on the emulated device.
template <typename Kernel>
struct Launch {
    Kernel kernel;
    unsigned grid, block;
    size_t shared_bytes;
    gpu::stream_t stream;  // every launch is synchronous
    template <typename... Args>
    void operator()(const Args&... args) const {
        if (stream != nullptr && stream->capture) {  // a copy of the launch, for each replay
            stream->capture->push_back([self = *this, args...] {
                Launch now = self;
                now.stream = nullptr;  // a replay runs, whatever became of the stream
                now(args...);
            });
            return;
        }
        struct Call {
            Kernel kernel;
            const std::tuple<const Args&...> args;
        } call{kernel, std::tuple<const Args&...>(args...)};
        (void)launch(grid, block, shared_bytes,
                     [](void* c) {
                         const Call& call = *static_cast<const Call*>(c);
                         std::apply([&](const Args&... a) { call.kernel(a...); }, call.args);
                     },
                     &call);
    }
};
}  // namespace mla::emu
#endif  // MLA_BACKEND_EMU

// MLA_LAUNCH(kernel, grid, block, shared_bytes, stream)(args...): kernel<<<grid, block,
// shared_bytes, stream>>>(args...) on every backend (a kernel named with template arguments
// goes through a variable: the macro's arguments may not hold commas).
#if defined(MLA_BACKEND_EMU)
#define MLA_LAUNCH(kernel, grid, block, shared_bytes, stream)                               \
    ::mla::emu::Launch<decltype(kernel)>{kernel, static_cast<unsigned>(grid),             \
                                         static_cast<unsigned>(block),                    \
                                         static_cast<size_t>(shared_bytes), stream}
#else
#define MLA_LAUNCH(kernel, grid, block, shared_bytes, stream) \
    kernel<<<grid, block, shared_bytes, stream>>>
#endif
