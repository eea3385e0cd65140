// Test and benchmark inputs: random MLA decode problems in every SPEC format, held in host
// memory, plus the host reference (through the C ABI) to compare GPU results with.
// Shared by tests/ and bench/ (library target mla_test_common); no GoogleTest dependency.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "mla_decode.h"

namespace mla_test {

// A copyable stream of unit normal values (copy it to replay): raw std::mt19937_64 draws turned
// into normals by the ziggurat method (Marsaglia and Tsang, 2000: 256 layers; the layer from a
// draw's low 8 bits, the position from its high 53, a fresh draw per rejection): the values
// depend on the engine's draws and on libm's exp / log rounding only (std::normal_distribution's
// algorithm differs between standard libraries), and cost ~5 ns each instead of ~38: making
// the caches was most of the GPU suite's host time (a bs256 kv8192 fp8 problem: 86 s to make,
// 9 s for its reference, on 2 cores).
class NormalStream {
public:
    explicit NormalStream(uint64_t seed) : engine_(seed) {}
    double next();

private:
    std::mt19937_64 engine_;
};

// Extreme MXFP4 blocks written over the random ones (ProblemSpec::mxfp4_extremes). The pattern
// depends on (position in the element, block index) only, so paged and contiguous layouts of
// one spec hold the same values.
enum class Mxfp4Extremes {
    kNone,
    // Blocks whose 32 elements are all zero (scale codes 0, 127 and 254 among them), blocks
    // with e8m0 code 0 (values 2^-127 x e2m1: the fp32 subnormal range), and, in every third
    // token, e8m0 code 254 (2^127 x e2m1, elements limited to |x| <= 1.5) in the key-only
    // blocks 16 and 17 (dims 512..575). Pair it with a tiny Q (q_std about 2^-122) so that
    // scores stay moderate and every result is finite in fp32.
    kKeyScales,
    // kKeyScales, plus one token in 97 with a code-254 block among dims 0..511 (so V reaches
    // 1.5 x 2^127). Within 1552 positions no two such tokens share a block, so with kv lengths
    // up to 1552 every fp32 sum of weights (<= 1) times V stays finite.
    kValueScales,
};

struct ProblemSpec {
    int num_heads = 16;
    std::vector<int> q_lens;   // per batch element; empty = 1 for every element
    std::vector<int> kv_lens;  // per batch element; its size is the batch size
    mla_dtype q_dtype = MLA_DTYPE_BF16;   // BF16, or FP8_* (pre-quantized, per-tensor scale)
    mla_dtype kv_dtype = MLA_DTYPE_BF16;  // BF16, FP8_E4M3FN, FP8_E4M3FNUZ, MXFP4
    // With kv_dtype MXFP4: V from a separate FP8 cache of this dtype (FP8_*), or 0 = V from
    // the MXFP4 cache itself.
    mla_dtype v_dtype = MLA_DTYPE_NONE;
    int page_size = 1;
    bool paged = false;          // CSR page table with shuffled pages (and spare pages)
    bool shuffle_pages = true;   // false: pages in order (element 0's first, then 1's, ...)
    bool poison_unused = true;   // slots no sequence uses hold NaN codes (a stray read shows)
    double q_std = 1.0;          // Q = randn * q_std (before quantization)
    double kv_std = 1.0;         // cache = randn * kv_std (before quantization)
    float sm_scale = 0.041666668f;  // 1/sqrt(576)
    uint64_t seed = 1;
    // Row strides in elements; 0 = packed (q: heads * its head stride, o: heads*512).
    int64_t q_stride_token = 0;
    int64_t o_stride_token = 0;
    // Input forms (mla_decode.h, "Input forms"). Every form holds the values of the one-tensor
    // forms of the same spec (the same random streams and quantization: FP8 scales from all 576
    // dims), so a split form's result must equal the 576-wide form's bit for bit (a BF16 rope
    // beside an FP8 latent holds the same latent codes; its rope is the bf16 rounding).
    //   split_q: q holds q_nope (head stride 512 + 32, padding poisoned), q_pe the rope part
    //     (head stride 96, token stride heads * 96 + 64, padding poisoned).
    //   kpe_dtype (0 = 576-wide rows): kv holds the latent rows (stride 544 elements), kpe the
    //     rope rows in this dtype (stride 96 elements), padding and unused slots poisoned.
    //     BF16 or the FP8 kv_dtype (any pair the validation allows, MXFP4 excluded).
    //   lse_stride_token (0 = dense): the LSE row stride HostProblem::host_params passes.
    bool split_q = false;
    mla_dtype kpe_dtype = MLA_DTYPE_NONE;
    // kpe_dtype BF16 beside an FP8 kv_dtype only: the rope values stored are the random ones
    // times rope_gain (rounded to bf16 once); the FP8 scale still comes from the unscaled
    // values, so the latent codes stay those of rope_gain 1. Large gains put the rope past any
    // range but bf16's (f16's 65504 included).
    double rope_gain = 1.0;
    int64_t lse_stride_token = 0;
    // Paged caches: each element's page list holds this many entries past the
    // ceil(kv_len / page_size) pages it needs, all equal to page_tail_value (no valid page id:
    // a kernel that reads an entry it does not need faults or fails the comparison).
    int page_list_tail = 0;
    int32_t page_tail_value = 0x7fffffff;
    // Slots before the first one the problem uses (a multiple of page_size). The cache then
    // has slot_base + HostProblem::num_slots slots and every used slot lies past slot_base, so
    // a large base moves the byte offsets past 2^31 or 2^32. The host keeps only the slots from
    // slot_base on and its index arrays count from there (the reference reads exactly the rows
    // the device reads); DeviceProblem allocates the whole cache, fills the leading slots with
    // NaN codes on the device and shifts the index arrays (see HostProblem::device_*).
    int64_t slot_base = 0;
    // MXFP4 caches only: extreme blocks written over the random ones.
    Mxfp4Extremes mxfp4_extremes = Mxfp4Extremes::kNone;
    // MXFP4 caches only: bytes between scale rows (>= 18; its alignment picks how the kernels
    // copy the scales: 32 by 16 bytes, 24 by 4, 19 byte by byte).
    int64_t mxfp4_scale_stride = 24;
    // Contiguous caches only: no spare slots after the last sequence, and an MXFP4 scale tensor
    // of exactly the span the header states ((num_slots - 1) * stride + min(stride, 32) bytes,
    // no padded rows): a kernel that reads past it is caught by compute-sanitizer memcheck
    // (docs/notes/experiments/run_sanitize.sh); the allocation's granularity hides it
    // otherwise.
    bool exact_cache_span = false;
};

// One problem in host memory. Storage is raw bytes in the SPEC layouts.
struct HostProblem {
    ProblemSpec spec;
    int batch_size = 0;
    int total_q = 0;
    int max_q_len = 0;
    int max_kv_len = 0;
    int64_t num_slots = 0;
    int64_t q_stride_token = 0;  // elements
    int64_t q_stride_head = MLA_HEAD_DIM_QK;  // elements; (split_q) the q_nope head stride
    int64_t o_stride_token = 0;  // elements

    std::vector<uint8_t> q;          // (total_q, q_stride_token) elements of q_dtype
    float q_scale = 1.0f;
    std::vector<uint8_t> q_pe;       // split_q: (total_q, q_pe_stride_token) elements, else empty
    int64_t q_pe_stride_token = 0;
    int64_t q_pe_stride_head = 0;
    std::vector<uint8_t> kv;         // (num_slots, kv_stride_slot) storage elements
    int64_t kv_stride_slot = 0;      // storage elements (bytes for FP8 / MXFP4)
    float kv_scale = 1.0f;
    std::vector<uint8_t> kpe;        // split cache: (num_slots, kpe_stride_slot) of kpe_dtype
    int64_t kpe_stride_slot = 0;     // elements of spec.kpe_dtype
    std::vector<uint8_t> kv_block_scales;  // MXFP4: rows padded (exact_cache_span: not), stride
    int64_t kv_block_scale_stride = 0;
    std::vector<uint8_t> v;          // separate FP8 V cache or empty
    int64_t v_stride_slot = 0;
    float v_scale = 1.0f;
    std::vector<int32_t> qo_indptr, kv_indptr;
    std::vector<int32_t> kv_page_indptr, kv_page_indices;  // empty when contiguous
    int64_t slot_base = 0;           // spec.slot_base: slots of the device cache before kv[0]

    // The index arrays and slot count of the device cache, which has slot_base leading slots
    // before the host's: kv_indptr shifted by slot_base (contiguous), the page ids each element
    // needs shifted by slot_base / page_size (tail entries keep their value).
    std::vector<int32_t> device_kv_indptr() const;
    std::vector<int32_t> device_page_indices() const;
    int64_t device_num_slots() const { return slot_base + num_slots; }

    // mla_decode_params whose pointers are this object's host buffers, writing O to `o`
    // (o_dtype, (total_q, heads, 512) with o_stride_token) and LSE to `lse` (may be NULL).
    mla_decode_params host_params(void* o, mla_dtype o_dtype, float* lse) const;

    size_t o_elements() const;    // total_q * o_stride_token
    size_t lse_elements() const;  // total_q * the LSE row stride (num_heads when dense)
    int64_t lse_row_stride() const;  // spec.lse_stride_token, or num_heads when it is 0
    // The LSE of a (total_q, row stride) buffer as a dense (total_q, num_heads) vector.
    std::vector<float> dense_lse(const std::vector<float>& strided) const;
    // Bytes one decode call must move at least: cache rows read once, Q read, O written.
    double min_bytes_moved() const;
};

HostProblem make_problem(const ProblemSpec& spec);

// Which input forms a test asks for; with_forms sets them in a spec (split_q; kpe_dtype =
// kv_dtype; LSE rows num_heads + 7 floats apart), forms_name names them for test names
// ("_split_q_split_cache_lse_stride"; "" for none).
struct InputForms {
    bool split_q = false;
    bool split_cache = false;
    bool lse_stride = false;
};
ProblemSpec with_forms(ProblemSpec spec, const InputForms& forms);
std::string forms_name(const InputForms& forms);

// `capacity` with other lengths over the same buffers (Q rows, cache, page table): the same
// batch size, total_q, max_q_len and max_kv_len (so the same plan shape), new qo_indptr and
// kv_indptr. Paged: kv_lens[b] <= capacity's kv_len_b, so only slots it filled are read;
// contiguous: the elements start at the first used slot, back to back, and their total stays
// within the capacity's. Throws std::invalid_argument otherwise.
HostProblem with_lengths(const HostProblem& capacity, const std::vector<int>& q_lens,
                         const std::vector<int>& kv_lens);

// The byte that fills unused storage of `dtype` when poisoning (BF16: 0xFF, whose pairs are
// NaN; FP8: its NaN code; MXFP4 elements: 0xFF, two -6 values; e8m0 scales use 0xFF = NaN), or
// 0 when `poison` is false.
uint8_t poison_byte(mla_dtype dtype, bool poison);

// Host reference through mla_decode_reference, FP32 O (dense: row t, head h at
// (t * heads + h) * 512) and LSE (dense, whatever spec.lse_stride_token: the reference writes at
// that stride and this densifies it). Aborts the test program (throws std::runtime_error) if the
// reference call fails.
struct Reference {
    std::vector<float> o;
    std::vector<float> lse;
};
Reference run_reference(const HostProblem& problem);

// bf16 bits -> float (exact).
float bf16_bits_to_float(uint16_t bits);

// The spacing of bf16 numbers at |x| (x finite): 2^(e - 7) for |x| in [2^e, 2^(e+1)); the
// subnormal spacing 2^-133 below 2^-126. "Within bf16 output rounding" = within one of these.
double bf16_ulp(double x);

}  // namespace mla_test
