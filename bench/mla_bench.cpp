// mla_bench: the project's benchmark of mla_decode_fwd, measured the way docs/SPEC.md ("How a
// call is timed") prescribes and docs/METHOD.md describes for the peers, so its figures compare
// column for column with theirs.
//
//   * Inputs made once per case (Q = randn * 0.02, cache = randn * 0.02 in the KV format,
//     every batch element the same length unless the shape says uneven).
//   * Before every timed call a device buffer larger than the L2 (512 MiB) is written with
//     memset_async; device events are recorded around the whole call.
//   * The timed call is mla_decode_plan_run with a plan made and prepared once per case outside
//     the timed region (an engine prepares once per decode step and runs once per layer; the
//     FlashMLA anchor was taken the same way, its metadata outside the timed call). The
//     one-shot mla_decode_fwd (cached plan + run) is timed after it with the
//     same method: column "fwd us" / CSV fwd_median_us; both must write the same O.
//   * One warm-up call, then --mla_iters timed calls (default 50, SPEC asks >= 30); the case
//     reports Google Benchmark manual time per call plus our own median/min/max counters.
//   * The floor, measured in the same run for every GPU case: one plain read of exactly the
//     bytes the call must read from the KV cache (kv tokens x bytes per token: 1152 bf16, 576
//     fp8, 288 + 18 MXFP4, + 512 for the separate fp8 V cache) by a read-reduction kernel
//     (floor_read.hip) over a buffer of that many bytes, after the same flush, between the same
//     events, one warm-up and the same number of calls, median. After a flush this cold read,
//     not bytes / peak bandwidth, is what the memory allows (docs/SPEC.md, "The floor"). Columns
//     "floor us" and "x floor" (our median / the floor's); CSV floor_read_us, x_floor.
//   * Peer figures (FlashMLA bf16 on the same shape, torch, the seed's Triton kernels) come
//     from a data file read at run time, bench/data/h200_peers.csv (its header states the
//     sources, date, GPU and method); without it, and in host-reference mode, the peer
//     columns show "-".
//   * After the warm-up call, a plan is made for the same params (mla_decode_plan_create) and
//     its one-line description gives the case's route, stage-1 variant, rows per CTA and
//     split count (what the line states; "-" for what it does not).
//   * Every element of O (and LSE) is compared with the host reference (FP32 O) computed from
//     the same stored values; `ok` = every element within bf16 output rounding. In host-reference
//     mode that compares the reference with itself (its bf16 output with its own FP32 output):
//     `ok` then only says the rounding and the plumbing hold, and reads "yes (self-check)";
//     tests/test_vectors.cpp checks the reference against independent fp64 vectors.
//   * The console line of a case is Google Benchmark's name and time (ms in host-reference
//     mode, us on the GPU) and a label with the figures in their units; the counters
//     (median_us, ...) go to --benchmark_out files only, since the console prints them with SI
//     prefixes (352941 us as "352.941k").
//
// Formats: bf16, fp8 e4m3fn / e4m3fnuz, MXFP4 (K and V from the 306-byte rows), MXFP4 keys with
// fp8 values (v_cache), fp8 e4m3fn latent rows beside bf16 rope rows (fp8_e4m3fn_bf16_rope,
// DeepSeek-V3.2's cache, 640 bytes a token), all with bf16 Q; with --mla_extra also fp8 Q on an
// fp8 cache and e4m3fnuz latent rows beside bf16 rope rows (fp8_e4m3fnuz_bf16_rope). A case the
// library refuses with MLA_STATUS_UNSUPPORTED is reported as skipped, with its message.
// Without a GPU (or with a library built with backend "none") it times the host reference
// through the C ABI instead (bf16 and fp8 e4m3fn; every format with --mla_extra), so the
// binary still runs on CI machines; the floor, the ratios and the plan are GPU-only ("-").
//
// Shapes: the eight competition shapes (H 16, q_len 1, bs 4/32/64/256 x kv 1024/8192); with
// --mla_extra also the engine shapes: H 128 q_len 1 (bs64 kv4096, bs32 kv8192, bs8 kv32768,
// bs128 kv4096), H 128 q_len 2 (bs64 kv4096) and 4 (bs32 kv4096), H 16 q_len 2 and 4 (bs128
// kv4096, bs32 kv8192), H 32 and H 64 q_len 1 (bs64 kv4096), one element of 64k tokens (H 16),
// q_len mixed 1..4 in one batch, uneven lengths (zeros among them) and pages of 1/16/64.
// The summary gives geometric means (ours, floor, x floor, peers, ours / peer) over the
// competition shapes and, separately, over the engine shapes.
//
// Flags of our own (the --benchmark_* flags of Google Benchmark work as usual, e.g.
// --benchmark_filter=fp8_e4m3fn/bs64; case names are decode/<format>/<shape>):
//   --mla_iters=N        timed calls per case (GPU default 50; host-reference mode default 1)
//   --mla_extra          also run the engine shapes above and the fp8-Q formats
//   --mla_shapes=T,T     only these shapes (replacing the default sets, --mla_extra's too; that
//                        flag still adds the fp8-Q formats), tags as the case names print them:
//                        bs<N>/kv[uneven]<N>/h<N>/q[1-]<N>[/page<N>] (bench/shape_tag.h), e.g.
//                        --mla_shapes=bs8/kv3000/h64/q3,bs32/kv8192/h16/q1/page16
//   --mla_formats=A,B    only these formats (names as printed: bf16, fp8_e4m3fn, fp8_e4m3fnuz,
//                        mxfp4, mxfp4k_fp8v_e4m3fn, mxfp4k_fp8v_e4m3fnuz, fp8_e4m3fn_qfp8,
//                        fp8_e4m3fn_qfp8_mma, fp8_e4m3fnuz_qfp8, fp8_e4m3fnuz_qfp8_mma,
//                        fp8_e4m3fn_bf16_rope, fp8_e4m3fnuz_bf16_rope), whatever the mode
//                        would run by default
//   --mla_peers=PATH     the peer data file (default: bench/data/h200_peers.csv of the source
//                        tree the binary was built from; missing = a notice and "-")
//   --mla_csv=PATH       where to write the CSV rows (default mla_bench.csv; "" = none)
//   --mla_no_lse         do not request the LSE output (default: requested and checked)
//   --mla_no_check       skip the host reference, the error columns and the check that
//                        mla_decode_fwd and mla_decode_plan_run agree (faster; ok = "unchecked")
//   --mla_host           time the host reference even when a GPU is present
//   --mla_batch_invariant  also time every GPU case in batch-invariant mode
//                        (MLA_DECODE_FLAG_BATCH_INVARIANT: its own plan, prepared once, timed
//                        like the default mode's plan run, its O and LSE checked against the
//                        reference too): columns "inv us" and "inv / default", the mode's
//                        splits, a geomean of the ratio per format; CSV batch_invariant_*
// Exit status: 0 when every case that ran succeeded and was ok, 1 otherwise, 2 for bad flags.
// Cases that --benchmark_filter leaves out are counted as filtered out, not as failures.
// Since 0.2.0 the GPU serves every format and shape here: UNSUPPORTED is reported (as a skip,
// with the library's message) and counts as a failure.
#include <benchmark/benchmark.h>

#include <algorithm>
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
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "arch/runtime.h"
#include "mla_decode.h"
#include "mla_problem.h"
#include "peer_table.h"
#include "plan_text.h"
#include "shape_tag.h"
#include "splitkv/formats.h"
#if defined(MLA_HAVE_GPU_RUNTIME)
#include "device_problem.h"
#include "floor_read.h"
#endif

namespace {

using mla_bench::parse_plan;
using mla_bench::PlanSummary;
using mla_test::HostProblem;
using mla_test::ProblemSpec;
using mla_test::Reference;

// ---- constants of the method -------------------------------------------------------------

// H200 device copy (docs/METHOD.md): only for the peer CSV's bytes_floor_us_at_4.27TBps column.
constexpr double kAttainableBytesPerSecond = 4.27e12;
constexpr double kInputStd = 0.02;                     // randn * 0.02, docs/METHOD.md
constexpr size_t kFlushBytes = size_t{512} << 20;      // the peers' 512 MiB buffer
constexpr double kORowRel = 1.0 / 256.0;               // bf16 output rounding, row-relative
constexpr double kOAtol = 1e-6;
constexpr int kGpuDefaultIters = 50;
constexpr int kHostDefaultIters = 1;
constexpr int kSpecMinIters = 30;

// ---- formats ---------------------------------------------------------------------------

struct Format {
    const char* name;
    const char* q_name;  // the CSV's q_format
    mla_dtype q;
    mla_dtype kv;
    mla_dtype v;     // 0 = V from the same rows
    bool host;       // timed in host-reference mode without --mla_extra
    bool extra;      // only with --mla_extra
    mla_dtype kpe = static_cast<mla_dtype>(0);  // the rope's dtype (a split cache), 0 = 576-wide
    uint32_t flags = 0;  // MLA_DECODE_FLAG_* of every call (FP8_MMA: checked by the fp8-Q rule)
};

constexpr mla_dtype kBf16 = MLA_DTYPE_BF16, kFn = MLA_DTYPE_FP8_E4M3FN,
                    kFnuz = MLA_DTYPE_FP8_E4M3FNUZ, kMx = MLA_DTYPE_MXFP4,
                    kNoV = static_cast<mla_dtype>(0);

// Every format the SPEC names; which of them run is asked of the library, case by case.
// Columns: name, Q name, Q, cache (K, and V unless a V dtype follows), V, host, extra, and the
// rope's dtype where it is not the cache's (DeepSeek-V3.2: an fp8 latent cache beside a bf16
// rope cache, the split cache form), and flags (*_qfp8_mma: fp8 Q with MLA_DECODE_FLAG_FP8_MMA;
// its e4m3 scores where the device has them, e.g. e4m3fnuz on MI300: the plan line says).
constexpr Format kFormats[] = {
    {"bf16", "bf16", kBf16, kBf16, kNoV, true, false},
    {"fp8_e4m3fn", "bf16", kBf16, kFn, kNoV, true, false},
    {"fp8_e4m3fnuz", "bf16", kBf16, kFnuz, kNoV, false, false},
    {"mxfp4", "bf16", kBf16, kMx, kNoV, false, false},
    {"mxfp4k_fp8v_e4m3fn", "bf16", kBf16, kMx, kFn, false, false},
    {"mxfp4k_fp8v_e4m3fnuz", "bf16", kBf16, kMx, kFnuz, false, false},
    {"fp8_e4m3fn_qfp8", "fp8_e4m3fn", kFn, kFn, kNoV, false, true},
    {"fp8_e4m3fn_qfp8_mma", "fp8_e4m3fn", kFn, kFn, kNoV, false, true, kNoV,
     MLA_DECODE_FLAG_FP8_MMA},
    {"fp8_e4m3fnuz_qfp8", "fp8_e4m3fnuz", kFnuz, kFnuz, kNoV, false, true},
    {"fp8_e4m3fnuz_qfp8_mma", "fp8_e4m3fnuz", kFnuz, kFnuz, kNoV, false, true, kNoV,
     MLA_DECODE_FLAG_FP8_MMA},
    {"fp8_e4m3fn_bf16_rope", "bf16", kBf16, kFn, kNoV, false, false, kBf16},
    {"fp8_e4m3fnuz_bf16_rope", "bf16", kBf16, kFnuz, kNoV, false, true, kBf16},
};

// Bytes one call must read from the KV cache per token (splitkv/formats.h, the one statement
// of the formats): the row (1152 bf16, 576 fp8, 512 fp8 + 128 bf16 rope, or 288 bytes of e2m1
// pairs + 18 e8m0 scales), plus the 512-byte fp8 V row of a separate V cache.
double cache_bytes_per_token(const Format& f) {
    mla::splitkv::KvFormat format{};
    if (!mla::splitkv::kv_format_of(f.kv, f.v, f.kpe, &format))
        throw std::runtime_error(std::string("no cache format for ") + f.name);
    return mla::splitkv::kv_traits(format).streamed_bytes;
}

// ---- options -----------------------------------------------------------------------------

struct Options {
    int iters = 0;  // 0 = the mode's default
    bool extra = false;
    bool lse = true;
    bool check = true;
    bool force_host = false;
    bool invariant = false;  // --mla_batch_invariant
    std::string csv = "mla_bench.csv";
    std::string peers = MLA_BENCH_PEERS_CSV;
    std::vector<std::string> formats;  // --mla_formats; empty = the mode's default set
    std::vector<mla_bench::ShapeSpec> shapes;  // --mla_shapes; empty = the default sets
    bool console = true;  // Google Benchmark's output is the console (no other --benchmark_format)
};

void print_usage() {
    std::printf(
        "mla_bench flags (besides Google Benchmark's --benchmark_*):\n"
        "  --mla_iters=N      timed calls per case (GPU default %d, host-reference default %d)\n"
        "  --mla_extra        also run the engine shapes (H 32/64/128, q_len 2/4 and mixed, 64k\n"
        "                     tokens, uneven, pages 1/16/64), the fp8-Q formats and\n"
        "                     fp8_e4m3fnuz_bf16_rope\n"
        "  --mla_formats=A,B  only these formats:",
        kGpuDefaultIters, kHostDefaultIters);
    for (const Format& f : kFormats) std::printf(" %s", f.name);
    std::printf(
        "\n"
        "  --mla_shapes=T,T   only these shapes (instead of the default and --mla_extra sets),\n"
        "                     named as the cases print them:\n"
        "                       bs<N>/kv[uneven]<N>/h<N>/q[1-]<N>[/page<N>[/ordered]]\n"
        "                     kvuneven<N>: lengths spread over 0..N; q1-<N>: q_len 1..N mixed\n"
        "                     in the batch; /page<N>: a paged cache of shuffled pages\n"
        "                     (/ordered: pages in order; bench/shape_tag.h), e.g.\n"
        "                     bs8/kv3000/h64/q3,bs1/kv65536/h16/q1/page16\n"
        "  --mla_peers=PATH   peer data file (default %s)\n"
        "  --mla_csv=PATH     CSV output path (default mla_bench.csv; empty = no CSV)\n"
        "  --mla_no_lse       do not request LSE\n"
        "  --mla_no_check     skip the host reference, the error columns and the fwd / plan_run\n"
        "                     agreement check (for timing probes)\n"
        "  --mla_host         time the host reference even when a GPU is present\n"
        "  --mla_batch_invariant  also time each GPU case in batch-invariant mode\n"
        "                     (MLA_DECODE_FLAG_BATCH_INVARIANT) beside the default mode\n",
        MLA_BENCH_PEERS_CSV);
}

bool known_format(const std::string& name) {
    return std::any_of(std::begin(kFormats), std::end(kFormats),
                       [&](const Format& f) { return name == f.name; });
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
        } else if (value_of("--mla_formats=", &v)) {
            opt->formats.clear();
            for (size_t begin = 0; begin <= v.size();) {
                const size_t end = std::min(v.find(',', begin), v.size());
                opt->formats.push_back(v.substr(begin, end - begin));
                begin = end + 1;
            }
            for (const std::string& name : opt->formats) {
                if (!known_format(name)) {
                    std::fprintf(stderr, "mla_bench: --mla_formats: no format '%s'\n",
                                 name.c_str());
                    print_usage();
                    return false;
                }
            }
        } else if (value_of("--mla_shapes=", &v)) {
            std::string error;
            if (!mla_bench::parse_shape_list(v, &opt->shapes, &error)) {
                std::fprintf(stderr, "mla_bench: --mla_shapes: %s\n", error.c_str());
                return false;
            }
        } else if (value_of("--mla_peers=", &v)) {
            opt->peers = v;
        } else if (value_of("--mla_csv=", &v)) {
            opt->csv = v;
        } else if (a == "--mla_no_lse") {
            opt->lse = false;
        } else if (a == "--mla_no_check") {
            opt->check = false;
        } else if (a == "--mla_host") {
            opt->force_host = true;
        } else if (a == "--mla_batch_invariant") {
            opt->invariant = true;
        } else if (a == "--mla_iters" || a == "--mla_formats" || a == "--mla_shapes" ||
                   a == "--mla_peers" || a == "--mla_csv") {
            std::fprintf(stderr, "mla_bench: %s needs a value: %s=...\n", a.c_str(), a.c_str());
            print_usage();
            return false;
        } else if (a.compare(0, 6, "--mla_") == 0) {
            std::fprintf(stderr, "mla_bench: unknown flag '%s'\n", a.c_str());
            print_usage();
            return false;
        } else {
            if (a == "--help" || a == "-h") print_usage();
            if (value_of("--benchmark_format=", &v)) opt->console = v == "console";
            argv[out++] = argv[i];
        }
    }
    *argc = out;
    argv[out] = nullptr;
    return true;
}

// ---- shapes ------------------------------------------------------------------------------

struct Shape : mla_bench::ShapeSpec {  // batch, lengths, heads, q_len, paging (shape_tag.h)
    bool competition = false;  // one of the eight ranked shapes

    std::string tag() const { return mla_bench::shape_tag(*this); }  // "bs32/kv8192/h16/q1"
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

// --mla_shapes: the shapes asked for, in order; those equal to a competition shape count as
// one (its geomean table needs all eight).
std::vector<Shape> asked_shapes(const std::vector<mla_bench::ShapeSpec>& specs) {
    const std::vector<Shape> ranked = competition_shapes();
    std::vector<Shape> v;
    for (const mla_bench::ShapeSpec& spec : specs) {
        Shape s;
        static_cast<mla_bench::ShapeSpec&>(s) = spec;
        s.competition = std::any_of(ranked.begin(), ranked.end(),
                                    [&](const Shape& r) { return r.tag() == s.tag(); });
        v.push_back(s);
    }
    return v;
}

// Engine shapes (docs/SPEC.md): those with a FlashMLA figure in the peer file first.
std::vector<Shape> extra_shapes() {
    return {
        // the peers' side-by-side run: H 128 decode (one GPU holding every head) and MTP,
        // H 16 MTP, H 128 on 32k tokens, one element of 64k tokens
        shape(64, 4096, 128), shape(32, 8192, 128), shape(64, 4096, 128, 2),
        shape(128, 4096, 16, 2), shape(128, 4096, 16, 4), shape(8, 32768, 128),
        shape(1, 65536, 16),
        // H 32 and 64 (TP4, TP2)
        shape(64, 4096, 32), shape(64, 4096, 64),
        // more H 128 decode and MTP
        shape(128, 4096, 128), shape(32, 4096, 128, 4),
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
    spec.kpe_dtype = f.kpe;
    spec.paged = s.page_size > 0;
    spec.shuffle_pages = !s.ordered_pages;
    spec.page_size = std::max(s.page_size, 1);
    spec.q_std = kInputStd;
    spec.kv_std = kInputStd;
    spec.seed = 20261130;
    return spec;
}

// Bytes one call must read from the KV cache: every element's tokens, each at the format's
// bytes per token (pages and unused slots are not read).
double cache_bytes_of(const Format& f, const ProblemSpec& spec) {
    double tokens = 0.0;
    for (int len : spec.kv_lens) tokens += len;
    return tokens * cache_bytes_per_token(f);
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

// Every element of `o` (dense (rows, 512)) against the reference; rows = total_q * heads. The
// bound is bf16 output rounding, or with fp8_rule SPEC's rule for a path that runs Q in fp8,
// 8e-3 + 2e-2 |ref|.
ErrorStats compare(const std::vector<float>& o, const std::vector<float>& lse,
                   const Reference& ref, bool fp8_rule) {
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
            const double tol =
                row_max == 0.0 ? 0.0
                : fp8_rule     ? 8e-3 + 2e-2 * std::fabs(double(want[i]))
                               : std::max(row_tol, mla_test::bf16_ulp(want[i]));
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
    double floor_us = 0;     // GPU: median of the cold read of cache_bytes; 0 = not measured
    double cache_bytes = 0;  // bytes the call must read from the KV cache
    double min_bytes = 0;    // ... plus Q read and O written
    ErrorStats err;
    // --mla_batch_invariant (GPU): the plan run in batch-invariant mode, its plan and errors.
    double inv_median_us = 0;  // 0 = not measured
    std::string inv_plan;
    ErrorStats inv_err;

    // The library declined the problem (a path not built yet): reported, not timed.
    bool skipped() const { return ran && !success && status == "MLA_STATUS_UNSUPPORTED"; }
    // Counts against the exit status: any failure, a skip included.
    bool failed() const {
        if (!ran) return false;
        return success ? !(err.ok && inv_err.ok) : true;
    }
};

// The peer CSV's bytes floor (docs/METHOD.md): the least traffic of the call at the attainable
// HBM bandwidth (the table's floor is the measured cold read, Row::floor_us).
double bandwidth_floor_us(const Row& r) { return r.min_bytes / kAttainableBytesPerSecond * 1e6; }

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

std::string fmt(const char* f, double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, f, v);
    return buf;
}

// A duration with a readable unit: us below 1 ms, ms below 1 s, s above.
std::string duration_text(double us) {
    if (us < 1e3) return fmt("%.1f us", us);
    if (us < 1e6) return fmt("%.1f ms", us * 1e-3);
    return fmt("%.2f s", us * 1e-6);
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
    mla_bench::PeerTable peers;             // empty when the peer file could not be read

#if defined(MLA_HAVE_GPU_RUNTIME)
    std::unique_ptr<mla_test::DeviceProblem> dev;
    mla_test::DeviceBuffer flush;
    mla_test::DeviceBuffer floor_data;  // the floor read's buffer, grown to the largest case
    mla_test::DeviceBuffer floor_sum;   // the floor read's result word
    int multiprocessors = 0;
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
        floor_data = mla_test::DeviceBuffer();
        floor_sum = mla_test::DeviceBuffer();
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

// The benchmark label of a plan: "route xN variant R rows/CTA", as much as the line states.
std::string plan_label(const std::string& plan) {
    const PlanSummary p = parse_plan(plan);
    std::string label = mla_bench::route_text(plan);
    if (p.splits > 0) label += " x" + std::to_string(p.splits);
    if (!p.variant.empty()) label += " " + p.variant;
    if (p.rows_per_cta > 0) label += " " + std::to_string(p.rows_per_cta) + " rows/CTA";
    return label;
}

// The `ok` of a case. In host-reference mode the reference is compared with itself (its bf16
// output with its own FP32 output), which "(self-check)" says.
std::string ok_text(const Bench& b, const Row& r) {
    if (!r.success) return r.skipped() ? "skipped (UNSUPPORTED)" : r.status;
    if (!r.err.checked) return "unchecked";
    if (!r.inv_err.ok) return "NO (batch-invariant mode)";
    return std::string(r.err.ok ? "yes" : "NO") + (b.gpu_mode ? "" : " (self-check)");
}

// The console label of a finished case: its times with their units (and on the GPU the
// one-shot call, the floor and the bandwidth), the plan, the errors and `ok`.
std::string console_label(const Bench& b, const Row& row) {
    std::string label = "median " + duration_text(row.median_us) + " (min " +
                        duration_text(row.min_us) + ", max " + duration_text(row.max_us) + ")";
    if (b.gpu_mode) {
        label += ", fwd " + duration_text(row.fwd_median_us);
        if (row.inv_median_us > 0)
            label += ", batch-invariant " + duration_text(row.inv_median_us) +
                     fmt(" (x%.2f)", row.inv_median_us / row.median_us);
        if (row.floor_us > 0)
            label += ", floor " + duration_text(row.floor_us) +
                     fmt(" (x%.2f)", row.median_us / row.floor_us);
        label += fmt(", %.2f TB/s", row.min_bytes / (row.median_us * 1e-6) / 1e12);
    } else {
        label += " host wall clock";
    }
    const std::string plan = plan_label(row.plan);
    if (!plan.empty()) label += "; " + plan;
    if (row.err.checked)
        label += fmt("; max abs err %.2e", row.err.max_abs) +
                 fmt(", row-relative %.2e", row.err.max_rel_row);
    if (row.err.lse_checked) label += fmt(", LSE %.2e", row.err.lse_max_abs);
    if (row.inv_err.checked)
        label += fmt("; batch-invariant max abs err %.2e", row.inv_err.max_abs);
    label += "; ok: " + ok_text(b, row);
    if (row.err.checked && !row.err.ok) {
        char buf[200];
        std::snprintf(buf, sizeof buf, " (%zu elements off, first at %zu: %.6g vs %.6g)",
                      row.err.bad, row.err.first_bad, row.err.first_bad_got,
                      row.err.first_bad_want);
        label += buf;
    }
    return label;
}

// Counters for --benchmark_out files, and the console label.
void fill_common_counters(benchmark::State& state, const Bench& b, const Row& row) {
    state.counters["median_us"] = row.median_us;
    state.counters["min_us"] = row.min_us;
    state.counters["max_us"] = row.max_us;
    if (const int splits = parse_plan(row.plan).splits) state.counters["splits"] = splits;
    if (row.err.checked) {
        state.counters["max_abs_err"] = row.err.max_abs;
        state.counters["max_rel_err_row"] = row.err.max_rel_row;
        state.counters["lse_max_abs_err"] = row.err.lse_max_abs;
        state.counters["ok"] = row.err.ok ? 1.0 : 0.0;
    }
    state.SetLabel(console_label(b, row));
}

// The console: Google Benchmark's name and time columns and our label, without the counters
// (printed with SI prefixes there: 352941 us as "352.941k", an error of 0.0032 as "3.2m"; the
// label holds the same figures with units). --benchmark_out files keep the counters.
class LabelConsoleReporter : public benchmark::ConsoleReporter {
  public:
    LabelConsoleReporter() : benchmark::ConsoleReporter(OO_None) {}
    void ReportRuns(const std::vector<Run>& runs) override {
        std::vector<Run> shown = runs;
        for (Run& r : shown) r.counters.clear();
        benchmark::ConsoleReporter::ReportRuns(shown);
    }
};

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
    // At least 512 MiB like the peers' runs, and always several times the L2.
    const size_t flush_bytes = std::max(kFlushBytes, size_t(4) * static_cast<size_t>(l2));
    try {
        b.flush = mla_test::DeviceBuffer(flush_bytes);
        b.floor_sum = mla_test::DeviceBuffer(sizeof(unsigned));
    } catch (const std::exception& e) {
        *message = e.what();
        return false;
    }
    if (!gpu_ok(gpu::stream_create(&b.stream), "stream_create", message)) return false;
    if (!gpu_ok(gpu::event_create(&b.ev_start), "event_create", message)) return false;
    if (!gpu_ok(gpu::event_create(&b.ev_stop), "event_create", message)) return false;
    if (!gpu_ok(gpu::multiprocessor_count(&b.multiprocessors, dev), "multiprocessor_count",
                message))
        return false;
    std::printf("device %d: %d multiprocessors, L2 %.1f MiB; L2 flush: memset_async of %zu MiB "
                "before every timed call\n",
                dev, b.multiprocessors, l2 / 1048576.0, flush_bytes >> 20);
    return true;
}

// The floor read's buffer, at least `bytes` long. Kept across cases and grown to the largest
// (reading the first `bytes` of a longer buffer moves the same bytes); filled once with a
// non-zero byte so that no case reads memory that might be special-cased as all zero.
const void* floor_buffer(Bench& b, size_t bytes) {
    if (b.floor_data.bytes() < bytes) {
        b.floor_data = mla_test::DeviceBuffer();  // the old one freed before the new one
        b.floor_data = mla_test::DeviceBuffer(bytes);
        b.floor_data.fill_bytes(0x5A);
    }
    return b.floor_data.get();
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
        dp.params.flags |= row.format.flags;
        dp.poison_outputs(0xFF);
        row.min_bytes = hp.min_bytes_moved();
        row.cache_bytes = cache_bytes_of(row.format, spec);

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
        //    mla_decode_plan_run. The one-shot mla_decode_fwd (plan cache + run) is
        //    timed after it, same method, as a second figure; then the floor.
        PlanHandle plan;
        if ((st = mla_decode_plan_create(&dp.params, &plan.p)) != MLA_STATUS_SUCCESS ||
            (st = mla_decode_plan_prepare(plan.p, &dp.params, dp.workspace.get(),
                                          dp.workspace_bytes, b.stream)) != MLA_STATUS_SUCCESS)
            return fail_case(state, row, mla_status_string(st), mla_last_error_message());
        // Each call returns false with fail_status / msg set on failure.
        std::string fail_status;
        auto library = [&](mla_status cs) {
            if (cs == MLA_STATUS_SUCCESS) return true;
            fail_status = mla_status_string(cs);
            msg = mla_last_error_message();
            return false;
        };
        auto device = [&](gpu::error_t e, const char* what) {
            if (gpu_ok(e, what, &msg)) return true;
            fail_status = "DEVICE_ERROR";
            return false;
        };
        auto plan_run = [&]() {
            return library(mla_decode_plan_run(plan.p, &dp.params, dp.workspace.get(),
                                               dp.workspace_bytes, b.stream));
        };
        auto fwd = [&]() { return library(dp.run(b.stream)); };
        const size_t floor_bytes = static_cast<size_t>(row.cache_bytes);
        const void* floor_data = floor_bytes > 0 ? floor_buffer(b, floor_bytes) : nullptr;
        auto floor_read = [&]() {
            return device(mla_bench::launch_floor_read(
                              floor_data, floor_bytes, static_cast<unsigned*>(b.floor_sum.get()),
                              b.multiprocessors, b.stream),
                          "floor read launch");
        };
        // One timed call.
        auto timed = [&](auto&& call, double* us_out) {
            float ms = 0.0f;
            if (!device(gpu::memset_async(b.flush.get(), 0, b.flush.bytes(), b.stream),
                        "memset_async (L2 flush)") ||
                !device(gpu::event_record(b.ev_start, b.stream), "event_record") || !call() ||
                !device(gpu::event_record(b.ev_stop, b.stream), "event_record") ||
                !device(gpu::event_synchronize(b.ev_stop), "event_synchronize") ||
                !device(gpu::event_elapsed_ms(&ms, b.ev_start, b.ev_stop), "event_elapsed_ms"))
                return false;
            *us_out = ms * 1e3;
            return true;
        };
        // b.iters timed calls into *us, then a stream synchronize.
        auto timed_calls = [&](auto&& call, std::vector<double>* us) {
            for (int i = 0; i < b.iters; ++i) {
                double t = 0.0;
                if (!timed(call, &t)) return false;
                us->push_back(t);
            }
            return device(gpu::stream_synchronize(b.stream), "stream_synchronize");
        };
        std::vector<double> us;
        us.reserve(static_cast<size_t>(b.iters));
        for (auto _ : state) {
            double t = 0.0;
            if (!timed(plan_run, &t)) return fail_case(state, row, fail_status, msg);
            state.SetIterationTime(t * 1e-6);
            us.push_back(t);
        }
        if (!device(gpu::stream_synchronize(b.stream), "stream_synchronize"))
            return fail_case(state, row, fail_status, msg);
        const std::vector<float> o_plan = dp.download_o();
        std::vector<double> us_fwd;
        if (!timed_calls(fwd, &us_fwd)) return fail_case(state, row, fail_status, msg);
        row.fwd_median_us = median_of(us_fwd);
        // The floor: one warm-up read (the kernel's first launch loads its module), then the
        // same number of timed reads as the call.
        if (floor_bytes > 0) {
            std::vector<double> us_floor;
            if (!floor_read() || !timed_calls(floor_read, &us_floor))
                return fail_case(state, row, fail_status, msg);
            row.floor_us = median_of(us_floor);
        }

        // 5. Statistics and accuracy.
        row.iters = static_cast<int>(us.size());
        row.median_us = median_of(us);
        row.min_us = *std::min_element(us.begin(), us.end());
        row.max_us = *std::max_element(us.begin(), us.end());
        const std::vector<float> o = dp.download_o();
        const std::vector<float> lse = dp.download_lse();
        if (b.opt.check && o != o_plan)
            return fail_case(state, row, "ERROR",
                             "mla_decode_fwd and mla_decode_plan_run wrote different O");
        if (b.opt.check)
            row.err = compare(o, lse, b.reference_for(row.name, hp), row.format.flags != 0);

        // 6. --mla_batch_invariant: the plan run timed the same way in batch-invariant mode,
        //    with a plan and a workspace of its own, then its outputs checked.
        if (b.opt.invariant) {
            mla_decode_params ip = dp.params;
            ip.flags = MLA_DECODE_FLAG_BATCH_INVARIANT;
            PlanHandle inv;
            size_t inv_bytes = 0;
            if (!library(mla_decode_plan_create(&ip, &inv.p)) ||
                !library(mla_decode_plan_workspace_size(inv.p, &inv_bytes)))
                return fail_case(state, row, fail_status, msg);
            const mla_test::DeviceBuffer inv_workspace(inv_bytes);
            auto inv_run = [&]() {
                return library(mla_decode_plan_run(inv.p, &ip, inv_workspace.get(), inv_bytes,
                                                   b.stream));
            };
            dp.poison_outputs(0xFF);
            std::vector<double> us_inv;
            if (!library(mla_decode_plan_prepare(inv.p, &ip, inv_workspace.get(), inv_bytes,
                                                 b.stream)) ||
                !inv_run() || !timed_calls(inv_run, &us_inv))  // a warm-up, then timed calls
                return fail_case(state, row, fail_status, msg);
            row.inv_median_us = median_of(us_inv);
            row.inv_plan = describe_plan(ip);
            if (b.opt.check)
                row.inv_err = compare(dp.download_o(), dp.download_lse(),
                                      b.reference_for(row.name, hp), false);
            state.counters["invariant_us"] = row.inv_median_us;
        }
        row.success = true;
        row.status = mla_status_string(MLA_STATUS_SUCCESS);

        state.SetBytesProcessed(static_cast<int64_t>(row.min_bytes) * state.iterations());
        fill_common_counters(state, b, row);
        state.counters["TBps"] = row.min_bytes / (row.median_us * 1e-6) / 1e12;
        if (row.floor_us > 0) {
            state.counters["floor_us"] = row.floor_us;
            state.counters["x_floor"] = row.median_us / row.floor_us;
        }
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
        row.cache_bytes = cache_bytes_of(row.format, spec);
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
        if (b.opt.check)
            row.err = compare(dense, lse, b.reference_for(row.name, hp), row.format.flags != 0);
        row.success = true;
        row.status = mla_status_string(MLA_STATUS_SUCCESS);
        fill_common_counters(state, b, row);
    } catch (const std::exception& e) {
        b.drop_inputs();
        return fail_case(state, row, "ERROR", e.what());
    }
}

// ---- report ------------------------------------------------------------------------------

// A peer's median for the row's shape from the peer file, 0 when it has none. The peers ran
// every element at the same length and q_len, each on its own cache layout; our figures to
// set beside them are those of the contiguous cache (uneven, mixed and paged shapes: none).
double peer_us(const Bench& b, const char* peer, const Row& r) {
    const Shape& s = r.shape;
    // Host-reference mode shows none: a peer's H200 figure beside a host wall-clock time would
    // read as a comparison.
    if (!b.gpu_mode || s.uneven || s.mixed_q || s.page_size > 0) return 0.0;
    return b.peers.median_us(peer, s.bs, s.q_len, s.kv_len, s.heads);
}

// A number for the table, "-" when absent (v <= 0).
std::string cell(const char* f, double v) { return v > 0 ? fmt(f, v) : "-"; }
std::string cell(const std::string& v) { return v.empty() ? "-" : v; }

// One table for both modes; what a mode does not measure shows "-" (host-reference mode: the
// floor, the ratios and the plan).
void print_cases(const Bench& b) {
    std::printf("\n## libmla_decode %s (backend %s): %s\n\n", mla_version_string(),
                mla_backend_name(),
                b.gpu_mode ? "mla_decode_plan_run (prepared once per step; fwd us = one-shot "
                             "mla_decode_fwd), device events, L2 flushed before every call; "
                             "floor = cold read of the case's cache bytes, same method"
                           : "host reference mla_decode_reference, wall clock (NOT GPU times); "
                             "ok compares it with its own FP32 output (a self-check)");
    // --mla_batch_invariant: the mode's plan run, its ratio to the default mode's and its
    // splits, after "fwd us".
    const bool inv = b.opt.invariant && b.gpu_mode;
    std::printf("| format | shape | median us | min us | max us | fwd us | %sTB/s | floor us | "
                "x floor | FlashMLA bf16 us | ours / FlashMLA | route | variant | rows/CTA | "
                "splits | max abs err | max rel err (row) | lse err | ok |\n",
                inv ? "inv us | inv / default | inv splits | " : "");
    std::printf("|---|---|---:|---:|---:|---:|%s---:|---:|---:|---:|---:|---|---|---:|---:|---:|"
                "---:|---:|---|\n",
                inv ? "---:|---:|---:|" : "");
    for (const Row& r : b.rows) {
        if (!r.ran) continue;
        const bool timed = r.success && b.gpu_mode;  // a GPU figure of ours exists
        const double flashmla = peer_us(b, mla_bench::kPeerFlashMla, r);
        const PlanSummary plan = parse_plan(r.plan);
        std::vector<std::string> cells = {
            r.format.name,
            r.shape.label(),
            r.success ? fmt("%.1f", r.median_us) : "-",
            r.success ? fmt("%.1f", r.min_us) : "-",
            r.success ? fmt("%.1f", r.max_us) : "-",
            timed ? fmt("%.1f", r.fwd_median_us) : "-",
            timed ? fmt("%.2f", r.min_bytes / (r.median_us * 1e-6) / 1e12) : "-",
            cell("%.1f", timed ? r.floor_us : 0.0),
            cell("%.2f", timed && r.floor_us > 0 ? r.median_us / r.floor_us : 0.0),
            cell("%.1f", flashmla),
            cell("%.2f", timed && flashmla > 0 ? r.median_us / flashmla : 0.0),
            cell(r.plan.empty() ? "" : mla_bench::route_text(r.plan)),
            cell(plan.variant),
            cell("%.0f", plan.rows_per_cta),
            cell("%.0f", plan.splits),
            r.success && r.err.checked ? fmt("%.2e", r.err.max_abs) : "-",
            r.success && r.err.checked ? fmt("%.2e", r.err.max_rel_row) : "-",
            r.success && r.err.lse_checked ? fmt("%.2e", r.err.lse_max_abs) : "-",
            ok_text(b, r),
        };
        if (inv) {
            const bool measured = timed && r.inv_median_us > 0;
            const std::vector<std::string> inv_cells = {
                cell("%.1f", measured ? r.inv_median_us : 0.0),
                cell("%.2f", measured ? r.inv_median_us / r.median_us : 0.0),
                cell("%.0f", parse_plan(r.inv_plan).splits),
            };
            cells.insert(cells.begin() + 6, inv_cells.begin(), inv_cells.end());
        }
        std::string line = "|";
        for (const std::string& c : cells) line += " " + c + " |";
        std::printf("%s\n", line.c_str());
    }
}

// Geometric means of one format over a group of shapes (the successful rows of the group).
struct Geomean {
    double log_sum = 0.0;
    int n = 0;
    void add(double v) {
        log_sum += std::log(v);
        ++n;
    }
    double value() const { return n > 0 ? std::exp(log_sum / n) : 0.0; }
};

// "value", "value (n of m)" when only n of the m rows have one, "-" when none has.
std::string geomean_cell(const char* f, const Geomean& g, int rows) {
    if (g.n == 0) return "-";
    std::string text = fmt(f, g.value());
    if (g.n < rows) text += " (" + std::to_string(g.n) + " of " + std::to_string(rows) + ")";
    return text;
}

// Per format, over the competition shapes (all eight must have succeeded) or over the engine
// shapes that ran: ours, the floor, x floor, and per peer its figure and ours / peer (both
// over the rows the peer file has a figure for).
void print_geomean_table(const Bench& b, bool competition) {
    std::vector<std::string> formats;
    for (const Row& r : b.rows)
        if (r.ran && r.shape.competition == competition &&
            std::find(formats.begin(), formats.end(), r.format.name) == formats.end())
            formats.push_back(r.format.name);
    if (formats.empty()) return;
    struct Peer {
        const char* name;   // in the peer file
        const char* title;  // of its figure's column
        const char* short_title;  // of the ratio's
    };
    const Peer peers[] = {{mla_bench::kPeerFlashMla, "FlashMLA bf16", "FlashMLA"},
                          {mla_bench::kPeerTorch, "torch bf16", "torch"},
                          {mla_bench::kPeerSeedSplitKv, "seed Triton fp8 split-KV best", "seed"}};
    std::printf("\n### Geometric means over %s\n\n",
                competition          ? "the eight competition shapes (H 16, q_len 1)"
                : b.opt.shapes.empty() ? "the engine shapes (--mla_extra) that ran"
                                       : "the --mla_shapes shapes that ran (competition shapes "
                                         "aside)");
    std::string head = "| format | shapes | ours us | floor us | x floor |";
    std::string rule = "|---|---:|---:|---:|---:|";
    for (const Peer& p : peers) {
        head += std::string(" ") + p.title + " us | ours / " + p.short_title + " |";
        rule += "---:|---:|";
    }
    std::printf("%s\n%s\n", head.c_str(), rule.c_str());
    for (const std::string& name : formats) {
        int rows = 0, ran = 0, registered = 0;  // succeeded, ran, and registered (filter aside)
        Geomean ours, floor, x_floor, peer[std::size(peers)], x_peer[std::size(peers)];
        for (const Row& r : b.rows) {
            if (r.format.name != name || r.shape.competition != competition) continue;
            ++registered;
            ran += r.ran ? 1 : 0;
            if (!r.success) continue;
            ++rows;
            ours.add(r.median_us);
            if (b.gpu_mode && r.floor_us > 0) {
                floor.add(r.floor_us);
                x_floor.add(r.median_us / r.floor_us);
            }
            for (size_t i = 0; i < std::size(peers); ++i) {
                const double us = peer_us(b, peers[i].name, r);
                if (us <= 0) continue;
                peer[i].add(us);
                if (b.gpu_mode) x_peer[i].add(r.median_us / us);  // host wall clock: no ratio
            }
        }
        std::string line = "| " + name + " | ";
        if (competition && rows != 8) {
            // Why not all 8: not asked for (--mla_shapes), left out by --benchmark_filter, or
            // failed.
            if (registered < 8) line += std::to_string(registered) + " of 8 asked for, ";
            line += ran < registered ? std::to_string(ran) + " ran, " +
                                           std::to_string(registered - ran) + " filtered out"
                                     : std::to_string(rows) + " succeeded";
            if (rows < ran) line += ", " + std::to_string(ran - rows) + " failed";
            line += " (a geomean needs all 8) | - | - | -";
            for (size_t i = 0; i < std::size(peers); ++i) line += " | - | -";
        } else {
            line += std::to_string(rows) + " | " + geomean_cell("%.1f", ours, rows) + " | " +
                    geomean_cell("%.1f", floor, rows) + " | " +
                    geomean_cell("%.2f", x_floor, rows);
            for (size_t i = 0; i < std::size(peers); ++i)
                line += " | " + geomean_cell("%.1f", peer[i], rows) + " | " +
                        geomean_cell("%.2f", x_peer[i], rows);
        }
        std::printf("%s |\n", line.c_str());
    }
}

// --mla_batch_invariant: per format, the geometric mean of the per-shape ratio batch-invariant
// mode / default mode (plan run medians), over the competition shapes and the engine shapes.
void print_invariant_geomeans(const Bench& b) {
    std::vector<std::string> formats;
    for (const Row& r : b.rows)
        if (r.ran && std::find(formats.begin(), formats.end(), r.format.name) == formats.end())
            formats.push_back(r.format.name);
    std::printf("\n## Batch-invariant mode / default mode (MLA_DECODE_FLAG_BATCH_INVARIANT, "
                "plan run medians), geomean of the per-shape ratios\n\n"
                "| format | competition shapes | engine shapes |\n|---|---:|---:|\n");
    for (const std::string& name : formats) {
        Geomean ratio[2];  // competition, engine
        int rows[2] = {0, 0};
        for (const Row& r : b.rows) {
            if (!r.ran || name != r.format.name) continue;
            const int group = r.shape.competition ? 0 : 1;
            ++rows[group];
            if (r.success && r.inv_median_us > 0) ratio[group].add(r.inv_median_us / r.median_us);
        }
        std::printf("| %s | %s | %s |\n", name.c_str(),
                    geomean_cell("%.2f", ratio[0], rows[0]).c_str(),
                    geomean_cell("%.2f", ratio[1], rows[1]).c_str());
    }
}

void print_geomeans(const Bench& b) {
    print_geomean_table(b, true);
    print_geomean_table(b, false);
    if (b.opt.invariant && b.gpu_mode) print_invariant_geomeans(b);
    const std::string source =
        b.peers.size() > 0 ? "peer figures from " + b.opt.peers : "no peer figures";
    if (b.gpu_mode) {
        std::printf("\n(us, medians; x floor = ours / floor (1.00: at the floor, the cold read "
                    "of the cache bytes measured in this run); ours / peer below 1.00 = faster "
                    "than the peer; ratios are geometric means of the per-shape ratios; %s)\n",
                    source.c_str());
    } else {
        std::printf("\n(host-reference wall clock: not comparable with the peers' GPU figures, so "
                    "no floor and no ratios; %s)\n",
                    source.c_str());
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

// CSV with the peer CSV's columns first (docs/METHOD.md; same names, same order; its bytes
// floor at 4.27 TB/s), then ours: the measured floor (cache_bytes, floor_read_us, x_floor) and
// FlashMLA's figure come last.
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
                 "q_format,cache,q_lens,route,splits,message,plan,fwd_median_us,variant,"
                 "rows_per_cta,tile,cache_bytes,floor_read_us,x_floor,flashmla_bf16_us,"
                 "x_flashmla,batch_invariant_median_us,batch_invariant_x_default,"
                 "batch_invariant_splits,batch_invariant_ok\n");
    const char* peer = b.gpu_mode ? "libmla_decode" : "libmla_decode_host_reference";
    const char* timing = b.gpu_mode ? "device_events_l2_flushed" : "host_wall_clock";
    for (const Row& r : b.rows) {
        if (!r.ran) continue;
        const Shape& s = r.shape;
        std::fprintf(f, "%d,%d,%d,%d,%s,%s,", s.bs, s.q_len, s.kv_len, s.heads, peer,
                     r.format.name);
        const double floor_us = bandwidth_floor_us(r);
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
        const PlanSummary plan = parse_plan(r.plan);
        auto count = [](int n) { return n > 0 ? std::to_string(n) : std::string(); };
        std::fprintf(f, "%d,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,", std::max(s.page_size, 1),
                     s.uneven ? "uneven" : "equal", timing, r.status.c_str(),
                     r.format.q_name,
                     s.page_size > 0 ? (s.ordered_pages ? "paged_ordered" : "paged")
                                     : "contiguous",
                     s.mixed_q ? "mixed" : "equal", csv_field(plan.route).c_str(),
                     count(plan.splits).c_str(), csv_field(r.message).c_str(),
                     csv_field(r.plan).c_str(),
                     r.success && b.gpu_mode ? fmt("%.2f", r.fwd_median_us).c_str() : "");
        // variant .. x_flashmla (empty where not stated or not measured)
        const bool timed = r.success && b.gpu_mode;
        const double flashmla = peer_us(b, mla_bench::kPeerFlashMla, r);
        std::fprintf(f, "%s,%s,%s,%.0f,%s,%s,%s,%s,", csv_field(plan.variant).c_str(),
                     count(plan.rows_per_cta).c_str(), count(plan.tile).c_str(), r.cache_bytes,
                     timed && r.floor_us > 0 ? fmt("%.2f", r.floor_us).c_str() : "",
                     timed && r.floor_us > 0 ? fmt("%.3f", r.median_us / r.floor_us).c_str() : "",
                     flashmla > 0 ? fmt("%.2f", flashmla).c_str() : "",
                     timed && flashmla > 0 ? fmt("%.3f", r.median_us / flashmla).c_str() : "");
        // batch_invariant_* (--mla_batch_invariant; empty where not measured or not checked)
        const bool inv = timed && r.inv_median_us > 0;
        std::fprintf(f, "%s,%s,%s,%s\n", inv ? fmt("%.2f", r.inv_median_us).c_str() : "",
                     inv ? fmt("%.3f", r.inv_median_us / r.median_us).c_str() : "",
                     count(parse_plan(r.inv_plan).splits).c_str(),
                     inv && r.inv_err.checked ? (r.inv_err.ok ? "1" : "0") : "");
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

// --mla_formats: exactly the formats named. Otherwise GPU mode: every format (the fp8-Q ones
// with --mla_extra), each case asking the library; host-reference mode: bf16 and fp8 e4m3fn
// (the reference is slow), every format with --mla_extra.
bool wanted(const Bench& b, const Format& f) {
    const std::vector<std::string>& only = b.opt.formats;
    if (!only.empty()) return std::find(only.begin(), only.end(), f.name) != only.end();
    return b.opt.extra || (!f.extra && (b.gpu_mode || f.host));
}

void register_cases(Bench& b) {
    std::vector<Shape> shapes = competition_shapes();
    if (!b.opt.shapes.empty()) {
        shapes = asked_shapes(b.opt.shapes);
    } else if (b.opt.extra) {
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
            bm->Iterations(b.iters)->UseManualTime()->Unit(
                b.gpu_mode ? benchmark::kMicrosecond : benchmark::kMillisecond);
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
    std::string peers_message;
    if (b.peers.load(b.opt.peers, &peers_message)) {
        std::printf("peer figures: %s (%zu)\n", b.opt.peers.c_str(), b.peers.size());
    } else {
        std::printf("notice: no peer figures (%s); the peer columns show \"-\"\n",
                    peers_message.c_str());
    }

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

    if (b.opt.invariant && !b.gpu_mode)
        std::printf("--mla_batch_invariant: GPU mode only (the host reference ignores the flag); "
                    "not timed\n");
    b.iters = b.opt.iters > 0 ? b.opt.iters : (b.gpu_mode ? kGpuDefaultIters : kHostDefaultIters);
    if (b.gpu_mode && b.iters < kSpecMinIters) {
        std::printf("note: --mla_iters=%d is below the %d calls docs/SPEC.md asks for\n", b.iters,
                    kSpecMinIters);
    }
    std::printf("%d timed call%s per case%s; LSE %s; %s\n", b.iters, b.iters == 1 ? "" : "s",
                b.gpu_mode ? " after one warm-up call" : " (wall clock, no warm-up)",
                b.opt.lse ? "requested" : "not requested",
                !b.opt.check ? "no accuracy check (--mla_no_check)"
                : b.gpu_mode ? "every element of O and LSE checked against the FP32 host reference"
                             : "ok is a self-check: the reference's bf16 O and its LSE against "
                               "its own FP32 output (the rounding and plumbing, not the math; "
                               "tests/test_vectors.cpp checks the reference against independent "
                               "fp64 vectors)");
    std::fflush(stdout);

    register_cases(b);
    if (b.opt.console) {
        LabelConsoleReporter console;
        benchmark::RunSpecifiedBenchmarks(&console);
    } else {
        benchmark::RunSpecifiedBenchmarks();
    }
    benchmark::Shutdown();
    b.release();  // device memory back before the runtime shuts down

    int ran = 0, skipped = 0, failed = 0;
    for (const Row& r : b.rows) ran += r.ran ? 1 : 0;
    const int filtered = static_cast<int>(b.rows.size()) - ran;  // left out by --benchmark_filter
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
    std::printf("%d case%s ran (%d skipped as unsupported), %d failed", ran, ran == 1 ? "" : "s",
                skipped, failed);
    if (filtered > 0) std::printf("; %d filtered out by --benchmark_filter", filtered);
    std::printf("\n");
    std::fflush(stdout);
    return (good && failed == 0) ? 0 : 1;
}
