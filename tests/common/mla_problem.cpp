// Random MLA decode problems in every SPEC format (see mla_problem.h).
//
// Determinism: std::mt19937_64 engines feed unit normal streams (NormalStream, a ziggurat on
// their raw draws: no standard library's normal_distribution in between). Q comes from an engine
// seeded with spec.seed ((token, head, dim) order); the cache values of batch element b come
// from an engine seeded with a splitmix64 mix of spec.seed and b ((position, dim) order), so
// the elements are generated in parallel and the values depend on neither the thread count
// nor the layout: a paged and a contiguous problem of the same spec hold the same logical
// values. The page shuffle uses its own engine.
// Per-tensor FP8 scales need the amax before encoding: the streams are replayed (nothing of
// cache size is ever held in double).
#include "mla_problem.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>

#include "formats.h"
#include "splitkv/formats.h"  // the cache bytes per token of each format

namespace mla_test {
namespace {

namespace fmt = mla::fmt;

constexpr int kDimQk = MLA_HEAD_DIM_QK;
constexpr int kDimV = MLA_HEAD_DIM_V;
constexpr int kDimRope = MLA_QK_ROPE_HEAD_DIM;
constexpr int64_t kContiguousSpareSlots = 16;   // poisoned rows after the last sequence
// Strides of the split forms (ProblemSpec::split_q, kpe_dtype), in elements: padded rows, so
// that a read past a row's end or with another tensor's stride meets poison.
constexpr int64_t kSplitQNopeHeadStride = kDimV + 32;
constexpr int64_t kSplitQPeHeadStride = kDimRope + 32;
constexpr int64_t kSplitQPeTokenPad = 64;
constexpr int64_t kSplitLatentStride = kDimV + 32;
constexpr int64_t kSplitRopeStride = kDimRope + 32;
constexpr int64_t kScaleRowsMultiple = 32;      // scale rows padded like common quantizers
constexpr uint64_t kPageShuffleSalt = 0x9E3779B97F4A7C15ull;

bool is_fp8(mla_dtype dtype) {
    return dtype == MLA_DTYPE_FP8_E4M3FN || dtype == MLA_DTYPE_FP8_E4M3FNUZ;
}

int storage_bytes(mla_dtype dtype) { return dtype == MLA_DTYPE_BF16 ? 2 : 1; }

void require(bool ok, const std::string& what) {
    if (!ok) throw std::invalid_argument("make_problem: " + what);
}

void check_spec(const ProblemSpec& spec) {
    require(!spec.kv_lens.empty(), "kv_lens is empty");
    require(spec.q_lens.empty() || spec.q_lens.size() == spec.kv_lens.size(),
            "q_lens and kv_lens differ in size");
    for (int len : spec.q_lens) require(len >= 0, "negative q_len");
    for (int len : spec.kv_lens) require(len >= 0, "negative kv_len");
    require(!spec.exact_cache_span || !spec.paged, "exact_cache_span: contiguous caches only");
    require(spec.num_heads >= 1, "num_heads < 1");
    require(spec.q_dtype == MLA_DTYPE_BF16 || is_fp8(spec.q_dtype), "q_dtype not BF16/FP8");
    require(spec.kv_dtype == MLA_DTYPE_BF16 || is_fp8(spec.kv_dtype) ||
                spec.kv_dtype == MLA_DTYPE_MXFP4,
            "kv_dtype not BF16/FP8/MXFP4");
    if (spec.v_dtype != 0) {
        require(spec.kv_dtype == MLA_DTYPE_MXFP4 && is_fp8(spec.v_dtype),
                "v_dtype needs kv_dtype MXFP4 and an FP8 v_dtype");
    }
    require(spec.page_size >= 1, "page_size < 1");
    require(spec.paged || spec.page_size == 1, "a contiguous cache has page_size 1");
    require(spec.page_list_tail >= 0, "negative page_list_tail");
    require(spec.page_list_tail == 0 || spec.paged, "page_list_tail needs a paged cache");
    require(spec.slot_base >= 0 && spec.slot_base % spec.page_size == 0,
            "slot_base must be >= 0 and a multiple of page_size");
    require(spec.mxfp4_extremes == Mxfp4Extremes::kNone || spec.kv_dtype == MLA_DTYPE_MXFP4,
            "mxfp4_extremes needs kv_dtype MXFP4");
    if (spec.kpe_dtype != 0) {
        require(spec.kv_dtype != MLA_DTYPE_MXFP4 &&
                    (spec.kpe_dtype == MLA_DTYPE_BF16 || spec.kpe_dtype == spec.kv_dtype),
                "kpe_dtype must be BF16 or kv_dtype, beside a BF16 or FP8 latent");
    }
    require(spec.rope_gain == 1.0 || (spec.kpe_dtype == MLA_DTYPE_BF16 && is_fp8(spec.kv_dtype)),
            "rope_gain needs kpe_dtype BF16 beside an FP8 kv_dtype");
    require(spec.lse_stride_token == 0 || spec.lse_stride_token >= spec.num_heads,
            "lse_stride_token must be 0 or >= num_heads");
}

// The device cache's index values must stay int32 (kv_indptr, page ids).
void check_device_range(const HostProblem& p) {
    const int64_t top = p.spec.paged ? p.device_num_slots() / p.spec.page_size
                                     : p.slot_base + p.kv_indptr.back();
    require(top <= std::numeric_limits<int32_t>::max(),
            "slot_base too large for int32 index arrays");
}

// ---- batch layout ---------------------------------------------------------------------------

void fill_layout(const ProblemSpec& spec, HostProblem& p) {
    p.batch_size = static_cast<int>(spec.kv_lens.size());
    p.qo_indptr.assign(1, 0);
    p.kv_indptr.assign(1, 0);
    for (int b = 0; b < p.batch_size; ++b) {
        int q_len = spec.q_lens.empty() ? 1 : spec.q_lens[b];
        p.qo_indptr.push_back(p.qo_indptr.back() + q_len);
        p.kv_indptr.push_back(p.kv_indptr.back() + spec.kv_lens[b]);
        p.max_q_len = std::max(p.max_q_len, q_len);
        p.max_kv_len = std::max(p.max_kv_len, spec.kv_lens[b]);
    }
    p.total_q = p.qo_indptr.back();
    require(p.total_q >= 1, "no query tokens");
    p.q_stride_head = spec.split_q ? kSplitQNopeHeadStride : kDimQk;
    const int64_t q_row = static_cast<int64_t>(spec.num_heads) * p.q_stride_head;
    const int64_t o_row = static_cast<int64_t>(spec.num_heads) * kDimV;
    p.q_stride_token = spec.q_stride_token ? spec.q_stride_token : q_row;
    p.o_stride_token = spec.o_stride_token ? spec.o_stride_token : o_row;
    require(p.q_stride_token >= q_row, "q_stride_token below heads * the head stride");
    if (spec.split_q) {
        p.q_pe_stride_head = kSplitQPeHeadStride;
        p.q_pe_stride_token = spec.num_heads * kSplitQPeHeadStride + kSplitQPeTokenPad;
    }
    require(p.o_stride_token >= o_row, "o_stride_token below heads * 512");
}

int64_t pages_needed(int64_t kv_len, int64_t page_size) {
    return (kv_len + page_size - 1) / page_size;
}

// Shuffled physical pages (Fisher-Yates on its own engine; in order without
// spec.shuffle_pages), spare pages left unused. Each element's list ends with
// spec.page_list_tail entries of spec.page_tail_value.
void fill_page_table(const ProblemSpec& spec, HostProblem& p) {
    const int64_t page_size = spec.page_size;
    p.kv_page_indptr.assign(1, 0);
    int64_t used_pages = 0;
    for (int b = 0; b < p.batch_size; ++b) {
        int64_t pages = pages_needed(spec.kv_lens[b], page_size);
        used_pages += pages;
        p.kv_page_indptr.push_back(
            static_cast<int32_t>(p.kv_page_indptr.back() + pages + spec.page_list_tail));
    }
    const int64_t num_pages = used_pages + 2 + used_pages / 16;
    std::vector<int32_t> order(num_pages);
    for (int64_t i = 0; i < num_pages; ++i) order[i] = static_cast<int32_t>(i);
    std::mt19937_64 shuffle_engine(spec.seed ^ kPageShuffleSalt);
    for (int64_t i = num_pages - 1; spec.shuffle_pages && i > 0; --i) {
        std::swap(order[i], order[shuffle_engine() % static_cast<uint64_t>(i + 1)]);
    }
    // An empty table still has an address (the pool has slots): one entry that no list holds.
    p.kv_page_indices.assign(std::max<size_t>(1, static_cast<size_t>(p.kv_page_indptr.back())),
                             spec.page_tail_value);
    int64_t next = 0;
    for (int b = 0; b < p.batch_size; ++b) {
        const int64_t pages = pages_needed(spec.kv_lens[b], page_size);
        for (int64_t k = 0; k < pages; ++k) {
            p.kv_page_indices[p.kv_page_indptr[b] + k] = order[next++];
        }
    }
    p.num_slots = num_pages * page_size;
}

int64_t slot_of(const HostProblem& p, int b, int64_t j) {
    if (!p.spec.paged) return p.kv_indptr[b] + j;
    const int64_t page_size = p.spec.page_size;
    int64_t page = p.kv_page_indices[p.kv_page_indptr[b] + j / page_size];
    return page * page_size + j % page_size;
}

// ---- Q -----------------------------------------------------------------------------------------

uint8_t nan_code(mla_dtype fp8) { return fmt::fp8_nan_code(fp8); }

void store_bf16(uint8_t* dst, double x) {
    uint16_t bits = fmt::bf16_from_double(x);
    std::memcpy(dst, &bits, sizeof(bits));
}

// Fills `bytes` with the NaN code of `dtype` (BF16 0x7FC0, FP8 NaN), or zeros.
void fill_poison(std::vector<uint8_t>& bytes, mla_dtype dtype, bool poison) {
    if (!poison) {
        std::fill(bytes.begin(), bytes.end(), 0);
    } else if (dtype == MLA_DTYPE_BF16) {
        const uint16_t nan_bits = fmt::kBf16QuietNan;
        for (size_t i = 0; i + 1 < bytes.size(); i += 2) std::memcpy(&bytes[i], &nan_bits, 2);
    } else {
        std::fill(bytes.begin(), bytes.end(), nan_code(dtype));
    }
}

// Per-tensor FP8 scale: amax / max code value (fn 448, fnuz 240); 1 for an all-zero tensor.
float fp8_tensor_scale(mla_dtype dtype, double amax) {
    return amax > 0.0 ? static_cast<float>(amax / fmt::fp8_max(dtype)) : 1.0f;
}

void fill_q(const ProblemSpec& spec, NormalStream& rng, HostProblem& p) {
    const int64_t count = static_cast<int64_t>(p.total_q) * spec.num_heads * kDimQk;
    const int bytes = storage_bytes(spec.q_dtype);
    p.q.resize(static_cast<size_t>(p.total_q * p.q_stride_token * bytes));
    fill_poison(p.q, spec.q_dtype, spec.poison_unused);  // row padding stays poisoned
    p.q_pe.resize(static_cast<size_t>(p.total_q * p.q_pe_stride_token * bytes));
    fill_poison(p.q_pe, spec.q_dtype, spec.poison_unused);
    if (is_fp8(spec.q_dtype)) {
        NormalStream replay = rng;
        double amax = 0.0;
        for (int64_t i = 0; i < count; ++i) amax = std::max(amax, std::fabs(replay.next() * spec.q_std));
        p.q_scale = fp8_tensor_scale(spec.q_dtype, amax);
    }
    for (int64_t t = 0; t < p.total_q; ++t) {
        for (int h = 0; h < spec.num_heads; ++h) {
            uint8_t* row = p.q.data() + (t * p.q_stride_token + h * p.q_stride_head) * bytes;
            // The rope dims continue the row, or (split_q) fill q_pe's row.
            uint8_t* rope =
                spec.split_q
                    ? p.q_pe.data() + (t * p.q_pe_stride_token + h * p.q_pe_stride_head) * bytes
                    : row + kDimV * bytes;
            for (int d = 0; d < kDimQk; ++d) {
                double x = rng.next() * spec.q_std;
                uint8_t* dst = d < kDimV ? row + d * bytes : rope + (d - kDimV) * bytes;
                if (bytes == 2) {
                    store_bf16(dst, x);
                } else {
                    *dst = fmt::fp8_from_double(spec.q_dtype, x / static_cast<double>(p.q_scale));
                }
            }
        }
    }
}

// ---- cache -------------------------------------------------------------------------------------

void allocate_cache(const ProblemSpec& spec, HostProblem& p) {
    const bool poison = spec.poison_unused;
    if (spec.kv_dtype == MLA_DTYPE_MXFP4) {
        p.kv_stride_slot = MLA_MXFP4_ROW_BYTES;
        p.kv.assign(static_cast<size_t>(p.num_slots * p.kv_stride_slot), poison ? 0xFF : 0x00);
        int64_t rows = (p.num_slots + kScaleRowsMultiple - 1) / kScaleRowsMultiple *
                       kScaleRowsMultiple;
        p.kv_block_scale_stride = spec.mxfp4_scale_stride;
        // Unused rows, padded rows and padded columns: NaN scale (255), or 1.0 (127).
        const int64_t bytes =
            !spec.exact_cache_span ? rows * p.kv_block_scale_stride
            : p.num_slots > 0      ? (p.num_slots - 1) * p.kv_block_scale_stride +
                                         std::min<int64_t>(p.kv_block_scale_stride, 32)
                                   : 0;
        p.kv_block_scales.assign(static_cast<size_t>(bytes), poison ? 255 : 127);
    } else {
        p.kv_stride_slot = spec.kpe_dtype != 0 ? kSplitLatentStride : kDimQk;
        p.kv.resize(static_cast<size_t>(p.num_slots * p.kv_stride_slot *
                                        storage_bytes(spec.kv_dtype)));
        fill_poison(p.kv, spec.kv_dtype, poison);
    }
    if (spec.kpe_dtype != 0) {
        p.kpe_stride_slot = kSplitRopeStride;
        p.kpe.resize(static_cast<size_t>(p.num_slots * p.kpe_stride_slot *
                                         storage_bytes(spec.kpe_dtype)));
        fill_poison(p.kpe, spec.kpe_dtype, poison);
    }
    if (spec.v_dtype != 0) {
        p.v_stride_slot = kDimQk;  // rows 576 wide like the vectors' v.bin; V = first 512
        p.v.resize(static_cast<size_t>(p.num_slots * p.v_stride_slot));
        fill_poison(p.v, spec.v_dtype, poison);
    }
}

// Calls body(b) for every batch element b on up to hardware_concurrency() threads.
void for_each_element(int batch, const std::function<void(int)>& body) {
    std::atomic<int> next{0};
    auto work = [&] {
        for (int b = next++; b < batch; b = next++) body(b);
    };
    size_t hardware = std::max(1u, std::thread::hardware_concurrency());
    size_t extra = std::min<size_t>(hardware, static_cast<size_t>(batch)) - 1;
    std::vector<std::thread> threads;
    for (size_t i = 0; i < extra; ++i) {
        try {
            threads.emplace_back(work);
        } catch (const std::system_error&) {
            break;  // fewer threads
        }
    }
    work();
    for (std::thread& t : threads) t.join();
}

uint64_t splitmix64(uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

// The cache values of batch element b: kv_lens[b] rows of 576, randn * kv_std.
NormalStream element_stream(const ProblemSpec& spec, int b) {
    return NormalStream(splitmix64(spec.seed ^ splitmix64(static_cast<uint64_t>(b) + 1)));
}

// Largest |value| over every used cache value (all 576 dims) and over the first 512 dims.
struct CacheAmax {
    double row = 0.0;
    double v = 0.0;
};

CacheAmax cache_amax(const ProblemSpec& spec, int batch) {
    std::vector<CacheAmax> per_element(batch);
    for_each_element(batch, [&](int b) {
        NormalStream rng = element_stream(spec, b);
        CacheAmax& amax = per_element[b];
        for (int64_t j = 0; j < spec.kv_lens[b]; ++j) {
            for (int d = 0; d < kDimQk; ++d) {
                double a = std::fabs(rng.next() * spec.kv_std);
                amax.row = std::max(amax.row, a);
                if (d < kDimV) amax.v = std::max(amax.v, a);
            }
        }
    });
    CacheAmax total;
    for (const CacheAmax& a : per_element) {
        total.row = std::max(total.row, a.row);
        total.v = std::max(total.v, a.v);
    }
    return total;
}

// One 32-value block of e2m1 pairs and its e8m0 scale.
void encode_mxfp4_block(const double* x, uint8_t* packed, uint8_t* scale_code) {
    double amax = 0.0;
    for (int i = 0; i < MLA_MXFP4_BLOCK_SIZE; ++i) amax = std::max(amax, std::fabs(x[i]));
    *scale_code = fmt::mx_e2m1_scale_code(amax);
    for (int i = 0; i < MLA_MXFP4_BLOCK_SIZE; i += 2) {
        packed[i / 2] = fmt::mxfp4_pack(fmt::mx_e2m1_encode(x[i], *scale_code),
                                        fmt::mx_e2m1_encode(x[i + 1], *scale_code));
    }
}

// ---- extreme MXFP4 blocks (Mxfp4Extremes) ----

enum class BlockKind { kRandom, kZero, kScaleCodeZero, kScaleCode254 };

constexpr int kKeyOnlyBlockBegin = kDimV / MLA_MXFP4_BLOCK_SIZE;  // blocks 16, 17: dims 512..575
constexpr int64_t kValue254Period = 97;

BlockKind extreme_block_kind(Mxfp4Extremes extremes, int64_t j, int k) {
    if (extremes == Mxfp4Extremes::kNone) return BlockKind::kRandom;
    if (extremes == Mxfp4Extremes::kValueScales && j % kValue254Period == 5 &&
        k == (j / kValue254Period) % kKeyOnlyBlockBegin) {
        return BlockKind::kScaleCode254;  // one token in 97, one V block, rotating
    }
    const int64_t cell = j * MLA_MXFP4_ROW_SCALES + k;
    if (cell % 11 == 3) return BlockKind::kZero;
    if (cell % 11 == 7) return BlockKind::kScaleCodeZero;
    if (k >= kKeyOnlyBlockBegin && j % 3 == 1) return BlockKind::kScaleCode254;
    return BlockKind::kRandom;
}

// Rewrites one encoded block (16 packed bytes, its scale code) as `kind`.
void make_extreme_block(BlockKind kind, int64_t j, int k, uint8_t* packed, uint8_t* scale_code) {
    constexpr int kBytes = MLA_MXFP4_BLOCK_SIZE / 2;
    switch (kind) {
        case BlockKind::kRandom: break;
        case BlockKind::kZero: {
            static constexpr uint8_t kZeroBlockScales[3] = {0, 127, 254};
            std::fill(packed, packed + kBytes, 0);
            *scale_code = kZeroBlockScales[(j + k) % 3];
            break;
        }
        case BlockKind::kScaleCodeZero:
            *scale_code = 0;  // elements kept: up to 6 x 2^-127
            break;
        case BlockKind::kScaleCode254: {
            // Magnitude codes clamped to 3 (1.5), signs kept: at most 1.5 x 2^127.
            auto clamp = [](uint8_t code) {
                return static_cast<uint8_t>((code & 0x8) | std::min<uint8_t>(code & 0x7, 3));
            };
            for (int i = 0; i < kBytes; ++i) {
                packed[i] = fmt::mxfp4_pack(clamp(packed[i] & 0xF), clamp(packed[i] >> 4));
            }
            *scale_code = 254;
            break;
        }
    }
}

// n values as BF16, or as FP8 codes of x / scale, into dst.
void store_values(mla_dtype dtype, float scale, const double* x, int n, uint8_t* dst) {
    for (int d = 0; d < n; ++d) {
        if (dtype == MLA_DTYPE_BF16) {
            store_bf16(dst + 2 * d, x[d]);
        } else {
            dst[d] = fmt::fp8_from_double(dtype, x[d] / static_cast<double>(scale));
        }
    }
}

// Cache row of position j of its element (j picks the extreme blocks of the pattern).
void store_kv_row(const ProblemSpec& spec, HostProblem& p, int64_t slot, int64_t j,
                  const double* x) {
    if (spec.kv_dtype == MLA_DTYPE_MXFP4) {
        uint8_t* row = p.kv.data() + slot * p.kv_stride_slot;
        uint8_t* scales = p.kv_block_scales.data() + slot * p.kv_block_scale_stride;
        for (int k = 0; k < MLA_MXFP4_ROW_SCALES; ++k) {
            uint8_t* packed = row + k * MLA_MXFP4_BLOCK_SIZE / 2;
            encode_mxfp4_block(x + k * MLA_MXFP4_BLOCK_SIZE, packed, scales + k);
            make_extreme_block(extreme_block_kind(spec.mxfp4_extremes, j, k), j, k, packed,
                               scales + k);
        }
        return;
    }
    // The latent dims in kv's row; the rope dims after them, or (split cache) in kpe's row.
    const bool split = spec.kpe_dtype != 0;
    const int latent_dims = split ? kDimV : kDimQk;
    store_values(spec.kv_dtype, p.kv_scale, x, latent_dims,
                 p.kv.data() + slot * p.kv_stride_slot * storage_bytes(spec.kv_dtype));
    if (split) {
        double rope[kDimRope];
        for (int d = 0; d < kDimRope; ++d) rope[d] = x[kDimV + d] * spec.rope_gain;
        store_values(spec.kpe_dtype, p.kv_scale, rope, kDimRope,
                     p.kpe.data() + slot * p.kpe_stride_slot * storage_bytes(spec.kpe_dtype));
    }
}

// Separate FP8 V row: the first 512 values with v_scale; dims 512..575 poisoned (or encoded).
void store_v_row(const ProblemSpec& spec, HostProblem& p, int64_t slot, const double* x) {
    uint8_t* row = p.v.data() + slot * p.v_stride_slot;
    for (int d = 0; d < kDimQk; ++d) {
        bool padding = d >= kDimV && spec.poison_unused;
        row[d] = padding ? nan_code(spec.v_dtype)
                         : fmt::fp8_from_double(spec.v_dtype, x[d] / static_cast<double>(p.v_scale));
    }
}

void fill_cache(const ProblemSpec& spec, HostProblem& p) {
    allocate_cache(spec, p);
    if (is_fp8(spec.kv_dtype) || spec.v_dtype != 0) {
        CacheAmax amax = cache_amax(spec, p.batch_size);
        if (is_fp8(spec.kv_dtype)) p.kv_scale = fp8_tensor_scale(spec.kv_dtype, amax.row);
        if (spec.v_dtype != 0) p.v_scale = fp8_tensor_scale(spec.v_dtype, amax.v);
    }
    for_each_element(p.batch_size, [&](int b) {  // elements own disjoint slots
        NormalStream rng = element_stream(spec, b);
        std::vector<double> x(kDimQk);
        for (int64_t j = 0; j < spec.kv_lens[b]; ++j) {
            for (int d = 0; d < kDimQk; ++d) x[d] = rng.next() * spec.kv_std;
            int64_t slot = slot_of(p, b, j);
            store_kv_row(spec, p, slot, j, x.data());
            if (spec.v_dtype != 0) store_v_row(spec, p, slot, x.data());
        }
    });
}

// The ziggurat's layers: layer i (1..255) is the rectangle of width x[i] between heights f[i]
// and f[i + 1] (f = exp(-x^2 / 2)); layer 0 is the strip under f(r) plus the tail beyond r, as
// a rectangle of width x[0] = v / f(r). Every layer has the area v.
struct Ziggurat {
    static constexpr int kLayers = 256;
    static constexpr double kR = 3.6541528853610088;  // where the tail starts
    static constexpr double kV = 4.92867323399e-3;    // the area of a layer
    double x[kLayers + 1];
    double f[kLayers + 1];
    Ziggurat() {
        auto pdf = [](double v) { return std::exp(-0.5 * v * v); };
        x[0] = kV / pdf(kR);
        x[1] = kR;
        for (int i = 2; i < kLayers; ++i)
            x[i] = std::sqrt(-2.0 * std::log(kV / x[i - 1] + pdf(x[i - 1])));
        x[kLayers] = 0.0;
        for (int i = 0; i <= kLayers; ++i) f[i] = pdf(x[i]);
    }
};

const Ziggurat& ziggurat() {
    static const Ziggurat table;
    return table;
}

}  // namespace

double NormalStream::next() {
    const Ziggurat& z = ziggurat();
    for (;;) {
        const uint64_t bits = engine_();
        const int i = static_cast<int>(bits & 255u);
        const double u = static_cast<double>(bits >> 11) * 0x1.0p-52 - 1.0;  // [-1, 1)
        const double x = u * z.x[i];
        if (std::fabs(x) < z.x[i + 1]) return x;  // inside the layer's core
        auto open01 = [&] { return (static_cast<double>(engine_() >> 11) + 1.0) * 0x1.0p-53; };
        if (i == 0) {  // the tail beyond r (Marsaglia, 1964)
            double a, b;
            do {
                a = -std::log(open01()) / Ziggurat::kR;
                b = -std::log(open01());
            } while (b + b < a * a);
            return u < 0.0 ? -(Ziggurat::kR + a) : Ziggurat::kR + a;
        }
        // The wedge between the core and the curve: below the curve at a uniform height?
        const double y = z.f[i] + (open01() - 0x1.0p-53) * (z.f[i + 1] - z.f[i]);  // [0, 1)
        if (y < std::exp(-0.5 * x * x)) return x;
    }
}

HostProblem make_problem(const ProblemSpec& spec) {
    check_spec(spec);
    HostProblem p;
    p.spec = spec;
    fill_layout(spec, p);
    if (spec.paged) {
        fill_page_table(spec, p);
    } else {
        p.num_slots = p.kv_indptr.back() + (spec.exact_cache_span ? 0 : kContiguousSpareSlots);
    }
    p.slot_base = spec.slot_base;
    check_device_range(p);
    NormalStream q_rng(spec.seed);
    fill_q(spec, q_rng, p);
    fill_cache(spec, p);
    return p;
}

ProblemSpec with_forms(ProblemSpec spec, const InputForms& forms) {
    spec.split_q = forms.split_q;
    if (forms.split_cache) spec.kpe_dtype = spec.kv_dtype;
    if (forms.lse_stride) spec.lse_stride_token = spec.num_heads + 7;
    return spec;
}

std::string forms_name(const InputForms& forms) {
    std::string name;
    if (forms.split_q) name += "_split_q";
    if (forms.split_cache) name += "_split_cache";
    if (forms.lse_stride) name += "_lse_stride";
    return name;
}

std::vector<int32_t> HostProblem::device_kv_indptr() const {
    std::vector<int32_t> shifted = kv_indptr;
    if (!spec.paged) {
        for (int32_t& x : shifted) x = static_cast<int32_t>(x + slot_base);
    }
    return shifted;
}

std::vector<int32_t> HostProblem::device_page_indices() const {
    std::vector<int32_t> shifted = kv_page_indices;
    if (!spec.paged || slot_base == 0) return shifted;
    const int64_t page_shift = slot_base / spec.page_size;
    for (int b = 0; b < batch_size; ++b) {
        const int64_t kv_len = static_cast<int64_t>(kv_indptr[b + 1]) - kv_indptr[b];
        const int64_t pages = pages_needed(kv_len, spec.page_size);
        for (int64_t k = 0; k < pages; ++k) {
            int32_t& id = shifted[kv_page_indptr[b] + k];
            id = static_cast<int32_t>(id + page_shift);
        }
    }
    return shifted;
}

HostProblem with_lengths(const HostProblem& capacity, const std::vector<int>& q_lens,
                         const std::vector<int>& kv_lens) {
    const int batch = capacity.batch_size;
    require(static_cast<int>(q_lens.size()) == batch && static_cast<int>(kv_lens.size()) == batch,
            "with_lengths: q_lens and kv_lens must have batch_size entries");
    HostProblem p = capacity;
    p.spec.q_lens = q_lens;
    p.spec.kv_lens = kv_lens;
    p.qo_indptr.assign(1, 0);
    p.kv_indptr.assign(1, capacity.kv_indptr[0]);
    for (int b = 0; b < batch; ++b) {
        require(q_lens[b] >= 0 && q_lens[b] <= capacity.max_q_len,
                "with_lengths: q_len outside [0, max_q_len]");
        require(kv_lens[b] >= 0 && kv_lens[b] <= capacity.max_kv_len,
                "with_lengths: kv_len outside [0, max_kv_len]");
        if (capacity.spec.paged) {
            require(kv_lens[b] <= capacity.kv_indptr[b + 1] - capacity.kv_indptr[b],
                    "with_lengths: a paged element may not grow");
        }
        p.qo_indptr.push_back(p.qo_indptr.back() + q_lens[b]);
        p.kv_indptr.push_back(p.kv_indptr.back() + kv_lens[b]);
    }
    require(p.qo_indptr.back() == capacity.total_q, "with_lengths: total_q differs");
    require(p.kv_indptr.back() <= capacity.kv_indptr.back(),
            "with_lengths: contiguous lengths exceed the filled slots");
    return p;
}

uint8_t poison_byte(mla_dtype dtype, bool poison) {
    if (!poison) return 0;
    return is_fp8(dtype) ? nan_code(dtype) : 0xFF;
}

mla_decode_params HostProblem::host_params(void* o, mla_dtype o_dtype, float* lse) const {
    mla_decode_params p;
    mla_decode_params_init(&p);
    p.batch_size = batch_size;
    p.total_q = total_q;
    p.max_q_len = max_q_len;
    p.max_kv_len = max_kv_len;
    p.num_heads = spec.num_heads;
    p.sm_scale = spec.sm_scale;
    p.q = q.data();
    p.q_dtype = spec.q_dtype;
    p.q_scale = q_scale;
    p.q_stride_token = q_stride_token;
    p.q_stride_head = q_stride_head;
    if (spec.split_q) {
        p.q_pe = q_pe.data();
        p.q_pe_stride_token = q_pe_stride_token;
        p.q_pe_stride_head = q_pe_stride_head;
    }
    p.kv_cache = kv.data();
    if (spec.kpe_dtype != 0) {
        p.kpe_dtype = spec.kpe_dtype;
        p.kpe_cache = kpe.data();
        p.kpe_stride_slot = kpe_stride_slot;
    }
    p.kv_dtype = spec.kv_dtype;
    p.kv_scale = kv_scale;
    p.kv_stride_slot = kv_stride_slot;
    if (spec.kv_dtype == MLA_DTYPE_MXFP4) {
        p.kv_block_scales = kv_block_scales.data();
        p.kv_block_scale_stride = kv_block_scale_stride;
    }
    if (!v.empty()) {
        p.v_cache = v.data();
        p.v_dtype = spec.v_dtype;
        p.v_scale = v_scale;
        p.v_stride_slot = v_stride_slot;
    }
    p.num_slots = num_slots;
    if (spec.paged) {
        p.kv_page_indptr = kv_page_indptr.data();
        p.kv_page_indices = kv_page_indices.data();
        p.page_size = spec.page_size;
    }
    p.qo_indptr = qo_indptr.data();
    p.kv_indptr = kv_indptr.data();
    p.o = o;
    p.o_dtype = o_dtype;
    p.o_stride_token = o_stride_token;
    p.o_stride_head = kDimV;
    p.lse = lse;
    p.lse_stride_token = spec.lse_stride_token;
    return p;
}

size_t HostProblem::o_elements() const {
    return static_cast<size_t>(total_q) * static_cast<size_t>(o_stride_token);
}

size_t HostProblem::lse_elements() const {
    return static_cast<size_t>(total_q) * static_cast<size_t>(lse_row_stride());
}

int64_t HostProblem::lse_row_stride() const {
    return spec.lse_stride_token != 0 ? spec.lse_stride_token : spec.num_heads;
}

std::vector<float> HostProblem::dense_lse(const std::vector<float>& strided) const {
    const int heads = spec.num_heads;
    const size_t stride = static_cast<size_t>(lse_row_stride());
    std::vector<float> dense(static_cast<size_t>(total_q) * heads);
    for (size_t t = 0; t < static_cast<size_t>(total_q); ++t) {
        for (int h = 0; h < heads; ++h) dense[t * heads + h] = strided[t * stride + h];
    }
    return dense;
}

double HostProblem::min_bytes_moved() const {
    mla::splitkv::KvFormat format = mla::splitkv::KvFormat::kBf16;
    require(mla::splitkv::kv_format_of(spec.kv_dtype, spec.v_dtype, spec.kpe_dtype, &format),
            "no cache format for these kv_dtype / v_dtype / kpe_dtype");
    const double row_bytes = mla::splitkv::kv_traits(format).streamed_bytes;  // K, scales, V
    const double rows = static_cast<double>(kv_indptr.back());
    const double q_rows = static_cast<double>(total_q) * spec.num_heads;
    return rows * row_bytes + q_rows * kDimQk * storage_bytes(spec.q_dtype) + q_rows * kDimV * 2.0;
}

Reference run_reference(const HostProblem& problem) {
    Reference ref;
    const int heads = problem.spec.num_heads;
    ref.o.assign(static_cast<size_t>(problem.total_q) * heads * kDimV, 0.0f);
    std::vector<float> lse(problem.lse_elements(), 0.0f);  // at the problem's LSE row stride
    mla_decode_params p = problem.host_params(ref.o.data(), MLA_DTYPE_FP32, lse.data());
    p.o_stride_token = static_cast<int64_t>(heads) * kDimV;  // dense FP32 output
    mla_status status = mla_decode_reference(&p);
    if (status != MLA_STATUS_SUCCESS) {
        throw std::runtime_error(std::string("mla_decode_reference failed: ") +
                                 mla_status_string(status) + ": " + mla_last_error_message());
    }
    ref.lse = problem.dense_lse(lse);
    return ref;
}

float bf16_bits_to_float(uint16_t bits) { return fmt::bf16_to_float(bits); }

double bf16_ulp(double x) {
    x = std::fabs(x);
    if (x < std::ldexp(1.0, -126)) return std::ldexp(1.0, -133);
    int e = 0;
    std::frexp(x, &e);  // x = f * 2^e, f in [0.5, 1)
    return std::ldexp(1.0, e - 1 - 7);
}

}  // namespace mla_test
