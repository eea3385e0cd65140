#include "stage1_select.h"

#include <cstdio>
#include <cstring>
#include <string>

#include "error.h"

namespace mla {

using splitkv::Stage1Variant;

Stage1Request parse_stage1_request(const char* value) {
    Stage1Request r;
    if (value == nullptr || value[0] == '\0') return r;
    r.forced = true;
    std::snprintf(r.name, sizeof(r.name), "%s", value);
    for (int v = 0; v < splitkv::kStage1Variants; ++v) {
        const Stage1Variant variant = static_cast<Stage1Variant>(v);
        if (std::strcmp(value, splitkv::stage1_variant_name(variant)) == 0) {
            r.variant = variant;
            return r;
        }
    }
    r.unknown = true;
    return r;
}

mla_status check_stage1_request(const Stage1Request& request) {
    if (!request.unknown) return MLA_STATUS_SUCCESS;
    std::string valid;
    for (int v = 0; v < splitkv::kStage1Variants; ++v) {
        if (!valid.empty()) valid += ", ";
        valid += splitkv::stage1_variant_name(static_cast<Stage1Variant>(v));
    }
    return fail(MLA_STATUS_INVALID_VALUE,
                "MLA_DECODE_STAGE1=%s names no stage-1 variant (valid: %s; unset = the "
                "planner's choice)",
                request.name, valid.c_str());
}

bool stage1_variant_built(Stage1Variant variant) {
    switch (variant) {
        case Stage1Variant::kMma16: return true;
        case Stage1Variant::kWgmma:
#if defined(MLA_HAVE_STAGE1_WGMMA)
            return true;
#else
            return false;
#endif
    }
    return false;
}

bool stage1_can_serve(Stage1Variant variant, const Stage1Problem& problem,
                      const DeviceInfo& device, char* reason, size_t reason_bytes) {
    const bool say = reason != nullptr && reason_bytes > 0;
    if (!stage1_variant_built(variant)) {
        if (say)
            std::snprintf(reason, reason_bytes,
                          "not built (its kernels are compiled only for CUDA architecture 90a)");
        return false;
    }
    switch (variant) {
        case Stage1Variant::kMma16: return true;  // every format, head count, q_len, device
        case Stage1Variant::kWgmma:
            if (device.amd || device.cc_major != 9 || device.cc_minor != 0) {
                if (say)
                    std::snprintf(reason, reason_bytes, "the device is %s, not sm_90",
                                  device.arch_name);
                return false;
            }
            // Every format (KvFormat), any head count, q_len and Q dtype; bf16 at 16 and 32
            // rows per CTA only, which the planner's candidates (splitkv::stage1_shape) already
            // say. (Since 0.7.44 no problem is declined: `problem` stays for the variants to
            // come.)
            (void)problem;
            return true;
    }
    if (say) std::snprintf(reason, reason_bytes, "not a stage-1 variant");
    return false;
}

bool mma16_e4m3_built() {
#if defined(MLA_HAVE_MMA16_E4M3)
    return true;
#else
    return false;
#endif
}

bool device_e4m3_mma(const DeviceInfo& device, arch::Fp8Flavor* flavor) {
    if (!device.amd) {
        *flavor = arch::Fp8Flavor::kE4M3FN;
        return device.cc_major > 8 || (device.cc_major == 8 && device.cc_minor >= 9);
    }
    // gcnArchName: the target, then its features ("gfx942:sramecc+:xnack-").
    const auto is = [&](const char* target) {
        const size_t n = std::strlen(target);
        return std::strncmp(device.arch_name, target, n) == 0 &&
               (device.arch_name[n] == '\0' || device.arch_name[n] == ':');
    };
    if (is("gfx940") || is("gfx941") || is("gfx942")) {
        *flavor = arch::Fp8Flavor::kE4M3FNUZ;
        return true;
    }
    if (is("gfx950")) {
        *flavor = arch::Fp8Flavor::kE4M3FN;
        return true;
    }
    return false;
}

bool stage1_e4m3_scores(Stage1Variant variant, const Stage1Problem& problem,
                        const DeviceInfo& device, bool forced) {
    const splitkv::KvFormat f = problem.format;
    switch (variant) {
        case Stage1Variant::kWgmma:
            return problem.q_dtype == MLA_DTYPE_FP8_E4M3FN && f == splitkv::KvFormat::kFp8E4M3FN;
        case Stage1Variant::kMma16: {
            const bool fn = f == splitkv::KvFormat::kFp8E4M3FN;
            if (!mma16_e4m3_built() || (!fn && f != splitkv::KvFormat::kFp8E4M3FNUZ)) return false;
            if (!forced) return false;  // not yet run on a GPU (stage1_select.h)
            if (problem.q_dtype != (fn ? MLA_DTYPE_FP8_E4M3FN : MLA_DTYPE_FP8_E4M3FNUZ))
                return false;
            arch::Fp8Flavor flavor = arch::Fp8Flavor::kE4M3FN;
            return device_e4m3_mma(device, &flavor) &&
                   flavor == splitkv::kv_traits(f).fp8_flavor;
        }
    }
    return false;
}

Stage1Choice choose_stage1_variant(const Stage1Request& request, const Stage1Problem& problem,
                                   const DeviceInfo& device) {
    Stage1Choice c;
    if (!request.forced || request.unknown) return c;  // the planner picks by cost
    const char* name = splitkv::stage1_variant_name(request.variant);
    char reason[128] = {};
    if (stage1_can_serve(request.variant, problem, device, reason, sizeof(reason))) {
        c.forced = true;
        c.variant = request.variant;
        std::snprintf(c.note, sizeof(c.note), "variant forced by MLA_DECODE_STAGE1=%s", name);
    } else {
        std::snprintf(c.note, sizeof(c.note),
                      "MLA_DECODE_STAGE1=%s not available: %s; the planner's choice stands",
                      name, reason);
    }
    return c;
}

}  // namespace mla
