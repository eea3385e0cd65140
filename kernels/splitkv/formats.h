// The KV cache formats of the split-KV family: one table of facts per format, the only place
// they are stated. Plain C++ (no GPU header, nothing device-only): the planner, src/, tests and
// the benchmark read it on the host through kv_traits(format); kernels read the same facts at
// compile time through KvTraits<F>.
#pragma once

#include "arch/types.h"
#include "mla_decode.h"

namespace mla::splitkv {

inline constexpr int kHeadDimQk = 576;
inline constexpr int kHeadDimV = 512;
inline constexpr int kKvLoraRank = 512;  // the latent dims of Q and K; the rope dims follow
inline constexpr int kMxfp4BlockSize = 32;
inline constexpr int kMxfp4RowBytes = kHeadDimQk / 2;
inline constexpr int kMxfp4RowScales = kHeadDimQk / kMxfp4BlockSize;
static_assert(kHeadDimQk == MLA_HEAD_DIM_QK && kHeadDimV == MLA_HEAD_DIM_V &&
                  kKvLoraRank == MLA_KV_LORA_RANK,
              "the ABI's geometry");
static_assert(kMxfp4RowBytes == MLA_MXFP4_ROW_BYTES && kMxfp4RowScales == MLA_MXFP4_ROW_SCALES,
              "the ABI's MXFP4 rows");

// Cache formats with a stage-1 kernel of their own (compile-time: they change the data flow).
//   kBf16, kFp8*: K and V from the same 576-element rows.
//   kMxfp4: K and V from the same MXFP4 rows (288 bytes + 18 e8m0 scales).
//   kMxfp4Fp8*: K from the MXFP4 rows, V from a separate fp8 cache (512 codes per slot).
//   kFp8*Bf16Rope: the split cache of DeepSeek-V3.2: K's latent dims (and V) from 512 fp8 codes
//     per latent row, K's rope dims from 64 bf16 values per rope row (not scaled by kv_scale).
// (New formats go last: plans record a format by its value.)
enum class KvFormat {
    kBf16,
    kFp8E4M3FN,
    kFp8E4M3FNUZ,
    kMxfp4,
    kMxfp4Fp8E4M3FN,
    kMxfp4Fp8E4M3FNUZ,
    kFp8E4M3FNBf16Rope,
    kFp8E4M3FNUZBf16Rope,
};

// How the values of one operand (K or V) are stored.
enum class KvCodec {
    kBf16,   // as bf16, read as stored
    kFp8,    // e4m3 codes, decoded exactly to f16 (the tensor scale applied after the products)
    kMxfp4,  // e2m1 pairs with an e8m0 scale per 32 values, decoded exactly to bf16
};

// The facts of one format.
struct KvFormatTraits {
    const char* name;             // "bf16", "fp8_e4m3fn", ...: plan descriptions, logs
    KvCodec k_codec;              // K: the 576 dims of a latent row (the latent dims 0..511
                                  // where rope_codec differs)
    KvCodec rope_codec;           // K's rope dims 512..575: k_codec, or bf16 beside fp8 codes
    KvCodec v_codec;              // V: 512 dims, of the latent row or of the separate V cache
    bool v_separate;              // V from a separate cache (v_cache), not the latent row
    int k_row_bytes;              // bytes of a latent row's 576 values (latent + rope bytes)
    int k_latent_bytes;           // of those, the bytes of dims 0..511 (the rest: the rope's)
    int k_scale_bytes;            // e8m0 scale codes of a latent row (MXFP4), else 0
    int v_row_bytes;              // bytes of a separate V row's 512 values, else 0
    arch::Fp8Flavor fp8_flavor;   // of whichever operand is fp8; kE4M3FN when none is
    arch::MmaType score_mma;      // Q K^T: f16 for fp8 K (Q scaled into f16 range), else bf16
                                  // (a bf16 rope beside fp8 codes: bf16 for its dims)
    arch::MmaType value_mma;      // P V: f16 for fp8 V, else bf16 (P as a bf16 hi + lo pair)
    int streamed_bytes;           // cache bytes per token stage 1 reads: K, scales, separate V
};

namespace detail {
constexpr int codec_row_bytes(KvCodec c, int values) {
    return c == KvCodec::kBf16 ? 2 * values : (c == KvCodec::kFp8 ? values : values / 2);
}
// K's latent dims in codec k, its rope dims in codec `rope`.
constexpr KvFormatTraits make_kv_traits(const char* name, KvCodec k, KvCodec rope, KvCodec v,
                                        bool v_separate, arch::Fp8Flavor flavor) {
    const int latent_bytes = codec_row_bytes(k, kKvLoraRank);
    const int k_bytes = latent_bytes + codec_row_bytes(rope, kHeadDimQk - kKvLoraRank);
    const int scale_bytes = k == KvCodec::kMxfp4 ? kMxfp4RowScales : 0;
    const int v_bytes = v_separate ? codec_row_bytes(v, kHeadDimV) : 0;
    return KvFormatTraits{name,
                          k,
                          rope,
                          v,
                          v_separate,
                          k_bytes,
                          latent_bytes,
                          scale_bytes,
                          v_bytes,
                          flavor,
                          k == KvCodec::kFp8 ? arch::MmaType::kF16 : arch::MmaType::kBF16,
                          v == KvCodec::kFp8 ? arch::MmaType::kF16 : arch::MmaType::kBF16,
                          k_bytes + scale_bytes + v_bytes};
}
// K's 576 dims all in codec k.
constexpr KvFormatTraits make_kv_traits(const char* name, KvCodec k, KvCodec v, bool v_separate,
                                        arch::Fp8Flavor flavor) {
    return make_kv_traits(name, k, k, v, v_separate, flavor);
}
}  // namespace detail

// The facts of `format` (host and device, usable in constant expressions).
constexpr KvFormatTraits kv_traits(KvFormat format) {
    using arch::Fp8Flavor;
    switch (format) {
        case KvFormat::kBf16:
            return detail::make_kv_traits("bf16", KvCodec::kBf16, KvCodec::kBf16, false,
                                          Fp8Flavor::kE4M3FN);
        case KvFormat::kFp8E4M3FN:
            return detail::make_kv_traits("fp8_e4m3fn", KvCodec::kFp8, KvCodec::kFp8, false,
                                          Fp8Flavor::kE4M3FN);
        case KvFormat::kFp8E4M3FNUZ:
            return detail::make_kv_traits("fp8_e4m3fnuz", KvCodec::kFp8, KvCodec::kFp8, false,
                                          Fp8Flavor::kE4M3FNUZ);
        case KvFormat::kMxfp4:
            return detail::make_kv_traits("mxfp4", KvCodec::kMxfp4, KvCodec::kMxfp4, false,
                                          Fp8Flavor::kE4M3FN);
        case KvFormat::kMxfp4Fp8E4M3FN:
            return detail::make_kv_traits("mxfp4k_fp8v_e4m3fn", KvCodec::kMxfp4, KvCodec::kFp8,
                                          true, Fp8Flavor::kE4M3FN);
        case KvFormat::kMxfp4Fp8E4M3FNUZ:
            return detail::make_kv_traits("mxfp4k_fp8v_e4m3fnuz", KvCodec::kMxfp4, KvCodec::kFp8,
                                          true, Fp8Flavor::kE4M3FNUZ);
        case KvFormat::kFp8E4M3FNBf16Rope:
            return detail::make_kv_traits("fp8_e4m3fn_bf16_rope", KvCodec::kFp8, KvCodec::kBf16,
                                          KvCodec::kFp8, false, Fp8Flavor::kE4M3FN);
        case KvFormat::kFp8E4M3FNUZBf16Rope:
            return detail::make_kv_traits("fp8_e4m3fnuz_bf16_rope", KvCodec::kFp8, KvCodec::kBf16,
                                          KvCodec::kFp8, false, Fp8Flavor::kE4M3FNUZ);
    }
    return detail::make_kv_traits("?", KvCodec::kBf16, KvCodec::kBf16, false, Fp8Flavor::kE4M3FN);
}

// The same facts as compile-time constants, for kernel configurations (which may derive from it).
template <KvFormat F>
struct KvTraits {
    static constexpr KvFormatTraits kTraits = kv_traits(F);
    static constexpr bool kKFp8 = kTraits.k_codec == KvCodec::kFp8;
    static constexpr bool kKMxfp4 = kTraits.k_codec == KvCodec::kMxfp4;
    static constexpr bool kVSeparate = kTraits.v_separate;
    static constexpr bool kVFp8 = kTraits.v_codec == KvCodec::kFp8;    // V decoded from fp8 to f16
    static constexpr bool kVBf16 = kTraits.v_codec == KvCodec::kBf16;  // V read as stored
    static constexpr arch::Fp8Flavor kFp8Flavor = kTraits.fp8_flavor;
    static constexpr arch::MmaType kScoreMma = kTraits.score_mma;
    static constexpr arch::MmaType kValueMma = kTraits.value_mma;
    static constexpr int kKRowBytes = kTraits.k_row_bytes;
    // Bytes of a K row's latent dims (0..511): read from the latent row (Params::kv); the row's
    // remaining bytes, the rope dims, from the rope row (Params::kpe).
    static constexpr int kKLatentBytes = kTraits.k_latent_bytes;
    // K's rope dims in bf16 beside fp8 latent codes (their own score product).
    static constexpr bool kRopeBf16 = kTraits.rope_codec != kTraits.k_codec;
    static_assert(!kRopeBf16 || (kTraits.k_codec == KvCodec::kFp8 &&
                                 kTraits.rope_codec == KvCodec::kBf16 && !kVSeparate),
                  "a rope codec of its own: bf16 beside fp8 latent rows only");
    static_assert((kRopeBf16 || kKLatentBytes * kHeadDimQk == kKRowBytes * kKvLoraRank) &&
                      kKLatentBytes % 16 == 0 && (kKRowBytes - kKLatentBytes) % 16 == 0,
                  "the latent dims end on a 16-byte piece of the row");
    static constexpr int kKScaleBytes = kTraits.k_scale_bytes;
    static constexpr int kVRowBytes = kTraits.v_row_bytes;
};

// The format of a problem's cache from the ABI's dtype fields: kv_dtype, and v_dtype (0: V from
// the latent rows; FP8_E4M3FN / FP8_E4M3FNUZ: V from v_cache, with MXFP4 keys only), for
// 576-wide rows or a rope cache of the latent's dtype. False for a pair no stage-1 kernel serves.
inline bool kv_format_of(mla_dtype kv_dtype, mla_dtype v_dtype, KvFormat* format) {
    const int v = static_cast<int>(v_dtype);
    if (v == 0) {
        switch (kv_dtype) {
            case MLA_DTYPE_BF16: *format = KvFormat::kBf16; return true;
            case MLA_DTYPE_FP8_E4M3FN: *format = KvFormat::kFp8E4M3FN; return true;
            case MLA_DTYPE_FP8_E4M3FNUZ: *format = KvFormat::kFp8E4M3FNUZ; return true;
            case MLA_DTYPE_MXFP4: *format = KvFormat::kMxfp4; return true;
            default: return false;
        }
    }
    if (kv_dtype != MLA_DTYPE_MXFP4) return false;
    if (v == MLA_DTYPE_FP8_E4M3FN) *format = KvFormat::kMxfp4Fp8E4M3FN;
    else if (v == MLA_DTYPE_FP8_E4M3FNUZ) *format = KvFormat::kMxfp4Fp8E4M3FNUZ;
    else return false;
    return true;
}

// The same with the rope's dtype, kpe_dtype: 0 (576-wide rows) or kv_dtype (a rope cache of the
// latent's dtype) change nothing; BF16 beside an FP8 latent (and V from it) is kFp8*Bf16Rope.
inline bool kv_format_of(mla_dtype kv_dtype, mla_dtype v_dtype, mla_dtype kpe_dtype,
                         KvFormat* format) {
    const int kpe = static_cast<int>(kpe_dtype);
    if (kpe == 0 || kpe_dtype == kv_dtype) return kv_format_of(kv_dtype, v_dtype, format);
    if (kpe_dtype != MLA_DTYPE_BF16 || static_cast<int>(v_dtype) != 0) return false;
    if (kv_dtype == MLA_DTYPE_FP8_E4M3FN) *format = KvFormat::kFp8E4M3FNBf16Rope;
    else if (kv_dtype == MLA_DTYPE_FP8_E4M3FNUZ) *format = KvFormat::kFp8E4M3FNUZBf16Rope;
    else return false;
    return true;
}

}  // namespace mla::splitkv
