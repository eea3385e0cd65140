// GPU dispatch: which kernel path serves a problem, with what plan, in which workspace.
#include "device.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "error.h"
#include "planner.h"
#include "validate.h"

#if defined(MLA_BACKEND_CUDA) || defined(MLA_BACKEND_HIP)
#include "arch/runtime.h"
#include "splitkv/launch.h"
#endif

namespace mla {

#if !defined(MLA_BACKEND_CUDA) && !defined(MLA_BACKEND_HIP)

mla_status device_workspace_size(const mla_decode_params&, size_t*) {
    return fail(MLA_STATUS_NO_DEVICE,
                "libmla_decode was built without a GPU backend (MLA_BACKEND=none); use "
                "mla_decode_reference for the host computation");
}

mla_status device_decode(const mla_decode_params&, void*, size_t, void*) {
    return fail(MLA_STATUS_NO_DEVICE,
                "libmla_decode was built without a GPU backend (MLA_BACKEND=none); use "
                "mla_decode_reference for the host computation");
}

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

// The GPU paths of this release; anything else is UNSUPPORTED with the reason.
mla_status check_gpu_support(const mla_decode_params& p, splitkv::KvFormat* format) {
    if (p.num_heads != 16)
        return fail(MLA_STATUS_UNSUPPORTED, "GPU path: num_heads %d is not implemented yet (16 is)",
                    p.num_heads);
    if (p.max_q_len != 1)
        return fail(MLA_STATUS_UNSUPPORTED,
                    "GPU path: max_q_len %d is not implemented yet (q_len 1 is)", p.max_q_len);
    if (p.q_dtype != MLA_DTYPE_BF16)
        return fail(MLA_STATUS_UNSUPPORTED, "GPU path: q_dtype %s is not implemented yet (bf16 is)",
                    dtype_name(p.q_dtype));
    if (p.o_dtype != MLA_DTYPE_BF16)
        return fail(MLA_STATUS_UNSUPPORTED, "GPU path: o_dtype %s is not available (bf16 is)",
                    dtype_name(p.o_dtype));
    switch (p.kv_dtype) {
        case MLA_DTYPE_BF16: *format = splitkv::KvFormat::kBf16; break;
        case MLA_DTYPE_FP8_E4M3FN: *format = splitkv::KvFormat::kFp8E4M3FN; break;
        case MLA_DTYPE_FP8_E4M3FNUZ: *format = splitkv::KvFormat::kFp8E4M3FNUZ; break;
        default:
            return fail(MLA_STATUS_UNSUPPORTED,
                        "GPU path: kv_dtype %s is not implemented yet (bf16, fp8 are)",
                        dtype_name(p.kv_dtype));
    }
    return MLA_STATUS_SUCCESS;
}

// Multiprocessor count of the current device (cached per device).
mla_status current_multiprocessors(int* count) {
    int devices = 0;
    gpu::error_t e = gpu::device_count(&devices);
    if (e != gpu::kSuccess || devices <= 0)
        return fail(MLA_STATUS_NO_DEVICE, "no GPU device available (the runtime says: %s)",
                    e != gpu::kSuccess ? gpu::error_string(e) : "0 devices");
    int dev = 0;
    e = gpu::get_device(&dev);
    if (e != gpu::kSuccess)
        return fail(MLA_STATUS_DEVICE_ERROR, "getting the current device failed: %s",
                    gpu::error_string(e));
    constexpr int kMaxCached = 64;
    static int cached[kMaxCached] = {};
    if (dev >= 0 && dev < kMaxCached && cached[dev] > 0) {
        *count = cached[dev];
        return MLA_STATUS_SUCCESS;
    }
    e = gpu::multiprocessor_count(count, dev);
    if (e != gpu::kSuccess || *count <= 0)
        return fail(MLA_STATUS_DEVICE_ERROR, "querying the multiprocessor count failed: %s",
                    gpu::error_string(e));
    if (dev >= 0 && dev < kMaxCached) cached[dev] = *count;
    return MLA_STATUS_SUCCESS;
}

struct Route {
    splitkv::KvFormat format;
    SplitKvPlan plan;
    int multiprocessors;
};

mla_status route(const mla_decode_params& p, Route* r) {
    MLA_TRY(check_gpu_support(p, &r->format));
    MLA_TRY(current_multiprocessors(&r->multiprocessors));
    SplitKvShape shape;
    shape.batch_size = p.batch_size;
    shape.total_q = p.total_q;
    shape.max_kv_len = p.max_kv_len;
    shape.num_heads = p.num_heads;
    shape.kv_row_bytes = MLA_HEAD_DIM_QK * dtype_storage_bytes(p.kv_dtype);
    shape.tile_tokens = splitkv::stage1_tile_tokens();
    shape.multiprocessors = r->multiprocessors;
    r->plan = plan_split_kv(shape, env().forced_splits);
    return MLA_STATUS_SUCCESS;
}

}  // namespace

mla_status device_workspace_size(const mla_decode_params& p, size_t* bytes) {
    Route r;
    MLA_TRY(route(p, &r));
    *bytes = r.plan.workspace_bytes;
    return MLA_STATUS_SUCCESS;
}

mla_status device_decode(const mla_decode_params& p, void* workspace, size_t workspace_bytes,
                         void* stream) {
    Route r;
    MLA_TRY(route(p, &r));
    const size_t need = r.plan.workspace_bytes;
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

    splitkv::Params k{};
    k.q = static_cast<const uint16_t*>(p.q);
    k.q_stride_token = p.q_stride_token;
    k.q_stride_head = p.q_stride_head;
    k.kv = static_cast<const uint8_t*>(p.kv_cache);
    k.kv_stride_bytes = p.kv_stride_slot * dtype_storage_bytes(p.kv_dtype);
    k.kv_scale = p.kv_scale;
    k.qo_indptr = p.qo_indptr;
    k.kv_indptr = p.kv_indptr;
    k.page_indptr = p.kv_page_indptr;
    k.page_indices = p.kv_page_indices;
    k.page_size = p.page_size;
    k.batch = p.batch_size;
    k.num_splits = r.plan.num_splits;
    k.total_q = p.total_q;
    k.sm_scale = p.sm_scale;
    k.partial_o = reinterpret_cast<float*>(static_cast<char*>(workspace) + r.plan.partial_o_offset);
    k.partial_lse =
        reinterpret_cast<float*>(static_cast<char*>(workspace) + r.plan.partial_lse_offset);
    k.o = static_cast<uint16_t*>(p.o);
    k.o_stride_token = p.o_stride_token;
    k.o_stride_head = p.o_stride_head;
    k.lse = p.lse;

    if (env().debug)
        std::fprintf(stderr,
                     "[mla_decode] route=splitkv(stage1+reduce) kv=%s batch=%d total_q=%d "
                     "max_kv_len=%d heads=%d page_size=%d multiprocessors=%d splits=%d%s "
                     "predicted=%.1fus workspace=%zuB\n",
                     dtype_name(p.kv_dtype), p.batch_size, p.total_q, p.max_kv_len, p.num_heads,
                     p.kv_page_indptr ? p.page_size : 0, r.multiprocessors, r.plan.num_splits,
                     env().forced_splits > 0 ? " (forced by MLA_DECODE_NUM_SPLITS)" : "",
                     r.plan.predicted_us, need);

    const gpu::error_t e =
        splitkv::launch_decode(k, r.format, static_cast<gpu::stream_t>(stream));
    if (e != gpu::kSuccess)
        return fail(MLA_STATUS_DEVICE_ERROR, "kernel launch failed: %s", gpu::error_string(e));
    return MLA_STATUS_SUCCESS;
}

#endif

}  // namespace mla
