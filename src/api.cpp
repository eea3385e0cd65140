// The extern "C" layer: every entry point clears the last error, runs the internal call, and
// turns any escaping C++ exception into a status. Nothing here throws.
#include <cstdio>
#include <cstring>
#include <exception>
#include <new>

#include "device.h"
#include "error.h"
#include "mla_decode.h"
#include "reference.h"
#include "validate.h"

namespace {

template <typename F>
mla_status guarded(F&& body) noexcept {
    try {
        mla::clear_error();
        return body();
    } catch (const std::bad_alloc&) {
        return mla::fail(MLA_STATUS_OUT_OF_MEMORY, "host allocation failed");
    } catch (const std::exception& e) {
        return mla::fail(MLA_STATUS_INTERNAL_ERROR, "internal error: %s", e.what());
    } catch (...) {
        return mla::fail(MLA_STATUS_INTERNAL_ERROR, "internal error: unknown exception");
    }
}

#define MLA_STRINGIFY2(x) #x
#define MLA_STRINGIFY(x) MLA_STRINGIFY2(x)

}  // namespace

extern "C" {

MLA_API int mla_version(void) { return MLA_DECODE_VERSION; }

MLA_API const char* mla_version_string(void) {
    return MLA_STRINGIFY(MLA_DECODE_VERSION_MAJOR) "." MLA_STRINGIFY(
        MLA_DECODE_VERSION_MINOR) "." MLA_STRINGIFY(MLA_DECODE_VERSION_PATCH);
}

MLA_API size_t mla_decode_params_size(void) { return sizeof(mla_decode_params); }

MLA_API const char* mla_backend_name(void) {
#if defined(MLA_BACKEND_CUDA)
    return "cuda";
#elif defined(MLA_BACKEND_HIP)
    return "hip";
#elif defined(MLA_BACKEND_EMU)
    return "emu";
#else
    return "none";
#endif
}

MLA_API const char* mla_status_string(mla_status status) {
    // The integer the caller passed, read without assuming it is an enumerator (a C caller may
    // pass any int, and loading an enum outside its values is undefined in C++).
    static_assert(sizeof(mla_status) == sizeof(int), "mla_status is an int-sized enum");
    int value = 0;
    std::memcpy(&value, &status, sizeof(value));
    switch (value) {
        case MLA_STATUS_SUCCESS: return "MLA_STATUS_SUCCESS";
        case MLA_STATUS_NULL_POINTER: return "MLA_STATUS_NULL_POINTER";
        case MLA_STATUS_INVALID_DTYPE: return "MLA_STATUS_INVALID_DTYPE";
        case MLA_STATUS_INVALID_SIZE: return "MLA_STATUS_INVALID_SIZE";
        case MLA_STATUS_INVALID_VALUE: return "MLA_STATUS_INVALID_VALUE";
        case MLA_STATUS_UNSUPPORTED: return "MLA_STATUS_UNSUPPORTED";
        case MLA_STATUS_MISALIGNED: return "MLA_STATUS_MISALIGNED";
        case MLA_STATUS_WORKSPACE_TOO_SMALL: return "MLA_STATUS_WORKSPACE_TOO_SMALL";
        case MLA_STATUS_NO_DEVICE: return "MLA_STATUS_NO_DEVICE";
        case MLA_STATUS_DEVICE_ERROR: return "MLA_STATUS_DEVICE_ERROR";
        case MLA_STATUS_OUT_OF_MEMORY: return "MLA_STATUS_OUT_OF_MEMORY";
        case MLA_STATUS_INTERNAL_ERROR: return "MLA_STATUS_INTERNAL_ERROR";
    }
    return "unknown status";
}

MLA_API const char* mla_last_error_message(void) { return mla::last_error(); }

MLA_API mla_status mla_decode_params_init(mla_decode_params* params) {
    return guarded([&]() -> mla_status {
        if (params == nullptr) return mla::fail(MLA_STATUS_NULL_POINTER, "params is NULL");
        std::memset(params, 0, sizeof(*params));
        params->head_dim_qk = MLA_HEAD_DIM_QK;
        params->head_dim_v = MLA_HEAD_DIM_V;
        params->sm_scale = 1.0f;
        params->q_dtype = MLA_DTYPE_BF16;
        params->kv_dtype = MLA_DTYPE_BF16;
        params->o_dtype = MLA_DTYPE_BF16;
        params->v_dtype = MLA_DTYPE_NONE;
        params->q_scale = 1.0f;
        params->kv_scale = 1.0f;
        params->v_scale = 1.0f;
        params->page_size = 1;
        return MLA_STATUS_SUCCESS;
    });
}

MLA_API mla_status mla_decode_workspace_size(const mla_decode_params* params, size_t* bytes) {
    return guarded([&]() -> mla_status {
        if (params == nullptr) return mla::fail(MLA_STATUS_NULL_POINTER, "params is NULL");
        if (bytes == nullptr) return mla::fail(MLA_STATUS_NULL_POINTER, "bytes is NULL");
        MLA_TRY(mla::validate_params(params, mla::ValidateFor::kWorkspaceQuery));
        return mla::device_workspace_size(*params, bytes);
    });
}

MLA_API mla_status mla_decode_workspace_bound(const mla_decode_params* max_shape,
                                              size_t* bytes) {
    return guarded([&]() -> mla_status {
        if (max_shape == nullptr) return mla::fail(MLA_STATUS_NULL_POINTER, "max_shape is NULL");
        if (bytes == nullptr) return mla::fail(MLA_STATUS_NULL_POINTER, "bytes is NULL");
        // The maxima may be independent (a token budget beside a batch and a q_len): total_q past
        // batch_size * max_q_len bounds nothing more, since no problem under them has more query
        // rows, and is taken as that product (validation would refuse it in a problem).
        mla_decode_params shape = *max_shape;
        const int64_t most = static_cast<int64_t>(shape.batch_size) * shape.max_q_len;
        if (shape.batch_size >= 1 && shape.max_q_len >= 1 && shape.total_q > most)
            shape.total_q = static_cast<int32_t>(most);
        MLA_TRY(mla::validate_params(&shape, mla::ValidateFor::kWorkspaceQuery));
        return mla::device_workspace_bound(shape, bytes);
    });
}

MLA_API mla_status mla_decode_fwd(const mla_decode_params* params, void* workspace,
                                  size_t workspace_bytes, void* stream) {
    return guarded([&]() -> mla_status {
        MLA_TRY(mla::validate_params(params, mla::ValidateFor::kDevice));
        return mla::device_decode(*params, workspace, workspace_bytes, stream);
    });
}

MLA_API mla_status mla_decode_reference(const mla_decode_params* params) {
    return guarded([&]() -> mla_status {
        MLA_TRY(mla::validate_params(params, mla::ValidateFor::kHostReference));
        return mla::reference_decode(*params);
    });
}

}  // extern "C"

// A plan handle is the device plan, immutable after creation (shared by concurrent runs).
struct mla_decode_plan {
    mla::DevicePlan plan;
};

extern "C" {

MLA_API mla_status mla_decode_plan_create(const mla_decode_params* params,
                                          mla_decode_plan** plan) {
    return guarded([&]() -> mla_status {
        if (params == nullptr) return mla::fail(MLA_STATUS_NULL_POINTER, "params is NULL");
        if (plan == nullptr) return mla::fail(MLA_STATUS_NULL_POINTER, "plan is NULL");
        MLA_TRY(mla::validate_params(params, mla::ValidateFor::kWorkspaceQuery));
        mla::DevicePlan made;
        MLA_TRY(mla::device_plan_create(*params, &made));
        *plan = new mla_decode_plan{made};
        return MLA_STATUS_SUCCESS;
    });
}

MLA_API mla_status mla_decode_plan_destroy(mla_decode_plan* plan) {
    return guarded([&]() -> mla_status {
        delete plan;
        return MLA_STATUS_SUCCESS;
    });
}

MLA_API mla_status mla_decode_plan_workspace_size(const mla_decode_plan* plan, size_t* bytes) {
    return guarded([&]() -> mla_status {
        if (plan == nullptr) return mla::fail(MLA_STATUS_NULL_POINTER, "plan is NULL");
        if (bytes == nullptr) return mla::fail(MLA_STATUS_NULL_POINTER, "bytes is NULL");
        *bytes = plan->plan.workspace_bytes;
        return MLA_STATUS_SUCCESS;
    });
}

MLA_API mla_status mla_decode_plan_describe(const mla_decode_plan* plan, char* buffer,
                                            size_t buffer_bytes) {
    return guarded([&]() -> mla_status {
        if (plan == nullptr) return mla::fail(MLA_STATUS_NULL_POINTER, "plan is NULL");
        if (buffer == nullptr) return mla::fail(MLA_STATUS_NULL_POINTER, "buffer is NULL");
        if (buffer_bytes == 0) return mla::fail(MLA_STATUS_INVALID_SIZE, "buffer_bytes is 0");
        std::snprintf(buffer, buffer_bytes, "%s", plan->plan.description);
        return MLA_STATUS_SUCCESS;
    });
}

}  // extern "C"

namespace {

// prepare and run: the plan present, params valid for a device call, then `step`.
template <typename Step>
mla_status plan_step(const mla_decode_plan* plan, const mla_decode_params* params, Step step) {
    return guarded([&]() -> mla_status {
        if (plan == nullptr) return mla::fail(MLA_STATUS_NULL_POINTER, "plan is NULL");
        MLA_TRY(mla::validate_params(params, mla::ValidateFor::kDevice));
        return step(plan->plan, *params);
    });
}

}  // namespace

extern "C" {

MLA_API mla_status mla_decode_plan_prepare(const mla_decode_plan* plan,
                                           const mla_decode_params* params, void* workspace,
                                           size_t workspace_bytes, void* stream) {
    return plan_step(plan, params, [&](const mla::DevicePlan& dp, const mla_decode_params& p) {
        return mla::device_prepare(dp, p, workspace, workspace_bytes, stream);
    });
}

MLA_API mla_status mla_decode_plan_run(const mla_decode_plan* plan,
                                       const mla_decode_params* params, void* workspace,
                                       size_t workspace_bytes, void* stream) {
    return plan_step(plan, params, [&](const mla::DevicePlan& dp, const mla_decode_params& p) {
        return mla::device_run(dp, p, workspace, workspace_bytes, stream);
    });
}

}  // extern "C"
