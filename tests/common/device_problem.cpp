// DeviceProblem: a HostProblem copied to the GPU (see device_problem.h). Every runtime call is
// checked; a failure throws std::runtime_error naming the call and the runtime's message.
#include "device_problem.h"

#if defined(MLA_HAVE_GPU_RUNTIME)

#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>

namespace mla_test {

namespace gpu = mla::gpu;

namespace {

void check(gpu::error_t err, const char* what) {
    if (err == gpu::kSuccess) return;
    throw std::runtime_error(std::string("GPU runtime call failed: ") + what + ": " +
                             gpu::error_string(err));
}

// Device copy of a host vector; an empty vector gives an empty buffer (null pointer).
template <typename T>
DeviceBuffer upload_vector(const std::vector<T>& host) {
    const size_t bytes = host.size() * sizeof(T);
    DeviceBuffer buffer(bytes);
    if (bytes != 0) buffer.upload(host.data(), bytes);
    return buffer;
}

// Device copy of a cache tensor after `leading_rows` rows of `row_bytes` bytes filled with
// `fill` on the device: the host holds only the rows past them. Empty host: empty buffer.
DeviceBuffer upload_after_leading_rows(const std::vector<uint8_t>& host, int64_t leading_rows,
                                       int64_t row_bytes, uint8_t fill) {
    if (host.empty()) return DeviceBuffer();
    const size_t lead = static_cast<size_t>(leading_rows) * static_cast<size_t>(row_bytes);
    DeviceBuffer buffer(lead + host.size());
    buffer.fill_bytes(fill, 0, lead);
    buffer.upload(host.data(), host.size(), lead);
    return buffer;
}

int storage_bytes(mla_dtype dtype) { return dtype == MLA_DTYPE_BF16 ? 2 : 1; }

}  // namespace

// ---- DeviceBuffer ------------------------------------------------------------------------

DeviceBuffer::DeviceBuffer(size_t bytes) {
    if (bytes == 0) return;
    void* p = nullptr;
    const gpu::error_t err = gpu::malloc(&p, bytes);
    if (err != gpu::kSuccess) {
        throw std::runtime_error("GPU runtime call failed: malloc of " + std::to_string(bytes) +
                                 " bytes: " + gpu::error_string(err));
    }
    ptr_ = p;
    bytes_ = bytes;
}

DeviceBuffer::~DeviceBuffer() {
    // A destructor must not throw; a failing free has nothing useful left to do.
    if (ptr_ != nullptr) (void)gpu::free(ptr_);
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : ptr_(std::exchange(other.ptr_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
    if (this != &other) {
        if (ptr_ != nullptr) (void)gpu::free(ptr_);
        ptr_ = std::exchange(other.ptr_, nullptr);
        bytes_ = std::exchange(other.bytes_, 0);
    }
    return *this;
}

void DeviceBuffer::upload(const void* host, size_t bytes, size_t offset) {
    if (offset > bytes_ || bytes > bytes_ - offset) {
        throw std::runtime_error("DeviceBuffer::upload: " + std::to_string(bytes) +
                                 " bytes at offset " + std::to_string(offset) +
                                 " into a buffer of " + std::to_string(bytes_));
    }
    if (bytes == 0) return;
    check(gpu::memcpy_to_device(static_cast<char*>(ptr_) + offset, host, bytes),
          "memcpy host to device");
}

void DeviceBuffer::download(void* host, size_t bytes) const {
    if (bytes > bytes_) {
        throw std::runtime_error("DeviceBuffer::download: " + std::to_string(bytes) +
                                 " bytes from a buffer of " + std::to_string(bytes_));
    }
    if (bytes == 0) return;
    check(gpu::memcpy_to_host(host, ptr_, bytes), "memcpy device to host");
}

void DeviceBuffer::fill_bytes(uint8_t value) { fill_bytes(value, 0, bytes_); }

void DeviceBuffer::fill_bytes(uint8_t value, size_t offset, size_t bytes) {
    if (offset > bytes_ || bytes > bytes_ - offset) {
        throw std::runtime_error("DeviceBuffer::fill_bytes: " + std::to_string(bytes) +
                                 " bytes at offset " + std::to_string(offset) +
                                 " of a buffer of " + std::to_string(bytes_));
    }
    if (bytes == 0) return;
    check(gpu::memset(static_cast<char*>(ptr_) + offset, value, bytes), "memset");
    // The runtime's memset may return before the device is done; the contract is synchronous.
    check(gpu::device_synchronize(), "device synchronize after memset");
}

// ---- availability ------------------------------------------------------------------------

bool gpu_available() {
    int n = 0;
    const gpu::error_t err = gpu::device_count(&n);
    if (err != gpu::kSuccess) {
        (void)gpu::get_last_error();  // clear the error so later calls do not report it
        return false;
    }
    return n > 0;
}

// ---- DeviceProblem -----------------------------------------------------------------------

DeviceProblem::DeviceProblem(const HostProblem& h, bool with_lse) : host(&h) {
    const ProblemSpec& spec = h.spec;
    const bool poison = spec.poison_unused;
    q = upload_vector(h.q);
    q_pe = upload_vector(h.q_pe);
    kv = upload_after_leading_rows(h.kv, h.slot_base,
                                   h.kv_stride_slot * storage_bytes(spec.kv_dtype),
                                   poison_byte(spec.kv_dtype, poison));
    kpe = upload_after_leading_rows(h.kpe, h.slot_base,
                                    h.kpe_stride_slot * storage_bytes(spec.kpe_dtype),
                                    poison_byte(spec.kpe_dtype, poison));
    kv_block_scales = upload_after_leading_rows(h.kv_block_scales, h.slot_base,
                                                h.kv_block_scale_stride,
                                                poison_byte(MLA_DTYPE_MXFP4, poison));
    v = upload_after_leading_rows(h.v, h.slot_base, h.v_stride_slot,
                                  poison_byte(spec.v_dtype, poison));
    qo_indptr = upload_vector(h.qo_indptr);
    kv_indptr = upload_vector(h.device_kv_indptr());
    kv_page_indptr = upload_vector(h.kv_page_indptr);
    kv_page_indices = upload_vector(h.device_page_indices());
    o = DeviceBuffer(h.o_elements() * sizeof(uint16_t));
    if (with_lse) lse = DeviceBuffer(h.lse_elements() * sizeof(float));

    // Start from the host description (sizes, strides, dtypes, scales) and swap every pointer
    // for its device copy. A pointer the host form leaves NULL stays NULL.
    params = h.host_params(nullptr, MLA_DTYPE_BF16, nullptr);
    auto swap = [](const void* host_ptr, const DeviceBuffer& dev) -> void* {
        return host_ptr == nullptr ? nullptr : dev.get();
    };
    params.q = swap(params.q, q);
    params.q_pe = swap(params.q_pe, q_pe);
    params.kv_cache = swap(params.kv_cache, kv);
    params.kpe_cache = swap(params.kpe_cache, kpe);
    params.kv_block_scales = static_cast<const uint8_t*>(swap(params.kv_block_scales,
                                                              kv_block_scales));
    params.v_cache = swap(params.v_cache, v);
    params.qo_indptr = static_cast<const int32_t*>(swap(params.qo_indptr, qo_indptr));
    params.kv_indptr = static_cast<const int32_t*>(swap(params.kv_indptr, kv_indptr));
    params.kv_page_indptr =
        static_cast<const int32_t*>(swap(params.kv_page_indptr, kv_page_indptr));
    params.kv_page_indices =
        static_cast<const int32_t*>(swap(params.kv_page_indices, kv_page_indices));
    params.num_slots = h.device_num_slots();
    params.o = o.get();
    params.o_dtype = MLA_DTYPE_BF16;
    params.lse = static_cast<float*>(lse.get());

    size_t bytes = 0;
    const mla_status st = mla_decode_workspace_size(&params, &bytes);
    if (st != MLA_STATUS_SUCCESS) {
        throw std::runtime_error(std::string("mla_decode_workspace_size: ") +
                                 mla_status_string(st) + ": " + mla_last_error_message());
    }
    workspace = DeviceBuffer(bytes);
    workspace_bytes = bytes;
    poison_workspace(workspace);
}

void poison_workspace(DeviceBuffer& workspace) {
    const char* keep = std::getenv("MLA_TEST_WORKSPACE_UNSET");
    if (keep == nullptr || std::strcmp(keep, "1") != 0) workspace.fill_bytes(0xFF);
}

void DeviceProblem::poison_outputs(uint8_t value) {
    o.fill_bytes(value);
    lse.fill_bytes(value);
}

mla_status DeviceProblem::run(gpu::stream_t stream) const {
    return mla_decode_fwd(&params, workspace.get(), workspace_bytes, stream);
}

void DeviceProblem::set_lengths(const HostProblem& other) {
    if (other.batch_size != host->batch_size || other.total_q != host->total_q ||
        other.slot_base != host->slot_base) {
        throw std::runtime_error("DeviceProblem::set_lengths: another batch size, total_q or "
                                 "slot_base (make it with with_lengths)");
    }
    const std::vector<int32_t> device_kv = other.device_kv_indptr();
    qo_indptr.upload(other.qo_indptr.data(), other.qo_indptr.size() * sizeof(int32_t));
    kv_indptr.upload(device_kv.data(), device_kv.size() * sizeof(int32_t));
    // Done before work on any stream (non-blocking ones included) reads the new lengths.
    check(gpu::device_synchronize(), "device synchronize after the indptr upload");
    host = &other;
}

std::vector<float> DeviceProblem::download_o() const {
    const HostProblem& h = *host;
    const int heads = params.num_heads;
    std::vector<uint16_t> raw(h.o_elements());
    o.download(raw.data(), raw.size() * sizeof(uint16_t));
    std::vector<float> dense(static_cast<size_t>(h.total_q) * heads * MLA_HEAD_DIM_V);
    for (int t = 0; t < h.total_q; ++t) {
        for (int hd = 0; hd < heads; ++hd) {
            const uint16_t* src = raw.data() + static_cast<size_t>(t) * params.o_stride_token +
                                  static_cast<size_t>(hd) * params.o_stride_head;
            float* dst = dense.data() + (static_cast<size_t>(t) * heads + hd) * MLA_HEAD_DIM_V;
            for (int d = 0; d < MLA_HEAD_DIM_V; ++d) dst[d] = bf16_bits_to_float(src[d]);
        }
    }
    return dense;
}

std::vector<float> DeviceProblem::download_lse() const {
    if (lse.get() == nullptr) return {};
    std::vector<float> out(host->lse_elements());
    lse.download(out.data(), out.size() * sizeof(float));
    return host->dense_lse(out);
}

}  // namespace mla_test

#endif  // MLA_HAVE_GPU_RUNTIME
