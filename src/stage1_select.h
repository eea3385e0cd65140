// Which stage-1 variant (kernels/splitkv/variants.h) serves a plan: the planner's pick, unless
// the environment variable MLA_DECODE_STAGE1=<name> forces one that can serve the problem on
// this device in this build (a debug switch, so that every test suite can run each variant).
// Plain host code, no device calls: unit-tested on the CPU (tests/test_plan.cpp).
#pragma once

#include <cstddef>

#include "device_info.h"
#include "mla_decode.h"
#include "splitkv/formats.h"
#include "splitkv/variants.h"

namespace mla {

// What MLA_DECODE_STAGE1 asks for.
struct Stage1Request {
    bool forced = false;  // a variant was named
    bool unknown = false;  // the name is no variant's (plan creation then fails)
    splitkv::Stage1Variant variant = splitkv::Stage1Variant::kMma16;
    char name[32] = {};   // the value as given (truncated), for messages
};

// The request in the value of MLA_DECODE_STAGE1 (NULL or "": nothing forced).
Stage1Request parse_stage1_request(const char* value);

// SUCCESS, or INVALID_VALUE naming the valid variants when the request names none.
mla_status check_stage1_request(const Stage1Request& request);

// What a variant's availability depends on, besides the device and the build.
struct Stage1Problem {
    splitkv::KvFormat format = splitkv::KvFormat::kBf16;
    int num_heads = 16;
    int max_q_len = 1;
    int q_dtype = MLA_DTYPE_BF16;
};

// Whether this build has `variant`'s kernels (wgmma: only with MLA_HAVE_STAGE1_WGMMA, i.e. the
// sm_90a sources of src/CMakeLists.txt compiled).
bool stage1_variant_built(splitkv::Stage1Variant variant);

// The one place that decides whether `variant` can serve `problem` on `device` in this build;
// when it cannot, `reason` (if not NULL) gets why, one short clause.
bool stage1_can_serve(splitkv::Stage1Variant variant, const Stage1Problem& problem,
                      const DeviceInfo& device, char* reason, size_t reason_bytes);

// Whether every device pass of this build has mma16's e4m3 score atom (MLA_HAVE_MMA16_E4M3,
// src/CMakeLists.txt: NVIDIA sm_89+ and AMD gfx940 / gfx941 / gfx942 / gfx950 passes only).
bool mma16_e4m3_built();

// The e4m3 flavour the device's warp-level matrix instructions multiply as codes, into *flavor:
// OCP e4m3fn on NVIDIA from sm_89 on and on AMD gfx950 (CDNA4), e4m3fnuz on AMD gfx940 / gfx941
// / gfx942 (CDNA3). False where they take no e4m3 (NVIDIA before sm_89, other AMD targets).
bool device_e4m3_mma(const DeviceInfo& device, arch::Fp8Flavor* flavor);

// Whether a plan of `variant` for `problem` on `device` runs its score product on e4m3 codes
// when MLA_DECODE_FLAG_FP8_MMA asks for it (batch-invariant plans never do: plan.cpp):
//   wgmma: e4m3fn Q on an e4m3fn cache;
//   mma16: Q of the cache's flavour on an fp8 cache of 576 fp8 dims (no bf16 rope), where the
//     device multiplies that flavour (device_e4m3_mma) and every device pass of this build has
//     the atom (MLA_HAVE_MMA16_E4M3, src/CMakeLists.txt); and only where `forced`
//     (MLA_DECODE_STAGE1=mma16, as the GPU suite's .stage1_mma16 runs do): on the H200 they
//     meet the fp8-Q rule but cost 1.05-1.07x mma16's widened scores on long CTAs (0.85-0.87x
//     at 1-2 tiles; s42), which the planner's cost table does not know, and AMD's atoms have
//     not yet run (none of AMD's GPUs is available to the project).
bool stage1_e4m3_scores(splitkv::Stage1Variant variant, const Stage1Problem& problem,
                        const DeviceInfo& device, bool forced);

struct Stage1Choice {
    bool forced = false;  // true: only `variant` may serve (forced, and it can)
    splitkv::Stage1Variant variant = splitkv::Stage1Variant::kMma16;
    char note[192] = {};  // for the plan's description: how the request was honoured, or ""
};

// The variants a plan may use: the forced one where it can serve (forced = true); otherwise
// every variant that can serve, the planner picking by cost (plan.cpp), with a note saying why
// a forced one could not. Expects check_stage1_request(request) == SUCCESS.
Stage1Choice choose_stage1_variant(const Stage1Request& request, const Stage1Problem& problem,
                                   const DeviceInfo& device);

}  // namespace mla
