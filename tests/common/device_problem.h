// A HostProblem copied to the GPU, with device O/LSE/workspace buffers and the matching
// mla_decode_params. Shared by the GPU tests and the benchmark. Only for builds with a GPU
// runtime (MLA_HAVE_GPU_RUNTIME); every runtime call is checked and a failure throws
// std::runtime_error carrying the runtime's message.
#pragma once

#include <cstdint>
#include <vector>

#include "arch/runtime.h"
#include "mla_decode.h"
#include "mla_problem.h"

#if defined(MLA_HAVE_GPU_RUNTIME)
namespace mla_test {

// Owning device allocation (moves only).
class DeviceBuffer {
public:
    DeviceBuffer() = default;
    explicit DeviceBuffer(size_t bytes);
    ~DeviceBuffer();
    DeviceBuffer(DeviceBuffer&& other) noexcept;
    DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;

    void* get() const { return ptr_; }
    size_t bytes() const { return bytes_; }
    // host -> device at byte `offset`, offset + bytes <= bytes()
    void upload(const void* host, size_t bytes, size_t offset = 0);
    void download(void* host, size_t bytes) const;    // device -> host
    void fill_bytes(uint8_t value);                   // synchronous memset
    void fill_bytes(uint8_t value, size_t offset, size_t bytes);  // of a byte range

private:
    void* ptr_ = nullptr;
    size_t bytes_ = 0;
};

// Fills a workspace with 0xFF (NaN patterns), so that a partial row or LSE the library reads
// before writing it, and uses, fails the comparison instead of passing on a fresh allocation's
// zeros; left as allocated under MLA_TEST_WORKSPACE_UNSET=1 (for compute-sanitizer's
// initcheck, which counts a memset as initialization).
void poison_workspace(DeviceBuffer& workspace);

// True when the runtime reports at least one device.
bool gpu_available();

struct DeviceProblem {
    // Uploads every input of `host`; allocates O (bf16), LSE and the workspace that
    // mla_decode_workspace_size asks for (throws if it fails), the workspace poisoned
    // (poison_workspace). With host.slot_base > 0 the
    // caches get that many leading slots, filled with NaN codes on the device (never copied
    // from the host), and the index arrays are shifted to match (HostProblem::device_*).
    explicit DeviceProblem(const HostProblem& host, bool with_lse = true);

    const HostProblem* host = nullptr;
    DeviceBuffer q, q_pe, kv, kpe, kv_block_scales, v, qo_indptr, kv_indptr, kv_page_indptr,
        kv_page_indices, o, lse, workspace;  // q_pe, kpe: the split forms' (else empty)
    mla_decode_params params{};  // device pointers, o_dtype BF16
    size_t workspace_bytes = 0;

    // Sets every byte of O and LSE to `value` (0xFF gives NaN patterns: unwritten
    // elements then fail any comparison).
    void poison_outputs(uint8_t value = 0xFF);
    // Runs mla_decode_fwd on `stream`; returns its status (does not synchronize).
    mla_status run(mla::gpu::stream_t stream = nullptr) const;
    // Rewrites the device qo_indptr and kv_indptr in place with those of `other` (a problem
    // over the same buffers, see with_lengths), synchronously; `other` becomes `host`. Params
    // and every device pointer stay as they are (a captured graph sees the new lengths).
    void set_lengths(const HostProblem& other);
    // O converted to float, dense (total_q, heads, 512) whatever o_stride_token is.
    std::vector<float> download_o() const;
    // LSE dense (total_q, heads), whatever the problem's LSE row stride.
    std::vector<float> download_lse() const;
};

}  // namespace mla_test
#endif
