// The edges engines hit around the numbers, on the host (the GPU side is in test_gpu_paths.cpp):
//  - an empty pool (num_slots 0, the cache pointers NULL, every kv length 0): the reference
//    writes O = 0 and LSE = -inf for every row; mla_decode_fwd, the workspace query and plan
//    creation accept the params (they stop at the device check here); a kv length above 0 over
//    an empty pool is refused by the reference; pointers into an empty pool overlap nothing;
//  - overlapping outputs: O or LSE sharing a byte with an input (each input field in turn) or
//    with each other is refused with INVALID_VALUE naming both fields, by the reference (with
//    nothing written anywhere) and by mla_decode_fwd before the device is looked at; spans that
//    touch without sharing a byte are accepted;
//  - 8 heads (a 128-head model split 16 ways) pass validation on every route.
// Every layout includes the input forms (split Q, split cache, strided LSE): their pointers and
// spans (q_pe, kpe_cache, the LSE rows at their stride) are among the overlap checks.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "mla_decode.h"
#include "mla_problem.h"

namespace mla_test {
namespace {

constexpr mla_dtype kNoV = MLA_DTYPE_NONE;

struct Layout {
    const char* name;
    mla_dtype kv;
    mla_dtype v;
    int page_size;  // 0: contiguous
    bool split;     // split Q, a rope cache of kv's dtype, LSE rows 4 floats apart past the heads
};

const Layout kLayouts[] = {
    {"bf16", MLA_DTYPE_BF16, kNoV, 0, false},
    {"fp8_e4m3fn", MLA_DTYPE_FP8_E4M3FN, kNoV, 0, false},
    {"fp8_e4m3fnuz_pages16", MLA_DTYPE_FP8_E4M3FNUZ, kNoV, 16, false},
    {"mxfp4", MLA_DTYPE_MXFP4, kNoV, 0, false},
    {"mxfp4_k_fp8_v_pages64", MLA_DTYPE_MXFP4, MLA_DTYPE_FP8_E4M3FN, 64, false},
    {"bf16_split_forms", MLA_DTYPE_BF16, kNoV, 0, true},
    {"fp8_e4m3fn_split_forms_pages16", MLA_DTYPE_FP8_E4M3FN, kNoV, 16, true},
};

ProblemSpec spec_of(const Layout& l, std::vector<int> kv_lens, std::vector<int> q_lens) {
    ProblemSpec s;
    s.num_heads = 16;
    s.kv_dtype = l.kv;
    s.v_dtype = l.v;
    s.paged = l.page_size > 0;
    s.page_size = l.page_size > 0 ? l.page_size : 1;
    s.kv_lens = std::move(kv_lens);
    s.q_lens = std::move(q_lens);
    if (l.split) {
        s.split_q = true;
        s.kpe_dtype = l.kv;
        s.lse_stride_token = s.num_heads + 4;  // 16-byte spans for the arenas below
    }
    return s;
}

// An empty pool: no slots, and every pointer into the pool NULL.
void empty_pool(mla_decode_params& p) {
    p.num_slots = 0;
    p.kv_cache = nullptr;
    p.kv_block_scales = nullptr;
    p.v_cache = nullptr;
    p.kpe_cache = nullptr;
    p.kv_page_indices = nullptr;
}

// The last error message names `field`.
::testing::AssertionResult message_mentions(const std::string& field) {
    const std::string message = mla_last_error_message();
    if (message.find(field) != std::string::npos) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "'" << message << "' does not mention " << field;
}

// Calls that pass validation stop at the device check in this process (no GPU backend, or no
// GPU): then mla_decode_fwd may be called with host pointers, which it never dereferences.
bool stops_at_device(const mla_decode_params& p) {
    size_t bytes = 0;
    return mla_decode_workspace_size(&p, &bytes) == MLA_STATUS_NO_DEVICE;
}

// ---- empty pool -----------------------------------------------------------------------------

class EmptyPool : public ::testing::TestWithParam<Layout> {};

// Warm-up / capture steps: lengths 0 everywhere, q_len 1..3, O = 0 and LSE = -inf exactly.
TEST_P(EmptyPool, ReferenceWritesZeroAndMinusInfinity) {
    const HostProblem hp = make_problem(spec_of(GetParam(), {0, 0, 0, 0}, {1, 3, 1, 2}));
    for (mla_dtype o_dtype : {MLA_DTYPE_BF16, MLA_DTYPE_FP32}) {
        SCOPED_TRACE(o_dtype == MLA_DTYPE_BF16 ? "bf16 O" : "fp32 O");
        std::vector<float> o(hp.o_elements(), NAN), lse(hp.lse_elements(), NAN);
        mla_decode_params p = hp.host_params(o.data(), o_dtype, lse.data());
        empty_pool(p);
        ASSERT_EQ(mla_decode_reference(&p), MLA_STATUS_SUCCESS) << mla_last_error_message();
        const size_t o_bytes = hp.o_elements() * (o_dtype == MLA_DTYPE_BF16 ? 2 : 4);
        const uint8_t* bytes = reinterpret_cast<const uint8_t*>(o.data());
        size_t nonzero = 0;
        for (size_t i = 0; i < o_bytes; ++i) nonzero += bytes[i] != 0;
        EXPECT_EQ(nonzero, 0u) << "O must be +0 everywhere";
        for (float x : hp.dense_lse(lse)) ASSERT_TRUE(std::isinf(x) && x < 0.0f) << x;
        for (size_t i = 0; i < lse.size(); ++i) {  // between rows of a strided LSE: untouched
            if (i % hp.lse_row_stride() >= static_cast<size_t>(hp.spec.num_heads)) {
                ASSERT_TRUE(std::isnan(lse[i])) << "LSE padding written at " << i;
            }
        }
    }
}

// The GPU entry points accept an empty pool: each stops at the device check (with a GPU, the
// GPU suites run it). Non-NULL pointers into an empty pool are accepted too.
TEST_P(EmptyPool, DeviceCallsPassValidation) {
    const HostProblem hp = make_problem(spec_of(GetParam(), {0, 0, 0}, {1, 2, 1}));
    std::vector<uint16_t> o(hp.o_elements());
    std::vector<float> lse(hp.lse_elements());
    for (bool null_pointers : {true, false}) {
        SCOPED_TRACE(null_pointers ? "NULL cache pointers" : "cache pointers set");
        mla_decode_params p = hp.host_params(o.data(), MLA_DTYPE_BF16, lse.data());
        if (null_pointers) {
            empty_pool(p);
        } else {
            p.num_slots = 0;
        }
        if (!stops_at_device(p)) GTEST_SKIP() << "a GPU is present: test_gpu_paths runs this";
        EXPECT_EQ(mla_decode_fwd(&p, nullptr, 0, nullptr), MLA_STATUS_NO_DEVICE)
            << mla_last_error_message();
        mla_decode_plan* plan = nullptr;
        EXPECT_EQ(mla_decode_plan_create(&p, &plan), MLA_STATUS_NO_DEVICE);
        EXPECT_EQ(plan, nullptr);
        std::vector<float> ref_o(hp.o_elements());
        mla_decode_params host = hp.host_params(ref_o.data(), MLA_DTYPE_FP32, nullptr);
        if (null_pointers) {
            empty_pool(host);
        } else {
            host.num_slots = 0;
        }
        EXPECT_EQ(mla_decode_reference(&host), MLA_STATUS_SUCCESS) << mla_last_error_message();
    }
}

// num_slots 0 says every kv length is 0: the reference refuses one above 0 (before any page id
// or cache row is read, so the NULL pointers are never touched) and writes nothing.
TEST_P(EmptyPool, ReferenceRefusesAKvLengthAboveZero) {
    const HostProblem hp = make_problem(spec_of(GetParam(), {0, 3, 0}, {1, 1, 2}));
    std::vector<float> o(hp.o_elements(), 7.0f), lse(hp.lse_elements(), 7.0f);
    mla_decode_params p = hp.host_params(o.data(), MLA_DTYPE_FP32, lse.data());
    empty_pool(p);
    EXPECT_EQ(mla_decode_reference(&p), MLA_STATUS_INVALID_VALUE);
    EXPECT_TRUE(message_mentions("num_slots"));
    for (float x : o) ASSERT_EQ(x, 7.0f);
    for (float x : lse) ASSERT_EQ(x, 7.0f);
}

// Outside an empty pool the cache pointers stay required.
TEST_P(EmptyPool, CachePointersStayRequiredWithSlots) {
    const HostProblem hp = make_problem(spec_of(GetParam(), {0, 0, 0}, {1, 2, 1}));
    std::vector<float> o(hp.o_elements());
    mla_decode_params p = hp.host_params(o.data(), MLA_DTYPE_FP32, nullptr);
    p.kv_cache = nullptr;
    EXPECT_EQ(mla_decode_reference(&p), MLA_STATUS_NULL_POINTER);
    EXPECT_TRUE(message_mentions("kv_cache"));
    if (p.kpe_dtype != 0) {
        p = hp.host_params(o.data(), MLA_DTYPE_FP32, nullptr);
        p.kpe_cache = nullptr;
        EXPECT_EQ(mla_decode_reference(&p), MLA_STATUS_NULL_POINTER);
        EXPECT_TRUE(message_mentions("kpe_cache"));
    }
}

// An empty pool has no rows and no pages: pointers into it have empty spans, so they overlap
// nothing (here they point into O itself), and nothing is read through them.
TEST_P(EmptyPool, ItsPointersOverlapNothing) {
    const HostProblem hp = make_problem(spec_of(GetParam(), {0, 0, 0}, {1, 2, 1}));
    std::vector<uint16_t> o(hp.o_elements(), 0x7F7F);
    mla_decode_params p = hp.host_params(o.data(), MLA_DTYPE_BF16, nullptr);
    empty_pool(p);
    p.kv_cache = o.data();
    if (p.kv_dtype == MLA_DTYPE_MXFP4) p.kv_block_scales = reinterpret_cast<uint8_t*>(o.data());
    if (p.v_dtype != 0) p.v_cache = o.data();
    if (p.kpe_dtype != 0) p.kpe_cache = o.data();
    if (p.kv_page_indptr != nullptr) p.kv_page_indices = reinterpret_cast<int32_t*>(o.data());
    ASSERT_EQ(mla_decode_reference(&p), MLA_STATUS_SUCCESS) << mla_last_error_message();
    for (uint16_t x : o) ASSERT_EQ(x, 0);
}

INSTANTIATE_TEST_SUITE_P(Layouts, EmptyPool, ::testing::ValuesIn(kLayouts),
                         [](const ::testing::TestParamInfo<Layout>& info) {
                             return std::string(info.param.name);
                         });

// ---- overlapping outputs --------------------------------------------------------------------

// One input field of the params: which problem has it, its host bytes, and how to point the
// params at a copy.
struct InputField {
    const char* name;
    Layout layout;
    std::function<std::vector<uint8_t>(const HostProblem&)> bytes;
    std::function<void(mla_decode_params&, void*)> point;
};

template <typename T>
std::vector<uint8_t> as_bytes(const std::vector<T>& v) {
    std::vector<uint8_t> out(v.size() * sizeof(T));
    if (!out.empty()) std::memcpy(out.data(), v.data(), out.size());
    return out;
}

const Layout kBf16Contiguous = kLayouts[0];
const Layout kPaged = kLayouts[2];
const Layout kMxfp4 = kLayouts[3];
const Layout kMxfp4FpV = kLayouts[4];
const Layout kSplitForms = kLayouts[5];

std::vector<InputField> input_fields() {
    return {
        {"q", kBf16Contiguous, [](const HostProblem& h) { return h.q; },
         [](mla_decode_params& p, void* at) { p.q = at; }},
        {"q_pe", kSplitForms, [](const HostProblem& h) { return h.q_pe; },
         [](mla_decode_params& p, void* at) { p.q_pe = at; }},
        {"kv_cache", kBf16Contiguous, [](const HostProblem& h) { return h.kv; },
         [](mla_decode_params& p, void* at) { p.kv_cache = at; }},
        {"kpe_cache", kSplitForms, [](const HostProblem& h) { return h.kpe; },
         [](mla_decode_params& p, void* at) { p.kpe_cache = at; }},
        {"kv_block_scales", kMxfp4, [](const HostProblem& h) { return h.kv_block_scales; },
         [](mla_decode_params& p, void* at) { p.kv_block_scales = static_cast<uint8_t*>(at); }},
        {"v_cache", kMxfp4FpV, [](const HostProblem& h) { return h.v; },
         [](mla_decode_params& p, void* at) { p.v_cache = at; }},
        {"qo_indptr", kBf16Contiguous, [](const HostProblem& h) { return as_bytes(h.qo_indptr); },
         [](mla_decode_params& p, void* at) { p.qo_indptr = static_cast<int32_t*>(at); }},
        {"kv_indptr", kPaged, [](const HostProblem& h) { return as_bytes(h.kv_indptr); },
         [](mla_decode_params& p, void* at) { p.kv_indptr = static_cast<int32_t*>(at); }},
        {"kv_page_indptr", kPaged,
         [](const HostProblem& h) { return as_bytes(h.kv_page_indptr); },
         [](mla_decode_params& p, void* at) { p.kv_page_indptr = static_cast<int32_t*>(at); }},
        {"kv_page_indices", kPaged,
         [](const HostProblem& h) { return as_bytes(h.kv_page_indices); },
         [](mla_decode_params& p, void* at) { p.kv_page_indices = static_cast<int32_t*>(at); }},
    };
}

enum class Output { kO, kLse };

void PrintTo(Output out, std::ostream* os) { *os << (out == Output::kO ? "O" : "LSE"); }

// One arena holding an output and, right behind it, a copy of an input: the input starts
// `shared` bytes before the output's span ends (0: the spans touch, no byte shared).
class Arena {
public:
    Arena(size_t out_bytes, const std::vector<uint8_t>& input, size_t shared)
        : storage_(out_bytes + input.size() + 2 * kAlign, 0xC3) {
        base_ = storage_.data() + (kAlign - reinterpret_cast<uintptr_t>(storage_.data()) % kAlign);
        input_ = base_ + out_bytes - shared;
        std::memcpy(input_, input.data(), input.size());
        snapshot_ = storage_;
    }
    void* output() const { return base_; }
    void* input() const { return input_; }
    bool unchanged() const { return storage_ == snapshot_; }

private:
    static constexpr size_t kAlign = 256;
    std::vector<uint8_t> storage_, snapshot_;
    uint8_t* base_ = nullptr;
    uint8_t* input_ = nullptr;
};

// Bytes of the output's span in problem `hp` (dense O in bf16; LSE total_q rows of heads fp32 at
// its row stride, the padding after the last row not included).
size_t output_bytes(const HostProblem& hp, Output out) {
    if (out == Output::kO) return hp.o_elements() * 2;
    return ((hp.total_q - 1) * hp.lse_row_stride() + hp.spec.num_heads) * sizeof(float);
}

// The LSE at `lse` (the problem's row stride) as a dense (total_q, heads) vector. Reads the
// padding after the last row too (an arena has room past it).
std::vector<float> dense_lse_at(const HostProblem& hp, const float* lse) {
    return hp.dense_lse(std::vector<float>(lse, lse + hp.lse_elements()));
}

// The params of `hp` with `out` in an arena, followed by a copy of `in` sharing `shared` bytes;
// the other output in its own buffer (`own_o` / `own_lse`).
mla_decode_params placed(const HostProblem& hp, Output out, const InputField& in, Arena& arena,
                         std::vector<uint16_t>& own_o, std::vector<float>& own_lse) {
    mla_decode_params p = hp.host_params(own_o.data(), MLA_DTYPE_BF16, own_lse.data());
    if (out == Output::kO) {
        p.o = arena.output();
    } else {
        p.lse = static_cast<float*>(arena.output());
    }
    in.point(p, arena.input());
    return p;
}

class OverlappingOutputs : public ::testing::TestWithParam<Output> {
protected:
    const char* out_name() const { return GetParam() == Output::kO ? "o" : "lse"; }
};

// Each input in turn shares its first 16 bytes with the output's last 16: refused by the
// reference (nothing written: the arena and the other output keep every byte) and by
// mla_decode_fwd (before any device call, so also where there is no GPU).
TEST_P(OverlappingOutputs, EveryInputIsRefused) {
    for (const InputField& in : input_fields()) {
        SCOPED_TRACE(std::string(out_name()) + " over " + in.name);
        const HostProblem hp = make_problem(spec_of(in.layout, {40, 0, 50}, {1, 2, 1}));
        const std::vector<uint8_t> input = in.bytes(hp);
        ASSERT_GE(input.size(), 16u);
        Arena arena(output_bytes(hp, GetParam()), input, 16);
        std::vector<uint16_t> own_o(hp.o_elements(), 0x5A5A);
        std::vector<float> own_lse(hp.lse_elements(), 5.0f);
        const mla_decode_params p = placed(hp, GetParam(), in, arena, own_o, own_lse);
        EXPECT_EQ(mla_decode_reference(&p), MLA_STATUS_INVALID_VALUE);
        EXPECT_TRUE(message_mentions(std::string(out_name()) + " and " + in.name));
        EXPECT_TRUE(arena.unchanged());
        for (uint16_t x : own_o) ASSERT_EQ(x, 0x5A5A);
        for (float x : own_lse) ASSERT_EQ(x, 5.0f);
        EXPECT_EQ(mla_decode_fwd(&p, nullptr, 0, nullptr), MLA_STATUS_INVALID_VALUE);
        EXPECT_TRUE(message_mentions(std::string(out_name()) + " and " + in.name));
        EXPECT_TRUE(arena.unchanged());
    }
}

// The same arenas with the input starting right where the output's span ends: valid, and the
// reference computes the same result as with separate buffers.
TEST_P(OverlappingOutputs, TouchingSpansAreAccepted) {
    for (const InputField& in : input_fields()) {
        SCOPED_TRACE(std::string(out_name()) + " before " + in.name);
        const HostProblem hp = make_problem(spec_of(in.layout, {40, 0, 50}, {1, 2, 1}));
        Arena arena(output_bytes(hp, GetParam()), in.bytes(hp), 0);
        std::vector<uint16_t> own_o(hp.o_elements());
        std::vector<float> own_lse(hp.lse_elements());
        const mla_decode_params p = placed(hp, GetParam(), in, arena, own_o, own_lse);
        ASSERT_EQ(mla_decode_reference(&p), MLA_STATUS_SUCCESS) << mla_last_error_message();
        std::vector<uint16_t> sep_o(hp.o_elements());
        std::vector<float> sep_lse(hp.lse_elements());
        mla_decode_params separate = hp.host_params(sep_o.data(), MLA_DTYPE_BF16, sep_lse.data());
        ASSERT_EQ(mla_decode_reference(&separate), MLA_STATUS_SUCCESS);
        const void* got_o = p.o;
        EXPECT_EQ(std::memcmp(got_o, sep_o.data(), sep_o.size() * 2), 0);
        const std::vector<float> got_lse = dense_lse_at(hp, p.lse);
        const std::vector<float> want_lse = hp.dense_lse(sep_lse);
        EXPECT_EQ(std::memcmp(got_lse.data(), want_lse.data(), want_lse.size() * 4), 0);
    }
}

INSTANTIATE_TEST_SUITE_P(Outputs, OverlappingOutputs, ::testing::Values(Output::kO, Output::kLse),
                         [](const ::testing::TestParamInfo<Output>& info) {
                             return std::string(info.param == Output::kO ? "O" : "Lse");
                         });

// LSE sharing bytes with O (both ends), refused; right behind O, accepted.
TEST(OverlappingOutputsEachOther, LseOverO) {
    const HostProblem hp = make_problem(spec_of(kBf16Contiguous, {3, 0, 5}, {1, 2, 1}));
    const size_t o_bytes = hp.o_elements() * 2, lse_bytes = hp.lse_elements() * sizeof(float);
    std::vector<uint8_t> arena(o_bytes + lse_bytes + 512, 0xC3);
    uint8_t* base = arena.data() + (256 - reinterpret_cast<uintptr_t>(arena.data()) % 256);
    const size_t lse_offsets[] = {0, o_bytes - 4, o_bytes / 2};
    for (size_t at : lse_offsets) {
        SCOPED_TRACE("lse at byte " + std::to_string(at) + " of O");
        const std::vector<uint8_t> before = arena;
        mla_decode_params p =
            hp.host_params(base, MLA_DTYPE_BF16, reinterpret_cast<float*>(base + at));
        EXPECT_EQ(mla_decode_reference(&p), MLA_STATUS_INVALID_VALUE);
        EXPECT_TRUE(message_mentions("o and lse"));
        EXPECT_EQ(mla_decode_fwd(&p, nullptr, 0, nullptr), MLA_STATUS_INVALID_VALUE);
        EXPECT_TRUE(message_mentions("o and lse"));
        EXPECT_TRUE(arena == before);
    }
    mla_decode_params p =
        hp.host_params(base, MLA_DTYPE_BF16, reinterpret_cast<float*>(base + o_bytes));
    EXPECT_EQ(mla_decode_reference(&p), MLA_STATUS_SUCCESS) << mla_last_error_message();
}

// The host reference reads the whole page list on the host, so O over any used entry of it
// (here every entry past the first, which validate_params alone would not see: its length is
// device data for mla_decode_fwd) is refused before anything is written (0.7.43: before, the
// workers wrote O while others still read page ids there: a wild read). O ending right before
// the list is accepted.
TEST(OverlappingOutputsEachOther, OutputOverLaterPageListEntries) {
    const HostProblem hp = make_problem(spec_of(kPaged, {40, 0, 50}, {1, 2, 1}));
    const size_t pages = hp.kv_page_indices.size();
    ASSERT_GE(pages, 2u);
    const size_t o_bytes = hp.o_elements() * 2;
    std::vector<uint8_t> arena(o_bytes + pages * 4 + 256, 0xC3);
    uint8_t* base = arena.data() + (64 - reinterpret_cast<uintptr_t>(arena.data()) % 64);
    uint8_t* o = base + 16;  // 16-byte aligned; the list's first entry at o - 4
    std::memcpy(o - 4, hp.kv_page_indices.data(), pages * 4);
    const std::vector<uint8_t> before = arena;
    mla_decode_params p = hp.host_params(o, MLA_DTYPE_BF16, nullptr);
    p.kv_page_indices = reinterpret_cast<const int32_t*>(o - 4);
    EXPECT_EQ(mla_decode_reference(&p), MLA_STATUS_INVALID_VALUE);
    EXPECT_TRUE(message_mentions("o and kv_page_indices"));
    EXPECT_TRUE(arena == before);
    std::memcpy(o + o_bytes, hp.kv_page_indices.data(), pages * 4);
    p.kv_page_indices = reinterpret_cast<const int32_t*>(o + o_bytes);
    EXPECT_EQ(mla_decode_reference(&p), MLA_STATUS_SUCCESS) << mla_last_error_message();
}

// An empty pool (num_slots 0) still needs each cache row's byte stride to fit in int64: with no
// rows the extent check alone would pass any stride (0.7.43; the stride's alignment check then
// multiplied it by the element's bytes and overflowed).
TEST(EmptyPoolStrides, CacheRowStrideBytesMustFit) {
    const HostProblem hp = make_problem(spec_of(kBf16Contiguous, {0, 0, 0}, {1, 2, 1}));
    std::vector<uint16_t> o(hp.o_elements(), 0x5A5A);
    mla_decode_params p = hp.host_params(o.data(), MLA_DTYPE_BF16, nullptr);
    p.num_slots = 0;
    p.kv_cache = nullptr;
    p.kv_stride_slot = int64_t{1} << 62;
    EXPECT_EQ(mla_decode_reference(&p), MLA_STATUS_INVALID_SIZE);
    EXPECT_TRUE(message_mentions("kv_cache byte extent overflows"));
    for (uint16_t x : o) ASSERT_EQ(x, 0x5A5A);
    size_t bytes = 0;
    EXPECT_EQ(mla_decode_workspace_size(&p, &bytes), MLA_STATUS_INVALID_SIZE);
}

// Spans, not elements: O inside the row padding of Q (q_stride_token past heads x 576) shares
// no element with Q but lies within its span, and is refused.
TEST(OverlappingOutputsEachOther, OutputInsideTheRowPaddingOfQ) {
    ProblemSpec s = spec_of(kBf16Contiguous, {3, 0, 5}, {1, 2, 1});
    const int64_t q_row = 16 * 576;
    s.q_stride_token = q_row + 16 * 512;  // room for one O row after each Q row
    const HostProblem hp = make_problem(s);
    std::vector<uint8_t> q_bytes = hp.q;
    mla_decode_params p = hp.host_params(nullptr, MLA_DTYPE_BF16, nullptr);
    p.q = q_bytes.data();
    p.o = q_bytes.data() + q_row * 2;
    p.o_stride_token = s.q_stride_token;  // O row t in the padding of Q row t
    EXPECT_EQ(mla_decode_reference(&p), MLA_STATUS_INVALID_VALUE);
    EXPECT_TRUE(message_mentions("o and q"));
    EXPECT_TRUE(q_bytes == hp.q);
}

// The scale tensor's span reaches min(stride, 32) bytes into its last row (what the kernels'
// 16- and 4-byte scale copies read), not only its 18 codes: O right after the last row's codes
// is refused; O where that span ends is accepted.
TEST(OverlappingOutputsEachOther, OutputAfterTheLastScaleRowsCodes) {
    for (int64_t stride : {19, 24, 32, 48}) {
        SCOPED_TRACE("scale stride " + std::to_string(stride));
        ProblemSpec s = spec_of(kMxfp4, {3, 0, 5}, {1, 2, 1});
        s.mxfp4_scale_stride = stride;
        const HostProblem hp = make_problem(s);
        const int64_t last_row = (hp.num_slots - 1) * stride;
        const int64_t span = last_row + std::min<int64_t>(stride, 32);
        ASSERT_GE(static_cast<int64_t>(hp.kv_block_scales.size()), span);
        std::vector<uint8_t> arena(span + hp.o_elements() * 2 + 512, 0xC3);
        uint8_t* base = arena.data() + (256 - reinterpret_cast<uintptr_t>(arena.data()) % 256);
        std::memcpy(base, hp.kv_block_scales.data(), static_cast<size_t>(span));
        mla_decode_params p = hp.host_params(base + last_row + MLA_MXFP4_ROW_SCALES,
                                             MLA_DTYPE_BF16, nullptr);
        p.kv_block_scales = base;
        const std::vector<uint8_t> before = arena;
        EXPECT_EQ(mla_decode_reference(&p), MLA_STATUS_INVALID_VALUE);
        EXPECT_TRUE(message_mentions("o and kv_block_scales"));
        EXPECT_EQ(mla_decode_fwd(&p, nullptr, 0, nullptr), MLA_STATUS_INVALID_VALUE);
        EXPECT_TRUE(message_mentions("o and kv_block_scales"));
        EXPECT_TRUE(arena == before);
        if (span % 16 == 0) {  // O where the span ends, if 16-byte aligned (always at 32, 48)
            p.o = base + span;
            EXPECT_EQ(mla_decode_reference(&p), MLA_STATUS_SUCCESS) << mla_last_error_message();
        }
    }
}

// Where the check sits in the order of mla_decode.h: after strides and extents (g) and the
// scalar values of (h), before alignment (i) and the device.
TEST(OverlappingOutputsEachOther, PlaceInTheCheckOrder) {
    const HostProblem hp = make_problem(spec_of(kBf16Contiguous, {3, 0, 5}, {1, 2, 1}));
    std::vector<uint8_t> q_bytes = hp.q;
    mla_decode_params base = hp.host_params(q_bytes.data(), MLA_DTYPE_BF16, nullptr);
    base.q = q_bytes.data();  // O over Q
    mla_decode_params p = base;
    p.o_stride_head = 100;  // (g)
    EXPECT_EQ(mla_decode_fwd(&p, nullptr, 0, nullptr), MLA_STATUS_INVALID_SIZE);
    p = base;
    p.sm_scale = -1.0f;  // (h), scalar
    EXPECT_EQ(mla_decode_fwd(&p, nullptr, 0, nullptr), MLA_STATUS_INVALID_VALUE);
    EXPECT_TRUE(message_mentions("sm_scale"));
    p = base;
    p.qo_indptr = reinterpret_cast<const int32_t*>(reinterpret_cast<uintptr_t>(p.qo_indptr) + 2);
    EXPECT_EQ(mla_decode_fwd(&p, nullptr, 0, nullptr), MLA_STATUS_INVALID_VALUE);  // before (i)
    EXPECT_TRUE(message_mentions("o and q"));
    EXPECT_EQ(mla_decode_reference(&p), MLA_STATUS_INVALID_VALUE);
    EXPECT_TRUE(q_bytes == hp.q);
}

// ---- 8 heads ----------------------------------------------------------------------------------

// A 128-head model split 16 ways: 8 heads pass validation on every route, for every layout (the
// reference's numbers at 8 heads: test_reference.cpp; the GPU's: test_gpu_paths.cpp).
TEST(EightHeads, PassValidationOnEveryRoute) {
    for (const Layout& l : kLayouts) {
        SCOPED_TRACE(l.name);
        ProblemSpec s = spec_of(l, {3, 0, 70}, {1, 3, 2});
        s.num_heads = 8;
        const HostProblem hp = make_problem(s);
        std::vector<float> o(hp.o_elements()), lse(hp.lse_elements());
        mla_decode_params p = hp.host_params(o.data(), MLA_DTYPE_FP32, lse.data());
        EXPECT_EQ(mla_decode_reference(&p), MLA_STATUS_SUCCESS) << mla_last_error_message();
        p.o_dtype = MLA_DTYPE_BF16;
        size_t bytes = 0;
        const mla_status ws = mla_decode_workspace_size(&p, &bytes);
        EXPECT_TRUE(ws == MLA_STATUS_SUCCESS || ws == MLA_STATUS_NO_DEVICE)
            << mla_status_string(ws) << ": " << mla_last_error_message();
        if (stops_at_device(p)) {
            EXPECT_EQ(mla_decode_fwd(&p, nullptr, 0, nullptr), MLA_STATUS_NO_DEVICE)
                << mla_last_error_message();
        }
    }
}

}  // namespace
}  // namespace mla_test
