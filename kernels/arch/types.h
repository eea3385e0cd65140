// Plain enums of the architecture layer that host code names too (the KV format table,
// splitkv/formats.h): element types of the matrix atoms and the two fp8 flavours. No GPU header,
// no device code: includable from host C++.
#pragma once

namespace mla::arch {

// Element types the matrix atoms multiply.
enum class MmaType { kF16, kBF16, kE4M3 };

// The two e4m3 encodings (arch/fp8.h decodes both): OCP e4m3fn (bias 7) and CDNA3's e4m3fnuz
// (bias 8).
enum class Fp8Flavor { kE4M3FN, kE4M3FNUZ };

}  // namespace mla::arch
