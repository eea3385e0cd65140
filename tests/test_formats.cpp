// The exact host codecs of src/formats.h against values computed here from the bit fields
// (std::ldexp), and encoders against a brute-force nearest-code search; the kernels' MXFP4 -> bf16
// decoder (kernels/arch/mxfp4.h, compiled here as host code) exhaustively against those codecs.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "arch/mxfp4.h"
#include "compare.h"
#include "mla_problem.h"
#include "formats.h"

namespace fmt = mla::fmt;

namespace {

// ---- independent decoders from the bit fields ------------------------------------------------

double e4m3fn_from_fields(int code) {
    int sign = code >> 7, exponent = (code >> 3) & 15, mantissa = code & 7;
    if (exponent == 15 && mantissa == 7) return std::numeric_limits<double>::quiet_NaN();
    double magnitude = exponent == 0 ? std::ldexp(mantissa, -9)              // m/8 * 2^(1-7)
                                     : std::ldexp(8 + mantissa, exponent - 10);  // 1.m * 2^(e-7)
    return sign ? -magnitude : magnitude;
}

double e4m3fnuz_from_fields(int code) {
    if (code == 0x80) return std::numeric_limits<double>::quiet_NaN();
    int sign = code >> 7, exponent = (code >> 3) & 15, mantissa = code & 7;
    double magnitude = exponent == 0 ? std::ldexp(mantissa, -10)             // m/8 * 2^(1-8)
                                     : std::ldexp(8 + mantissa, exponent - 11);  // 1.m * 2^(e-8)
    return sign ? -magnitude : magnitude;
}

double e2m1_from_fields(int code) {
    int sign = code >> 3, exponent = (code >> 1) & 3, mantissa = code & 1;
    double magnitude = exponent == 0 ? mantissa * 0.5 : std::ldexp(2 + mantissa, exponent - 2);
    return sign ? -magnitude : magnitude;
}

bool same_value(double a, double b) {
    if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
    return a == b && std::signbit(a) == std::signbit(b);
}

// Nearest code (ties to the code with an even last mantissa bit) among the non-negative finite
// codes 0..max_code of a decoder; magnitudes beyond the largest saturate to it.
template <typename Decode>
int nearest_magnitude_code(double ax, int max_code, Decode decode) {
    int best = 0;
    double best_diff = std::fabs(ax - decode(0));
    for (int c = 1; c <= max_code; ++c) {
        double diff = std::fabs(ax - decode(c));
        if (diff < best_diff || (diff == best_diff && (c & 1) == 0 && (best & 1) == 1)) {
            best = c;
            best_diff = diff;
        }
    }
    return best;
}

int brute_e4m3fn(double x) {
    int c = nearest_magnitude_code(std::fabs(x), 0x7E, e4m3fn_from_fields);
    return std::signbit(x) ? (c | 0x80) : c;
}

int brute_e4m3fnuz(double x) {
    int c = nearest_magnitude_code(std::fabs(x), 0x7F, e4m3fnuz_from_fields);
    return (std::signbit(x) && c != 0) ? (c | 0x80) : c;  // no negative zero
}

int brute_e2m1(double x) {
    int c = nearest_magnitude_code(std::fabs(x), 7, e2m1_from_fields);
    return std::signbit(x) ? (c | 8) : c;
}

// Every decoded value sorted: the midpoints between neighbours and points around them.
std::vector<double> probe_points(const std::vector<double>& sorted_magnitudes) {
    std::vector<double> points;
    for (size_t i = 0; i + 1 < sorted_magnitudes.size(); ++i) {
        double lo = sorted_magnitudes[i], hi = sorted_magnitudes[i + 1];
        double mid = 0.5 * (lo + hi);
        points.insert(points.end(), {lo, mid, std::nextafter(mid, 0.0), std::nextafter(mid, 1e9),
                                     lo + 0.25 * (hi - lo), lo + 0.75 * (hi - lo)});
    }
    points.push_back(sorted_magnitudes.back());
    return points;
}

std::vector<double> magnitudes(int max_code, double (*decode)(int)) {
    std::vector<double> out;
    for (int c = 0; c <= max_code; ++c) out.push_back(decode(c));
    return out;  // codes 0..max_code of these formats are increasing in value
}

}  // namespace

// ---- e4m3fn ------------------------------------------------------------------------------------

TEST(E4m3fn, AllCodesDecodeToTheirBitFields) {
    int nan_codes = 0;
    for (int code = 0; code < 256; ++code) {
        double want = e4m3fn_from_fields(code);
        double got = fmt::e4m3fn_to_double(static_cast<uint8_t>(code));
        EXPECT_TRUE(same_value(got, want)) << "code 0x" << std::hex << code << ": got " << got
                                           << ", want " << want;
        nan_codes += std::isnan(got) ? 1 : 0;
    }
    EXPECT_EQ(nan_codes, 2);  // 0x7F and 0xFF only
}

TEST(E4m3fn, SpecialCodes) {
    EXPECT_TRUE(std::isnan(fmt::e4m3fn_to_double(0x7F)));
    EXPECT_TRUE(std::isnan(fmt::e4m3fn_to_double(0xFF)));
    EXPECT_EQ(fmt::e4m3fn_to_double(0x7E), 448.0);
    EXPECT_EQ(fmt::e4m3fn_to_double(0xFE), -448.0);
    EXPECT_EQ(fmt::e4m3fn_to_double(0x01), std::ldexp(1.0, -9));  // min subnormal
    EXPECT_EQ(fmt::e4m3fn_to_double(0x08), std::ldexp(1.0, -6));  // min normal
    EXPECT_EQ(fmt::e4m3fn_to_double(0x38), 1.0);
    double negative_zero = fmt::e4m3fn_to_double(0x80);
    EXPECT_EQ(negative_zero, 0.0);
    EXPECT_TRUE(std::signbit(negative_zero));
}

TEST(E4m3fn, EncodeRoundTripsEveryFiniteCode) {
    for (int code = 0; code < 256; ++code) {
        if (code == 0x7F || code == 0xFF) continue;
        EXPECT_EQ(fmt::e4m3fn_from_double(fmt::e4m3fn_to_double(static_cast<uint8_t>(code))), code)
            << "code 0x" << std::hex << code;
    }
}

TEST(E4m3fn, EncodeMatchesNearestEvenSearch) {
    std::vector<double> points = probe_points(magnitudes(0x7E, e4m3fn_from_fields));
    for (double p : points) {
        for (double x : {p, -p}) {
            EXPECT_EQ(fmt::e4m3fn_from_double(x), brute_e4m3fn(x)) << "x = " << x;
        }
    }
}

TEST(E4m3fn, EncodeSaturatesAndKeepsNan) {
    EXPECT_EQ(fmt::e4m3fn_from_double(448.0), 0x7E);
    EXPECT_EQ(fmt::e4m3fn_from_double(464.0), 0x7E);  // midpoint to 480 (not a value): saturate
    EXPECT_EQ(fmt::e4m3fn_from_double(500.0), 0x7E);
    EXPECT_EQ(fmt::e4m3fn_from_double(1e30), 0x7E);
    EXPECT_EQ(fmt::e4m3fn_from_double(-1e30), 0xFE);
    EXPECT_EQ(fmt::e4m3fn_from_double(INFINITY), 0x7E);
    EXPECT_EQ(fmt::e4m3fn_from_double(-INFINITY), 0xFE);
    EXPECT_TRUE(std::isnan(fmt::e4m3fn_to_double(fmt::e4m3fn_from_double(NAN))));
    EXPECT_EQ(fmt::e4m3fn_from_double(-0.0), 0x80);
    EXPECT_EQ(fmt::e4m3fn_from_double(-1e-10), 0x80);
    EXPECT_EQ(fmt::e4m3fn_from_double(std::ldexp(1.0, -10)), 0x00);   // tie 0 / 2^-9: even
    EXPECT_EQ(fmt::e4m3fn_from_double(std::ldexp(3.0, -10)), 0x02);   // tie 1 / 2: even
}

// ---- e4m3fnuz ----------------------------------------------------------------------------------

TEST(E4m3fnuz, AllCodesDecodeToTheirBitFields) {
    int nan_codes = 0;
    for (int code = 0; code < 256; ++code) {
        double want = e4m3fnuz_from_fields(code);
        double got = fmt::e4m3fnuz_to_double(static_cast<uint8_t>(code));
        EXPECT_TRUE(same_value(got, want)) << "code 0x" << std::hex << code << ": got " << got
                                           << ", want " << want;
        nan_codes += std::isnan(got) ? 1 : 0;
        EXPECT_FALSE(std::isinf(got)) << "code 0x" << std::hex << code;
    }
    EXPECT_EQ(nan_codes, 1);  // 0x80 only
}

TEST(E4m3fnuz, SpecialCodes) {
    EXPECT_TRUE(std::isnan(fmt::e4m3fnuz_to_double(0x80)));
    EXPECT_EQ(fmt::e4m3fnuz_to_double(0x7F), 240.0);
    EXPECT_EQ(fmt::e4m3fnuz_to_double(0xFF), -240.0);
    EXPECT_EQ(fmt::e4m3fnuz_to_double(0x01), std::ldexp(1.0, -10));  // min subnormal
    EXPECT_EQ(fmt::e4m3fnuz_to_double(0x40), 1.0);
    EXPECT_EQ(fmt::e4m3fnuz_to_double(0x00), 0.0);
    EXPECT_FALSE(std::signbit(fmt::e4m3fnuz_to_double(0x00)));
}

TEST(E4m3fnuz, EncodeRoundTripsEveryFiniteCode) {
    for (int code = 0; code < 256; ++code) {
        if (code == 0x80) continue;
        EXPECT_EQ(fmt::e4m3fnuz_from_double(fmt::e4m3fnuz_to_double(static_cast<uint8_t>(code))),
                  code)
            << "code 0x" << std::hex << code;
    }
}

TEST(E4m3fnuz, EncodeMatchesNearestEvenSearch) {
    std::vector<double> points = probe_points(magnitudes(0x7F, e4m3fnuz_from_fields));
    for (double p : points) {
        for (double x : {p, -p}) {
            EXPECT_EQ(fmt::e4m3fnuz_from_double(x), brute_e4m3fnuz(x)) << "x = " << x;
        }
    }
}

TEST(E4m3fnuz, EncodeSaturatesAndHasNoNegativeZero) {
    EXPECT_EQ(fmt::e4m3fnuz_from_double(240.0), 0x7F);
    EXPECT_EQ(fmt::e4m3fnuz_from_double(250.0), 0x7F);
    EXPECT_EQ(fmt::e4m3fnuz_from_double(1e30), 0x7F);
    EXPECT_EQ(fmt::e4m3fnuz_from_double(-1e30), 0xFF);
    EXPECT_EQ(fmt::e4m3fnuz_from_double(INFINITY), 0x7F);
    EXPECT_EQ(fmt::e4m3fnuz_from_double(NAN), 0x80);
    EXPECT_EQ(fmt::e4m3fnuz_from_double(-0.0), 0x00);     // 0x80 would be the NaN
    EXPECT_EQ(fmt::e4m3fnuz_from_double(-1e-10), 0x00);
    EXPECT_EQ(fmt::e4m3fnuz_from_double(-std::ldexp(1.0, -11)), 0x00);  // tie to even: zero
}

// ---- e2m1 --------------------------------------------------------------------------------------

TEST(E2m1, SixteenCodes) {
    const double magnitudes_by_code[8] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};
    for (int code = 0; code < 16; ++code) {
        double want = (code & 8) ? -magnitudes_by_code[code & 7] : magnitudes_by_code[code & 7];
        double got = fmt::e2m1_to_double(static_cast<uint8_t>(code));
        EXPECT_EQ(got, want) << "code " << code;
        EXPECT_EQ(got, e2m1_from_fields(code)) << "code " << code;
    }
}

TEST(E2m1, EncodeRoundTripsAndRoundsToNearestEven) {
    for (int code = 0; code < 16; ++code) {
        EXPECT_EQ(fmt::e2m1_from_double(fmt::e2m1_to_double(static_cast<uint8_t>(code))), code);
    }
    std::vector<double> points = probe_points(magnitudes(7, e2m1_from_fields));
    for (double p : points) {
        for (double x : {p, -p}) EXPECT_EQ(fmt::e2m1_from_double(x), brute_e2m1(x)) << "x = " << x;
    }
    EXPECT_EQ(fmt::e2m1_from_double(0.25), 0x0);  // tie 0 / 0.5 -> 0
    EXPECT_EQ(fmt::e2m1_from_double(0.75), 0x2);  // tie 0.5 / 1 -> 1
    EXPECT_EQ(fmt::e2m1_from_double(1.25), 0x2);  // tie 1 / 1.5 -> 1
    EXPECT_EQ(fmt::e2m1_from_double(2.5), 0x4);   // tie 2 / 3 -> 2
    EXPECT_EQ(fmt::e2m1_from_double(3.5), 0x6);   // tie 3 / 4 -> 4
    EXPECT_EQ(fmt::e2m1_from_double(5.0), 0x6);   // tie 4 / 6 -> 4
    EXPECT_EQ(fmt::e2m1_from_double(7.0), 0x7);   // saturate
    EXPECT_EQ(fmt::e2m1_from_double(-100.0), 0xF);
}

TEST(E2m1, PackedPairNibbleOrder) {
    uint8_t byte = fmt::mxfp4_pack(0x3, 0xC);  // even index 1.5, odd index -2
    EXPECT_EQ(byte, 0xC3);
    EXPECT_EQ(fmt::mxfp4_low_to_double(byte), 1.5);
    EXPECT_EQ(fmt::mxfp4_high_to_double(byte), -2.0);
}

// ---- e8m0 and the MX scale ---------------------------------------------------------------------

TEST(E8m0, Codes) {
    EXPECT_EQ(fmt::e8m0_to_double(0), std::ldexp(1.0, -127));
    EXPECT_GT(fmt::e8m0_to_double(0), 0.0);  // not zero
    EXPECT_EQ(fmt::e8m0_to_double(1), std::ldexp(1.0, -126));
    EXPECT_EQ(fmt::e8m0_to_double(127), 1.0);
    EXPECT_EQ(fmt::e8m0_to_double(254), std::ldexp(1.0, 127));
    EXPECT_TRUE(std::isnan(fmt::e8m0_to_double(255)));
    for (int code = 0; code < 255; ++code) {
        EXPECT_EQ(fmt::e8m0_to_double(static_cast<uint8_t>(code)), std::ldexp(1.0, code - 127));
    }
}

TEST(MxScale, SharedExponentIsFloorLog2AmaxMinusTwo) {
    EXPECT_EQ(fmt::mx_e2m1_scale_code(6.0), 127);    // floor(log2 6) = 2 -> 2^0
    EXPECT_EQ(fmt::mx_e2m1_scale_code(4.0), 127);
    EXPECT_EQ(fmt::mx_e2m1_scale_code(7.9), 127);
    EXPECT_EQ(fmt::mx_e2m1_scale_code(8.0), 128);
    EXPECT_EQ(fmt::mx_e2m1_scale_code(1.0), 125);
    EXPECT_EQ(fmt::mx_e2m1_scale_code(0.02), 127 - 6 - 2);  // floor(log2 0.02) = -6
    EXPECT_EQ(fmt::mx_e2m1_scale_code(1e300), 254);  // clamped
    EXPECT_EQ(fmt::mx_e2m1_scale_code(1e-300), 0);   // clamped
    EXPECT_EQ(fmt::mx_e2m1_scale_code(0.0), 0);      // all-zero block: documented choice
    EXPECT_EQ(fmt::mx_e2m1_scale_code(NAN), 255);
}

TEST(MxScale, BlockEncodeDecodesWithinHalfAStep) {
    // amax 7.9 -> scale 1: elements in (6, 8) saturate to 6, others round to the e2m1 grid.
    EXPECT_EQ(fmt::mx_e2m1_encode(7.9, 127), 0x7);
    EXPECT_EQ(fmt::mx_e2m1_encode(-2.9, 127), 0xD);    // -3
    EXPECT_EQ(fmt::mx_e2m1_encode(0.3, 125), 0x2);     // 0.3 / 0.25 = 1.2 -> 1 -> 0.25
    EXPECT_EQ(fmt::mx_e2m1_encode(0.0, 0), 0x0);       // all-zero block stays zero
}

// ---- bf16 --------------------------------------------------------------------------------------

namespace {

float float_from_bits(uint32_t u) {
    float f;
    std::memcpy(&f, &u, sizeof(f));
    return f;
}

// Independent RNE: compare the two bf16 neighbours of x by their distance in double.
uint16_t bf16_nearest_even(float x) {
    uint32_t u;
    std::memcpy(&u, &x, sizeof(u));
    uint16_t lower = static_cast<uint16_t>(u >> 16);
    if ((u & 0xFFFF) == 0) return lower;
    uint16_t upper = static_cast<uint16_t>(lower + 1);
    // Past the largest finite value the next step is 2^128 (which rounds to infinity).
    bool upper_is_inf = (upper & 0x7FFF) == 0x7F80;
    double upper_value = upper_is_inf ? std::copysign(std::ldexp(1.0, 128), static_cast<double>(x))
                                      : fmt::bf16_to_double(upper);
    double dl = std::fabs(static_cast<double>(x) - fmt::bf16_to_double(lower));
    double du = std::fabs(static_cast<double>(x) - upper_value);
    if (dl < du) return lower;
    if (du < dl) return upper;
    return (lower & 1) ? upper : lower;
}

}  // namespace

TEST(Bf16, DecodeSpecialCodes) {
    EXPECT_EQ(fmt::bf16_to_float(0x3F80), 1.0f);
    EXPECT_EQ(fmt::bf16_to_float(0xC000), -2.0f);
    EXPECT_EQ(fmt::bf16_to_float(0x7F80), INFINITY);
    EXPECT_TRUE(std::isnan(fmt::bf16_to_float(0x7FC0)));
    EXPECT_EQ(fmt::bf16_to_double(0x0001), std::ldexp(1.0, -133));  // min subnormal
    EXPECT_EQ(fmt::bf16_to_double(0x7F7F), std::ldexp(255.0, 120));  // max finite
}

TEST(Bf16, RoundToNearestEvenTies) {
    EXPECT_EQ(fmt::bf16_from_float(1.0f + std::ldexp(1.0f, -8)), 0x3F80);      // tie -> even
    EXPECT_EQ(fmt::bf16_from_float(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3F82);  // tie -> even
    EXPECT_EQ(fmt::bf16_from_float(std::nextafter(1.0f + std::ldexp(1.0f, -8), 2.0f)), 0x3F81);
    EXPECT_EQ(fmt::bf16_from_float(-(1.0f + std::ldexp(1.0f, -8))), 0xBF80);
    EXPECT_EQ(fmt::bf16_from_float(3.4028235e38f), 0x7F80);  // rounds past the max: inf
    EXPECT_EQ(fmt::bf16_from_double(1.0 + std::ldexp(1.0, -8)), 0x3F80);
    EXPECT_EQ(fmt::bf16_from_double(1.0 + 3 * std::ldexp(1.0, -8)), 0x3F82);
    // Rounded once from double: through float this would tie and round down to 0x3F80.
    EXPECT_EQ(fmt::bf16_from_double(1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -40)), 0x3F81);
    EXPECT_EQ(fmt::bf16_from_double(1e39), 0x7F80);
    EXPECT_EQ(fmt::bf16_from_double(-1e300), 0xFF80);
    EXPECT_EQ(fmt::bf16_from_double(std::ldexp(1.0, -134)), 0x0000);  // tie 0 / min subnormal
    EXPECT_EQ(fmt::bf16_from_double(std::ldexp(3.0, -134)), 0x0002);  // tie 1 / 2 subnormal
}

TEST(Bf16, NanIsPreserved) {
    EXPECT_TRUE(std::isnan(fmt::bf16_to_float(fmt::bf16_from_float(NAN))));
    // A signalling NaN whose payload lies in the low 16 bits must not truncate to infinity.
    uint16_t from_snan = fmt::bf16_from_float(float_from_bits(0x7F800001u));
    EXPECT_TRUE(std::isnan(fmt::bf16_to_float(from_snan))) << std::hex << from_snan;
    uint16_t negative = fmt::bf16_from_float(float_from_bits(0xFFC00000u));
    EXPECT_TRUE(std::isnan(fmt::bf16_to_float(negative)));
    EXPECT_EQ(negative & 0x8000, 0x8000);
    EXPECT_TRUE(std::isnan(fmt::bf16_to_double(fmt::bf16_from_double(NAN))));
}

TEST(Bf16, EveryCodeRoundTrips) {
    for (uint32_t code = 0; code < 65536; ++code) {
        uint16_t c = static_cast<uint16_t>(code);
        float f = fmt::bf16_to_float(c);
        if (std::isnan(f)) {
            EXPECT_TRUE(std::isnan(fmt::bf16_to_float(fmt::bf16_from_float(f))));
            EXPECT_TRUE(std::isnan(fmt::bf16_to_double(fmt::bf16_from_double(f))));
            continue;
        }
        ASSERT_EQ(fmt::bf16_from_float(f), c) << std::hex << code;
        ASSERT_EQ(fmt::bf16_from_double(static_cast<double>(f)), c) << std::hex << code;
    }
}

TEST(Bf16, RandomFloatsMatchIndependentRounding) {
    std::mt19937 rng(7);
    for (int i = 0; i < 200000; ++i) {
        uint32_t u = rng();
        float x = float_from_bits(u);
        if (std::isnan(x) || std::isinf(x)) continue;
        uint16_t want = bf16_nearest_even(x);
        ASSERT_EQ(fmt::bf16_from_float(x), want) << "bits 0x" << std::hex << u;
        ASSERT_EQ(fmt::bf16_from_double(static_cast<double>(x)), want) << "bits 0x" << std::hex << u;
    }
}

TEST(Bf16, RandomDoublesRoundOnceToTheNearestNeighbour) {
    // Doubles carry bits below float precision: the nearest bf16 is picked among the codes
    // around the float truncation by exact distance, ties to the even code.
    std::mt19937_64 rng(11);
    std::uniform_int_distribution<int> exponent(-140, 130);
    std::uniform_real_distribution<double> significand(1.0, 2.0);
    for (int i = 0; i < 200000; ++i) {
        double x = std::ldexp(significand(rng), exponent(rng)) * ((i & 1) ? -1.0 : 1.0);
        if (i % 7 == 0) {  // exact ties and near-ties between two bf16 values
            double tie = std::ldexp(1.0 + (2 * (i % 128) + 1) / 256.0, (i % 50) - 25);
            x = (i % 3 == 0) ? tie : std::nextafter(tie, (i % 3 == 1) ? 0.0 : 4.0);
        }
        float truncated_float = static_cast<float>(x);  // within one bf16 step of x
        uint16_t center = static_cast<uint16_t>(fmt::bf16_from_float(truncated_float));
        uint16_t best = 0;
        double best_diff = INFINITY;
        for (int delta = -2; delta <= 2; ++delta) {
            uint16_t c = static_cast<uint16_t>(center + delta);
            if ((c & 0x7F80) == 0x7F80 || ((c ^ center) & 0x8000)) continue;  // stay finite, same sign
            double diff = std::fabs(x - fmt::bf16_to_double(c));
            if (diff < best_diff || (diff == best_diff && (c & 1) == 0)) {
                best = c;
                best_diff = diff;
            }
        }
        if (std::fabs(x) >= std::ldexp(255.0, 120) + std::ldexp(1.0, 119)) best = (x < 0) ? 0xFF80 : 0x7F80;
        ASSERT_EQ(fmt::bf16_from_double(x), best) << "x = " << x;
    }
}

// ---- MXFP4 -> bf16 decoder of the kernels (kernels/arch/mxfp4.h) --------------------------------
//
// The decoder runs here as host code with the same integer algorithm as on the GPU: both byte-
// permute encodings (NVIDIA nibble selectors, AMD byte selectors) are emulated and both are
// checked, as well as the public entry points. Expected values: e2m1 * e8m0 in double (exact),
// which must be exactly the decoded bf16 for every code c <= 252 and for c = 253 / 254 where
// |value| < 2^128; above that +-inf; c = 255 NaN for every element.

namespace {

namespace mx = mla::arch;
namespace mxd = mla::arch::mxfp4_detail;

// Checks the 8 decoded elements of `packed` with scale code c; appends the first failures to msg.
int check_mxfp4_word(uint32_t packed, uint32_t c, const uint32_t (&out)[4], std::string& msg) {
    int failures = 0;
    for (int k = 0; k < 8; ++k) {
        const uint8_t code = static_cast<uint8_t>((packed >> (4 * k)) & 0xFu);
        const uint16_t got = static_cast<uint16_t>(out[k / 2] >> (16 * (k & 1)));
        const double value =
            fmt::e2m1_to_double(code) * fmt::e8m0_to_double(static_cast<uint8_t>(c));
        const bool got_nan = (got & 0x7F80) == 0x7F80 && (got & 0x7F) != 0;
        const bool got_inf = (got & 0x7FFF) == 0x7F80;
        bool ok;
        if (c == 255) {
            ok = got_nan;
        } else {
            const uint16_t want = fmt::bf16_from_double(value);
            ok = got == want;
            if (got_inf) {  // only past the bf16 range, only for c >= 253, with the value's sign
                ok = ok && c >= 253 && std::fabs(value) >= std::ldexp(1.0, 128) &&
                     std::signbit(value) == ((got & 0x8000) != 0);
            } else {        // exact: the decoded bf16 is the value itself (sign of zero included)
                const double decoded = fmt::bf16_to_double(got);
                ok = ok && !got_nan && decoded == value &&
                     std::signbit(decoded) == std::signbit(value);
            }
        }
        if (!ok) {
            if (++failures <= 3) {
                char line[160];
                std::snprintf(line, sizeof(line),
                              "packed 0x%08x scale %u element %d (code 0x%x): got 0x%04x, "
                              "value %a\n",
                              static_cast<unsigned>(packed), static_cast<unsigned>(c), k, code, got,
                              value);
                msg += line;
            }
        }
    }
    return failures;
}

// Words that put every code in every position with varied neighbours: position k holds v, the
// others (7 b + 5 i + 3 v) mod 16, so across b each neighbour sees all 16 codes.
std::vector<uint32_t> mxfp4_test_words() {
    std::vector<uint32_t> words;
    for (uint32_t k = 0; k < 8; ++k) {
        for (uint32_t v = 0; v < 16; ++v) {
            for (uint32_t b = 0; b < 16; ++b) {
                uint32_t w = 0;
                for (uint32_t i = 0; i < 8; ++i) {
                    const uint32_t nibble = i == k ? v : (7 * b + 5 * i + 3 * v) & 15u;
                    w |= nibble << (4 * i);
                }
                words.push_back(w);
            }
        }
    }
    std::mt19937 rng(2024);
    for (int i = 0; i < 2048; ++i) words.push_back(static_cast<uint32_t>(rng()));
    words.insert(words.end(), {0x00000000u, 0x88888888u, 0x77777777u, 0xFFFFFFFFu, 0x76543210u,
                               0xFEDCBA98u, 0x01234567u, 0x89ABCDEFu});
    return words;
}

template <typename Decode>
void check_mxfp4_all_scales(Decode decode, const char* what) {
    const std::vector<uint32_t> words = mxfp4_test_words();
    long failures = 0;
    std::string msg;
    for (uint32_t c = 0; c < 256; ++c) {
        for (uint32_t w : words) {
            uint32_t out[4] = {0xDEADBEEFu, 0xDEADBEEFu, 0xDEADBEEFu, 0xDEADBEEFu};
            decode(w, c, out);
            failures += check_mxfp4_word(w, c, out, msg);
        }
    }
    EXPECT_EQ(failures, 0) << what << ":\n" << msg;
}

bool same_table(const mx::Mxfp4Bf16Table& a, const mx::Mxfp4Bf16Table& b) {
    return a.lo0 == b.lo0 && a.lo1 == b.lo1 && a.hi0 == b.hi0 && a.hi1 == b.hi1;
}

}  // namespace

TEST(Mxfp4Bf16, TableEntriesAreTheExactProducts) {
    for (uint32_t c = 0; c < 256; ++c) {
        for (uint32_t x = 0; x < 8; ++x) {
            const uint32_t e = mxd::bf16_entry(x, c);
            const double value = fmt::e2m1_to_double(static_cast<uint8_t>(x)) *
                                 fmt::e8m0_to_double(static_cast<uint8_t>(c));
            if (c == 255) {
                EXPECT_TRUE(std::isnan(fmt::bf16_to_double(static_cast<uint16_t>(e))))
                    << "scale " << c << " magnitude " << x;
            } else {
                EXPECT_EQ(e, fmt::bf16_from_double(value)) << "scale " << c << " magnitude " << x;
            }
        }
    }
}

TEST(Mxfp4Bf16, FastTableMatchesPerEntryTable) {
    for (uint32_t c = 2; c <= 252; ++c) {
        EXPECT_TRUE(same_table(mxd::table_fast<mxd::PermKind::kNibble>(c),
                               mxd::table_generic<mxd::PermKind::kNibble>(c))) << "scale " << c;
        EXPECT_TRUE(same_table(mxd::table_fast<mxd::PermKind::kByte>(c),
                               mxd::table_generic<mxd::PermKind::kByte>(c))) << "scale " << c;
    }
    for (uint32_t c = 0; c < 256; ++c) {  // the table is a plain byte table in either encoding
        EXPECT_TRUE(same_table(mxd::table<mxd::PermKind::kNibble>(c),
                               mxd::table<mxd::PermKind::kByte>(c))) << "scale " << c;
        const mx::Mxfp4Bf16Table t = mx::mxfp4_bf16_table(c);
        EXPECT_EQ((t.hi0 | t.hi1) & 0x80808080u, 0u) << "scale " << c;  // room for the sign bit
    }
}

// The public fast path (the wgmma consumers test a group of codes once, then take it for all):
// exactly the codes 2..252, and there the general function's table.
TEST(Mxfp4Bf16, PublicFastPathCoversCodes2To252) {
    for (uint32_t c = 0; c < 256; ++c) {
        EXPECT_EQ(mx::mxfp4_code_fast(c), c >= 2 && c <= 252) << "scale " << c;
        if (mx::mxfp4_code_fast(c)) {
            EXPECT_TRUE(same_table(mx::mxfp4_bf16_table_fast(c), mx::mxfp4_bf16_table(c)))
                << "scale " << c;
        }
    }
}

TEST(Mxfp4Bf16, NvidiaPermEveryScaleEveryCodeEveryPosition) {
    check_mxfp4_all_scales(
        [](uint32_t w, uint32_t c, uint32_t (&out)[4]) {
            mxd::decode<mxd::PermKind::kNibble>(w, mxd::table<mxd::PermKind::kNibble>(c), out);
        },
        "nibble-selector (NVIDIA) decode");
}

TEST(Mxfp4Bf16, AmdPermEveryScaleEveryCodeEveryPosition) {
    check_mxfp4_all_scales(
        [](uint32_t w, uint32_t c, uint32_t (&out)[4]) {
            mxd::decode<mxd::PermKind::kByte>(w, mxd::table<mxd::PermKind::kByte>(c), out);
        },
        "byte-selector (AMD) decode");
}

TEST(Mxfp4Bf16, PublicEntryPoints) {
    check_mxfp4_all_scales(
        [](uint32_t w, uint32_t c, uint32_t (&out)[4]) { mx::decode_mxfp4x8_bf16(w, c, out); },
        "decode_mxfp4x8_bf16(packed, scale_code)");
    check_mxfp4_all_scales(
        [](uint32_t w, uint32_t c, uint32_t (&out)[4]) {
            mx::decode_mxfp4x8_bf16(w, mx::mxfp4_bf16_table(c), out);
        },
        "decode_mxfp4x8_bf16(packed, mxfp4_bf16_table(scale_code))");
}

TEST(Mxfp4Bf16, KnownValuesAndOrder) {
    uint32_t out[4];
    // Elements 0..7 = 0.5, -0, 6, -1.5, 0, 1, -6, 3 with scale 2^0: natural order, even index low.
    mx::decode_mxfp4x8_bf16(0x5F20B781u, 127u, out);
    EXPECT_EQ(out[0], 0x80003F00u);  // (0.5, -0)
    EXPECT_EQ(out[1], 0xBFC040C0u);  // (6, -1.5)
    EXPECT_EQ(out[2], 0x3F800000u);  // (0, 1)
    EXPECT_EQ(out[3], 0x4040C0C0u);  // (-6, 3)
    mx::decode_mxfp4x8_bf16(0x00000091u, 0u, out);  // scale 2^-127: 0.5 -> 2^-128, -0.5
    EXPECT_EQ(out[0], 0x80200020u);
    mx::decode_mxfp4x8_bf16(0x00000032u, 0u, out);  // 1 -> 2^-127 (subnormal), 1.5 -> 1.5 * 2^-127
    EXPECT_EQ(out[0], 0x00600040u);
    mx::decode_mxfp4x8_bf16(0x00000071u, 1u, out);  // 0.5 * 2^-126 subnormal, 6 * 2^-126 normal
    EXPECT_EQ(out[0], 0x01C00040u);
    mx::decode_mxfp4x8_bf16(0x000000F3u, 254u, out);  // 1.5 * 2^127 finite, -6 * 2^127 -> -inf
    EXPECT_EQ(out[0], 0xFF807F40u);
    mx::decode_mxfp4x8_bf16(0x00000064u, 253u, out);  // 2 * 2^126 = 2^127, 4 * 2^126 -> inf
    EXPECT_EQ(out[0], 0x7F807F00u);
    mx::decode_mxfp4x8_bf16(0x00000080u, 255u, out);  // NaN scale: zeros become NaN too
    EXPECT_EQ(out[0] & 0x7FC07FC0u, 0x7FC07FC0u);
}

// ---- the O comparison of the GPU tests (tests/common/compare.h) --------------------------------
namespace {

TEST(CompareTolerance, Bf16UlpIsTheSpacingAtTheValue) {
    EXPECT_EQ(mla_test::bf16_ulp(1.0), std::ldexp(1.0, -7));
    EXPECT_EQ(mla_test::bf16_ulp(1.99), std::ldexp(1.0, -7));
    EXPECT_EQ(mla_test::bf16_ulp(0.999), std::ldexp(1.0, -8));
    EXPECT_EQ(mla_test::bf16_ulp(-0.25), std::ldexp(1.0, -9));
    EXPECT_EQ(mla_test::bf16_ulp(std::ldexp(1.0, -130)), std::ldexp(1.0, -133));
}

// The rounding-midpoint case the GPU tests met: a value just below the midpoint of two bf16
// neighbours just above a power of two, rounded to the upper one. One ulp away passes; two ulps,
// or a row-relative error well past 2^-8, fail.
TEST(CompareTolerance, OneUlpPassesTwoFail) {
    std::vector<float> want(512, 0.01f), got(512, 0.01f);
    want[7] = 1.01944f;
    got[7] = 1.0234375f;  // upper bf16 neighbour: |diff| 0.0040 > 2^-8 * row max
    EXPECT_TRUE(mla_test::check_o(got, want, 1, 1));
    got[7] = 1.03125f;  // two ulps
    EXPECT_FALSE(mla_test::check_o(got, want, 1, 1));
    got[7] = 1.0234375f;
    got[8] = 0.01f + 0.006f;  // a small element off by 0.6% of the row max
    EXPECT_FALSE(mla_test::check_o(got, want, 1, 1));
}

}  // namespace
