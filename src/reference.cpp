// Host reference of the SPEC operation in double precision.
//
// Structure: the index arrays are checked first (nothing is written before they pass); the
// work is then cut into units of (batch element, group of up to 16 heads), each unit owning
// the O rows and LSE entries of its (token, head) pairs, and the units are spread over
// std::thread::hardware_concurrency() threads. A unit walks its element's visible cache in
// chunks of kChunkTokens rows: each chunk is decoded to double once and reused by every query
// row of the unit, with an online softmax (running max m, running sum l, accumulator scaled
// by exp(m_old - m_new)), so the largest logit is always subtracted before exp and memory stays
// bounded for any kv length. Rows that see no token get O = 0 and LSE = -inf.
// Input forms: a split Q (q_nope in q, the rope part in q_pe) and a split cache (latent rows in
// kv_cache, rope rows in kpe_cache, of BF16 or the latent's FP8 dtype) are decoded into the
// same 576 values as the one-tensor forms, so the rest of the computation is shared; the LSE
// is written at its row stride.
#include "reference.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <exception>
#include <limits>
#include <system_error>
#include <thread>
#include <vector>

#include "error.h"
#include "formats.h"
#include "validate.h"

namespace mla {
namespace {

constexpr int kDimQk = MLA_HEAD_DIM_QK;   // kv_lora_rank + qk_rope_head_dim
constexpr int kDimV = MLA_HEAD_DIM_V;     // kv_lora_rank
constexpr int kHeadsPerUnit = 16;
constexpr int kChunkTokens = 64;
constexpr double kNegInf = -std::numeric_limits<double>::infinity();

// ---- index array checks (before anything is written) ----------------------------------------

mla_status check_qo_indptr(const mla_decode_params& p) {
    const int32_t* qo = p.qo_indptr;
    if (qo[0] != 0) return fail(MLA_STATUS_INVALID_VALUE, "qo_indptr[0] must be 0, got %d", qo[0]);
    for (int b = 0; b < p.batch_size; ++b) {
        if (qo[b + 1] < qo[b]) {
            return fail(MLA_STATUS_INVALID_VALUE,
                        "qo_indptr must be non-decreasing: qo_indptr[%d] = %d < qo_indptr[%d] = %d",
                        b + 1, qo[b + 1], b, qo[b]);
        }
        int64_t q_len = static_cast<int64_t>(qo[b + 1]) - qo[b];
        if (q_len > p.max_q_len) {
            return fail(MLA_STATUS_INVALID_VALUE, "q_len of batch element %d is %lld > max_q_len %d",
                        b, static_cast<long long>(q_len), p.max_q_len);
        }
    }
    if (qo[p.batch_size] != p.total_q) {
        return fail(MLA_STATUS_INVALID_VALUE, "qo_indptr[batch_size] = %d must equal total_q %d",
                    qo[p.batch_size], p.total_q);
    }
    return MLA_STATUS_SUCCESS;
}

mla_status check_kv_indptr(const mla_decode_params& p) {
    const int32_t* kv = p.kv_indptr;
    if (kv[0] < 0) return fail(MLA_STATUS_INVALID_VALUE, "kv_indptr[0] must be >= 0, got %d", kv[0]);
    for (int b = 0; b < p.batch_size; ++b) {
        if (kv[b + 1] < kv[b]) {
            return fail(MLA_STATUS_INVALID_VALUE,
                        "kv_indptr must be non-decreasing: kv_indptr[%d] = %d < kv_indptr[%d] = %d",
                        b + 1, kv[b + 1], b, kv[b]);
        }
        if (p.num_slots == 0 && kv[b + 1] != kv[b]) {  // before any page id is read
            return fail(MLA_STATUS_INVALID_VALUE,
                        "num_slots is 0 (an empty pool) but batch element %d has kv length %lld: "
                        "every kv length must be 0",
                        b, static_cast<long long>(kv[b + 1]) - kv[b]);
        }
    }
    if (p.kv_page_indptr == nullptr && kv[p.batch_size] > p.num_slots) {
        return fail(MLA_STATUS_INVALID_VALUE,
                    "contiguous cache: kv_indptr[batch_size] = %d exceeds num_slots %lld",
                    kv[p.batch_size], static_cast<long long>(p.num_slots));
    }
    return MLA_STATUS_SUCCESS;
}

int64_t kv_len_of(const mla_decode_params& p, int b) {
    return static_cast<int64_t>(p.kv_indptr[b + 1]) - p.kv_indptr[b];
}

int64_t pages_needed(int64_t kv_len, int32_t page_size) {
    return (kv_len + page_size - 1) / page_size;
}

mla_status check_used_page_ids(const mla_decode_params& p, int b, int64_t used_pages) {
    const int64_t num_pages = p.num_slots / p.page_size;
    for (int64_t k = 0; k < used_pages; ++k) {
        int64_t entry = p.kv_page_indptr[b] + k;
        int32_t page = p.kv_page_indices[entry];
        if (page < 0 || page >= num_pages) {
            return fail(MLA_STATUS_INVALID_VALUE,
                        "kv_page_indices[%lld] = %d (batch element %d) is outside the page table "
                        "[0, %lld)",
                        static_cast<long long>(entry), page, b, static_cast<long long>(num_pages));
        }
    }
    return MLA_STATUS_SUCCESS;
}

mla_status check_page_table(const mla_decode_params& p) {
    const int32_t* pages = p.kv_page_indptr;
    if (pages[0] != 0) {
        return fail(MLA_STATUS_INVALID_VALUE, "kv_page_indptr[0] must be 0, got %d", pages[0]);
    }
    for (int b = 0; b < p.batch_size; ++b) {
        if (pages[b + 1] < pages[b]) {
            return fail(MLA_STATUS_INVALID_VALUE,
                        "kv_page_indptr must be non-decreasing: kv_page_indptr[%d] = %d < "
                        "kv_page_indptr[%d] = %d",
                        b + 1, pages[b + 1], b, pages[b]);
        }
        int64_t have = static_cast<int64_t>(pages[b + 1]) - pages[b];
        int64_t need = pages_needed(kv_len_of(p, b), p.page_size);
        if (have < need) {
            return fail(MLA_STATUS_INVALID_VALUE,
                        "batch element %d has kv length %lld needing %lld pages of %d, but "
                        "kv_page_indptr gives %lld",
                        b, static_cast<long long>(kv_len_of(p, b)), static_cast<long long>(need),
                        p.page_size, static_cast<long long>(have));
        }
        MLA_TRY(check_used_page_ids(p, b, need));
    }
    return MLA_STATUS_SUCCESS;
}

// The index arrays, then the page list's kv_page_indptr[batch_size] entries against the outputs
// (the workers write O while others still read page ids).
mla_status check_index_arrays(const mla_decode_params& p) {
    MLA_TRY(check_qo_indptr(p));
    MLA_TRY(check_kv_indptr(p));
    if (p.kv_page_indptr != nullptr) {
        MLA_TRY(check_page_table(p));
        MLA_TRY(check_page_list_overlap(p, p.kv_page_indptr[p.batch_size]));
    }
    return MLA_STATUS_SUCCESS;
}

// ---- decoding stored values to double --------------------------------------------------------

// value[code] * scale for every FP8 code of `dtype` (exact: <= 4 significant bits x a float).
std::vector<double> fp8_table(mla_dtype dtype, float scale) {
    std::vector<double> table(256);
    for (int code = 0; code < 256; ++code) {
        table[code] = fmt::fp8_to_double(dtype, static_cast<uint8_t>(code)) * scale;
    }
    return table;
}

// Decodes Q rows and latent cache rows of one problem.
class RowDecoder {
public:
    explicit RowDecoder(const mla_decode_params& p)
        : p_(p),
          q_table_(is_fp8(p.q_dtype) ? fp8_table(p.q_dtype, p.q_scale) : std::vector<double>()),
          kv_table_(is_fp8(p.kv_dtype) ? fp8_table(p.kv_dtype, p.kv_scale)
                                       : std::vector<double>()),
          kpe_table_(is_fp8(p.kpe_dtype) ? fp8_table(p.kpe_dtype, p.kv_scale)
                                         : std::vector<double>()),
          v_table_(p.v_cache ? fp8_table(p.v_dtype, p.v_scale) : std::vector<double>()) {
        for (int code = 0; code < 16; ++code) {
            e2m1_table_[code] = fmt::e2m1_to_double(static_cast<uint8_t>(code));
        }
        for (int code = 0; code < 256; ++code) {
            e8m0_table_[code] = fmt::e8m0_to_double(static_cast<uint8_t>(code));
        }
    }

    bool separate_v() const { return p_.v_cache != nullptr; }

    // Q[t, h, 0:576] (times q_scale) into out[0:576]: from q alone, or (split Q form) dims
    // 0..511 from q and 512..575 from q_pe.
    void decode_q(int64_t t, int h, double* out) const {
        if (p_.q_pe == nullptr) {
            decode_q_part(p_.q, t * p_.q_stride_token + h * p_.q_stride_head, kDimQk, out);
            return;
        }
        decode_q_part(p_.q, t * p_.q_stride_token + h * p_.q_stride_head, kDimV, out);
        decode_q_part(p_.q_pe, t * p_.q_pe_stride_token + h * p_.q_pe_stride_head,
                      kDimQk - kDimV, out + kDimV);
    }

    // The latent row of `slot` (K, and V in its first 512 dims) into out[0:576]: from
    // kv_cache alone, or (split cache form) dims 0..511 from kv_cache and 512..575 from
    // kpe_cache.
    void decode_kv(int64_t slot, double* out) const {
        const uint8_t* base = static_cast<const uint8_t*>(p_.kv_cache);
        int64_t row_bytes = p_.kv_stride_slot * dtype_storage_bytes(p_.kv_dtype);
        const uint8_t* row = base + slot * row_bytes;
        const bool split = p_.kpe_cache != nullptr;
        const int latent_dims = split ? kDimV : kDimQk;
        switch (p_.kv_dtype) {
            case MLA_DTYPE_BF16: decode_bf16(row, latent_dims, out); break;
            case MLA_DTYPE_MXFP4: decode_mxfp4(row, slot, out); break;  // never split
            default: decode_with_table(row, latent_dims, kv_table_, out); break;
        }
        if (!split) return;
        const uint8_t* rope = static_cast<const uint8_t*>(p_.kpe_cache) +
                              slot * p_.kpe_stride_slot * dtype_storage_bytes(p_.kpe_dtype);
        if (p_.kpe_dtype == MLA_DTYPE_BF16) {
            decode_bf16(rope, kDimQk - kDimV, out + kDimV);
        } else {
            decode_with_table(rope, kDimQk - kDimV, kpe_table_, out + kDimV);
        }
    }

    // V of `slot` from v_cache (times v_scale) into out[0:512].
    void decode_v(int64_t slot, double* out) const {
        const uint8_t* row = static_cast<const uint8_t*>(p_.v_cache) + slot * p_.v_stride_slot;
        decode_with_table(row, kDimV, v_table_, out);
    }

private:
    // n values of q_dtype from element `element` of `tensor` (q or q_pe).
    void decode_q_part(const void* tensor, int64_t element, int n, double* out) const {
        const uint8_t* base = static_cast<const uint8_t*>(tensor);
        if (p_.q_dtype == MLA_DTYPE_BF16) {
            decode_bf16(base + element * 2, n, out);
        } else {
            decode_with_table(base + element, n, q_table_, out);
        }
    }

    static void decode_bf16(const uint8_t* src, int n, double* out) {
        for (int d = 0; d < n; ++d) {
            uint16_t bits;
            std::memcpy(&bits, src + 2 * d, sizeof(bits));
            out[d] = fmt::bf16_to_double(bits);
        }
    }

    static void decode_with_table(const uint8_t* src, int n, const std::vector<double>& table,
                                  double* out) {
        for (int d = 0; d < n; ++d) out[d] = table[src[d]];
    }

    // 288 bytes of e2m1 pairs (even index in the low nibble) and 18 e8m0 block scales.
    void decode_mxfp4(const uint8_t* row, int64_t slot, double* out) const {
        const uint8_t* scales = p_.kv_block_scales + slot * p_.kv_block_scale_stride;
        for (int block = 0; block < MLA_MXFP4_ROW_SCALES; ++block) {
            const double scale = e8m0_table_[scales[block]];
            for (int k = 0; k < MLA_MXFP4_BLOCK_SIZE / 2; ++k) {
                const int byte_index = block * (MLA_MXFP4_BLOCK_SIZE / 2) + k;
                const uint8_t byte = row[byte_index];
                out[2 * byte_index] = e2m1_table_[byte & 0xF] * scale;   // even: low nibble
                out[2 * byte_index + 1] = e2m1_table_[byte >> 4] * scale;  // odd: high nibble
            }
        }
    }

    const mla_decode_params& p_;
    std::vector<double> q_table_, kv_table_, kpe_table_, v_table_;  // FP8 code -> value * scale
    double e2m1_table_[16];
    double e8m0_table_[256];
};

// Slot of token j of batch element b (contiguous or through the CSR page table).
int64_t slot_of(const mla_decode_params& p, int b, int64_t j) {
    if (p.kv_page_indptr == nullptr) return static_cast<int64_t>(p.kv_indptr[b]) + j;
    int64_t page = p.kv_page_indices[p.kv_page_indptr[b] + j / p.page_size];
    return page * p.page_size + j % p.page_size;
}

double dot_qk(const double* q, const double* k) {
    double acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    for (int d = 0; d < kDimQk; d += 8) {
        for (int i = 0; i < 8; ++i) acc[i] += q[d + i] * k[d + i];
    }
    return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

// ---- one unit of work: a batch element and a group of heads ----------------------------------

struct Unit {
    int batch;
    int head_begin;
    int head_end;
};

// Per-thread buffers, sized before any thread starts (workers never allocate).
struct Scratch {
    explicit Scratch(size_t max_rows)
        : q(max_rows * kDimQk),
          k(static_cast<size_t>(kChunkTokens) * kDimQk),
          v(static_cast<size_t>(kChunkTokens) * kDimV),
          acc(max_rows * kDimV),
          row_max(max_rows),
          row_sum(max_rows),
          scores(kChunkTokens) {}
    std::vector<double> q, k, v, acc, row_max, row_sum, scores;
};

// Running online-softmax state of one query row.
struct RowState {
    double* acc;      // [512] sum of exp(score - max) * V
    double* max;      // largest score seen so far (-inf before the first token)
    double* sum;      // sum of exp(score - max)
};

// Folds `visible` tokens of a decoded chunk into one query row's state. `scores` is scratch
// of at least `visible` doubles.
void accumulate_chunk(const double* q_row, const double* k_rows, const double* v_rows,
                      int64_t v_stride, int visible, double sm_scale, double* scores,
                      RowState row) {
    double chunk_max = kNegInf;
    for (int c = 0; c < visible; ++c) {
        scores[c] = sm_scale * dot_qk(q_row, k_rows + static_cast<int64_t>(c) * kDimQk);
        chunk_max = std::max(chunk_max, scores[c]);
    }
    double new_max = std::max(*row.max, chunk_max);
    if (new_max != *row.max) {
        double rescale = std::exp(*row.max - new_max);  // 0 when the old max was -inf
        *row.sum *= rescale;
        for (int d = 0; d < kDimV; ++d) row.acc[d] *= rescale;
        *row.max = new_max;
    }
    for (int c = 0; c < visible; ++c) {
        double w = std::exp(scores[c] - new_max);
        *row.sum += w;
        const double* v = v_rows + c * v_stride;
        for (int d = 0; d < kDimV; ++d) row.acc[d] += w * v[d];
    }
}

class UnitRunner {
public:
    UnitRunner(const mla_decode_params& p, const RowDecoder& decoder)
        : p_(p), decoder_(decoder) {}

    void run(const Unit& u, Scratch& s) const {
        const int64_t t0 = p_.qo_indptr[u.batch];
        const int64_t q_len = p_.qo_indptr[u.batch + 1] - t0;
        const int heads = u.head_end - u.head_begin;
        const int64_t rows = q_len * heads;
        if (rows == 0) return;
        const int64_t kv_len = kv_len_of(p_, u.batch);
        load_queries(u, t0, q_len, s);
        std::fill(s.acc.begin(), s.acc.begin() + rows * kDimV, 0.0);
        std::fill(s.row_max.begin(), s.row_max.begin() + rows, kNegInf);
        std::fill(s.row_sum.begin(), s.row_sum.begin() + rows, 0.0);
        for (int64_t j0 = 0; j0 < kv_len; j0 += kChunkTokens) {
            int chunk = static_cast<int>(std::min<int64_t>(kChunkTokens, kv_len - j0));
            load_chunk(u.batch, j0, chunk, s);
            for (int64_t r = 0; r < rows; ++r) {
                int64_t query = r / heads;  // index inside the element
                int64_t seen = visible_tokens(kv_len, q_len, query) - j0;
                int visible = static_cast<int>(std::min<int64_t>(chunk, seen));
                if (visible <= 0) continue;
                RowState state{s.acc.data() + r * kDimV, &s.row_max[r], &s.row_sum[r]};
                accumulate_chunk(s.q.data() + r * kDimQk, s.k.data(), v_rows(s), v_stride(),
                                 visible, p_.sm_scale, s.scores.data(), state);
            }
        }
        for (int64_t r = 0; r < rows; ++r) {
            write_row(t0 + r / heads, u.head_begin + static_cast<int>(r % heads),
                      s.acc.data() + r * kDimV, s.row_max[r], s.row_sum[r]);
        }
    }

private:
    // Causal convention: query i of the element sees positions 0 .. kv_len - q_len + i.
    static int64_t visible_tokens(int64_t kv_len, int64_t q_len, int64_t query) {
        return std::max<int64_t>(0, std::min(kv_len, kv_len - q_len + query + 1));
    }

    void load_queries(const Unit& u, int64_t t0, int64_t q_len, Scratch& s) const {
        const int heads = u.head_end - u.head_begin;
        for (int64_t i = 0; i < q_len; ++i) {
            for (int h = 0; h < heads; ++h) {
                decoder_.decode_q(t0 + i, u.head_begin + h, s.q.data() + (i * heads + h) * kDimQk);
            }
        }
    }

    void load_chunk(int b, int64_t j0, int chunk, Scratch& s) const {
        for (int c = 0; c < chunk; ++c) {
            int64_t slot = slot_of(p_, b, j0 + c);
            decoder_.decode_kv(slot, s.k.data() + static_cast<size_t>(c) * kDimQk);
            if (decoder_.separate_v()) {
                decoder_.decode_v(slot, s.v.data() + static_cast<size_t>(c) * kDimV);
            }
        }
    }

    const double* v_rows(const Scratch& s) const {
        return decoder_.separate_v() ? s.v.data() : s.k.data();
    }
    int64_t v_stride() const { return decoder_.separate_v() ? kDimV : kDimQk; }

    void write_row(int64_t t, int h, const double* acc, double row_max, double row_sum) const {
        const bool empty = row_sum == 0.0;  // saw no token
        const double inv_sum = empty ? 0.0 : 1.0 / row_sum;
        int64_t element = t * p_.o_stride_token + h * p_.o_stride_head;
        if (p_.o_dtype == MLA_DTYPE_FP32) {
            float* o = static_cast<float*>(p_.o) + element;
            for (int d = 0; d < kDimV; ++d) o[d] = static_cast<float>(empty ? 0.0 : acc[d] * inv_sum);
        } else {
            uint8_t* o = static_cast<uint8_t*>(p_.o) + element * 2;
            for (int d = 0; d < kDimV; ++d) {
                uint16_t bits = fmt::bf16_from_double(empty ? 0.0 : acc[d] * inv_sum);
                std::memcpy(o + 2 * d, &bits, sizeof(bits));
            }
        }
        if (p_.lse != nullptr) {
            double lse = empty ? kNegInf : row_max + std::log(row_sum);
            const int64_t row_stride = p_.lse_stride_token != 0 ? p_.lse_stride_token
                                                                : p_.num_heads;
            p_.lse[t * row_stride + h] = static_cast<float>(lse);
        }
    }

    const mla_decode_params& p_;
    const RowDecoder& decoder_;
};

std::vector<Unit> make_units(const mla_decode_params& p) {
    std::vector<Unit> units;
    int group = std::min(p.num_heads, kHeadsPerUnit);
    for (int b = 0; b < p.batch_size; ++b) {
        for (int h = 0; h < p.num_heads; h += group) {
            units.push_back(Unit{b, h, std::min(p.num_heads, h + group)});
        }
    }
    // Longest kv first, so the tail of the schedule holds short units.
    std::stable_sort(units.begin(), units.end(), [&](const Unit& a, const Unit& b) {
        return kv_len_of(p, a.batch) > kv_len_of(p, b.batch);
    });
    return units;
}

int64_t largest_q_len(const mla_decode_params& p) {
    int64_t largest = 0;
    for (int b = 0; b < p.batch_size; ++b) {
        largest = std::max<int64_t>(largest, p.qo_indptr[b + 1] - p.qo_indptr[b]);
    }
    return largest;
}

// Runs every unit on `workers` threads (the calling thread is one of them). A worker thread
// that cannot be started is simply left out.
void run_units(const mla_decode_params& p, const std::vector<Unit>& units, size_t workers) {
    RowDecoder decoder(p);
    UnitRunner runner(p, decoder);
    size_t max_rows = static_cast<size_t>(largest_q_len(p) * std::min(p.num_heads, kHeadsPerUnit));
    std::vector<Scratch> scratch;
    scratch.reserve(workers);
    for (size_t w = 0; w < workers; ++w) scratch.emplace_back(max_rows);

    std::atomic<size_t> next{0};
    auto work = [&](Scratch& s) {
        for (size_t i = next++; i < units.size(); i = next++) runner.run(units[i], s);
    };
    std::vector<std::thread> threads;
    threads.reserve(workers - 1);
    for (size_t w = 1; w < workers; ++w) {
        try {
            threads.emplace_back(work, std::ref(scratch[w]));
        } catch (const std::system_error&) {
            break;  // fewer threads; the remaining ones take the work
        }
    }
    work(scratch[0]);
    for (std::thread& t : threads) t.join();
}

size_t worker_count(size_t units) {
    size_t hardware = std::max(1u, std::thread::hardware_concurrency());
    return std::max<size_t>(1, std::min(hardware, units));
}

}  // namespace

mla_status reference_decode(const mla_decode_params& p) {
    MLA_TRY(check_index_arrays(p));
    std::vector<Unit> units = make_units(p);
    run_units(p, units, worker_count(units.size()));
    return MLA_STATUS_SUCCESS;
}

}  // namespace mla
