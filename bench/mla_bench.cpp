// mla_bench: the project's benchmark of mla_decode_fwd, measured the way SPEC.md and the
// anchors' METHOD.md prescribe, so its figures compare column for column with the peers.
//
//   * Inputs made once per case (Q = randn * 0.02, cache = randn * 0.02 in the KV format,
//     every batch element the same length unless the shape says uneven).
//   * Before every timed call a device buffer larger than the L2 (512 MiB) is written with
//     memset_async; device events are recorded around the whole call.
//   * The timed call is mla_decode_plan_run with a plan made and prepared once per case outside
//     the timed region (an engine prepares once per decode step and runs once per layer; the
//     FlashMLA anchor was taken the same way, its metadata outside the timed call). The
//     one-shot mla_decode_fwd (cached plan + metadata kernel + run) is timed after it with the
//     same method: column "fwd us" / CSV fwd_median_us; both must write the same O.
//   * One warm-up call, then --mla_iters timed calls (default 50, SPEC asks >= 30); the case
//     reports Google Benchmark manual time per call plus our own median/min/max counters.
//   * After the warm-up call, a plan is made for the same params (mla_decode_plan_create) and
//     its one-line description gives the case's route (CSV columns route, splits and plan;
//     the table's route column; the benchmark label).
//   * Every element of O (and LSE) is compared with the host reference (FP32 O) computed from
//     the same stored values; `ok` = every element within bf16 output rounding.
//
// Formats: bf16, fp8 e4m3fn / e4m3fnuz, MXFP4 (K and V from the 306-byte rows), MXFP4 keys with
// fp8 values (v_cache), all with bf16 Q; with --mla_extra also fp8 Q on an fp8 cache. A case the
// library refuses with MLA_STATUS_UNSUPPORTED is reported as skipped, with its message.
// Without a GPU (or with a library built with backend "none") it times the host reference
// through the C ABI instead (bf16 and fp8 e4m3fn; every format with --mla_extra), so the
// binary still runs on CI machines.
//
// Flags of our own (the --benchmark_* flags of Google Benchmark work as usual):
//   --mla_iters=N    timed calls per case (GPU default 50; host-reference mode default 1)
//   --mla_extra      also run the engine shapes (H 128 with q_len 1 and 4, q_len 2/4 and mixed
//                    at H 16, uneven lengths, pages of 1/16/64) and the fp8-Q formats
//   --mla_csv=PATH   where to write the CSV rows (default mla_bench.csv; "" = none)
//   --mla_no_lse     do not request the LSE output (default: requested and checked)
//   --mla_no_check   skip the host reference and the error columns (faster; ok = "unchecked")
//   --mla_host       time the host reference even when a GPU is present
// Exit status: 0 when every case that ran succeeded and was ok, 1 otherwise, 2 for bad flags.
// Since 0.2.0 the GPU serves every format and shape here: UNSUPPORTED is reported (as a skip,
// with the library's message) and counts as a failure.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <iterator>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "arch/runtime.h"
#include "mla_decode.h"
#include "mla_problem.h"
#if defined(MLA_HAVE_GPU_RUNTIME)
#include "device_problem.h"
#endif

namespace {

using mla_test::HostProblem;
using mla_test::ProblemSpec;
using mla_test::Reference;

// ---- constants of the method -------------------------------------------------------------

constexpr double kAttainableBytesPerSecond = 4.27e12;  // H200 device copy, SPEC.md
constexpr double kInputStd = 0.02;                     // randn * 0.02, METHOD.md
constexpr size_t kFlushBytes = size_t{512} << 20;      // the anchors' 512 MiB buffer
constexpr double kORowRel = 1.0 / 256.0;               // bf16 output rounding, row-relative
constexpr double kOAtol = 1e-6;
constexpr int kGpuDefaultIters = 50;
constexpr int kHostDefaultIters = 1;
constexpr int kSpecMinIters = 30;

// Geometric means over the eight competition shapes, measured on our H200 (SPEC.md).
constexpr double kAnchorFlashMla = 72.4;
constexpr double kAnchorTorch = 128.8;
constexpr double kAnchorSeedSplitKv = 102.3;

// Per-shape anchor medians (us) from anchors/h200_peers_2026-11-30.csv, for the table.
struct PeerFigure {
    int bs, q_len, kv_len, heads;
    double flashmla_bf16;   // 0 = not measured
    double seed_splitkv_fp8;
};
constexpr PeerFigure kPeers[] = {
    {4, 1, 1024, 16, 21.7, 22.4},    {4, 1, 8192, 16, 39.2, 48.5},
    {32, 1, 1024, 16, 26.6, 32.4},   {32, 1, 8192, 16, 95.0, 152.4},
    {64, 1, 1024, 16, 38.5, 49.5},   {64, 1, 8192, 16, 169.1, 282.8},
    {256, 1, 1024, 16, 92.5, 148.9}, {256, 1, 8192, 16, 581.7, 1068.6},
    {64, 1, 4096, 128, 124.3, 0.0},  {128, 2, 4096, 16, 176.1, 0.0},
    {128, 4, 4096, 16, 165.9, 0.0},
};

// ---- options -----------------------------------------------------------------------------

struct Options {
    int iters = 0;  // 0 = the mode's default
    bool extra = false;
    bool lse = true;
    bool check = true;
    bool force_host = false;
    std::string csv = "mla_bench.csv";
};

void print_usage() {
    std::printf(
        "mla_bench flags (besides Google Benchmark's --benchmark_*):\n"
        "  --mla_iters=N    timed calls per case (GPU default %d, host-reference default %d)\n"
        "  --mla_extra      also run the engine shapes (H 128, q_len 2/4, uneven, pages 16/64)\n"
        "  --mla_csv=PATH   CSV output path (default mla_bench.csv; empty = no CSV)\n"
        "  --mla_no_lse     do not request LSE\n"
        "  --mla_no_check   skip the host reference and the error columns\n"
        "  --mla_host       time the host reference even when a GPU is present\n",
        kGpuDefaultIters, kHostDefaultIters);
}

// Removes our flags from argv; returns false (with a message) on a malformed one.
bool parse_options(int* argc, char** argv, Options* opt) {
    int out = 1;
    for (int i = 1; i < *argc; ++i) {
        const std::string a = argv[i];
        auto value_of = [&](const char* prefix, std::string* v) {
            const size_t n = std::strlen(prefix);
            if (a.compare(0, n, prefix) != 0) return false;
            *v = a.substr(n);
            return true;
        };
        std::string v;
        if (value_of("--mla_iters=", &v)) {
            char* end = nullptr;
            const long n = std::strtol(v.c_str(), &end, 10);
            if (v.empty() || *end != '\0' || n < 1 || n > 1000000) {
                std::fprintf(stderr, "mla_bench: bad --mla_iters value '%s'\n", v.c_str());
                return false;
            }
            opt->iters = static_cast<int>(n);
        } else if (a == "--mla_extra") {
            opt->extra = true;
        } else if (value_of("--mla_csv=", &v)) {
            opt->csv = v;
        } else if (a == "--mla_no_lse") {
            opt->lse = false;
        } else if (a == "--mla_no_check") {
            opt->check = false;
        } else if (a == "--mla_host") {
            opt->force_host = true;
        } else if (a.compare(0, 6, "--mla_") == 0) {
            std::fprintf(stderr, "mla_bench: unknown flag '%s'\n", a.c_str());
            print_usage();
            return false;
        } else {
            if (a == "--help" || a == "-h") print_usage();
            argv[out++] = argv[i];
        }
    }
    *argc = out;
    argv[out] = nullptr;
    return true;
}

// ---- formats and shapes ------------------------------------------------------------------

struct Format {
    const char* name;
    const char* q_name;  // the CSV's q_format
    mla_dtype q;
    mla_dtype kv;
    mla_dtype v;     // 0 = V from the same rows
    bool host;       // timed in host-reference mode without --mla_extra
    bool extra;      // only with --mla_extra
};

constexpr mla_dtype kBf16 = MLA_DTYPE_BF16, kFn = MLA_DTYPE_FP8_E4M3FN,
                    kFnuz = MLA_DTYPE_FP8_E4M3FNUZ, kMx = MLA_DTYPE_MXFP4,
                    kNoV = static_cast<mla_dtype>(0);

// Every format the SPEC names; which of them run is asked of the library, case by case.
// Columns: name, Q name, Q, cache (K, and V unless a V dtype follows), V, host, extra.
constexpr Format kFormats[] = {
    {"bf16", "bf16", kBf16, kBf16, kNoV, true, false},
    {"fp8_e4m3fn", "bf16", kBf16, kFn, kNoV, true, false},
    {"fp8_e4m3fnuz", "bf16", kBf16, kFnuz, kNoV, false, false},
    {"mxfp4", "bf16", kBf16, kMx, kNoV, false, false},
    {"mxfp4k_fp8v_e4m3fn", "bf16", kBf16, kMx, kFn, false, false},
    {"mxfp4k_fp8v_e4m3fnuz", "bf16", kBf16, kMx, kFnuz, false, false},
    {"fp8_e4m3fn_qfp8", "fp8_e4m3fn", kFn, kFn, kNoV, false, true},
    {"fp8_e4m3fnuz_qfp8", "fp8_e4m3fnuz", kFnuz, kFnuz, kNoV, false, true},
};

struct Shape {
    int bs = 0;
    int kv_len = 0;  // every element's length, or the maximum when uneven
    int heads = 16;
    int q_len = 1;   // every element's query tokens, or the maximum when mixed_q
    int page_size = 0;  // 0: contiguous cache; else paged (shuffled pages of this size)
    bool uneven = false;
    bool mixed_q = false;      // q_len 1, 2, .., q_len, 1, 2, .. over the batch
    bool competition = false;  // one of the eight ranked shapes

    std::string tag() const {  // "bs32/kv8192/h16/q1[/page16]"
        std::string s = "bs" + std::to_string(bs) + "/kv" + (uneven ? "uneven" : "") +
                        std::to_string(kv_len) + "/h" + std::to_string(heads) + "/q" +
                        (mixed_q ? "1-" : "") + std::to_string(q_len);
        if (page_size > 0) s += "/page" + std::to_string(page_size);
        return s;
    }
    std::string label() const {  // the same with spaces, for the table
        std::string s = tag();
        std::replace(s.begin(), s.end(), '/', ' ');
        return s;
    }
};

Shape shape(int bs, int kv_len, int heads = 16, int q_len = 1) {
    Shape s;
    s.bs = bs, s.kv_len = kv_len, s.heads = heads, s.q_len = q_len;
    return s;
}
Shape paged(Shape s, int page_size) {
    s.page_size = page_size;
    return s;
}
Shape uneven(Shape s) {
    s.uneven = true;
    return s;
}
Shape mixed_q(Shape s) {
    s.mixed_q = true;
    return s;
}

std::vector<Shape> competition_shapes() {
    std::vector<Shape> v;
    for (int bs : {4, 32, 64, 256}) {
        for (int kv : {1024, 8192}) {
            v.push_back(shape(bs, kv));
            v.back().competition = true;
        }
    }
    return v;
}

// Engine shapes (SPEC.md): the anchors' three extra shapes first (FlashMLA has figures).
std::vector<Shape> extra_shapes() {
    return {
        shape(64, 4096, 128), shape(128, 4096, 16, 2), shape(128, 4096, 16, 4),
        // H 128 (one GPU holding every head), decode and MTP
        shape(32, 8192, 128), shape(128, 4096, 128), shape(32, 4096, 128, 4),
        // q_len 2 and 4 at H 16 on long caches, and q_len mixed 1..4 inside one batch
        shape(32, 8192, 16, 2), shape(32, 8192, 16, 4), mixed_q(shape(64, 4096, 16, 4)),
        // uneven lengths, zeros among them
        uneven(shape(64, 8192)), uneven(shape(32, 8192, 128)),
        // paged caches: pages of 1 (a slot table), 16 and 64, shuffled
        paged(shape(32, 8192), 1), paged(shape(32, 8192), 16), paged(shape(32, 8192), 64),
        paged(uneven(shape(64, 4096, 128, 4)), 64),
    };
}

// Uneven lengths: a fixed pseudo-random spread over [0, max_len], with zeros among them and
// one element at max_len (so the planner sees the stated maximum).
std::vector<int> uneven_lengths(int bs, int max_len) {
    std::vector<int> lens(bs);
    uint64_t x = 0x9E3779B97F4A7C15ull;
    for (int i = 0; i < bs; ++i) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        lens[i] = (i % 8 == 5) ? 0 : static_cast<int>(x % static_cast<uint64_t>(max_len + 1));
    }
    lens[0] = max_len;
    return lens;
}

ProblemSpec make_spec(const Format& f, const Shape& s) {
    ProblemSpec spec;
    spec.num_heads = s.heads;
    spec.q_lens.resize(s.bs);
    for (int b = 0; b < s.bs; ++b) spec.q_lens[b] = s.mixed_q ? 1 + b % s.q_len : s.q_len;
    spec.kv_lens = s.uneven ? uneven_lengths(s.bs, s.kv_len) : std::vector<int>(s.bs, s.kv_len);
    spec.q_dtype = f.q;
    spec.kv_dtype = f.kv;
    spec.v_dtype = f.v;
    spec.paged = s.page_size > 0;
    spec.page_size = std::max(s.page_size, 1);
    spec.q_std = kInputStd;
    spec.kv_std = kInputStd;
    spec.seed = 20261130;
    return spec;
}

// The workspace query for a spec without generating its full cache: a problem with the same
// batch, heads, q lengths, formats and paging but at most 16 tokens per element, whose
// max_kv_len is then set to the real one (the query reads host values only).
[[maybe_unused]] mla_status probe_support(const ProblemSpec& full, std::string* message) {
    ProblemSpec small = full;
    int max_len = 0;
    for (int& len : small.kv_lens) {
        max_len = std::max(max_len, len);
        len = std::min(len, 16);
    }
    const HostProblem hp = mla_test::make_problem(small);
    mla_decode_params p = hp.host_params(nullptr, MLA_DTYPE_BF16, nullptr);
    p.max_kv_len = std::max(p.max_kv_len, max_len);
    size_t bytes = 0;
    const mla_status st = mla_decode_workspace_size(&p, &bytes);
    if (st != MLA_STATUS_SUCCESS) *message = mla_last_error_message();
    return st;
}

// ---- results -----------------------------------------------------------------------------

struct ErrorStats {
    bool checked = false;        // false: no comparison made (--mla_no_check)
    double max_abs = 0.0;
    double max_rel_row = 0.0;
    double lse_max_abs = 0.0;
    bool lse_checked = false;
    bool ok = true;
    size_t bad = 0;              // elements of O outside the tolerance
    size_t first_bad = 0;        // flat index of the first of them
    double first_bad_got = 0.0, first_bad_want = 0.0;
};

// Every element of `o` (dense (rows, 512)) against the reference; rows = total_q * heads.
ErrorStats compare(const std::vector<float>& o, const std::vector<float>& lse,
                   const Reference& ref) {
    ErrorStats e;
    e.checked = true;
    const double inf = std::numeric_limits<double>::infinity();
    const size_t d = MLA_HEAD_DIM_V;
    const size_t rows = ref.o.size() / d;
    if (o.size() != ref.o.size()) {
        e.ok = false;
        e.max_abs = e.max_rel_row = inf;
        e.bad = ref.o.size();
        return e;
    }
    for (size_t r = 0; r < rows; ++r) {
        const float* want = ref.o.data() + r * d;
        const float* got = o.data() + r * d;
        double row_max = 0.0;
        for (size_t i = 0; i < d; ++i) row_max = std::max(row_max, std::fabs(double(want[i])));
        const double row_tol = kORowRel * row_max + kOAtol;
        for (size_t i = 0; i < d; ++i) {
            // tests/common/compare.h: a row-relative bound, or one bf16 ulp of the element.
            const double tol = row_max == 0.0 ? 0.0 : std::max(row_tol, mla_test::bf16_ulp(want[i]));
            double err = std::fabs(double(got[i]) - double(want[i]));
            if (!std::isfinite(err)) err = inf;  // NaN / Inf output: worst possible
            const double rel = err == 0.0 ? 0.0 : (row_max > 0.0 ? err / row_max : inf);
            e.max_abs = std::max(e.max_abs, err);
            e.max_rel_row = std::max(e.max_rel_row, rel);
            if (!(err <= tol)) {
                if (e.bad == 0) {
                    e.first_bad = r * d + i;
                    e.first_bad_got = got[i];
                    e.first_bad_want = want[i];
                }
                ++e.bad;
                e.ok = false;
            }
        }
    }
    if (!lse.empty()) {
        e.lse_checked = true;
        if (lse.size() != ref.lse.size()) {
            e.lse_max_abs = inf;
        } else {
            for (size_t i = 0; i < lse.size(); ++i) {
                const double want = ref.lse[i], got = lse[i];
                double err;
                if (std::isinf(want) && want < 0) {
                    err = (std::isinf(got) && got < 0) ? 0.0 : inf;
                } else {
                    err = std::fabs(got - want);
                    if (!std::isfinite(err)) err = inf;
                }
                e.lse_max_abs = std::max(e.lse_max_abs, err);
            }
        }
    }
    return e;
}

struct Row {
    std::string name;  // the benchmark name
    Format format{};
    Shape shape;
    bool ran = false;
    bool success = false;    // the decode call(s) returned SUCCESS and the case completed
    std::string status;      // status name, or "ERROR" for a harness failure
    std::string message;
    std::string plan;        // mla_decode_plan_describe of these params, or why there is none
                             // ("" = not asked: host-reference mode, or the call failed first)
    int iters = 0;
    double median_us = 0, min_us = 0, max_us = 0;  // GPU: mla_decode_plan_run, prepared once
    double fwd_median_us = 0;                       // GPU: one-shot mla_decode_fwd
    double min_bytes = 0;
    ErrorStats err;

    // The library declined the problem (a path not built yet): reported, not timed.
    bool skipped() const { return ran && !success && status == "MLA_STATUS_UNSUPPORTED"; }
    // Counts against the exit status: any failure, a skip included.
    bool failed() const {
        if (!ran) return false;
        return success ? !err.ok : true;
    }
};

// The bytes floor: the least traffic of the call at the attainable HBM bandwidth.
double floor_us_of(const Row& r) { return r.min_bytes / kAttainableBytesPerSecond * 1e6; }

// The row of a case about to run: its identity kept, every result reset.
Row fresh_row(const Row& old) {
    Row r;
    r.name = old.name;
    r.format = old.format;
    r.shape = old.shape;
    return r;
}

double median_of(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// ---- the benchmark state shared by all cases ---------------------------------------------

struct Bench {
    Options opt;
    bool gpu_mode = false;
    int iters = 0;
    std::vector<Row> rows;  // registration order; cases refer to them by index

    // Inputs of the current case, kept while Google Benchmark repeats it (made once).
    std::string current;
    std::unique_ptr<HostProblem> host;
    std::map<std::string, Reference> refs;  // FP32 reference per case, computed once

#if defined(MLA_HAVE_GPU_RUNTIME)
    std::unique_ptr<mla_test::DeviceProblem> dev;
    mla_test::DeviceBuffer flush;
    mla::gpu::stream_t stream = nullptr;
    mla::gpu::event_t ev_start = nullptr, ev_stop = nullptr;
#endif

    ~Bench() { release(); }

    void drop_inputs() {
#if defined(MLA_HAVE_GPU_RUNTIME)
        dev.reset();
#endif
        host.reset();
        current.clear();
    }

    void release() {
        drop_inputs();
#if defined(MLA_HAVE_GPU_RUNTIME)
        flush = mla_test::DeviceBuffer();
        if (ev_start != nullptr) (void)mla::gpu::event_destroy(ev_start);
        if (ev_stop != nullptr) (void)mla::gpu::event_destroy(ev_stop);
        if (stream != nullptr) (void)mla::gpu::stream_destroy(stream);
        ev_start = ev_stop = nullptr;
        stream = nullptr;
#endif
    }

    const HostProblem& inputs_for(const std::string& name, const ProblemSpec& spec) {
        if (current != name || !host) {
            drop_inputs();  // free the previous case first: the big ones are GBs
            host = std::make_unique<HostProblem>(mla_test::make_problem(spec));
            current = name;
        }
        return *host;
    }

    const Reference& reference_for(const std::string& name, const HostProblem& hp) {
        auto it = refs.find(name);
        if (it == refs.end()) it = refs.emplace(name, mla_test::run_reference(hp)).first;
        return it->second;
    }
};

// The value of `key=` in a plan's description, "" when absent (words separated by spaces).
std::string plan_word(const std::string& plan, const std::string& key) {
    const std::string k = key + "=";
    for (size_t at = plan.find(k); at != std::string::npos; at = plan.find(k, at + 1)) {
        if (at > 0 && plan[at - 1] != ' ') continue;
        const size_t begin = at + k.size();
        return plan.substr(begin, plan.find_first_of(" ,;:", begin) - begin);
    }
    return "";
}

// The split count a plan's description states ("splits=N" or "N splits"), 1 for a
// single-split route, 0 when it says neither.
int plan_splits(const std::string& plan) {
    const std::string word = plan_word(plan, "splits");
    if (!word.empty()) return std::atoi(word.c_str());
    for (size_t at = plan.find(" splits"); at != std::string::npos;
         at = plan.find(" splits", at + 1)) {
        size_t begin = at;
        while (begin > 0 && std::isdigit(static_cast<unsigned char>(plan[begin - 1]))) --begin;
        if (begin < at) return std::atoi(plan.substr(begin, at - begin).c_str());
    }
    return plan_word(plan, "route").find("single") != std::string::npos ? 1 : 0;
}

// The route for the table and the label: "path xN" (N splits) from the description, or its
// head (up to the first ':', at most 40 characters) when it names no route.
std::string route_of(const std::string& plan) {
    const std::string path = plan_word(plan, "route");
    if (path.empty()) return plan.substr(0, std::min<size_t>(plan.find(':'), 40));
    const int splits = plan_splits(plan);
    return splits > 0 ? path + " x" + std::to_string(splits) : path;
}

void fill_common_counters(benchmark::State& state, const Row& row) {
    state.counters["median_us"] = row.median_us;
    state.counters["min_us"] = row.min_us;
    state.counters["max_us"] = row.max_us;
    if (const int splits = plan_splits(row.plan)) state.counters["splits"] = splits;
    std::string label = route_of(row.plan);
    if (row.err.checked) {
        state.counters["max_abs_err"] = row.err.max_abs;
        state.counters["max_rel_err_row"] = row.err.max_rel_row;
        state.counters["lse_max_abs_err"] = row.err.lse_max_abs;
        state.counters["ok"] = row.err.ok ? 1.0 : 0.0;
    }
    if (row.err.checked && !row.err.ok) {
        char buf[200];
        std::snprintf(buf, sizeof buf, "NOT OK: %zu elements off, first at %zu: %.6g vs %.6g",
                      row.err.bad, row.err.first_bad, row.err.first_bad_got,
                      row.err.first_bad_want);
        label += (label.empty() ? "" : "; ") + std::string(buf);
    }
    if (!label.empty()) state.SetLabel(label);
}

void fail_case(benchmark::State& state, Row& row, const std::string& status,
               const std::string& message) {
    row.success = false;
    row.status = status;
    row.message = message;
    const std::string text = status + ": " + message;
    state.SkipWithError(text.c_str());
}

std::vector<float> bf16_to_dense(const std::vector<uint16_t>& raw, const HostProblem& hp,
                                 int64_t stride_token, int64_t stride_head) {
    const int heads = hp.spec.num_heads;
    std::vector<float> dense(static_cast<size_t>(hp.total_q) * heads * MLA_HEAD_DIM_V);
    for (int t = 0; t < hp.total_q; ++t)
        for (int h = 0; h < heads; ++h)
            for (int d = 0; d < MLA_HEAD_DIM_V; ++d)
                dense[(static_cast<size_t>(t) * heads + h) * MLA_HEAD_DIM_V + d] =
                    mla_test::bf16_bits_to_float(
                        raw[static_cast<size_t>(t) * stride_token +
                            static_cast<size_t>(h) * stride_head + d]);
    return dense;
}

// ---- GPU case ----------------------------------------------------------------------------

#if defined(MLA_HAVE_GPU_RUNTIME)

bool gpu_ok(mla::gpu::error_t e, const char* what, std::string* message) {
    if (e == mla::gpu::kSuccess) return true;
    *message = std::string(what) + ": " + mla::gpu::error_string(e);
    return false;
}

// Stream, events and the L2 flush buffer, made once. Returns false with a message on failure.
bool init_gpu(Bench& b, std::string* message) {
    namespace gpu = mla::gpu;
    int dev = 0, l2 = 0;
    if (!gpu_ok(gpu::get_device(&dev), "get_device", message)) return false;
    if (!gpu_ok(gpu::l2_cache_bytes(&l2, dev), "l2_cache_bytes", message)) return false;
    // At least 512 MiB like the anchors, and always several times the L2.
    const size_t flush_bytes = std::max(kFlushBytes, size_t(4) * static_cast<size_t>(l2));
    try {
        b.flush = mla_test::DeviceBuffer(flush_bytes);
    } catch (const std::exception& e) {
        *message = e.what();
        return false;
    }
    if (!gpu_ok(gpu::stream_create(&b.stream), "stream_create", message)) return false;
    if (!gpu_ok(gpu::event_create(&b.ev_start), "event_create", message)) return false;
    if (!gpu_ok(gpu::event_create(&b.ev_stop), "event_create", message)) return false;
    int sms = 0;
    if (!gpu_ok(gpu::multiprocessor_count(&sms, dev), "multiprocessor_count", message))
        return false;
    std::printf("device %d: %d multiprocessors, L2 %.1f MiB; L2 flush: memset_async of %zu MiB "
                "before every timed call\n",
                dev, sms, l2 / 1048576.0, flush_bytes >> 20);
    return true;
}

// The plan mla_decode_fwd's cache holds for these params, described in one line (made, read
// and freed outside the timed calls), or why no plan could be made.
std::string describe_plan(const mla_decode_params& p) {
    mla_decode_plan* plan = nullptr;
    mla_status st = mla_decode_plan_create(&p, &plan);
    char text[512] = "";
    if (st == MLA_STATUS_SUCCESS) {
        st = mla_decode_plan_describe(plan, text, sizeof text);
        (void)mla_decode_plan_destroy(plan);
    }
    if (st != MLA_STATUS_SUCCESS)
        return std::string("no plan (") + mla_status_string(st) + "): " + mla_last_error_message();
    return text;
}

// Owns a plan for one case (destroyed on every exit path).
struct PlanHandle {
    mla_decode_plan* p = nullptr;
    PlanHandle() = default;
    PlanHandle(const PlanHandle&) = delete;
    PlanHandle& operator=(const PlanHandle&) = delete;
    ~PlanHandle() { (void)mla_decode_plan_destroy(p); }
};

void run_gpu_case(benchmark::State& state, Bench& b, size_t row_index) {
    namespace gpu = mla::gpu;
    Row& row = b.rows[row_index];
    row = fresh_row(row);
    row.ran = true;
    const ProblemSpec spec = make_spec(row.format, row.shape);
    std::string msg;

    try {
        // 1. Does the library take this problem? (cheap; no full inputs yet)
        const mla_status probe = probe_support(spec, &msg);
        if (probe != MLA_STATUS_SUCCESS) {
            return fail_case(state, row, mla_status_string(probe), msg);
        }
        // 2. Inputs, made once per case; outputs poisoned so unwritten elements show.
        const HostProblem& hp = b.inputs_for(row.name, spec);
        if (!b.dev) b.dev = std::make_unique<mla_test::DeviceProblem>(hp, b.opt.lse);
        mla_test::DeviceProblem& dp = *b.dev;
        dp.poison_outputs(0xFF);
        row.min_bytes = hp.min_bytes_moved();

        // 3. One warm-up call (also plans and caches whatever the library caches).
        mla_status st = dp.run(b.stream);
        if (st != MLA_STATUS_SUCCESS) {
            return fail_case(state, row, mla_status_string(st), mla_last_error_message());
        }
        if (!gpu_ok(gpu::stream_synchronize(b.stream), "warm-up: stream_synchronize", &msg))
            return fail_case(state, row, "DEVICE_ERROR", msg);
        row.plan = describe_plan(dp.params);

        // 4. Timed calls: flush L2, event, the call, event. The per-layer call is timed the
        //    way an engine makes it, and the way the FlashMLA anchor was taken: a plan made
        //    and prepared once per decode step (outside the timed region), then
        //    mla_decode_plan_run. The one-shot mla_decode_fwd (plan cache + metadata + run) is
        //    timed after it, same method, as a second figure.
        PlanHandle plan;
        if ((st = mla_decode_plan_create(&dp.params, &plan.p)) != MLA_STATUS_SUCCESS ||
            (st = mla_decode_plan_prepare(plan.p, &dp.params, dp.workspace.get(),
                                          dp.workspace_bytes, b.stream)) != MLA_STATUS_SUCCESS)
            return fail_case(state, row, mla_status_string(st), mla_last_error_message());
        auto plan_run = [&]() {
            return mla_decode_plan_run(plan.p, &dp.params, dp.workspace.get(), dp.workspace_bytes,
                                       b.stream);
        };
        auto fwd = [&]() { return dp.run(b.stream); };
        // One timed call; false (with fail_status / msg set) on failure.
        std::string fail_status;
        auto timed = [&](auto&& call, double* us_out) {
            float ms = 0.0f;
            if (!gpu_ok(gpu::memset_async(b.flush.get(), 0, b.flush.bytes(), b.stream),
                        "memset_async (L2 flush)", &msg) ||
                !gpu_ok(gpu::event_record(b.ev_start, b.stream), "event_record", &msg)) {
                fail_status = "DEVICE_ERROR";
                return false;
            }
            const mla_status cs = call();
            if (cs != MLA_STATUS_SUCCESS) {
                fail_status = mla_status_string(cs);
                msg = mla_last_error_message();
                return false;
            }
            if (!gpu_ok(gpu::event_record(b.ev_stop, b.stream), "event_record", &msg) ||
                !gpu_ok(gpu::event_synchronize(b.ev_stop), "event_synchronize", &msg) ||
                !gpu_ok(gpu::event_elapsed_ms(&ms, b.ev_start, b.ev_stop), "event_elapsed_ms",
                        &msg)) {
                fail_status = "DEVICE_ERROR";
                return false;
            }
            *us_out = ms * 1e3;
            return true;
        };
        std::vector<double> us;
        us.reserve(static_cast<size_t>(b.iters));
        for (auto _ : state) {
            double t = 0.0;
            if (!timed(plan_run, &t)) return fail_case(state, row, fail_status, msg);
            state.SetIterationTime(t * 1e-6);
            us.push_back(t);
        }
        if (!gpu_ok(gpu::stream_synchronize(b.stream), "stream_synchronize", &msg))
            return fail_case(state, row, "DEVICE_ERROR", msg);
        const std::vector<float> o_plan = dp.download_o();
        std::vector<double> us_fwd;
        for (int i = 0; i < b.iters; ++i) {
            double t = 0.0;
            if (!timed(fwd, &t)) return fail_case(state, row, fail_status, msg);
            us_fwd.push_back(t);
        }
        if (!gpu_ok(gpu::stream_synchronize(b.stream), "stream_synchronize", &msg))
            return fail_case(state, row, "DEVICE_ERROR", msg);
        row.fwd_median_us = median_of(us_fwd);

        // 5. Statistics and accuracy.
        row.iters = static_cast<int>(us.size());
        row.median_us = median_of(us);
        row.min_us = *std::min_element(us.begin(), us.end());
        row.max_us = *std::max_element(us.begin(), us.end());
        const std::vector<float> o = dp.download_o();
        const std::vector<float> lse = dp.download_lse();
        if (o != o_plan)
            return fail_case(state, row, "ERROR",
                             "mla_decode_fwd and mla_decode_plan_run wrote different O");
        if (b.opt.check) row.err = compare(o, lse, b.reference_for(row.name, hp));
        row.success = true;
        row.status = mla_status_string(MLA_STATUS_SUCCESS);

        const double floor_us = floor_us_of(row);
        state.SetBytesProcessed(static_cast<int64_t>(row.min_bytes) * state.iterations());
        fill_common_counters(state, row);
        state.counters["TBps"] = row.min_bytes / (row.median_us * 1e-6) / 1e12;
        state.counters["floor_us"] = floor_us;
        state.counters["frac_of_floor"] = floor_us / row.median_us;
        state.counters["ws_MiB"] = static_cast<double>(dp.workspace_bytes) / 1048576.0;
    } catch (const std::exception& e) {
        // A harness failure (allocation, copy, reference): report it, free the inputs.
        b.drop_inputs();
        return fail_case(state, row, "ERROR", e.what());
    }
}

#endif  // MLA_HAVE_GPU_RUNTIME

// ---- host-reference case -----------------------------------------------------------------

void run_host_case(benchmark::State& state, Bench& b, size_t row_index) {
    Row& row = b.rows[row_index];
    row = fresh_row(row);
    row.ran = true;
    const ProblemSpec spec = make_spec(row.format, row.shape);
    try {
        const HostProblem& hp = b.inputs_for(row.name, spec);
        row.min_bytes = hp.min_bytes_moved();
        std::vector<uint16_t> o(hp.o_elements(), 0xFFFF);  // NaN until written
        std::vector<float> lse(b.opt.lse ? hp.lse_elements() : 0,
                               std::numeric_limits<float>::quiet_NaN());
        const mla_decode_params p =
            hp.host_params(o.data(), MLA_DTYPE_BF16, b.opt.lse ? lse.data() : nullptr);
        std::vector<double> us;
        bool failed = false;
        for (auto _ : state) {
            const auto t0 = std::chrono::steady_clock::now();
            const mla_status st = mla_decode_reference(&p);
            const auto t1 = std::chrono::steady_clock::now();
            if (st != MLA_STATUS_SUCCESS) {
                fail_case(state, row, mla_status_string(st), mla_last_error_message());
                failed = true;
                break;
            }
            const double s = std::chrono::duration<double>(t1 - t0).count();
            state.SetIterationTime(s);
            us.push_back(s * 1e6);
        }
        if (failed || us.empty()) return;
        row.iters = static_cast<int>(us.size());
        row.median_us = median_of(us);
        row.min_us = *std::min_element(us.begin(), us.end());
        row.max_us = *std::max_element(us.begin(), us.end());
        const std::vector<float> dense = bf16_to_dense(o, hp, p.o_stride_token, p.o_stride_head);
        if (b.opt.check) row.err = compare(dense, lse, b.reference_for(row.name, hp));
        row.success = true;
        row.status = mla_status_string(MLA_STATUS_SUCCESS);
        fill_common_counters(state, row);
    } catch (const std::exception& e) {
        b.drop_inputs();
        return fail_case(state, row, "ERROR", e.what());
    }
}

// ---- report ------------------------------------------------------------------------------

const PeerFigure* peer_for(const Shape& s) {
    if (s.uneven || s.mixed_q || s.page_size > 0) return nullptr;
    for (const PeerFigure& p : kPeers)
        if (p.bs == s.bs && p.q_len == s.q_len && p.kv_len == s.kv_len && p.heads == s.heads)
            return &p;
    return nullptr;
}

std::string fmt(const char* f, double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, f, v);
    return buf;
}

std::string ok_text(const Row& r) {
    if (r.success) return !r.err.checked ? "unchecked" : r.err.ok ? "yes" : "NO";
    return r.skipped() ? "skipped (UNSUPPORTED)" : r.status;
}

void print_cases(const Bench& b) {
    std::printf("\n## libmla_decode %s (backend %s): %s\n\n", mla_version_string(),
                mla_backend_name(),
                b.gpu_mode ? "mla_decode_plan_run (prepared once per step; fwd us = one-shot mla_decode_fwd), device events, L2 flushed before every call"
                           : "host reference mla_decode_reference, wall clock (NOT GPU times)");
    if (b.gpu_mode) {
        std::printf("| format | shape | median us | min us | max us | fwd us | TB/s | floor us | "
                    "frac of floor | max abs err | max rel err (row) | lse err | ok | "
                    "FlashMLA bf16 us | seed fp8 split-KV best us | route |\n");
        std::printf("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---|\n");
    } else {
        std::printf("| format | shape | median us | min us | max us | max abs err | "
                    "max rel err (row) | lse err | ok |\n");
        std::printf("|---|---|---:|---:|---:|---:|---:|---:|---|\n");
    }
    for (const Row& r : b.rows) {
        if (!r.ran) continue;
        std::string cells;
        if (r.success) {
            const double floor_us = floor_us_of(r);
            cells = fmt("%.1f", r.median_us) + " | " + fmt("%.1f", r.min_us) + " | " +
                    fmt("%.1f", r.max_us) + " | ";
            if (b.gpu_mode) {
                cells += fmt("%.1f", r.fwd_median_us) + " | ";
                cells += fmt("%.2f", r.min_bytes / (r.median_us * 1e-6) / 1e12) + " | " +
                         fmt("%.1f", floor_us) + " | " + fmt("%.2f", floor_us / r.median_us) +
                         " | ";
            }
            if (r.err.checked) {
                cells += fmt("%.2e", r.err.max_abs) + " | " + fmt("%.2e", r.err.max_rel_row) +
                         " | " + (r.err.lse_checked ? fmt("%.2e", r.err.lse_max_abs) : "-") +
                         " | ";
            } else {
                cells += "- | - | - | ";
            }
        } else {
            const int empty = b.gpu_mode ? 10 : 6;  // the numeric columns before `ok`
            for (int i = 0; i < empty; ++i) cells += "- | ";
        }
        cells += ok_text(r);
        if (b.gpu_mode) {
            const PeerFigure* p = peer_for(r.shape);
            const std::string route = route_of(r.plan);
            cells += " | " + (p && p->flashmla_bf16 > 0 ? fmt("%.1f", p->flashmla_bf16) : "-") +
                     " | " +
                     (p && p->seed_splitkv_fp8 > 0 ? fmt("%.1f", p->seed_splitkv_fp8) : "-") +
                     " | " + (route.empty() ? "-" : route);
        }
        std::printf("| %s | %s | %s |\n", r.format.name, r.shape.label().c_str(), cells.c_str());
    }
}

// Geometric mean of the eight competition medians (and of their floors), per format.
void print_geomeans(const Bench& b) {
    std::vector<std::string> formats;
    for (const Row& r : b.rows)
        if (r.ran && r.shape.competition &&
            std::find(formats.begin(), formats.end(), r.format.name) == formats.end())
            formats.push_back(r.format.name);
    if (formats.empty()) return;  // only extra shapes ran
    std::printf("\n### Geometric mean over the eight competition shapes (H 16, q_len 1)\n\n");
    std::printf("| format | geomean us | shapes | floor geomean us | frac of floor | "
                "vs FlashMLA bf16 %.1f us | vs torch bf16 %.1f us | "
                "vs seed Triton fp8 split-KV best %.1f us |\n",
                kAnchorFlashMla, kAnchorTorch, kAnchorSeedSplitKv);
    std::printf("|---|---:|---:|---:|---:|---:|---:|---:|\n");
    for (const std::string& name : formats) {
        double log_us = 0.0, log_floor = 0.0;
        int n = 0;
        for (const Row& r : b.rows) {
            if (!r.success || r.format.name != name || !r.shape.competition) continue;
            log_us += std::log(r.median_us);
            log_floor += std::log(floor_us_of(r));
            ++n;
        }
        if (n != 8) {
            std::printf("| %s | - | %d of 8 succeeded | - | - | - | - | - |\n", name.c_str(), n);
            continue;
        }
        const double g = std::exp(log_us / n), floor_g = std::exp(log_floor / n);
        if (!b.gpu_mode) {  // host wall clock: a ratio to GPU figures would mean nothing
            std::printf("| %s | %.1f | 8 | %.1f | - | - | - | - |\n", name.c_str(), g, floor_g);
            continue;
        }
        // "x faster" = anchor / ours: above 1 means we beat the peer.
        std::printf("| %s | %.1f | 8 | %.1f | %.2f | %.2fx | %.2fx | %.2fx |\n", name.c_str(), g,
                    floor_g, floor_g / g, kAnchorFlashMla / g, kAnchorTorch / g,
                    kAnchorSeedSplitKv / g);
    }
    if (b.gpu_mode) {
        std::printf("\n(ratios are anchor / ours: above 1.00x means faster than the peer; "
                    "anchors from anchors/h200_peers_2026-11-30.csv, same method, H200; floors "
                    "are each format's bytes at %.2f TB/s)\n",
                    kAttainableBytesPerSecond / 1e12);
    } else {
        std::printf("\n(host-reference wall clock: not comparable with the GPU anchors)\n");
    }
}

// Cases the library declined, one line per format and reason.
void print_skips(const Bench& b) {
    std::map<std::string, int> cases;  // "format: message" -> cases
    for (const Row& r : b.rows)
        if (r.skipped()) ++cases[std::string(r.format.name) + ": " + r.message];
    for (const auto& e : cases)
        std::printf("skipped (MLA_STATUS_UNSUPPORTED), %d case%s: %s\n", e.second,
                    e.second == 1 ? "" : "s", e.first.c_str());
}

// A CSV field: quoted (quotes doubled) when it holds a comma, a quote or a line break.
std::string csv_field(const std::string& v) {
    if (v.find_first_of(",\"\r\n") == std::string::npos) return v;
    std::string q = "\"";
    for (char c : v) q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
}

// CSV with the anchor CSV's columns first (same names, same order), then ours.
bool write_csv(const Bench& b, const std::string& path) {
    std::FILE* f = std::fopen(path.c_str(), "w");
    if (f == nullptr) {
        std::fprintf(stderr, "mla_bench: cannot write %s: %s\n", path.c_str(),
                     std::strerror(errno));
        return false;
    }
    std::fprintf(f,
                 "bs,q_len,kv_len,heads,peer,kv_format,median_us,max_abs_err_vs_fp32,"
                 "bytes_floor_us_at_4.27TBps,fraction_of_floor,min_us,max_us,TBps,"
                 "max_rel_err_row,lse_max_abs_err,ok,iters,page_size,lengths,timing,status,"
                 "q_format,cache,q_lens,route,splits,message,plan,fwd_median_us\n");
    const char* peer = b.gpu_mode ? "libmla_decode" : "libmla_decode_host_reference";
    const char* timing = b.gpu_mode ? "device_events_l2_flushed" : "host_wall_clock";
    for (const Row& r : b.rows) {
        if (!r.ran) continue;
        const Shape& s = r.shape;
        std::fprintf(f, "%d,%d,%d,%d,%s,%s,", s.bs, s.q_len, s.kv_len, s.heads, peer,
                     r.format.name);
        const double floor_us = floor_us_of(r);
        if (r.success) {
            std::fprintf(f, "%.2f,%s,%.1f,", r.median_us,
                         r.err.checked ? fmt("%.3g", r.err.max_abs).c_str() : "", floor_us);
            if (b.gpu_mode) {  // fraction_of_floor ... TBps
                std::fprintf(f, "%.3f,%.2f,%.2f,%.3f,", floor_us / r.median_us, r.min_us,
                             r.max_us, r.min_bytes / (r.median_us * 1e-6) / 1e12);
            } else {
                std::fprintf(f, ",%.2f,%.2f,,", r.min_us, r.max_us);
            }
            // max_rel_err_row, lse_max_abs_err, ok (empty when not checked), iters
            std::fprintf(f, "%s,%s,%s,%d,",
                         r.err.checked ? fmt("%.3g", r.err.max_rel_row).c_str() : "",
                         r.err.lse_checked ? fmt("%.3g", r.err.lse_max_abs).c_str() : "",
                         r.err.checked ? (r.err.ok ? "1" : "0") : "", r.iters);
        } else {
            std::fprintf(f, ",,,,,,,,,0,0,");
        }
        // page_size as the ABI counts it: 1 for a contiguous cache
        const int splits = plan_splits(r.plan);
        std::fprintf(f, "%d,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s\n", std::max(s.page_size, 1),
                     s.uneven ? "uneven" : "equal", timing, r.status.c_str(),
                     r.format.q_name, s.page_size > 0 ? "paged" : "contiguous",
                     s.mixed_q ? "mixed" : "equal", csv_field(plan_word(r.plan, "route")).c_str(),
                     splits > 0 ? std::to_string(splits).c_str() : "",
                     csv_field(r.message).c_str(), csv_field(r.plan).c_str(),
                     r.success && b.gpu_mode ? fmt("%.2f", r.fwd_median_us).c_str() : "");
    }
    const bool good = std::ferror(f) == 0;
    if (std::fclose(f) != 0 || !good) {
        std::fprintf(stderr, "mla_bench: error writing %s\n", path.c_str());
        return false;
    }
    std::printf("CSV: %s\n", path.c_str());
    return true;
}

// ---- registration ------------------------------------------------------------------------

// GPU mode: every format (the fp8-Q ones with --mla_extra), each case asking the library.
// Host-reference mode: bf16 and fp8 e4m3fn (the reference is slow), every format with --mla_extra.
bool wanted(const Bench& b, const Format& f) {
    return b.opt.extra || (!f.extra && (b.gpu_mode || f.host));
}

void register_cases(Bench& b) {
    std::vector<Shape> shapes = competition_shapes();
    if (b.opt.extra) {
        const std::vector<Shape> more = extra_shapes();
        shapes.insert(shapes.end(), more.begin(), more.end());
    }
    // Reserve first: the cases keep indices into rows, and names must outlive registration.
    b.rows.reserve(std::size(kFormats) * shapes.size());
    for (const Format& f : kFormats) {
        if (!wanted(b, f)) continue;
        for (const Shape& s : shapes) {
            Row row;
            row.format = f;
            row.shape = s;
            row.name = std::string(b.gpu_mode ? "decode/" : "host_reference/") + f.name + "/" +
                       s.tag();
            b.rows.push_back(row);
            const size_t index = b.rows.size() - 1;
            Bench* bp = &b;
            auto* bm = benchmark::RegisterBenchmark(
                row.name.c_str(), [bp, index](benchmark::State& st) {
#if defined(MLA_HAVE_GPU_RUNTIME)
                    if (bp->gpu_mode) return run_gpu_case(st, *bp, index);
#endif
                    run_host_case(st, *bp, index);
                });
            bm->Iterations(b.iters)->UseManualTime()->Unit(benchmark::kMicrosecond);
        }
    }
}

}  // namespace

int main(int argc, char** argv) {
    Bench b;
    if (!parse_options(&argc, argv, &b.opt)) return 2;
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;

    std::printf("libmla_decode %s, backend %s\n", mla_version_string(), mla_backend_name());

    bool have_gpu = false;
#if defined(MLA_HAVE_GPU_RUNTIME)
    have_gpu = std::strcmp(mla_backend_name(), "none") != 0 && mla_test::gpu_available();
#endif
    b.gpu_mode = have_gpu && !b.opt.force_host;

    if (b.gpu_mode) {
#if defined(MLA_HAVE_GPU_RUNTIME)
        std::string msg;
        if (!init_gpu(b, &msg)) {
            std::fprintf(stderr, "mla_bench: GPU setup failed: %s\n", msg.c_str());
            return 1;
        }
#endif
    } else if (b.opt.force_host) {
        std::printf("--mla_host: timing the host reference (mla_decode_reference) through the C "
                    "ABI instead of the GPU\n");
    } else {
        std::printf("no GPU found: timing the host reference (mla_decode_reference) through the "
                    "C ABI instead\n");
    }

    b.iters = b.opt.iters > 0 ? b.opt.iters : (b.gpu_mode ? kGpuDefaultIters : kHostDefaultIters);
    if (b.gpu_mode && b.iters < kSpecMinIters) {
        std::printf("note: --mla_iters=%d is below the %d calls SPEC.md asks for\n", b.iters,
                    kSpecMinIters);
    }
    std::printf("%d timed call%s per case%s; LSE %s; %s\n", b.iters, b.iters == 1 ? "" : "s",
                b.gpu_mode ? " after one warm-up call" : " (wall clock, no warm-up)",
                b.opt.lse ? "requested" : "not requested",
                b.opt.check ? "every element of O and LSE checked against the FP32 host reference"
                            : "no accuracy check (--mla_no_check)");
    std::fflush(stdout);

    register_cases(b);
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    b.release();  // device memory back before the runtime shuts down

    int ran = 0, skipped = 0, failed = 0;
    for (const Row& r : b.rows) ran += r.ran ? 1 : 0;
    if (ran == 0) {  // e.g. --benchmark_list_tests, or a filter that matches nothing
        std::printf("no case ran: no table, no CSV\n");
        return 0;
    }
    print_cases(b);
    print_geomeans(b);
    std::printf("\n");
    print_skips(b);
    const bool good = b.opt.csv.empty() || write_csv(b, b.opt.csv);
    for (const Row& r : b.rows) {
        skipped += r.skipped() ? 1 : 0;
        if (r.failed()) {
            ++failed;
            std::printf("FAILED: %s: %s%s%s\n", r.name.c_str(),
                        r.success ? "NOT OK" : r.status.c_str(), r.message.empty() ? "" : ": ",
                        r.message.c_str());
        }
    }
    std::printf("%d case%s ran (%d skipped as unsupported), %d failed\n", ran,
                ran == 1 ? "" : "s", skipped, failed);
    std::fflush(stdout);
    return (good && failed == 0) ? 0 : 1;
}
