// GPU dispatch: which kernel path serves a problem, with what plan, in which workspace.
#include "device.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "error.h"
#include "planner.h"
#include "validate.h"

#if defined(MLA_BACKEND_CUDA) || defined(MLA_BACKEND_HIP)
#include "arch/runtime.h"
#include "splitkv/launch.h"
#endif

namespace mla {

bool PlanKey::operator==(const PlanKey& o) const {
    return batch_size == o.batch_size && total_q == o.total_q && max_q_len == o.max_q_len &&
           max_kv_len == o.max_kv_len && num_heads == o.num_heads && q_dtype == o.q_dtype &&
           kv_dtype == o.kv_dtype && o_dtype == o.o_dtype && device == o.device;
}

#if !defined(MLA_BACKEND_CUDA) && !defined(MLA_BACKEND_HIP)

namespace {
mla_status no_backend() {
    return fail(MLA_STATUS_NO_DEVICE,
                "libmla_decode was built without a GPU backend (MLA_BACKEND=none); use "
                "mla_decode_reference for the host computation");
}
}  // namespace

mla_status device_plan_create(const mla_decode_params&, DevicePlan*) { return no_backend(); }
mla_status device_prepare(const DevicePlan&, const mla_decode_params&, void*, size_t, void*) {
    return no_backend();
}
mla_status device_run(const DevicePlan&, const mla_decode_params&, void*, size_t, void*) {
    return no_backend();
}
mla_status device_workspace_size(const mla_decode_params&, size_t*) { return no_backend(); }
mla_status device_decode(const mla_decode_params&, void*, size_t, void*) { return no_backend(); }

#else

namespace {

// Environment switches, read once:
//   MLA_DECODE_DEBUG=1          print each call's route, plan and the reason to stderr
//   MLA_DECODE_NUM_SPLITS=<n>   force the split count (calibration of the cost model)
struct EnvSwitches {
    bool debug = false;
    int forced_splits = 0;
    EnvSwitches() {
        const char* d = std::getenv("MLA_DECODE_DEBUG");
        debug = d != nullptr && d[0] != '\0' && std::strcmp(d, "0") != 0;
        const char* s = std::getenv("MLA_DECODE_NUM_SPLITS");
        if (s != nullptr) forced_splits = std::atoi(s);
    }
};
const EnvSwitches& env() {
    static const EnvSwitches switches;
    return switches;
}


// The GPU paths of this release; anything else is UNSUPPORTED with the reason. MXFP4 names the
// key format only: whether V comes from the MXFP4 rows or an fp8 v_cache is decided per run
// (value_format), so that a plan made from host fields alone serves both.
mla_status gpu_kv_format(const mla_decode_params& p, splitkv::KvFormat* format) {
    if (p.o_dtype != MLA_DTYPE_BF16)
        return fail(MLA_STATUS_UNSUPPORTED, "GPU path: o_dtype %s is not available (bf16 is)",
                    dtype_name(p.o_dtype));
    if (splitkv::kv_format_of(p.kv_dtype, static_cast<mla_dtype>(0), format))
        return MLA_STATUS_SUCCESS;
    return fail(MLA_STATUS_UNSUPPORTED, "GPU path: kv_dtype %s has no kernel",
                dtype_name(p.kv_dtype));
}

// The stage-1 kernel for a run: an MXFP4 plan with an fp8 v_cache takes its fp8-V variant.
splitkv::KvFormat value_format(splitkv::KvFormat plan_format, const mla_decode_params& p) {
    if (plan_format != splitkv::KvFormat::kMxfp4 || p.v_cache == nullptr) return plan_format;
    return p.v_dtype == MLA_DTYPE_FP8_E4M3FN ? splitkv::KvFormat::kMxfp4Fp8E4M3FN
                                             : splitkv::KvFormat::kMxfp4Fp8E4M3FNUZ;
}

// Stage-1 time per 64-token tile and CTA when latency bound, per kernel: measured on the H200
// (132 SMs) with bench/split_sweep.sh, where it is the same with 4 or 256 CTAs resident (fp8
// 2.4 us, bf16 3.25, MXFP4 3.3, MXFP4-K/fp8-V 4.3). Not yet measured on AMD: the same figures
// stand in there.
double tile_latency_us(splitkv::KvFormat f) {
    switch (f) {
        case splitkv::KvFormat::kBf16: return 3.25;
        case splitkv::KvFormat::kFp8E4M3FN:
        case splitkv::KvFormat::kFp8E4M3FNUZ: return 2.4;
        case splitkv::KvFormat::kMxfp4: return 3.3;
        default: return 4.3;
    }
}

// Multiprocessor count of the current device (cached per device).
mla_status current_device(int* dev, int* multiprocessors) {
    int devices = 0;
    gpu::error_t e = gpu::device_count(&devices);
    if (e != gpu::kSuccess || devices <= 0)
        return fail(MLA_STATUS_NO_DEVICE, "no GPU device available (the runtime says: %s)",
                    e != gpu::kSuccess ? gpu::error_string(e) : "0 devices");
    e = gpu::get_device(dev);
    if (e != gpu::kSuccess)
        return fail(MLA_STATUS_DEVICE_ERROR, "getting the current device failed: %s",
                    gpu::error_string(e));
    constexpr int kMaxCached = 64;
    static int cached[kMaxCached] = {};
    if (*dev >= 0 && *dev < kMaxCached && cached[*dev] > 0) {
        *multiprocessors = cached[*dev];
        return MLA_STATUS_SUCCESS;
    }
    e = gpu::multiprocessor_count(multiprocessors, *dev);
    if (e != gpu::kSuccess || *multiprocessors <= 0)
        return fail(MLA_STATUS_DEVICE_ERROR, "querying the multiprocessor count failed: %s",
                    gpu::error_string(e));
    if (*dev >= 0 && *dev < kMaxCached) cached[*dev] = *multiprocessors;
    return MLA_STATUS_SUCCESS;
}

PlanKey key_of(const mla_decode_params& p, int device) {
    PlanKey k;
    k.batch_size = p.batch_size;
    k.total_q = p.total_q;
    k.max_q_len = p.max_q_len;
    k.max_kv_len = p.max_kv_len;
    k.num_heads = p.num_heads;
    k.q_dtype = p.q_dtype;
    k.kv_dtype = p.kv_dtype;
    k.o_dtype = p.o_dtype;
    k.device = device;
    return k;
}

void describe(DevicePlan* plan, splitkv::KvFormat format) {
    const PlanKey& k = plan->key;
    const char* kv = splitkv::kv_traits(format).name;
    const int64_t ctas = static_cast<int64_t>(k.batch_size) * plan->num_splits * plan->row_groups;
    if (plan->num_splits == 1) {
        std::snprintf(plan->description, sizeof(plan->description),
                      "route=single_split kv=%s batch=%d q_len<=%d heads=%d kv_len<=%d: stage 1 "
                      "writes O directly, %lld CTAs (%d row groups) on %d compute units; "
                      "splitting does not pay (cost model %.1f us%s)",
                      kv, k.batch_size, k.max_q_len, k.num_heads, k.max_kv_len,
                      static_cast<long long>(ctas), plan->row_groups, plan->multiprocessors,
                      plan->predicted_us,
                      env().forced_splits > 0 ? ", forced by MLA_DECODE_NUM_SPLITS" : "");
    } else {
        std::snprintf(plan->description, sizeof(plan->description),
                      "route=split_kv kv=%s batch=%d q_len<=%d heads=%d kv_len<=%d: metadata + "
                      "stage 1 (%d splits of %d tiles, %lld CTAs, %d row groups) + LSE reduce on "
                      "%d compute units (cost model %.1f us%s), workspace %zu B",
                      kv, k.batch_size, k.max_q_len, k.num_heads, k.max_kv_len,
                      plan->num_splits, plan->tiles_per_split, static_cast<long long>(ctas),
                      plan->row_groups, plan->multiprocessors, plan->predicted_us,
                      env().forced_splits > 0 ? ", forced by MLA_DECODE_NUM_SPLITS" : "",
                      plan->workspace_bytes);
    }
}

mla_status check_run(const DevicePlan& plan, const mla_decode_params& p, void* workspace,
                     size_t workspace_bytes) {
    int dev = 0;
    if (gpu::get_device(&dev) != gpu::kSuccess) dev = -1;
    if (!(key_of(p, dev) == plan.key))
        return fail(MLA_STATUS_INVALID_VALUE,
                    "params do not have the plan's shape (batch_size, total_q, max_q_len, "
                    "max_kv_len, num_heads, q/kv/o dtypes and device must match the "
                    "mla_decode_plan_create call)");
    const size_t need = plan.workspace_bytes;
    if (workspace_bytes < need)
        return fail(MLA_STATUS_WORKSPACE_TOO_SMALL,
                    "workspace_bytes %zu is smaller than the %zu bytes this problem needs "
                    "(mla_decode_workspace_size)",
                    workspace_bytes, need);
    if (need > 0 && workspace == nullptr)
        return fail(MLA_STATUS_NULL_POINTER, "workspace is NULL but %zu bytes are needed", need);
    if (reinterpret_cast<uintptr_t>(workspace) % kWorkspaceAlignment != 0)
        return fail(MLA_STATUS_MISALIGNED, "workspace must be %zu-byte aligned",
                    kWorkspaceAlignment);
    return MLA_STATUS_SUCCESS;
}

splitkv::Params kernel_params(const DevicePlan& plan, const mla_decode_params& p, void* workspace) {
    splitkv::Params k{};
    k.q = p.q;
    k.q_format = p.q_dtype == MLA_DTYPE_FP8_E4M3FN     ? splitkv::QFormat::kFp8E4M3FN
                 : p.q_dtype == MLA_DTYPE_FP8_E4M3FNUZ ? splitkv::QFormat::kFp8E4M3FNUZ
                                                       : splitkv::QFormat::kBf16;
    k.q_scale = p.q_dtype == MLA_DTYPE_BF16 ? 1.0f : p.q_scale;
    k.q_stride_token = p.q_stride_token;
    k.q_stride_head = p.q_stride_head;
    k.kv = static_cast<const uint8_t*>(p.kv_cache);
    k.kv_stride_bytes = p.kv_stride_slot * dtype_storage_bytes(p.kv_dtype);
    k.kv_scale = is_fp8(p.kv_dtype) ? p.kv_scale : 1.0f;
    k.kv_scales = p.kv_block_scales;
    k.kv_scale_stride = p.kv_block_scale_stride;
    const uintptr_t scales = reinterpret_cast<uintptr_t>(p.kv_block_scales);
    k.scale_copy = (scales % 16 == 0 && p.kv_block_scale_stride % 16 == 0) ? splitkv::ScaleCopy::k16Bytes
                   : (scales % 4 == 0 && p.kv_block_scale_stride % 4 == 0) ? splitkv::ScaleCopy::k4Bytes
                                                                            : splitkv::ScaleCopy::kBytes;
    k.v = static_cast<const uint8_t*>(p.v_cache);
    k.v_stride_bytes = p.v_stride_slot;
    k.v_scale = p.v_scale;
    k.qo_indptr = p.qo_indptr;
    k.kv_indptr = p.kv_indptr;
    k.page_indptr = p.kv_page_indptr;
    k.page_indices = p.kv_page_indices;
    k.page_size = p.page_size;
    k.batch = p.batch_size;
    k.total_q = p.total_q;
    k.num_heads = p.num_heads;
    k.row_groups = plan.row_groups;
    k.max_splits = plan.num_splits;
    k.tiles_per_split = plan.tiles_per_split;
    k.sm_scale = p.sm_scale;
    char* ws = static_cast<char*>(workspace);
    if (plan.num_splits > 1) {
        k.split_meta = reinterpret_cast<splitkv::SplitMeta*>(ws + plan.split_meta_offset);
        k.row_meta = reinterpret_cast<splitkv::RowMeta*>(ws + plan.row_meta_offset);
        k.partial_o = reinterpret_cast<float*>(ws + plan.partial_o_offset);
        k.partial_lse = reinterpret_cast<float*>(ws + plan.partial_lse_offset);
    }
    k.o = static_cast<uint16_t*>(p.o);
    k.o_stride_token = p.o_stride_token;
    k.o_stride_head = p.o_stride_head;
    k.lse = p.lse;
    return k;
}

// The process-wide plan cache of mla_decode_fwd / mla_decode_workspace_size: a few recent
// shapes (an engine alternates between a handful per step), replaced round-robin.
class PlanCache {
public:
    mla_status get(const mla_decode_params& p, DevicePlan* out) {
        int dev = 0, units = 0;
        MLA_TRY(current_device(&dev, &units));
        const PlanKey key = key_of(p, dev);
        {
            std::lock_guard<std::mutex> lock(mutex_);
            for (int i = 0; i < used_; ++i) {
                if (entries_[i].key == key) {
                    *out = entries_[i];
                    return MLA_STATUS_SUCCESS;
                }
            }
        }
        MLA_TRY(device_plan_create(p, out));
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

PlanCache& plan_cache() {
    static PlanCache cache;
    return cache;
}

}  // namespace

mla_status device_plan_create(const mla_decode_params& p, DevicePlan* plan) {
    splitkv::KvFormat format = splitkv::KvFormat::kBf16;
    MLA_TRY(gpu_kv_format(p, &format));
    DevicePlan out;
    MLA_TRY(current_device(&out.key.device, &out.multiprocessors));
    out.key = key_of(p, out.key.device);
    out.kv_format = static_cast<int>(format);
    const SplitKvShape shape{p.batch_size,
                             p.total_q,
                             p.max_q_len,
                             p.max_kv_len,
                             p.num_heads,
                             splitkv::kv_traits(format).streamed_bytes,
                             tile_latency_us(format),
                             splitkv::stage1_shape(splitkv::Stage1Variant::kMma16).tile_tokens,
                             out.multiprocessors};
    const SplitKvPlan sp = plan_split_kv(shape, env().forced_splits);
    const int64_t grid = static_cast<int64_t>(p.batch_size) * sp.num_splits * sp.row_groups;
    if (grid > 0x7fffffff)
        return fail(MLA_STATUS_UNSUPPORTED,
                    "GPU path: batch_size %d x max_q_len %d x num_heads/16 needs %lld CTAs, more "
                    "than one launch holds",
                    p.batch_size, p.max_q_len, static_cast<long long>(grid));
    out.num_splits = sp.num_splits;
    out.tiles_per_split = sp.tiles_per_split;
    out.row_groups = sp.row_groups;
    out.split_meta_offset = sp.split_meta_offset;
    out.row_meta_offset = sp.row_meta_offset;
    out.partial_o_offset = sp.partial_o_offset;
    out.partial_lse_offset = sp.partial_lse_offset;
    out.workspace_bytes = sp.workspace_bytes;
    out.predicted_us = sp.predicted_us;
    describe(&out, format);
    *plan = out;
    return MLA_STATUS_SUCCESS;
}

mla_status device_prepare(const DevicePlan& plan, const mla_decode_params& p, void* workspace,
                          size_t workspace_bytes, void* stream) {
    MLA_TRY(check_run(plan, p, workspace, workspace_bytes));
    if (plan.num_splits == 1) return MLA_STATUS_SUCCESS;  // nothing to plan on the device
    const gpu::error_t e = splitkv::launch_split_metadata(
        kernel_params(plan, p, workspace),
        splitkv::stage1_shape(splitkv::Stage1Variant::kMma16).tile_tokens,
        static_cast<gpu::stream_t>(stream));
    if (e != gpu::kSuccess)
        return fail(MLA_STATUS_DEVICE_ERROR, "metadata kernel launch failed: %s",
                    gpu::error_string(e));
    return MLA_STATUS_SUCCESS;
}

mla_status device_run(const DevicePlan& plan, const mla_decode_params& p, void* workspace,
                      size_t workspace_bytes, void* stream) {
    MLA_TRY(check_run(plan, p, workspace, workspace_bytes));
    if (env().debug) std::fprintf(stderr, "[mla_decode] %s\n", plan.description);
    const gpu::error_t e =
        splitkv::launch_attention(kernel_params(plan, p, workspace), splitkv::Stage1Variant::kMma16,
                                  value_format(static_cast<splitkv::KvFormat>(plan.kv_format), p),
                                  static_cast<gpu::stream_t>(stream));
    if (e != gpu::kSuccess)
        return fail(MLA_STATUS_DEVICE_ERROR, "kernel launch failed: %s", gpu::error_string(e));
    return MLA_STATUS_SUCCESS;
}

mla_status device_workspace_size(const mla_decode_params& p, size_t* bytes) {
    DevicePlan plan;
    MLA_TRY(plan_cache().get(p, &plan));
    *bytes = plan.workspace_bytes;
    return MLA_STATUS_SUCCESS;
}

mla_status device_decode(const mla_decode_params& p, void* workspace, size_t workspace_bytes,
                         void* stream) {
    DevicePlan plan;
    MLA_TRY(plan_cache().get(p, &plan));
    MLA_TRY(device_prepare(plan, p, workspace, workspace_bytes, stream));
    return device_run(plan, p, workspace, workspace_bytes, stream);
}

#endif

}  // namespace mla
