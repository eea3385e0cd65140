// The host dispatch of the split-KV family: the shape of each stage-1 variant in this build,
// and stage 1 by variant and format, then the reduce. The kernels themselves are compiled in
// instantiations/ (launch.h declares them).
#include "splitkv/launch.h"

#include "splitkv/stage1/mma16.h"  // Mma16Shape (its launchers are extern templates here)

namespace mla::splitkv {
namespace {

gpu::error_t launch_mma16(const Params& params, KvFormat format, gpu::stream_t stream) {
    switch (format) {
        case KvFormat::kBf16: return launch_stage1_mma16<KvFormat::kBf16>(params, stream);
        case KvFormat::kFp8E4M3FN:
            return params.fp8_mma ? launch_stage1_mma16<KvFormat::kFp8E4M3FN, true>(params, stream)
                                  : launch_stage1_mma16<KvFormat::kFp8E4M3FN>(params, stream);
        case KvFormat::kFp8E4M3FNUZ:
            return params.fp8_mma
                       ? launch_stage1_mma16<KvFormat::kFp8E4M3FNUZ, true>(params, stream)
                       : launch_stage1_mma16<KvFormat::kFp8E4M3FNUZ>(params, stream);
        case KvFormat::kMxfp4: return launch_stage1_mma16<KvFormat::kMxfp4>(params, stream);
        case KvFormat::kMxfp4Fp8E4M3FN:
            return launch_stage1_mma16<KvFormat::kMxfp4Fp8E4M3FN>(params, stream);
        case KvFormat::kMxfp4Fp8E4M3FNUZ:
            return launch_stage1_mma16<KvFormat::kMxfp4Fp8E4M3FNUZ>(params, stream);
        case KvFormat::kFp8E4M3FNBf16Rope:
            return launch_stage1_mma16<KvFormat::kFp8E4M3FNBf16Rope>(params, stream);
        case KvFormat::kFp8E4M3FNUZBf16Rope:
            return launch_stage1_mma16<KvFormat::kFp8E4M3FNUZBf16Rope>(params, stream);
    }
    return gpu::kErrorInvalidValue;
}

// Whether `format`'s mma16 kernel of `rows` rows per CTA fits this architecture.
constexpr bool mma16_fits(KvFormat format, int rows) {
    switch (format) {
        case KvFormat::kBf16: return mma16_rows_fit<KvFormat::kBf16>(rows);
        case KvFormat::kFp8E4M3FN: return mma16_rows_fit<KvFormat::kFp8E4M3FN>(rows);
        case KvFormat::kFp8E4M3FNUZ: return mma16_rows_fit<KvFormat::kFp8E4M3FNUZ>(rows);
        case KvFormat::kMxfp4: return mma16_rows_fit<KvFormat::kMxfp4>(rows);
        case KvFormat::kMxfp4Fp8E4M3FN: return mma16_rows_fit<KvFormat::kMxfp4Fp8E4M3FN>(rows);
        case KvFormat::kMxfp4Fp8E4M3FNUZ:
            return mma16_rows_fit<KvFormat::kMxfp4Fp8E4M3FNUZ>(rows);
        case KvFormat::kFp8E4M3FNBf16Rope:
            return mma16_rows_fit<KvFormat::kFp8E4M3FNBf16Rope>(rows);
        case KvFormat::kFp8E4M3FNUZBf16Rope:
            return mma16_rows_fit<KvFormat::kFp8E4M3FNUZBf16Rope>(rows);
    }
    return false;
}

}  // namespace

Stage1Shape stage1_shape(Stage1Variant variant, KvFormat format) {
    switch (variant) {
        case Stage1Variant::kMma16: {
            // The rows of kMma16Rows whose kernel fits the architecture (mma16_rows_fit).
            Stage1Shape shape{{0, 0, 0}, Mma16Shape::kTileTokens};
            int n = 0;
            for (const int rows : kMma16Rows)
                if (mma16_fits(format, rows)) shape.rows_per_cta[n++] = rows;
            return shape;
        }
        case Stage1Variant::kWgmma:
#if defined(MLA_HAVE_STAGE1_WGMMA)
            // bf16: two 74.75 KB stages fit beside Q^T of 16 or 32 rows, not of 64 (wgmma.h)
            if (format == KvFormat::kBf16) return {{16, 32, 0}, kWgmmaTileTokens};
            return {{16, 32, 64}, kWgmmaTileTokens};
#else
            (void)format;
            break;  // not in this build
#endif
    }
    return {{0, 0, 0}, 0};
}

namespace {
thread_local bool t_last_stage1_tma = false;
}  // namespace

bool last_stage1_tma() { return t_last_stage1_tma; }
void note_stage1_tma(bool tma) { t_last_stage1_tma = tma; }

gpu::error_t launch_attention(const Params& params, Stage1Variant variant, KvFormat format,
                              bool dependent_reduce, gpu::stream_t stream) {
    note_stage1_tma(false);
    gpu::error_t e = gpu::kErrorInvalidValue;
    switch (variant) {
        case Stage1Variant::kMma16: e = launch_mma16(params, format, stream); break;
        case Stage1Variant::kWgmma:
#if defined(MLA_HAVE_STAGE1_WGMMA)
            if (format == KvFormat::kFp8E4M3FN && params.fp8_mma)
                e = launch_stage1_wgmma<KvFormat::kFp8E4M3FN, true>(params, stream);
            else if (format == KvFormat::kFp8E4M3FN)
                e = launch_stage1_wgmma<KvFormat::kFp8E4M3FN, false>(params, stream);
            else if (format == KvFormat::kFp8E4M3FNUZ)
                e = launch_stage1_wgmma<KvFormat::kFp8E4M3FNUZ, false>(params, stream);
            else if (format == KvFormat::kBf16)
                e = launch_stage1_wgmma<KvFormat::kBf16, false>(params, stream);
            else if (format == KvFormat::kMxfp4)
                e = launch_stage1_wgmma<KvFormat::kMxfp4, false>(params, stream);
            else if (format == KvFormat::kMxfp4Fp8E4M3FN)
                e = launch_stage1_wgmma<KvFormat::kMxfp4Fp8E4M3FN, false>(params, stream);
            else if (format == KvFormat::kMxfp4Fp8E4M3FNUZ)
                e = launch_stage1_wgmma<KvFormat::kMxfp4Fp8E4M3FNUZ, false>(params, stream);
            else if (format == KvFormat::kFp8E4M3FNBf16Rope)
                e = launch_stage1_wgmma<KvFormat::kFp8E4M3FNBf16Rope, false>(params, stream);
            else if (format == KvFormat::kFp8E4M3FNUZBf16Rope)
                e = launch_stage1_wgmma<KvFormat::kFp8E4M3FNUZBf16Rope, false>(params, stream);
#endif
            break;
    }
    if (e != gpu::kSuccess || !params.split_kv) return e;
    return launch_reduce(params, dependent_reduce, stream);
}

}  // namespace mla::splitkv
