// The stage-1 variants of the split-KV family: kernels that each do all of stage 1 for a plan,
// one header each in kernels/splitkv/stage1/<name>.h. Plain C++, host- and device-includable.
// Which variant serves a problem is the plan's choice (src/stage1_select.cpp); the
// environment variable MLA_DECODE_STAGE1=<name> forces one where it can serve.
#pragma once

#include <cstdint>

namespace mla::splitkv {

enum class Stage1Variant : int32_t {
    kMma16 = 0,  // warp-level mma.sync m16n8k16 / MFMA 16x16x16, 16 query rows per CTA; every
                 // format and architecture (stage1/mma16.h)
    kWgmma = 1,  // Hopper warpgroup MMA, sm_90a builds only (stage1/wgmma.h)
};
inline constexpr int kStage1Variants = 2;

// Cache tokens per tile of the wgmma variant (wgmma's M; WgmmaConfig::kTileTokens).
inline constexpr int kWgmmaTileTokens = 64;

// "mma16", "wgmma"; "?" for a value outside the enum.
constexpr const char* stage1_variant_name(Stage1Variant variant) {
    switch (variant) {
        case Stage1Variant::kMma16: return "mma16";
        case Stage1Variant::kWgmma: return "wgmma";
    }
    return "?";
}

}  // namespace mla::splitkv
