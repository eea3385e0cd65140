// The host reference (mla_decode_reference) on small cases whose answers are worked out here,
// and on random problems in every format against a naive two-pass softmax written in this file
// in long double.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "compare.h"
#include "formats.h"
#include "mla_decode.h"
#include "mla_problem.h"

namespace mla_test {
namespace {

namespace fmt = mla::fmt;

constexpr int kDqk = 576;
constexpr int kDv = 512;
constexpr int kHeads = 16;

uint16_t bf16_exact(double v) {
    uint16_t bits = fmt::bf16_from_double(v);
    if (fmt::bf16_to_double(bits) != v) throw std::logic_error("value not exact in bf16");
    return bits;
}

// A hand-built problem: bf16 Q and bf16 contiguous cache (all zero until set), FP32 dense O.
class HandProblem {
public:
    HandProblem(std::vector<int> q_lens, std::vector<int> kv_lens, int heads = kHeads)
        : heads_(heads) {
        qo_indptr_.push_back(0);
        kv_indptr_.push_back(0);
        for (size_t b = 0; b < kv_lens.size(); ++b) {
            qo_indptr_.push_back(qo_indptr_.back() + q_lens[b]);
            kv_indptr_.push_back(kv_indptr_.back() + kv_lens[b]);
            max_q_len_ = std::max(max_q_len_, q_lens[b]);
            max_kv_len_ = std::max(max_kv_len_, kv_lens[b]);
        }
        total_q_ = qo_indptr_.back();
        slots_ = kv_indptr_.back() + 1;
        q_.assign(static_cast<size_t>(total_q_) * heads_ * kDqk, 0);
        kv_.assign(static_cast<size_t>(slots_) * kDqk, 0);
        o_.assign(static_cast<size_t>(total_q_) * heads_ * kDv, NAN);
        lse_.assign(static_cast<size_t>(total_q_) * heads_, NAN);
    }

    void set_q(int t, int h, int d, double v) { q_[(t * heads_ + h) * kDqk + d] = bf16_exact(v); }
    void set_q_all_heads(int t, int d, double v) {
        for (int h = 0; h < heads_; ++h) set_q(t, h, d, v);
    }
    void set_kv(int b, int j, int d, double v) { kv_[(kv_indptr_[b] + j) * kDqk + d] = bf16_exact(v); }
    double kv(int b, int j, int d) const {
        return fmt::bf16_to_double(kv_[(kv_indptr_[b] + j) * kDqk + d]);
    }

    mla_decode_params params() {
        mla_decode_params p;
        mla_decode_params_init(&p);
        p.batch_size = static_cast<int>(kv_indptr_.size()) - 1;
        p.total_q = total_q_;
        p.max_q_len = max_q_len_;
        p.max_kv_len = max_kv_len_;
        p.num_heads = heads_;
        p.sm_scale = 1.0f;
        p.q = q_.data();
        p.q_stride_head = kDqk;
        p.q_stride_token = static_cast<int64_t>(heads_) * kDqk;
        p.kv_cache = kv_.data();
        p.kv_stride_slot = kDqk;
        p.num_slots = slots_;
        p.qo_indptr = qo_indptr_.data();
        p.kv_indptr = kv_indptr_.data();
        p.o = o_.data();
        p.o_dtype = MLA_DTYPE_FP32;
        p.o_stride_head = kDv;
        p.o_stride_token = static_cast<int64_t>(heads_) * kDv;
        p.lse = lse_.data();
        return p;
    }

    void run() {
        mla_decode_params p = params();
        ASSERT_EQ(mla_decode_reference(&p), MLA_STATUS_SUCCESS) << mla_last_error_message();
    }

    double o(int t, int h, int d) const { return o_[(t * heads_ + h) * kDv + d]; }
    double lse(int t, int h) const { return lse_[t * heads_ + h]; }
    int heads() const { return heads_; }

    std::vector<uint16_t> q_, kv_;
    std::vector<int32_t> qo_indptr_, kv_indptr_;
    std::vector<float> o_, lse_;

private:
    int heads_;
    int total_q_ = 0, max_q_len_ = 0, max_kv_len_ = 0;
    int64_t slots_ = 0;
};

// Small exact-in-bf16 values for V rows: integers and halves in [-8, 8].
double pattern(int j, int d) { return ((d * 7 + j * 13) % 33 - 16) * 0.5; }

void fill_value_rows(HandProblem& hp, int b, int kv_len) {
    for (int j = 0; j < kv_len; ++j) {
        for (int d = 0; d < kDqk; ++d) hp.set_kv(b, j, d, pattern(j, d));
    }
}

double tol_for(double want) { return 1e-6 * std::max(1.0, std::fabs(want)); }

// ---- worked-out cases ------------------------------------------------------------------------

TEST(ReferenceHand, OneTokenGivesItsValueRowAndItsScoreAsLse) {
    HandProblem hp({1}, {1});
    fill_value_rows(hp, 0, 1);
    for (int h = 0; h < kHeads; ++h) hp.set_q(0, h, 575, 0.25 * h);  // rope dim only
    hp.run();
    for (int h = 0; h < kHeads; ++h) {
        for (int d = 0; d < kDv; ++d) ASSERT_EQ(hp.o(0, h, d), pattern(0, d)) << h << "," << d;
        double score = 0.25 * h * pattern(0, 575);
        EXPECT_NEAR(hp.lse(0, h), score, tol_for(score)) << "head " << h;
    }
}

TEST(ReferenceHand, TwoTokensWithKnownScores) {
    HandProblem hp({1}, {2});
    fill_value_rows(hp, 0, 2);
    // Scores: token 0 -> 0, token 1 -> h/4 (dim 575 of K is 1 for token 1, 0 for token 0).
    hp.set_kv(0, 0, 575, 0.0);
    hp.set_kv(0, 1, 575, 1.0);
    for (int h = 0; h < kHeads; ++h) hp.set_q(0, h, 575, 0.25 * h);
    hp.run();
    for (int h = 0; h < kHeads; ++h) {
        double s1 = 0.25 * h;
        double w1 = 1.0 / (1.0 + std::exp(-s1)), w0 = 1.0 - w1;
        EXPECT_NEAR(hp.lse(0, h), std::log1p(std::exp(s1)), 1e-6) << "head " << h;
        for (int d = 0; d < kDv; ++d) {
            double want = w0 * pattern(0, d) + w1 * pattern(1, d);
            ASSERT_NEAR(hp.o(0, h, d), want, tol_for(want)) << h << "," << d;
        }
    }
}

TEST(ReferenceHand, UniformScoresGiveTheMean) {
    const int n = 5;
    HandProblem hp({1}, {n});
    fill_value_rows(hp, 0, n);  // Q stays zero: every score is 0
    hp.run();
    for (int h = 0; h < kHeads; ++h) {
        EXPECT_NEAR(hp.lse(0, h), std::log(5.0), 1e-6);
        for (int d = 0; d < kDv; ++d) {
            double mean = 0;
            for (int j = 0; j < n; ++j) mean += pattern(j, d) / n;
            ASSERT_NEAR(hp.o(0, h, d), mean, 1e-6) << h << "," << d;
        }
    }
}

TEST(ReferenceHand, EmptySequenceGivesZeroAndMinusInfinity) {
    HandProblem hp({1, 1, 1}, {3, 0, 2});
    fill_value_rows(hp, 0, 3);
    fill_value_rows(hp, 2, 2);
    hp.run();
    for (int h = 0; h < kHeads; ++h) {
        EXPECT_EQ(hp.lse(1, h), -INFINITY);
        EXPECT_NEAR(hp.lse(0, h), std::log(3.0), 1e-6);
        EXPECT_NEAR(hp.lse(2, h), std::log(2.0), 1e-6);
        for (int d = 0; d < kDv; ++d) ASSERT_EQ(hp.o(1, h, d), 0.0);
    }
    // The same with BF16 output: zeros are exact zeros.
    std::vector<uint16_t> o_bf16(hp.o_.size(), 0x7FC0);
    mla_decode_params p = hp.params();
    p.o = o_bf16.data();
    p.o_dtype = MLA_DTYPE_BF16;
    ASSERT_EQ(mla_decode_reference(&p), MLA_STATUS_SUCCESS);
    for (int e = 0; e < kHeads * kDv; ++e) ASSERT_EQ(o_bf16[kHeads * kDv + e], 0) << e;
}

TEST(ReferenceHand, CausalMaskForQueryLengthTwo) {
    // kv_len 3, q_len 2: query 0 sees tokens 0..1, query 1 sees 0..2. Q = 0: plain means.
    HandProblem hp({2}, {3});
    fill_value_rows(hp, 0, 3);
    hp.run();
    for (int h = 0; h < kHeads; ++h) {
        EXPECT_NEAR(hp.lse(0, h), std::log(2.0), 1e-6);
        EXPECT_NEAR(hp.lse(1, h), std::log(3.0), 1e-6);
        for (int d = 0; d < kDv; ++d) {
            double mean2 = (pattern(0, d) + pattern(1, d)) / 2;
            double mean3 = (pattern(0, d) + pattern(1, d) + pattern(2, d)) / 3;
            ASSERT_NEAR(hp.o(0, h, d), mean2, 1e-6) << h << "," << d;
            ASSERT_NEAR(hp.o(1, h, d), mean3, 1e-6) << h << "," << d;
        }
    }
}

TEST(ReferenceHand, QueryLongerThanCacheMasksItsFirstQueries) {
    // kv_len 2, q_len 3: query 0 sees nothing, query 1 sees token 0, query 2 sees 0..1.
    HandProblem hp({3}, {2});
    fill_value_rows(hp, 0, 2);
    hp.run();
    for (int h = 0; h < kHeads; ++h) {
        EXPECT_EQ(hp.lse(0, h), -INFINITY);
        EXPECT_NEAR(hp.lse(1, h), 0.0, 1e-9);
        EXPECT_NEAR(hp.lse(2, h), std::log(2.0), 1e-6);
        for (int d = 0; d < kDv; ++d) {
            ASSERT_EQ(hp.o(0, h, d), 0.0);
            ASSERT_EQ(hp.o(1, h, d), pattern(0, d));
            ASSERT_NEAR(hp.o(2, h, d), (pattern(0, d) + pattern(1, d)) / 2, 1e-6);
        }
    }
}

TEST(ReferenceHand, LargeLogitsStayFinite) {
    // Scores 1000 and 1001: exp() of either overflows a double-free careless softmax.
    HandProblem hp({1}, {2});
    fill_value_rows(hp, 0, 2);
    hp.set_kv(0, 0, 574, 1.0);
    hp.set_kv(0, 0, 575, 0.0);
    hp.set_kv(0, 1, 574, 1.0);
    hp.set_kv(0, 1, 575, 1.0);
    hp.set_q_all_heads(0, 574, 1000.0);
    hp.set_q_all_heads(0, 575, 1.0);
    hp.run();
    double w0 = 1.0 / (1.0 + std::exp(1.0)), w1 = 1.0 - w0;
    for (int h = 0; h < kHeads; ++h) {
        EXPECT_NEAR(hp.lse(0, h), 1001.0 + std::log1p(std::exp(-1.0)), 1e-4);
        for (int d = 0; d < kDv; ++d) {
            double want = w0 * pattern(0, d) + w1 * pattern(1, d);
            ASSERT_NEAR(hp.o(0, h, d), want, tol_for(want));
        }
    }
}

TEST(ReferenceHand, SmScaleMultipliesScores) {
    HandProblem hp({1}, {1});
    hp.set_kv(0, 0, 100, 2.0);
    hp.set_q_all_heads(0, 100, 3.0);
    mla_decode_params p = hp.params();
    p.sm_scale = 0.125f;
    ASSERT_EQ(mla_decode_reference(&p), MLA_STATUS_SUCCESS);
    EXPECT_NEAR(hp.lse(0, 7), 0.75, 1e-7);
}

TEST(ReferenceHand, PagedCacheReadsThroughThePageTable) {
    // Element 0 has 5 tokens on pages {3, 0, 2} of size 2; the same logical data contiguous.
    HandProblem contiguous({1}, {5});
    fill_value_rows(contiguous, 0, 5);
    for (int j = 0; j < 5; ++j) contiguous.set_kv(0, j, 575, 0.5 * j);
    for (int h = 0; h < kHeads; ++h) contiguous.set_q(0, h, 575, 0.125 * h);
    contiguous.run();

    const int page_size = 2;
    std::vector<int32_t> page_indptr = {0, 3}, page_ids = {3, 0, 2};
    std::vector<uint16_t> paged_kv(4 * page_size * kDqk, 0x7FC0);  // unused slots hold NaN
    for (int j = 0; j < 5; ++j) {
        int64_t slot = page_ids[j / page_size] * page_size + j % page_size;
        std::memcpy(&paged_kv[slot * kDqk], &contiguous.kv_[j * kDqk], kDqk * 2);
    }
    std::vector<float> o(contiguous.o_.size(), NAN), lse(contiguous.lse_.size(), NAN);
    mla_decode_params p = contiguous.params();
    p.kv_cache = paged_kv.data();
    p.num_slots = 4 * page_size;
    p.kv_page_indptr = page_indptr.data();
    p.kv_page_indices = page_ids.data();
    p.page_size = page_size;
    p.o = o.data();
    p.lse = lse.data();
    ASSERT_EQ(mla_decode_reference(&p), MLA_STATUS_SUCCESS) << mla_last_error_message();
    EXPECT_EQ(0, std::memcmp(o.data(), contiguous.o_.data(), o.size() * sizeof(float)));
    EXPECT_EQ(0, std::memcmp(lse.data(), contiguous.lse_.data(), lse.size() * sizeof(float)));
}

// ---- stored formats --------------------------------------------------------------------------

TEST(ReferenceFormats, Fp8E4m3fnCacheIsCodeTimesKvScale) {
    HandProblem hp({1}, {1});
    std::vector<uint8_t> kv(2 * kDqk, 0x7F);  // NaN everywhere but the used row
    for (int d = 0; d < kDqk; ++d) {
        uint8_t code = static_cast<uint8_t>((d * 37) % 256);
        kv[d] = (code & 0x7F) == 0x7F ? 0x01 : code;  // every finite code, no NaN in the used row
    }
    kv[575] = 0x40;                             // 2.0 in e4m3fn
    hp.set_q_all_heads(0, 575, 1.5);
    mla_decode_params p = hp.params();
    p.kv_cache = kv.data();
    p.kv_dtype = MLA_DTYPE_FP8_E4M3FN;
    p.kv_scale = 0.375f;
    ASSERT_EQ(mla_decode_reference(&p), MLA_STATUS_SUCCESS) << mla_last_error_message();
    for (int d = 0; d < kDv; ++d) {
        // Independent decode from the bit fields.
        int e = (kv[d] >> 3) & 15, m = kv[d] & 7;
        double mag = e == 0 ? std::ldexp(m, -9) : std::ldexp(8 + m, e - 10);
        double want = ((kv[d] & 0x80) ? -mag : mag) * 0.375;
        ASSERT_EQ(hp.o(0, 3, d), static_cast<float>(want)) << "dim " << d;
    }
    EXPECT_NEAR(hp.lse(0, 3), 1.5 * 2.0 * 0.375, 1e-7);
}

TEST(ReferenceFormats, Fp8E4m3fnuzCacheIsCodeTimesKvScale) {
    HandProblem hp({1}, {1});
    std::vector<uint8_t> kv(2 * kDqk, 0x80);  // NaN everywhere but the used row
    for (int d = 0; d < kDqk; ++d) kv[d] = static_cast<uint8_t>(d % 255 == 0x80 ? 0 : d % 255);
    kv[575] = 0x40;  // 1.0 in e4m3fnuz (bias 8)
    hp.set_q_all_heads(0, 575, 1.5);
    mla_decode_params p = hp.params();
    p.kv_cache = kv.data();
    p.kv_dtype = MLA_DTYPE_FP8_E4M3FNUZ;
    p.kv_scale = 2.0f;
    ASSERT_EQ(mla_decode_reference(&p), MLA_STATUS_SUCCESS) << mla_last_error_message();
    for (int d = 0; d < kDv; ++d) {
        int e = (kv[d] >> 3) & 15, m = kv[d] & 7;
        double mag = e == 0 ? std::ldexp(m, -10) : std::ldexp(8 + m, e - 11);
        double want = ((kv[d] & 0x80) ? -mag : mag) * 2.0;
        ASSERT_EQ(hp.o(0, 0, d), static_cast<float>(want)) << "dim " << d;
    }
    EXPECT_NEAR(hp.lse(0, 0), 1.5 * 1.0 * 2.0, 1e-7);
}

TEST(ReferenceFormats, Fp8QueryIsCodeTimesQScale) {
    HandProblem hp({1}, {1});
    hp.set_kv(0, 0, 10, 1.0);
    hp.set_kv(0, 0, 11, -2.0);
    std::vector<uint8_t> q(kHeads * kDqk, 0);
    for (int h = 0; h < kHeads; ++h) {
        q[h * kDqk + 10] = 0x38;  // e4m3fn 1.0
        q[h * kDqk + 11] = 0xB0;  // e4m3fn -0.5
    }
    mla_decode_params p = hp.params();
    p.q = q.data();
    p.q_dtype = MLA_DTYPE_FP8_E4M3FN;
    p.q_scale = 0.25f;
    ASSERT_EQ(mla_decode_reference(&p), MLA_STATUS_SUCCESS) << mla_last_error_message();
    // score = 0.25 * (1 * 1 + (-0.5) * (-2)) = 0.5
    for (int h = 0; h < kHeads; ++h) EXPECT_NEAR(hp.lse(0, h), 0.5, 1e-7);
}

// One MXFP4 row: byte k holds element 2k (low nibble) and 2k+1 (high nibble); block b of 32
// values uses scale code scales[slot * stride + b].
struct Mxfp4Row {
    std::vector<uint8_t> data;    // (slots, 288)
    std::vector<uint8_t> scales;  // (slots, stride)
    int64_t stride = 24;
};

double e2m1_literal(int code) {
    const double magnitudes[8] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};
    return (code & 8) ? -magnitudes[code & 7] : magnitudes[code & 7];
}

Mxfp4Row mxfp4_cache(int slots, int used_slot) {
    Mxfp4Row row;
    row.data.assign(slots * 288, 0x77);
    row.scales.assign(slots * row.stride, 255);  // NaN scales on every row but the used one
    for (int k = 0; k < 288; ++k) row.data[used_slot * 288 + k] = static_cast<uint8_t>((k * 29 + 3) % 256);
    for (int b = 0; b < 18; ++b) row.scales[used_slot * row.stride + b] = static_cast<uint8_t>(120 + b % 9);
    return row;
}

double mxfp4_expected(const Mxfp4Row& row, int slot, int d) {
    uint8_t byte = row.data[slot * 288 + d / 2];
    int code = (d % 2 == 0) ? (byte & 0xF) : (byte >> 4);
    return e2m1_literal(code) * std::ldexp(1.0, row.scales[slot * row.stride + d / 32] - 127);
}

TEST(ReferenceFormats, Mxfp4NibblesAndBlockScalesWithPaddedStride) {
    // Batch element 0 is empty, element 1's only token lives in slot 1 (scale row 1).
    HandProblem hp({1, 1}, {0, 1});
    Mxfp4Row cache = mxfp4_cache(3, 1);
    std::vector<int32_t> kv_indptr = {1, 1, 2};
    mla_decode_params p = hp.params();
    p.kv_indptr = kv_indptr.data();
    p.kv_cache = cache.data.data();
    p.kv_dtype = MLA_DTYPE_MXFP4;
    p.kv_stride_slot = 288;
    p.kv_block_scales = cache.scales.data();
    p.kv_block_scale_stride = cache.stride;
    p.num_slots = 3;
    ASSERT_EQ(mla_decode_reference(&p), MLA_STATUS_SUCCESS) << mla_last_error_message();
    for (int d = 0; d < kDv; ++d) {
        ASSERT_EQ(hp.o(1, 5, d), static_cast<float>(mxfp4_expected(cache, 1, d))) << "dim " << d;
        ASSERT_EQ(hp.o(0, 5, d), 0.0f);
    }
    EXPECT_EQ(hp.lse(0, 5), -INFINITY);
    EXPECT_NEAR(hp.lse(1, 5), 0.0, 1e-12);  // Q = 0
}

TEST(ReferenceFormats, Mxfp4KeysWithFp8Values) {
    // Two tokens: scores from the MXFP4 keys, values from the FP8 V cache times v_scale.
    HandProblem hp({1}, {2});
    Mxfp4Row cache = mxfp4_cache(2, 0);
    Mxfp4Row second = mxfp4_cache(2, 1);
    for (int k = 0; k < 288; ++k) cache.data[288 + k] = second.data[288 + k];
    for (int b = 0; b < 18; ++b) cache.scales[cache.stride + b] = second.scales[second.stride + b];
    std::vector<uint8_t> v(2 * 576, 0x7F);  // dims 512.. are NaN codes: never read
    for (int j = 0; j < 2; ++j) {
        for (int d = 0; d < kDv; ++d) v[j * 576 + d] = static_cast<uint8_t>(0x30 + (d + j) % 16);
    }
    for (int h = 0; h < kHeads; ++h) hp.set_q(0, h, 570, 0.5);
    mla_decode_params p = hp.params();
    p.kv_cache = cache.data.data();
    p.kv_dtype = MLA_DTYPE_MXFP4;
    p.kv_stride_slot = 288;
    p.kv_block_scales = cache.scales.data();
    p.kv_block_scale_stride = cache.stride;
    p.v_cache = v.data();
    p.v_dtype = MLA_DTYPE_FP8_E4M3FN;
    p.v_scale = 0.125f;
    p.v_stride_slot = 576;
    p.num_slots = 2;
    ASSERT_EQ(mla_decode_reference(&p), MLA_STATUS_SUCCESS) << mla_last_error_message();
    double s0 = 0.5 * mxfp4_expected(cache, 0, 570), s1 = 0.5 * mxfp4_expected(cache, 1, 570);
    double m = std::max(s0, s1);
    double e0 = std::exp(s0 - m), e1 = std::exp(s1 - m);
    EXPECT_NEAR(hp.lse(0, 2), m + std::log(e0 + e1), 1e-6);
    for (int d = 0; d < kDv; ++d) {
        double v0 = fmt::e4m3fn_to_double(v[d]) * 0.125, v1 = fmt::e4m3fn_to_double(v[576 + d]) * 0.125;
        double want = (e0 * v0 + e1 * v1) / (e0 + e1);
        ASSERT_NEAR(hp.o(0, 2, d), want, tol_for(want)) << "dim " << d;
    }
}

// ---- random problems against a naive long-double reference -------------------------------------

double stored_q(const HostProblem& p, int64_t t, int h, int d) {
    int64_t e = t * p.q_stride_token + h * kDqk + d;
    if (p.spec.q_dtype == MLA_DTYPE_BF16) {
        uint16_t bits;
        std::memcpy(&bits, &p.q[e * 2], 2);
        return fmt::bf16_to_double(bits);
    }
    return fmt::fp8_to_double(p.spec.q_dtype, p.q[e]) * p.q_scale;
}

double stored_kv(const HostProblem& p, int64_t slot, int d) {
    switch (p.spec.kv_dtype) {
        case MLA_DTYPE_BF16: {
            uint16_t bits;
            std::memcpy(&bits, &p.kv[(slot * p.kv_stride_slot + d) * 2], 2);
            return fmt::bf16_to_double(bits);
        }
        case MLA_DTYPE_MXFP4: {
            uint8_t byte = p.kv[slot * p.kv_stride_slot + d / 2];
            int code = d % 2 ? byte >> 4 : byte & 0xF;
            uint8_t scale = p.kv_block_scales[slot * p.kv_block_scale_stride + d / 32];
            return e2m1_literal(code) * std::ldexp(1.0, scale - 127);
        }
        default: return fmt::fp8_to_double(p.spec.kv_dtype, p.kv[slot * p.kv_stride_slot + d]) * p.kv_scale;
    }
}

double stored_v(const HostProblem& p, int64_t slot, int d) {
    if (p.v.empty()) return stored_kv(p, slot, d);
    return fmt::fp8_to_double(p.spec.v_dtype, p.v[slot * p.v_stride_slot + d]) * p.v_scale;
}

int64_t naive_slot(const HostProblem& p, int b, int64_t j) {
    if (p.kv_page_indptr.empty()) return p.kv_indptr[b] + j;
    int ps = p.spec.page_size;
    return static_cast<int64_t>(p.kv_page_indices[p.kv_page_indptr[b] + j / ps]) * ps + j % ps;
}

// Two passes: all scores, their max, then the weighted sum. long double throughout.
Reference naive_reference(const HostProblem& p) {
    const int heads = p.spec.num_heads;
    Reference ref;
    ref.o.assign(static_cast<size_t>(p.total_q) * heads * kDv, 0.0f);
    ref.lse.assign(static_cast<size_t>(p.total_q) * heads, -INFINITY);
    for (int b = 0; b < p.batch_size; ++b) {
        const int q_len = p.qo_indptr[b + 1] - p.qo_indptr[b];
        const int kv_len = p.kv_indptr[b + 1] - p.kv_indptr[b];
        for (int i = 0; i < q_len; ++i) {
            const int64_t t = p.qo_indptr[b] + i;
            const int last = kv_len - q_len + i;  // last visible position
            for (int h = 0; h < heads; ++h) {
                if (last < 0) continue;
                std::vector<long double> s(last + 1);
                long double mx = -INFINITY;
                for (int j = 0; j <= last; ++j) {
                    long double dot = 0;
                    for (int d = 0; d < kDqk; ++d) {
                        dot += static_cast<long double>(stored_q(p, t, h, d)) * stored_kv(p, naive_slot(p, b, j), d);
                    }
                    s[j] = dot * static_cast<long double>(p.spec.sm_scale);
                    mx = std::max(mx, s[j]);
                }
                long double sum = 0;
                std::vector<long double> acc(kDv, 0);
                for (int j = 0; j <= last; ++j) {
                    long double w = std::exp(s[j] - mx);
                    sum += w;
                    for (int d = 0; d < kDv; ++d) acc[d] += w * stored_v(p, naive_slot(p, b, j), d);
                }
                for (int d = 0; d < kDv; ++d) ref.o[(t * heads + h) * kDv + d] = static_cast<float>(acc[d] / sum);
                ref.lse[t * heads + h] = static_cast<float>(mx + std::log(sum));
            }
        }
    }
    return ref;
}

struct NaiveCase {
    const char* name;
    ProblemSpec spec;
};

void PrintTo(const NaiveCase& c, std::ostream* os) { *os << c.name; }

ProblemSpec spec_of(mla_dtype kv, mla_dtype q = MLA_DTYPE_BF16, mla_dtype v = MLA_DTYPE_NONE) {
    ProblemSpec s;
    s.kv_dtype = kv;
    s.q_dtype = q;
    s.v_dtype = v;
    s.kv_lens = {0, 1, 37, 70};
    s.q_lens = {1, 2, 1, 3};
    s.seed = 11;
    return s;
}

std::vector<NaiveCase> naive_cases() {
    std::vector<NaiveCase> cases;
    cases.push_back({"bf16", spec_of(MLA_DTYPE_BF16)});
    cases.push_back({"fp8fn", spec_of(MLA_DTYPE_FP8_E4M3FN)});
    cases.push_back({"fp8fnuz", spec_of(MLA_DTYPE_FP8_E4M3FNUZ)});
    cases.push_back({"mxfp4", spec_of(MLA_DTYPE_MXFP4)});
    cases.push_back({"mxfp4k_fp8fnv", spec_of(MLA_DTYPE_MXFP4, MLA_DTYPE_BF16, MLA_DTYPE_FP8_E4M3FN)});
    cases.push_back({"mxfp4k_fp8fnuzv", spec_of(MLA_DTYPE_MXFP4, MLA_DTYPE_BF16, MLA_DTYPE_FP8_E4M3FNUZ)});
    cases.push_back({"fp8q_fp8fn", spec_of(MLA_DTYPE_FP8_E4M3FN, MLA_DTYPE_FP8_E4M3FN)});
    cases.push_back({"fp8fnuzq_bf16", spec_of(MLA_DTYPE_BF16, MLA_DTYPE_FP8_E4M3FNUZ)});
    NaiveCase paged{"bf16_paged3", spec_of(MLA_DTYPE_BF16)};
    paged.spec.paged = true;
    paged.spec.page_size = 3;
    cases.push_back(paged);
    NaiveCase paged_mx{"mxfp4_paged16", spec_of(MLA_DTYPE_MXFP4)};
    paged_mx.spec.paged = true;
    paged_mx.spec.page_size = 16;
    cases.push_back(paged_mx);
    NaiveCase heads{"fp8fn_h128_paged1", spec_of(MLA_DTYPE_FP8_E4M3FN)};
    heads.spec.num_heads = 128;
    heads.spec.paged = true;
    heads.spec.kv_lens = {5, 0, 9};
    heads.spec.q_lens = {1, 1, 4};
    cases.push_back(heads);
    NaiveCase eight{"mxfp4k_fp8fnv_h8_paged4",  // 8 heads: a 128-head model split 16 ways
                    spec_of(MLA_DTYPE_MXFP4, MLA_DTYPE_BF16, MLA_DTYPE_FP8_E4M3FN)};
    eight.spec.num_heads = 8;
    eight.spec.paged = true;
    eight.spec.page_size = 4;
    cases.push_back(eight);
    NaiveCase eight_fp8q{"fp8q_fp8fnuz_h8", spec_of(MLA_DTYPE_FP8_E4M3FNUZ, MLA_DTYPE_FP8_E4M3FN)};
    eight_fp8q.spec.num_heads = 8;
    cases.push_back(eight_fp8q);
    NaiveCase small{"bf16_h32_randn002", spec_of(MLA_DTYPE_BF16)};
    small.spec.num_heads = 32;
    small.spec.q_std = 0.02;
    small.spec.kv_std = 0.02;
    cases.push_back(small);
    NaiveCase large{"fp8fn_qstd100", spec_of(MLA_DTYPE_FP8_E4M3FN)};
    large.spec.q_std = 100.0;
    cases.push_back(large);
    NaiveCase strided{"bf16_strided", spec_of(MLA_DTYPE_BF16)};
    strided.spec.num_heads = 64;
    strided.spec.q_stride_token = 64 * 576 + 64;
    strided.spec.o_stride_token = 64 * 512 + 8;
    cases.push_back(strided);
    return cases;
}

class ReferenceVsNaive : public ::testing::TestWithParam<NaiveCase> {};

TEST_P(ReferenceVsNaive, EveryElementMatches) {
    HostProblem p = make_problem(GetParam().spec);
    Reference got = run_reference(p);
    Reference want = naive_reference(p);
    EXPECT_TRUE(check_o(got.o, want.o, p.total_q, p.spec.num_heads, fp32_tolerance()));
    EXPECT_TRUE(check_lse(got.lse, want.lse, fp32_tolerance()));
    for (float v : got.o) ASSERT_FALSE(std::isnan(v));
    for (float v : got.lse) ASSERT_FALSE(std::isnan(v));
}

INSTANTIATE_TEST_SUITE_P(Formats, ReferenceVsNaive, ::testing::ValuesIn(naive_cases()),
                         [](const ::testing::TestParamInfo<NaiveCase>& info) {
                             return std::string(info.param.name);
                         });

// ---- layout properties -------------------------------------------------------------------------

TEST(ReferenceLayout, PagedAndContiguousGiveIdenticalResults) {
    for (mla_dtype kv : {MLA_DTYPE_BF16, MLA_DTYPE_FP8_E4M3FN, MLA_DTYPE_MXFP4}) {
        for (int page_size : {1, 3, 16, 64}) {
            ProblemSpec spec = spec_of(kv);
            spec.kv_lens = {130, 0, 17, 64};
            Reference contiguous = run_reference(make_problem(spec));
            spec.paged = true;
            spec.page_size = page_size;
            Reference paged = run_reference(make_problem(spec));
            ASSERT_EQ(paged.o.size(), contiguous.o.size());
            EXPECT_EQ(0, std::memcmp(paged.o.data(), contiguous.o.data(), paged.o.size() * 4))
                << "kv_dtype " << kv << ", page_size " << page_size;
            EXPECT_EQ(0, std::memcmp(paged.lse.data(), contiguous.lse.data(), paged.lse.size() * 4))
                << "kv_dtype " << kv << ", page_size " << page_size;
        }
    }
}

// Ordered pages (the bench's "/ordered"): each element's pages are the next free ones in order,
// and the results are those of the shuffled table.
TEST(ReferenceLayout, OrderedPagesAreConsecutiveAndGiveTheShuffledResults) {
    ProblemSpec spec = spec_of(MLA_DTYPE_FP8_E4M3FN);
    spec.kv_lens = {130, 0, 17, 64};
    spec.paged = true;
    spec.page_size = 16;
    HostProblem shuffled = make_problem(spec);
    spec.shuffle_pages = false;
    HostProblem ordered = make_problem(spec);
    int32_t next = 0;
    bool shuffled_differs = false;
    for (size_t b = 0; b + 1 < ordered.kv_page_indptr.size(); ++b) {
        for (int32_t k = ordered.kv_page_indptr[b]; k < ordered.kv_page_indptr[b + 1]; ++k) {
            EXPECT_EQ(ordered.kv_page_indices[k], next) << "element " << b << ", entry " << k;
            shuffled_differs |= shuffled.kv_page_indices[k] != next;
            ++next;
        }
    }
    EXPECT_EQ(next, 9 + 0 + 2 + 4);
    EXPECT_TRUE(shuffled_differs) << "the default table is shuffled";
    Reference a = run_reference(shuffled), b = run_reference(ordered);
    ASSERT_EQ(a.o.size(), b.o.size());
    EXPECT_EQ(0, std::memcmp(a.o.data(), b.o.data(), a.o.size() * 4));
    EXPECT_EQ(0, std::memcmp(a.lse.data(), b.lse.data(), a.lse.size() * 4));
}

TEST(ReferenceLayout, StridedOutputLeavesPaddingUntouchedAndMatchesDense) {
    ProblemSpec spec = spec_of(MLA_DTYPE_BF16);
    spec.o_stride_token = 16 * 512 + 64;
    HostProblem p = make_problem(spec);
    Reference dense = run_reference(p);
    std::vector<float> o(p.o_elements(), -7.0f);
    std::vector<float> lse(p.lse_elements(), NAN);
    mla_decode_params params = p.host_params(o.data(), MLA_DTYPE_FP32, lse.data());
    ASSERT_EQ(mla_decode_reference(&params), MLA_STATUS_SUCCESS) << mla_last_error_message();
    for (int t = 0; t < p.total_q; ++t) {
        for (int64_t e = 16 * 512; e < p.o_stride_token; ++e) {
            ASSERT_EQ(o[t * p.o_stride_token + e], -7.0f) << "padding of row " << t;
        }
    }
    std::vector<float> got = dense_o_from_fp32(o.data(), p.total_q, 16, p.o_stride_token);
    EXPECT_EQ(0, std::memcmp(got.data(), dense.o.data(), got.size() * 4));
    EXPECT_EQ(0, std::memcmp(lse.data(), dense.lse.data(), lse.size() * 4));
}

TEST(ReferenceLayout, Bf16OutputIsTheFp32ResultRoundedOnce) {
    HostProblem p = make_problem(spec_of(MLA_DTYPE_FP8_E4M3FN));
    Reference ref = run_reference(p);
    std::vector<uint16_t> o(p.o_elements(), 0x7FC0);
    mla_decode_params params = p.host_params(o.data(), MLA_DTYPE_BF16, nullptr);
    ASSERT_EQ(mla_decode_reference(&params), MLA_STATUS_SUCCESS) << mla_last_error_message();
    std::vector<float> got = dense_o_from_bf16(o.data(), p.total_q, 16, p.o_stride_token);
    for (size_t i = 0; i < got.size(); ++i) {
        // Within half a bf16 ulp of the (more precise) FP32 result, plus its own rounding.
        double half_ulp = std::ldexp(std::fabs(ref.o[i]), -8) + 1e-30;
        ASSERT_LE(std::fabs(got[i] - ref.o[i]), half_ulp) << "element " << i;
    }
}

TEST(ReferenceLayout, LseIsOptional) {
    HostProblem p = make_problem(spec_of(MLA_DTYPE_BF16));
    Reference ref = run_reference(p);
    std::vector<float> o(p.o_elements(), NAN);
    mla_decode_params params = p.host_params(o.data(), MLA_DTYPE_FP32, nullptr);
    ASSERT_EQ(mla_decode_reference(&params), MLA_STATUS_SUCCESS) << mla_last_error_message();
    EXPECT_EQ(0, std::memcmp(o.data(), ref.o.data(), o.size() * 4));
}

TEST(ReferenceLayout, ManyUnitsAreDeterministic) {
    ProblemSpec spec = spec_of(MLA_DTYPE_FP8_E4M3FN);
    spec.num_heads = 64;
    spec.kv_lens.clear();
    spec.q_lens.clear();
    for (int b = 0; b < 41; ++b) spec.kv_lens.push_back((b * 53) % 300);
    HostProblem p = make_problem(spec);
    Reference first = run_reference(p), second = run_reference(p);
    EXPECT_EQ(0, std::memcmp(first.o.data(), second.o.data(), first.o.size() * 4));
    EXPECT_EQ(0, std::memcmp(first.lse.data(), second.lse.data(), first.lse.size() * 4));
}

TEST(ReferenceLayout, LargeLogitsOnRandomDataAreFinite) {
    ProblemSpec spec = spec_of(MLA_DTYPE_FP8_E4M3FN);
    spec.q_std = 100.0;
    spec.kv_lens = {300, 64};
    spec.q_lens = {1, 1};
    HostProblem p = make_problem(spec);
    Reference ref = run_reference(p);
    for (float v : ref.o) ASSERT_TRUE(std::isfinite(v));
    for (float v : ref.lse) {
        ASSERT_TRUE(std::isfinite(v));
        ASSERT_GT(v, 100.0f);  // logits in the hundreds or more
    }
}

// ---- options of the test problems the GPU tests use (tests/common/mla_problem.h) -------------

::testing::AssertionResult identical(const Reference& got, const Reference& want) {
    if (got.o.size() != want.o.size() || got.lse.size() != want.lse.size()) {
        return ::testing::AssertionFailure() << "output sizes differ";
    }
    if (std::memcmp(got.o.data(), want.o.data(), got.o.size() * sizeof(float)) != 0) {
        return ::testing::AssertionFailure() << "O differs";
    }
    if (std::memcmp(got.lse.data(), want.lse.data(), got.lse.size() * sizeof(float)) != 0) {
        return ::testing::AssertionFailure() << "LSE differs";
    }
    return ::testing::AssertionSuccess();
}

int64_t pages_for(int64_t kv_len, int64_t page_size) {
    return (kv_len + page_size - 1) / page_size;
}

// The test inputs' normal values (NormalStream, a ziggurat): moments, tail fractions and the
// whole CDF (Kolmogorov-Smirnov) of 4M values against the unit normal, each bound at about 6
// standard errors (the KS bound at p = 0.001), and replay by copy.
TEST(NormalStreamTest, DrawsUnitNormalValues) {
    constexpr int n = 4000000;
    mla_test::NormalStream stream(20261202);
    std::vector<double> z(n);
    double sum = 0.0, sum2 = 0.0, sum4 = 0.0;
    for (double& v : z) {
        v = stream.next();
        sum += v;
        sum2 += v * v;
        sum4 += v * v * v * v;
    }
    const double mean = sum / n, var = sum2 / n - mean * mean;
    EXPECT_LT(std::fabs(mean), 6.0 / std::sqrt(n));
    EXPECT_LT(std::fabs(var - 1.0), 6.0 * std::sqrt(2.0 / n));
    EXPECT_LT(std::fabs(sum4 / n - 3.0), 6.0 * std::sqrt(96.0 / n));
    // Each side's tail on its own (a sign error in the tail sampler shows only there).
    for (double k : {1.0, 2.0, 3.0, 3.6541528853610088, 4.0}) {
        const double p = 0.5 * std::erfc(k / std::sqrt(2.0));
        const double bound = 6.0 * std::sqrt(p * (1.0 - p) / n) + 1.0 / n;
        const double above = static_cast<double>(
            std::count_if(z.begin(), z.end(), [k](double v) { return v > k; }));
        const double below = static_cast<double>(
            std::count_if(z.begin(), z.end(), [k](double v) { return v < -k; }));
        EXPECT_NEAR(above / n, p, bound) << "z > " << k;
        EXPECT_NEAR(below / n, p, bound) << "z < -" << k;
    }
    std::sort(z.begin(), z.end());
    double ks = 0.0;
    for (int i = 0; i < n; ++i) {
        const double cdf = 0.5 * std::erfc(-z[i] / std::sqrt(2.0));
        ks = std::max(ks, std::max(std::fabs(cdf - static_cast<double>(i) / n),
                                   std::fabs(cdf - static_cast<double>(i + 1) / n)));
    }
    EXPECT_LT(ks, 1.95 / std::sqrt(n));

    mla_test::NormalStream a(7), other(8);
    mla_test::NormalStream replay = a;
    int same_as_other = 0;
    for (int i = 0; i < 1000; ++i) {
        const double v = a.next();
        ASSERT_EQ(v, replay.next()) << "draw " << i;
        same_as_other += v == other.next();
    }
    EXPECT_EQ(same_as_other, 0);
}

// Each element's page list ends in page_list_tail entries of 0x7fffffff. The reference accepts
// them (it reads only the pages an element needs) and gives the results of the same problem
// without tails.
TEST(ProblemOptions, PageListTailsHoldSentinelsThatAreNeverRead) {
    for (int page_size : {1, 16, 64}) {
        SCOPED_TRACE("page_size " + std::to_string(page_size));
        ProblemSpec spec = spec_of(MLA_DTYPE_FP8_E4M3FN);
        spec.kv_lens = {0, 1, 16, 17, 130};
        spec.q_lens = {1, 2, 1, 3, 4};
        spec.paged = true;
        spec.page_size = page_size;
        const Reference plain = run_reference(make_problem(spec));
        spec.page_list_tail = 3;
        const HostProblem p = make_problem(spec);
        for (int b = 0; b < p.batch_size; ++b) {
            const int64_t need = pages_for(spec.kv_lens[b], page_size);
            ASSERT_EQ(p.kv_page_indptr[b + 1] - p.kv_page_indptr[b], need + 3) << "element " << b;
            for (int64_t k = need; k < need + 3; ++k) {
                EXPECT_EQ(p.kv_page_indices[p.kv_page_indptr[b] + k], 0x7fffffff);
            }
        }
        EXPECT_TRUE(identical(run_reference(p), plain));
    }
}

// The device cache DeviceProblem builds from `p`, made in host memory: slot_base leading rows
// of the poison byte before the host's rows, and the index arrays it uploads.
HostProblem device_layout_on_host(const HostProblem& p) {
    HostProblem d = p;
    const bool poison = p.spec.poison_unused;
    auto prepend = [&](std::vector<uint8_t>& rows, int64_t row_bytes, uint8_t fill) {
        if (rows.empty()) return;
        rows.insert(rows.begin(), static_cast<size_t>(p.slot_base * row_bytes), fill);
    };
    const int64_t kv_row_bytes = p.kv_stride_slot * (p.spec.kv_dtype == MLA_DTYPE_BF16 ? 2 : 1);
    prepend(d.kv, kv_row_bytes, poison_byte(p.spec.kv_dtype, poison));
    prepend(d.kv_block_scales, p.kv_block_scale_stride, poison_byte(MLA_DTYPE_MXFP4, poison));
    prepend(d.v, p.v_stride_slot, poison_byte(p.spec.v_dtype, poison));
    d.kv_indptr = p.device_kv_indptr();
    d.kv_page_indices = p.device_page_indices();
    d.num_slots = p.device_num_slots();
    d.slot_base = 0;
    return d;
}

// slot_base moves every used slot past the leading ones: the host view (rows from slot_base
// on) and the device layout (NaN-coded leading rows, shifted index arrays) both give the
// results of the problem without a base; a wrong shift would read a NaN row.
TEST(ProblemOptions, SlotBaseMovesTheUsedSlotsToTheFarEnd) {
    struct Case {
        mla_dtype kv, v;
        int page_size;  // 0: contiguous
        int64_t slot_base;
    };
    const Case cases[] = {
        {MLA_DTYPE_BF16, MLA_DTYPE_NONE, 0, 1000},
        {MLA_DTYPE_FP8_E4M3FN, MLA_DTYPE_NONE, 16, 1024},
        {MLA_DTYPE_MXFP4, MLA_DTYPE_FP8_E4M3FNUZ, 64, 640},
        {MLA_DTYPE_MXFP4, MLA_DTYPE_NONE, 0, 77},
    };
    for (const Case& c : cases) {
        SCOPED_TRACE("kv_dtype " + std::to_string(c.kv) + ", page_size " +
                     std::to_string(c.page_size));
        ProblemSpec spec = spec_of(c.kv, MLA_DTYPE_BF16, c.v);
        spec.kv_lens = {0, 1, 37, 70, 130};
        spec.q_lens = {1, 2, 1, 3, 4};
        if (c.page_size > 0) {
            spec.paged = true;
            spec.page_size = c.page_size;
            spec.page_list_tail = 2;
        }
        const Reference plain = run_reference(make_problem(spec));
        spec.slot_base = c.slot_base;
        const HostProblem p = make_problem(spec);
        EXPECT_EQ(p.device_num_slots(), p.num_slots + c.slot_base);
        EXPECT_TRUE(identical(run_reference(p), plain)) << "host view";
        const HostProblem d = device_layout_on_host(p);
        EXPECT_TRUE(identical(run_reference(d), plain)) << "device layout";
        if (c.page_size == 0) {
            EXPECT_EQ(d.kv_indptr[0], c.slot_base);
        } else {
            for (int b = 0; b < d.batch_size; ++b) {
                const int64_t need = pages_for(spec.kv_lens[b], c.page_size);
                for (int64_t k = 0; k < need; ++k) {
                    EXPECT_GE(d.kv_page_indices[d.kv_page_indptr[b] + k],
                              c.slot_base / c.page_size);
                }
                EXPECT_EQ(d.kv_page_indices[d.kv_page_indptr[b] + need], 0x7fffffff);  // tail kept
            }
        }
    }
}

// The extreme MXFP4 blocks are where the pattern puts them (all-zero blocks, scale code 0,
// scale code 254 with |e2m1| <= 1.5, in value dims only with kValueScales) and, with the tiny Q
// the GPU tests use, every reference result is finite.
TEST(ProblemOptions, Mxfp4ExtremeBlocks) {
    for (Mxfp4Extremes extremes : {Mxfp4Extremes::kKeyScales, Mxfp4Extremes::kValueScales}) {
        const bool values = extremes == Mxfp4Extremes::kValueScales;
        SCOPED_TRACE(values ? "value scales" : "key scales");
        ProblemSpec spec = spec_of(MLA_DTYPE_MXFP4);
        spec.kv_lens = {6, 103, 600, 1552, 1};
        spec.q_lens = {1, 1, 2, 4, 1};
        spec.q_std = std::ldexp(1.0, -122);
        spec.mxfp4_extremes = extremes;
        const HostProblem p = make_problem(spec);
        int zero_blocks = 0, code0 = 0, code254_keys = 0, code254_values = 0;
        for (int64_t slot = 0; slot < p.kv_indptr.back(); ++slot) {
            for (int k = 0; k < MLA_MXFP4_ROW_SCALES; ++k) {
                const uint8_t* packed = p.kv.data() + slot * p.kv_stride_slot + k * 16;
                const uint8_t code = p.kv_block_scales[slot * p.kv_block_scale_stride + k];
                bool zero = true, small = true;
                for (int i = 0; i < 16; ++i) {
                    zero = zero && packed[i] == 0;
                    small = small && (packed[i] & 0x7) <= 3 && ((packed[i] >> 4) & 0x7) <= 3;
                }
                if (zero) {
                    ++zero_blocks;
                } else if (code == 0) {
                    ++code0;
                } else if (code == 254) {
                    EXPECT_TRUE(small) << "slot " << slot << ", block " << k;
                    ++(k < 16 ? code254_values : code254_keys);
                }
            }
        }
        EXPECT_GT(zero_blocks, 0);
        EXPECT_GT(code0, 0);
        EXPECT_GT(code254_keys, 0);
        if (values) {
            EXPECT_GT(code254_values, 0);
        } else {
            EXPECT_EQ(code254_values, 0);
        }
        const Reference ref = run_reference(p);
        float largest = 0.0f;
        for (float v : ref.o) {
            ASSERT_TRUE(std::isfinite(v));
            largest = std::max(largest, std::fabs(v));
        }
        for (float v : ref.lse) {
            ASSERT_TRUE(std::isfinite(v));
            EXPECT_LT(std::fabs(v), 1000.0f);
        }
        if (values) {
            EXPECT_GT(largest, 1e30f);  // V of about 2^127 reaches O
        } else {
            EXPECT_LT(largest, 100.0f);
        }
    }
}

// with_lengths: the same buffers under other lengths keep the plan shape; paged, they give
// exactly what a fresh problem of those lengths gives (cache values depend only on position);
// lengths the buffers cannot hold are refused.
TEST(ProblemOptions, WithLengths) {
    for (bool paged : {false, true}) {
        SCOPED_TRACE(paged ? "paged" : "contiguous");
        ProblemSpec spec = spec_of(MLA_DTYPE_BF16);
        spec.kv_lens = {300, 200, 64, 9};
        spec.q_lens = {2, 1, 2, 1};
        if (paged) {
            spec.paged = true;
            spec.page_size = 16;
            spec.page_list_tail = 1;
        }
        const HostProblem capacity = make_problem(spec);
        const std::vector<int> q = {1, 2, 1, 2}, kv = {300, 17, 0, 9};
        const HostProblem moved = with_lengths(capacity, q, kv);
        EXPECT_EQ(moved.total_q, capacity.total_q);
        EXPECT_EQ(moved.max_q_len, capacity.max_q_len);
        EXPECT_EQ(moved.max_kv_len, capacity.max_kv_len);
        EXPECT_EQ(moved.kv_indptr, (std::vector<int32_t>{0, 300, 317, 317, 326}));
        EXPECT_EQ(moved.qo_indptr, (std::vector<int32_t>{0, 1, 3, 4, 6}));
        const Reference got = run_reference(moved);
        if (paged) {
            spec.q_lens = q;
            spec.kv_lens = kv;
            EXPECT_TRUE(identical(got, run_reference(make_problem(spec))));
        }
        EXPECT_THROW(with_lengths(capacity, {1, 1, 1, 1}, kv), std::invalid_argument);
        EXPECT_THROW(with_lengths(capacity, q, {301, 0, 0, 0}), std::invalid_argument);
        if (paged) {
            EXPECT_THROW(with_lengths(capacity, q, {300, 201, 0, 0}), std::invalid_argument);
        }
    }
}

}  // namespace
}  // namespace mla_test
