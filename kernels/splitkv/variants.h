// The stage-1 variants of the split-KV family: kernels that each do all of stage 1 for a plan,
// one header each in kernels/splitkv/stage1/<name>.h. Plain C++, host- and device-includable.
// Which variant serves a problem is the plan's choice (src/stage1_select.cpp); the
// environment variable MLA_DECODE_STAGE1=<name> forces one where it can serve.
#pragma once

#include <cstdint>

#include "splitkv/formats.h"

namespace mla::splitkv {

enum class Stage1Variant : int32_t {
    kMma16 = 0,  // warp-level mma.sync m16n8k16 / MFMA 16x16x16, 16 query rows per CTA; every
                 // format and architecture (stage1/mma16.h)
    kWgmma = 1,  // Hopper warpgroup MMA, sm_90a builds only (stage1/wgmma.h)
};
inline constexpr int kStage1Variants = 2;

// How the mma16 kernels move tiles into shared memory (stage1/mma16.h), fixed per build by
// MLA_MMA16_COPIES (CMakeLists.txt; the plan's description names a setting other than the
// backend's default, kMma16CopiesDefault):
//   kAsync   cp.async, up to three tiles in flight (NVIDIA's default);
//   kSingle  one tile, its copies waited for before its products (plain loads on AMD, no
//            asynchronous path in the arch layer; MLA_MMA16_COPIES=single);
//   kStaged  one tile in shared memory and the next in registers: a thread issues its loads of
//            tile t + 1 before tile t's products and stores them after them, so the memory's
//            latency overlaps the products (AMD's default since 0.7.28: CDNA's global-prefetch
//            form; MLA_MMA16_COPIES=staged runs it on NVIDIA too). On the H100 (forty-sixth
//            session, mma16 forced, fp8 e4m3fn at 16 / 32 rows, 8 shapes) staged took 0.99x
//            cp.async's time and single 1.26x; AMD itself is not measured.
enum class Mma16Copies : int32_t { kAsync = 0, kSingle = 1, kStaged = 2 };
#if defined(MLA_BACKEND_HIP) || defined(MLA_BACKEND_EMU)  // emu: the AMD path on the CPU
inline constexpr Mma16Copies kMma16CopiesDefault = Mma16Copies::kStaged;
#else
inline constexpr Mma16Copies kMma16CopiesDefault = Mma16Copies::kAsync;
#endif
#if defined(MLA_MMA16_COPIES_STAGED)
inline constexpr Mma16Copies kMma16Copies = Mma16Copies::kStaged;
#elif defined(MLA_MMA16_COPIES_SINGLE)
inline constexpr Mma16Copies kMma16Copies = Mma16Copies::kSingle;
#else
inline constexpr Mma16Copies kMma16Copies = kMma16CopiesDefault;
#endif
// MLA_MMA16_COPIES's name of a setting: "auto" (the backend's default), "staged", "single"
// ("async" is only ever the default).
constexpr const char* mma16_copies_name(Mma16Copies copies) {
    if (copies == kMma16CopiesDefault) return "auto";
    switch (copies) {
        case Mma16Copies::kAsync: return "async";
        case Mma16Copies::kSingle: return "single";
        case Mma16Copies::kStaged: return "staged";
    }
    return "?";
}

// Cache tokens per tile of the wgmma variant (wgmma's M; WgmmaConfig::kTileTokens).
inline constexpr int kWgmmaTileTokens = 64;

// The wgmma variant's long-CTA kernel: at 16 rows of fp8 caches (e4m3fn, e4m3fnuz; bf16 or e4m3
// scores), plans whose split length is at least kWgmmaLongCtaTiles tiles launch three solo
// consumers (WgmmaConfig::kLongCta) instead of the two-consumer seesaw. Measured on the H200
// (twenty-sixth session, every 16-row fp8 plan on it): 0.969x at bs256 kv8192 H16 (128 tiles
// a CTA), 0.982x at bs64 kv8192 (2 splits of 64), but 1.01-1.04x at 32 tiles a CTA and 1.09x at
// 2 (the three-way merge and the ring's start are a fixed cost). Twenty-seventh session, single
// splits at 128 and 256 CTAs: 40-56 tiles 0.968-0.993 (bs256 kv2560 125.4 -> 122.1 us), 32
// tiles 0.975 / 1.003-1.004; so 40. e4m3 scores took it in the forty-eighth session (below).
inline constexpr int kWgmmaLongCtaTiles = 40;
constexpr bool wgmma_long_cta(KvFormat format, int rows_per_cta, int tiles_per_split) {
    return (format == KvFormat::kFp8E4M3FN || format == KvFormat::kFp8E4M3FNUZ) &&
           rows_per_cta == 16 && tiles_per_split >= kWgmmaLongCtaTiles;
}

// The formats whose wgmma kernels have a balanced-schedule form (splitkv/balanced.h,
// WgmmaConfig::kBalanced): e4m3fn caches, bf16 or e4m3 scores, at 16, 32 and 64 rows (the
// seesaw or the solo consumers; no long-CTA kernel, no MXFP4 decoders).
constexpr bool wgmma_balanced(KvFormat format) { return format == KvFormat::kFp8E4M3FN; }

// The wgmma kernels whose stages hold each tile in wgmma's K-major 128-byte swizzle
// (WgmmaConfig::kSwizzled, which asserts this): fp8 caches (e4m3fn, e4m3fnuz) at 16 and 64 rows,
// and e4m3fn at 32, with bf16 or e4m3 scores alike; only e4m3fnuz at 32 rows keeps padded
// stages. Only these take whole tiles by TMA (arch/nvidia/tma.h), and only on a contiguous cache
// or pages of a multiple of kWgmmaTileTokens tokens.
//   32 rows, A/B on the H100 against padded stages (forty-seventh session, bf16 scores):
// e4m3fn 0.940-0.973 (bs128 kv4096 H16 q2 130.1 -> 122.4 us; 8 tiles a CTA 0.962), e4m3fnuz
// 1.04-1.11 in CTAs of 32-64 tiles (137.7 -> 150.4; its consumers at 232 registers beside a
// producer of 32, not profiled).
//   e4m3 scores at 16 and 32 rows (and the long CTAs at 16), A/B on the H200 against padded
// stages (forty-eighth session): from 8 tiles a CTA 0.937-0.976 (bs64 kv8192 H16 98.4 -> 92.2
// us, bs256 kv8192 319.0 -> 311.3), 32 rows 0.946 / 0.914 on 16-token pages / 0.991 at 8
// tiles; at 2-4 tiles 0.945 (bs4 kv1024, 32 CTAs) and 1.028-1.040 (128 CTAs), as the f16
// seesaw's swizzled stages in short CTAs (below).
constexpr bool wgmma_swizzled_stages(KvFormat format, int rows_per_cta) {
    return format == KvFormat::kFp8E4M3FN ||
           (format == KvFormat::kFp8E4M3FNUZ && rows_per_cta != 32);
}

// Whether a plan's stage-1 kernel takes whole tiles by TMA (where the cache allows it): the
// swizzled kernels, but the 16-row seesaw only where its CTAs take kWgmmaTma16MinTiles tiles or
// more (a split's tiles, tiles_per_split: the most a CTA of the plan takes; its last split's CTAs
// and short elements' may take fewer, and TMA then too). Shorter CTAs fill the same swizzled stages
// by the producer's row copies. Against the padded seesaw (0.7.28) on the H100 (s47, contiguous
// caches): at 2-4 tiles a CTA copies took 0.996-1.025x its time (mean 1.013), TMA 1.001-1.038x
// (mean 1.021); from 8 tiles TMA took 0.948-0.969x. 16-token pages (copies) took 0.977-0.982x at 4
// tiles. Neither fills short CTAs as fast as the padded stages did; why is not known (ncu, s48,
// H100, bs32 kv1024 H16, 4 tiles a CTA: 26,007 cycles against 24,738; most of the extra warp
// samples lie in the consumers' Q prologue, 376 against 307 of ~1,300).
// (The long CTAs' splits are longer still: they always take TMA.)
inline constexpr int kWgmmaTma16MinTiles = 8;
static_assert(kWgmmaLongCtaTiles >= kWgmmaTma16MinTiles, "long CTAs take whole tiles by TMA");
constexpr bool wgmma_tiles_by_tma(KvFormat format, int rows_per_cta, int tiles_per_split) {
    return wgmma_swizzled_stages(format, rows_per_cta) &&
           (rows_per_cta != 16 || tiles_per_split >= kWgmmaTma16MinTiles);
}

// Query rows per CTA of the mma16 kernels (stage1/mma16.h, Mma16Config): one row group of 16
// (the atoms' rows), or 2 or 4 groups that meet each cache tile once (K loaded and decoded once
// for every group, V loaded once), so that an element's cache is read once per 32 or 64 rows.
inline constexpr int kMma16Rows[] = {16, 32, 64};

// "mma16", "wgmma"; "?" for a value outside the enum.
constexpr const char* stage1_variant_name(Stage1Variant variant) {
    switch (variant) {
        case Stage1Variant::kMma16: return "mma16";
        case Stage1Variant::kWgmma: return "wgmma";
    }
    return "?";
}

}  // namespace mla::splitkv
