// GPU tests of batch-invariant mode (MLA_DECODE_FLAG_BATCH_INVARIANT): a batch element's O and
// LSE rows must be bitwise identical whatever batch it rides in.
//
// A pool of batch elements (random q_len 1..4, lengths on both sides of the 1024-token split
// boundaries, zeros among them) lives in one paged cache on the device. Every element is run
// alone (a batch of one) first; then batches of 1, 2, 7, 64 and 1024 elements drawn from the
// pool at random (repeats allowed, so the other elements' lengths, split counts, max_q_len and
// max_kv_len vary) must reproduce every element's rows byte for byte (memcmp of the bf16 O and
// the fp32 LSE), through mla_decode_fwd, the plan API, and a captured graph replayed; the same
// elements in a contiguous cache must too (16 heads). Every format (bf16, fp8 e4m3fn /
// e4m3fnuz, MXFP4, MXFP4 keys with fp8 values, fp8 Q), 16 and 128 heads. Separately, the mode
// must match the host reference within the bf16-output tolerance, like the default mode.
//
// Outputs are poisoned (0xFF) before every run, and the rows run alone must be written (no NaN
// pattern left), so an unwritten row cannot pass as equal. Each test skips, with the reason,
// when no GPU is present.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ostream>
#include <random>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "compare.h"
#include "device_problem.h"
#include "gpu_graph.h"
#include "gpu_test.h"
#include "mla_decode.h"
#include "mla_problem.h"

#if defined(MLA_HAVE_GPU_RUNTIME)

namespace mla_test {
namespace {

namespace gpu = mla::gpu;

constexpr uint32_t kInvariant = MLA_DECODE_FLAG_BATCH_INVARIANT;
constexpr mla_dtype kNoV = MLA_DTYPE_NONE;
constexpr int kPoolElements = 16;
constexpr int kPageSize = 16;
constexpr int kBatchSizes[] = {1, 2, 7, 64, 1024};

// A cache format (latent cache dtype, separate fp8 V dtype or none) and the Q dtype.
struct Format {
    mla_dtype kv;
    mla_dtype v;
    mla_dtype q;
};

const Format kFormats[] = {
    {MLA_DTYPE_BF16, kNoV, MLA_DTYPE_BF16},
    {MLA_DTYPE_FP8_E4M3FN, kNoV, MLA_DTYPE_BF16},
    {MLA_DTYPE_FP8_E4M3FNUZ, kNoV, MLA_DTYPE_BF16},
    {MLA_DTYPE_MXFP4, kNoV, MLA_DTYPE_BF16},
    {MLA_DTYPE_MXFP4, MLA_DTYPE_FP8_E4M3FN, MLA_DTYPE_BF16},
    {MLA_DTYPE_MXFP4, MLA_DTYPE_FP8_E4M3FNUZ, MLA_DTYPE_BF16},
    {MLA_DTYPE_FP8_E4M3FN, kNoV, MLA_DTYPE_FP8_E4M3FN},
};

constexpr int kHeadCounts[] = {16, 128};

std::string name_of(const Format& f) {
    return format_name(f.kv, f.v) + (f.q == MLA_DTYPE_BF16 ? "" : "_qfp8");
}
void PrintTo(const Format& f, std::ostream* os) { *os << name_of(f); }

// The suites' parameter: every format x both head counts, named e.g. "fp8_e4m3fn_h128".
using Param = std::tuple<Format, int>;
std::string param_name(const ::testing::TestParamInfo<Param>& info) {
    return name_of(std::get<0>(info.param)) + "_h" + std::to_string(std::get<1>(info.param));
}

::testing::AssertionResult succeeded(mla_status status, const char* call) {
    if (status == MLA_STATUS_SUCCESS) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << call << ": " << mla_status_string(status) << ": "
                                         << mla_last_error_message();
}

// The pool's lengths: every side of the 1024-token split boundaries and of the 64-token tile,
// zeros, and up to 3100 tokens (four splits); q_len 1..4 (q_len 4 over kv_len 0..3 leaves
// queries that see nothing). Fixed draws, so every run tests the same elements.
ProblemSpec pool_spec(const Format& f, int heads, bool paged) {
    const int kv[kPoolElements] = {0,    1,    3,    64,   65,   1023, 1024, 1025,
                                   1100, 2047, 2048, 2049, 2500, 3071, 3072, 3100};
    const int q[kPoolElements] = {1, 4, 4, 2, 3, 1, 4, 2, 1, 3, 2, 4, 1, 2, 3, 4};
    ProblemSpec s;
    s.kv_dtype = f.kv;
    s.v_dtype = f.v;
    s.q_dtype = f.q;
    s.num_heads = heads;
    s.kv_lens.assign(kv, kv + kPoolElements);
    s.q_lens.assign(q, q + kPoolElements);
    s.paged = paged;
    s.page_size = paged ? kPageSize : 1;
    s.seed = 11;
    return s;
}

int storage_bytes(mla_dtype dtype) { return dtype == MLA_DTYPE_BF16 ? 2 : 1; }

// The O and LSE rows of one batch element, as stored (bf16 bits, fp32).
struct Rows {
    std::vector<uint16_t> o;
    std::vector<float> lse;
};

// A pool on the device (DeviceProblem holds its cache, page table and Q rows).
struct Pool {
    Pool(const Format& f, int heads, bool paged) : Pool(pool_spec(f, heads, paged)) {}
    explicit Pool(const ProblemSpec& spec) : host(make_problem(spec)), dev(host) {}
    int q_len(int e) const { return host.qo_indptr[e + 1] - host.qo_indptr[e]; }
    int kv_len(int e) const { return host.kv_indptr[e + 1] - host.kv_indptr[e]; }

    HostProblem host;
    DeviceProblem dev;
};

// A batch of pool elements (any order, repeats allowed) over the pool's cache: its own Q rows
// (the elements' rows copied from the pool's), qo_indptr, kv_indptr, page table (paged pools)
// or a run of consecutive elements (contiguous pools), O, LSE and workspace.
class Batch {
public:
    Batch(const Pool& pool, std::vector<int> elements, uint32_t flags)
        : pool_(pool), elements_(std::move(elements)) {
        const HostProblem& h = pool.host;
        const size_t row_bytes =
            static_cast<size_t>(h.q_stride_token) * storage_bytes(h.spec.q_dtype);
        std::vector<uint8_t> q;
        std::vector<int32_t> qo{0}, kv{0}, page_indptr{0}, page_indices;
        int max_q = 0, max_kv = 0;
        const std::vector<int32_t> ids = h.spec.paged ? h.device_page_indices()
                                                      : std::vector<int32_t>();
        for (size_t i = 0; i < elements_.size(); ++i) {
            const int e = elements_[i];
            first_row_.push_back(qo.back());
            q.insert(q.end(), h.q.begin() + h.qo_indptr[e] * row_bytes,
                     h.q.begin() + h.qo_indptr[e + 1] * row_bytes);
            qo.push_back(qo.back() + pool.q_len(e));
            kv.push_back(kv.back() + pool.kv_len(e));
            max_q = std::max(max_q, pool.q_len(e));
            max_kv = std::max(max_kv, pool.kv_len(e));
            if (h.spec.paged) {
                page_indices.insert(page_indices.end(), ids.begin() + h.kv_page_indptr[e],
                                    ids.begin() + h.kv_page_indptr[e + 1]);
                page_indptr.push_back(static_cast<int32_t>(page_indices.size()));
            } else if (i > 0 && e != elements_[i - 1] + 1) {
                throw std::invalid_argument("a contiguous pool takes runs of elements only");
            }
        }
        // Elements with no cache at all have an empty page list; the table pointer must still
        // be valid (the pool has slots), so it holds one entry that is never read.
        if (h.spec.paged && page_indices.empty()) page_indices.push_back(0);
        if (!h.spec.paged) {  // the slots of a run of elements, as the pool has them
            const std::vector<int32_t> slots = h.device_kv_indptr();
            for (int32_t& x : kv) x += slots[elements_.front()];
        }
        total_q_ = qo.back();
        q_ = upload(q);
        qo_ = upload(qo);
        kv_ = upload(kv);
        page_indptr_ = upload(page_indptr);
        page_indices_ = upload(page_indices);
        const int heads = h.spec.num_heads;
        o_ = DeviceBuffer(static_cast<size_t>(total_q_) * heads * MLA_HEAD_DIM_V * 2);
        lse_ = DeviceBuffer(static_cast<size_t>(total_q_) * heads * sizeof(float));

        params = pool.dev.params;
        params.batch_size = static_cast<int32_t>(elements_.size());
        params.total_q = total_q_;
        params.max_q_len = max_q;
        params.max_kv_len = max_kv;
        params.q = q_.get();
        params.qo_indptr = static_cast<const int32_t*>(qo_.get());
        params.kv_indptr = static_cast<const int32_t*>(kv_.get());
        params.kv_page_indptr = h.spec.paged ? static_cast<const int32_t*>(page_indptr_.get())
                                             : nullptr;
        params.kv_page_indices = h.spec.paged
                                     ? static_cast<const int32_t*>(page_indices_.get())
                                     : nullptr;
        params.o = o_.get();
        params.o_stride_token = static_cast<int64_t>(heads) * MLA_HEAD_DIM_V;
        params.o_stride_head = MLA_HEAD_DIM_V;
        params.lse = static_cast<float*>(lse_.get());
        params.flags = flags;
        status = mla_decode_workspace_size(&params, &workspace_bytes);
        if (status == MLA_STATUS_SUCCESS) {
            workspace = DeviceBuffer(workspace_bytes);
            poison_workspace(workspace);
        }
    }

    void poison() {
        o_.fill_bytes(0xFF);
        lse_.fill_bytes(0xFF);
    }
    // mla_decode_fwd on the default stream, poisoned first, waited for, outputs fetched.
    ::testing::AssertionResult run_fwd() {
        if (status != MLA_STATUS_SUCCESS) return succeeded(status, "mla_decode_workspace_size");
        poison();
        const ::testing::AssertionResult ran = succeeded(
            mla_decode_fwd(&params, workspace.get(), workspace_bytes, nullptr), "mla_decode_fwd");
        if (!ran) return ran;
        const ::testing::AssertionResult synced = synchronize_device();
        if (synced) fetch();
        return synced;
    }
    // Copies O and LSE to the host (after a run has completed), for rows().
    void fetch() {
        const size_t heads = static_cast<size_t>(params.num_heads);
        host_o_.resize(static_cast<size_t>(total_q_) * heads * MLA_HEAD_DIM_V);
        host_lse_.resize(static_cast<size_t>(total_q_) * heads);
        o_.download(host_o_.data(), host_o_.size() * sizeof(uint16_t));
        lse_.download(host_lse_.data(), host_lse_.size() * sizeof(float));
    }
    // The rows of batch position i, as fetched last.
    Rows rows(size_t i) const {
        const size_t heads = static_cast<size_t>(params.num_heads);
        const size_t first = static_cast<size_t>(first_row_[i]);
        const size_t count = static_cast<size_t>(pool_.q_len(elements_[i]));
        Rows r;
        r.o.assign(host_o_.begin() + first * heads * MLA_HEAD_DIM_V,
                   host_o_.begin() + (first + count) * heads * MLA_HEAD_DIM_V);
        r.lse.assign(host_lse_.begin() + first * heads,
                     host_lse_.begin() + (first + count) * heads);
        return r;
    }
    const std::vector<int>& elements() const { return elements_; }

    mla_decode_params params{};
    mla_status status = MLA_STATUS_SUCCESS;  // of the workspace query
    size_t workspace_bytes = 0;
    DeviceBuffer workspace;

private:
    template <typename T>
    static DeviceBuffer upload(const std::vector<T>& v) {
        DeviceBuffer b(v.size() * sizeof(T));
        if (!v.empty()) b.upload(v.data(), v.size() * sizeof(T));
        return b;
    }

    const Pool& pool_;
    std::vector<int> elements_;
    std::vector<int> first_row_;
    int total_q_ = 0;
    DeviceBuffer q_, qo_, kv_, page_indptr_, page_indices_, o_, lse_;
    std::vector<uint16_t> host_o_;
    std::vector<float> host_lse_;
};

// Rows `got` of pool element `e` are bitwise those it got alone; the first difference named.
::testing::AssertionResult same_bits(const Rows& got, const Rows& alone, int e, int heads) {
    if (got.o.size() != alone.o.size() || got.lse.size() != alone.lse.size())
        return ::testing::AssertionFailure() << "element " << e << ": row counts differ";
    if (std::memcmp(got.o.data(), alone.o.data(), got.o.size() * sizeof(uint16_t)) != 0) {
        size_t k = 0;
        while (got.o[k] == alone.o[k]) ++k;
        const size_t dim = k % MLA_HEAD_DIM_V, row = k / MLA_HEAD_DIM_V;
        return ::testing::AssertionFailure()
               << "element " << e << ": O of query " << row / heads << ", head " << row % heads
               << ", dim " << dim << " is bf16 0x" << std::hex << got.o[k] << ", alone 0x"
               << alone.o[k];
    }
    if (std::memcmp(got.lse.data(), alone.lse.data(), got.lse.size() * sizeof(float)) != 0) {
        size_t k = 0;
        while (std::memcmp(&got.lse[k], &alone.lse[k], sizeof(float)) == 0) ++k;
        return ::testing::AssertionFailure()
               << "element " << e << ": LSE of query " << k / heads << ", head " << k % heads
               << " is " << got.lse[k] << ", alone " << alone.lse[k];
    }
    return ::testing::AssertionSuccess();
}

// Every element of `batch` (run) against its rows alone.
::testing::AssertionResult every_element_as_alone(const Batch& batch,
                                                  const std::vector<Rows>& alone) {
    const int heads = batch.params.num_heads;
    for (size_t i = 0; i < batch.elements().size(); ++i) {
        const int e = batch.elements()[i];
        ::testing::AssertionResult same = same_bits(batch.rows(i), alone[e], e, heads);
        if (!same) return same << " (batch position " << i << " of " << batch.elements().size()
                               << ")";
    }
    return ::testing::AssertionSuccess();
}

// `count` pool elements drawn at random (raw mt19937_64 output: the same on every library).
std::vector<int> draw(int count, uint64_t seed) {
    std::mt19937_64 engine(seed);
    std::vector<int> out(count);
    for (int& e : out) e = static_cast<int>(engine() % kPoolElements);
    return out;
}

std::string plan_line(const mla_decode_params& params) {
    Plan plan;
    if (plan.create(params) != MLA_STATUS_SUCCESS) return std::string("no plan: ") +
                                                          mla_last_error_message();
    return plan.describe();
}

// ---- bitwise invariance ----------------------------------------------------------------------

// Every pool element alone (mla_decode_fwd), checked to be written.
void run_alone(const Pool& pool, std::vector<Rows>* alone) {
    for (int e = 0; e < kPoolElements; ++e) {
        Batch one(pool, {e}, kInvariant);
        ASSERT_TRUE(one.run_fwd()) << "element " << e;
        alone->push_back(one.rows(0));
        const Rows& r = alone->back();
        const bool o_written = std::none_of(r.o.begin(), r.o.end(), [](uint16_t x) {
            return (x & 0x7fffu) > 0x7f80u;  // a NaN, e.g. the 0xFFFF poison
        });
        const bool lse_written =
            std::none_of(r.lse.begin(), r.lse.end(), [](float x) { return std::isnan(x); });
        ASSERT_TRUE(o_written && lse_written) << "element " << e << " alone left NaN rows";
    }
    std::printf("[ route    ] alone, element %d: %s\n", kPoolElements - 1,
                plan_line(Batch(pool, {kPoolElements - 1}, kInvariant).params).c_str());
}

// Batches of 1 .. 1024 random pool elements through mla_decode_fwd: every element's rows are
// those it got alone. The default mode is run on the same batches for contrast (printed only:
// it makes no such promise).
void expect_fwd_batches_as_alone(const Pool& pool, const std::vector<Rows>& alone) {
    int default_differs = 0, default_compared = 0;
    for (int size : kBatchSizes) {
        SCOPED_TRACE("mla_decode_fwd, batch of " + std::to_string(size));
        Batch batch(pool, draw(size, 100 + size), kInvariant);
        ASSERT_TRUE(batch.run_fwd());
        EXPECT_TRUE(every_element_as_alone(batch, alone));
        std::printf("[ route    ] %d elements: %s\n", size, plan_line(batch.params).c_str());

        Batch plain(pool, batch.elements(), 0);
        ASSERT_TRUE(plain.run_fwd());
        for (size_t i = 0; i < plain.elements().size(); ++i, ++default_compared) {
            const int e = plain.elements()[i];
            default_differs += same_bits(plain.rows(i), alone[e], e, pool.host.spec.num_heads)
                                   ? 0
                                   : 1;
        }
    }
    std::printf("[ default  ] without the flag, %d of %d batch elements differ from their "
                "batch-invariant rows alone\n",
                default_differs, default_compared);
}

// The plan API (create, prepare, run on a stream), and a graph of prepare + run captured once
// and replayed twice, give the bits mla_decode_fwd gave each element alone.
void expect_plan_api_and_graph_as_alone(const Pool& pool, const std::vector<Rows>& alone) {
    TestStream stream;
    ASSERT_EQ(stream.status(), gpu::kSuccess) << gpu::error_string(stream.status());
    for (int size : {7, 64}) {
        SCOPED_TRACE("plan API, batch of " + std::to_string(size));
        Batch batch(pool, draw(size, 200 + size), kInvariant);
        Plan plan;
        ASSERT_EQ(plan.create(batch.params), MLA_STATUS_SUCCESS) << mla_last_error_message();
        DeviceBuffer workspace(plan.workspace_bytes());
        poison_workspace(workspace);
        auto enqueue = [&]() -> ::testing::AssertionResult {
            ::testing::AssertionResult prepared =
                succeeded(mla_decode_plan_prepare(plan.get(), &batch.params, workspace.get(),
                                                  workspace.bytes(), stream.get()),
                          "mla_decode_plan_prepare");
            if (!prepared) return prepared;
            return succeeded(mla_decode_plan_run(plan.get(), &batch.params, workspace.get(),
                                                 workspace.bytes(), stream.get()),
                             "mla_decode_plan_run");
        };
        batch.poison();  // synchronous, then the non-blocking stream
        ASSERT_TRUE(enqueue());
        ASSERT_EQ(stream.synchronize(), gpu::kSuccess);
        batch.fetch();
        EXPECT_TRUE(every_element_as_alone(batch, alone)) << "plan API";

        CapturedGraph graph;
        ASSERT_TRUE(graph.capture(stream.get(), enqueue));
        for (int replay = 1; replay <= 2; ++replay) {
            batch.poison();
            ASSERT_EQ(graph.launch(stream.get()), gpu::kSuccess);
            ASSERT_EQ(stream.synchronize(), gpu::kSuccess);
            batch.fetch();
            EXPECT_TRUE(every_element_as_alone(batch, alone)) << "graph replay " << replay;
        }
    }
}

// The same elements in a contiguous cache (the same values: the pool's generator depends on
// the element, not on the layout), alone and as one batch of all of them, give the bits the
// paged cache gave: where an element's tokens lie does not matter.
void expect_contiguous_as_paged(const Format& f, int heads, const std::vector<Rows>& alone) {
    const Pool contiguous(f, heads, /*paged=*/false);
    std::vector<int> all(kPoolElements);
    for (int e = 0; e < kPoolElements; ++e) {
        SCOPED_TRACE("contiguous cache, element " + std::to_string(e) + " alone");
        all[e] = e;
        Batch one(contiguous, {e}, kInvariant);
        ASSERT_TRUE(one.run_fwd());
        EXPECT_TRUE(same_bits(one.rows(0), alone[e], e, heads));
    }
    SCOPED_TRACE("contiguous cache, every element in one batch");
    Batch batch(contiguous, all, kInvariant);
    ASSERT_TRUE(batch.run_fwd());
    EXPECT_TRUE(every_element_as_alone(batch, alone));
}

class BatchInvariant : public ::testing::TestWithParam<Param> {};

// One pool per format and head count (one test, so the pool is made once): its elements
// alone, then in random batches (mla_decode_fwd), through the plan API and graph replay, and
// (16 heads) in a contiguous cache.
TEST_P(BatchInvariant, EveryElementBitwiseAsAlone) {
    SKIP_WITHOUT_GPU();
    const auto& [f, heads] = GetParam();
    const Pool pool(f, heads, /*paged=*/true);
    std::vector<Rows> alone;
    ASSERT_NO_FATAL_FAILURE(run_alone(pool, &alone));
    ASSERT_NO_FATAL_FAILURE(expect_fwd_batches_as_alone(pool, alone));
    ASSERT_NO_FATAL_FAILURE(expect_plan_api_and_graph_as_alone(pool, alone));
    if (heads == 16) expect_contiguous_as_paged(f, heads, alone);  // the layout, once per format
}

INSTANTIATE_TEST_SUITE_P(Formats, BatchInvariant,
                         ::testing::Combine(::testing::ValuesIn(kFormats),
                                            ::testing::ValuesIn(kHeadCounts)),
                         param_name);

// ---- accuracy --------------------------------------------------------------------------------

class BatchInvariantAccuracy : public ::testing::TestWithParam<Param> {};

// The mode against the host reference, every element of O and LSE within the bf16-output
// tolerance (as the default mode): lengths on both sides of the split boundaries, q_len 1..4,
// queries that see nothing; mla_decode_fwd and the plan API. The plan says it is the mode's.
TEST_P(BatchInvariantAccuracy, MatchesTheHostReference) {
    SKIP_WITHOUT_GPU();
    const auto& [f, heads] = GetParam();
    ProblemSpec s = pool_spec(f, heads, /*paged=*/true);
    s.kv_lens = {0, 3, 1023, 1024, 1025, 2049, 3100};
    s.q_lens = {1, 4, 2, 3, 1, 4, 2};
    const HostProblem host = make_problem(s);
    const Reference ref = run_reference(host);
    for (Api api : {Api::kFwd, Api::kPlan}) {
        SCOPED_TRACE(api == Api::kFwd ? "mla_decode_fwd" : "plan API");
        DeviceProblem dev(host);
        dev.params.flags = kInvariant;
        ASSERT_EQ(mla_decode_workspace_size(&dev.params, &dev.workspace_bytes),
                  MLA_STATUS_SUCCESS)
            << mla_last_error_message();
        dev.workspace = DeviceBuffer(dev.workspace_bytes);
        poison_workspace(dev.workspace);
        const std::string line = plan_line(dev.params);
        EXPECT_NE(line.find("batch-invariant mode"), std::string::npos) << line;
        EXPECT_NE(line.find("variant=mma16"), std::string::npos) << line;
        EXPECT_NE(line.find("route=split_kv"), std::string::npos) << line;
        dev.poison_outputs(0xFF);
        ASSERT_TRUE(run_on_gpu(dev, api));
        expect_outputs_match(dev, ref);
    }
}

INSTANTIATE_TEST_SUITE_P(Formats, BatchInvariantAccuracy,
                         ::testing::Combine(::testing::ValuesIn(kFormats),
                                            ::testing::ValuesIn(kHeadCounts)),
                         param_name);

// An element of 140,000 tokens beside a short one: 137 splits of 1024 tokens, past the 128 a
// round of the split-parallel reduce holds in registers, so its second round reads the rest.
// fp8 e4m3fn cache, against the host reference.
TEST(BatchInvariantLong, SplitsPastTheReduceRegisters) {
    SKIP_WITHOUT_GPU();
    ProblemSpec s = pool_spec(kFormats[1], 16, /*paged=*/false);
    s.kv_lens = {140000, 700};
    s.q_lens = {1, 2};
    const HostProblem host = make_problem(s);
    const Reference ref = run_reference(host);
    DeviceProblem dev(host);
    dev.params.flags = kInvariant;
    ASSERT_EQ(mla_decode_workspace_size(&dev.params, &dev.workspace_bytes), MLA_STATUS_SUCCESS)
        << mla_last_error_message();
    dev.workspace = DeviceBuffer(dev.workspace_bytes);
    poison_workspace(dev.workspace);
    const std::string line = plan_line(dev.params);
    EXPECT_NE(line.find("splits=137"), std::string::npos) << line;
    dev.poison_outputs(0xFF);
    ASSERT_TRUE(run_on_gpu(dev, Api::kFwd));
    expect_outputs_match(dev, ref);
}

// Elements of 3, 16, 31, 40 and 137 splits (the 16-split one of 2 query tokens, the first of
// which sees nothing of its last split: an LSE of -inf inside the element). Alone, each takes
// the reduce of its own split count and few rows: a warp per (row, head, slice) up to 8 splits,
// beyond that a CTA per slice with 1, 2 or 4 groups of chunks in flight (137: two rounds). In
// batches: all five (4 groups), 40 and 16 splits (2 groups), 31 and 3 (1 group), and 32 copies
// of the 16- or 31-split element (1,024 or 512 rows, 4,096 or 2,048 units: a warp per slice
// again, with 2 or 4 partials). Every element gets the bits it got alone: the order of the
// reduce's sums does not depend on the kernel (reduce.h; a plain split-order sum changes a
// (row, head)'s bf16 O in ~20-60 % of draws at 9-40 splits, by reduce_order_model.py, and each
// element here has 16 or 32 of them, so a change of order shows). All five in
// one batch are also checked against the host reference, so a kernel that is wrong the same
// way alone and in a batch fails too.
TEST(BatchInvariantLong, RowsDoNotDependOnTheReduceKernel) {
    SKIP_WITHOUT_GPU();
    ProblemSpec s = pool_spec(kFormats[1], 16, /*paged=*/true);
    s.kv_lens = {2500, 15361, 31000, 40000, 140000};
    s.q_lens = {1, 2, 1, 1, 1};
    const Pool pool(s);
    const char* const splits[] = {"splits=3 ", "splits=16 ", "splits=31 ", "splits=40 ",
                                  "splits=137 "};
    std::vector<Rows> alone;
    for (int e = 0; e < 5; ++e) {
        Batch one(pool, {e}, kInvariant);
        const std::string line = plan_line(one.params);
        EXPECT_NE(line.find(splits[e]), std::string::npos) << line;
        ASSERT_TRUE(one.run_fwd()) << "element " << e;
        alone.push_back(one.rows(0));
        const Rows& r = alone.back();
        ASSERT_TRUE(std::none_of(r.o.begin(), r.o.end(),
                                 [](uint16_t x) { return (x & 0x7fffu) > 0x7f80u; }) &&
                    std::none_of(r.lse.begin(), r.lse.end(), [](float x) { return std::isnan(x); }))
            << "element " << e << " alone left NaN rows";
    }
    for (const std::vector<int>& elements :
         {std::vector<int>{0, 1, 2, 3, 4}, std::vector<int>{3, 1}, std::vector<int>{2, 0},
          std::vector<int>(32, 1), std::vector<int>(32, 2)}) {
        Batch batch(pool, elements, kInvariant);
        ASSERT_TRUE(batch.run_fwd());
        EXPECT_TRUE(every_element_as_alone(batch, alone)) << plan_line(batch.params);
    }
    DeviceProblem dev(pool.host);
    dev.params.flags = kInvariant;
    ASSERT_EQ(mla_decode_workspace_size(&dev.params, &dev.workspace_bytes), MLA_STATUS_SUCCESS)
        << mla_last_error_message();
    dev.workspace = DeviceBuffer(dev.workspace_bytes);
    poison_workspace(dev.workspace);
    dev.poison_outputs(0xFF);
    ASSERT_TRUE(run_on_gpu(dev, Api::kFwd));
    expect_outputs_match(dev, run_reference(pool.host));
}

// A plan made in one mode refuses runs in the other, on the device path too, and writes
// nothing.
TEST(BatchInvariantPlan, RefusesARunInTheOtherMode) {
    SKIP_WITHOUT_GPU();
    const Pool pool(kFormats[1], 16, /*paged=*/true);
    Batch batch(pool, draw(7, 300), kInvariant);
    ASSERT_EQ(batch.status, MLA_STATUS_SUCCESS) << mla_last_error_message();
    Plan plan;
    ASSERT_EQ(plan.create(batch.params), MLA_STATUS_SUCCESS) << mla_last_error_message();
    DeviceBuffer workspace(plan.workspace_bytes());
    poison_workspace(workspace);
    mla_decode_params plain = batch.params;
    plain.flags = 0;
    batch.poison();
    EXPECT_EQ(mla_decode_plan_run(plan.get(), &plain, workspace.get(), workspace.bytes(),
                                  nullptr),
              MLA_STATUS_INVALID_VALUE);
    EXPECT_NE(std::string(mla_last_error_message()).find("flags"), std::string::npos)
        << mla_last_error_message();
    ASSERT_TRUE(synchronize_device());
    batch.fetch();
    const Rows r = batch.rows(0);
    EXPECT_TRUE(std::all_of(r.o.begin(), r.o.end(), [](uint16_t x) { return x == 0xFFFF; }));
}

}  // namespace
}  // namespace mla_test

#endif  // MLA_HAVE_GPU_RUNTIME
