// Thread safety (mla_decode.h: every function is thread-safe): several threads call the library
// at once, and every result must be what the same call gives alone.
//  - host (always): threads running the host reference on their own problems (bitwise equal to
//    a serial run), threads making plans and asking workspace sizes for more shapes than the
//    process-wide plan cache holds (each status and size equal to a serial call's; without a
//    GPU both stop at the device check), threads whose failing calls must each read back their
//    own last-error message, and threads sharing the library's caches of plans and of device
//    facts (the classes behind them, with stand-in makers: host code, no GPU needed);
//  - GPU (skips without one): besides those, threads that each create plans, prepare and run
//    them, and call mla_decode_fwd on their own non-blocking streams with their own buffers,
//    every output checked against the host reference.
// Built with ThreadSanitizer (MLA_SANITIZE_THREAD, tests/run.sh) the host part checks the
// library's shared state (device facts, plan cache, environment switches, last error) for races.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "arch/runtime.h"  // MLA_HAVE_GPU_RUNTIME in GPU builds
#include "compare.h"
#include "device_info.h"
#include "mla_decode.h"
#include "mla_problem.h"
#include "plan.h"
#include "plan_cache.h"
#include "run_together.h"

#if defined(MLA_HAVE_GPU_RUNTIME)
#include "device_problem.h"
#include "gpu_graph.h"
#include "gpu_test.h"
#endif

namespace mla_test {
namespace {

constexpr mla_dtype kNoV = MLA_DTYPE_NONE;


// A small problem per index: formats, heads (8 .. 128), paging and q_len vary with `i`.
ProblemSpec varied_spec(int i) {
    static const mla_dtype kv[] = {MLA_DTYPE_BF16, MLA_DTYPE_FP8_E4M3FN, MLA_DTYPE_FP8_E4M3FNUZ,
                                   MLA_DTYPE_MXFP4, MLA_DTYPE_MXFP4};
    static const int heads[] = {16, 8, 64, 16, 128};
    ProblemSpec s;
    s.kv_dtype = kv[i % 5];
    s.v_dtype = i % 5 == 4 ? MLA_DTYPE_FP8_E4M3FN : kNoV;
    s.num_heads = heads[i % 5];
    s.kv_lens = {37 + 11 * i, 0, 130 + 3 * i, 1};
    s.q_lens = {1 + i % 3, 1, 2, 1};
    s.paged = i % 2 == 1;
    s.page_size = s.paged ? 16 : 1;
    s.seed = 100 + static_cast<uint64_t>(i);
    return s;
}

// Host fields of shape `i` (pointers NULL), for the workspace query and plan creation: more
// distinct shapes than the plan cache keeps.
mla_decode_params shape_params(int i) {
    mla_decode_params p;
    mla_decode_params_init(&p);
    p.batch_size = 1 + i % 7;
    p.total_q = p.batch_size * (1 + i % 3);
    p.max_q_len = 1 + i % 3;
    p.max_kv_len = 64 * (1 + i);
    p.num_heads = 8 << (i % 5);
    p.num_slots = 1 << 20;
    p.kv_dtype = i % 2 == 0 ? MLA_DTYPE_FP8_E4M3FN : MLA_DTYPE_BF16;
    p.kv_stride_slot = 576;
    p.q_stride_head = 576;
    p.q_stride_token = static_cast<int64_t>(p.num_heads) * 576;
    p.o_stride_head = 512;
    p.o_stride_token = static_cast<int64_t>(p.num_heads) * 512;
    return p;
}

constexpr int kShapes = 48;  // more than the plan cache's 32 entries

struct Answer {
    mla_status status;
    size_t bytes;
};

// Workspace size, and plan creation with the plan's workspace size, of one shape.
Answer workspace_answer(const mla_decode_params& p) {
    Answer a{MLA_STATUS_SUCCESS, 0};
    a.status = mla_decode_workspace_size(&p, &a.bytes);
    return a;
}

Answer plan_answer(const mla_decode_params& p) {
    Answer a{MLA_STATUS_SUCCESS, 0};
    mla_decode_plan* plan = nullptr;
    a.status = mla_decode_plan_create(&p, &plan);
    if (a.status == MLA_STATUS_SUCCESS) {
        (void)mla_decode_plan_workspace_size(plan, &a.bytes);
        (void)mla_decode_plan_destroy(plan);
    }
    return a;
}

std::string differs(const char* what, int shape, const Answer& got, const Answer& want) {
    if (got.status == want.status && got.bytes == want.bytes) return "";
    return std::string(what) + " of shape " + std::to_string(shape) + ": " +
           mla_status_string(got.status) + " / " + std::to_string(got.bytes) + " bytes, alone " +
           mla_status_string(want.status) + " / " + std::to_string(want.bytes) + " bytes";
}

// ---- host ------------------------------------------------------------------------------------

// Threads running the reference at once on problems of every format (each with its own worker
// threads inside): every output bit equal to the same call made alone.
TEST(Threads, ReferenceCallsAtOnce) {
    constexpr int kThreads = 6;
    std::vector<HostProblem> problems;
    std::vector<Reference> alone;
    for (int i = 0; i < kThreads; ++i) {
        problems.push_back(make_problem(varied_spec(i)));
        alone.push_back(run_reference(problems.back()));
    }
    expect_no_failures(run_together(kThreads, [&](int i) -> std::string {
        for (int round = 0; round < 3; ++round) {
            const Reference got = run_reference(problems[i]);
            if (got.o != alone[i].o || std::memcmp(got.lse.data(), alone[i].lse.data(),
                                                   got.lse.size() * sizeof(float)) != 0)
                return "round " + std::to_string(round) + ": results differ from a lone call";
        }
        return "";
    }));
}

// Threads asking workspace sizes and making plans for 48 shapes each, in different orders, so
// the plan cache (32 entries) is filled, hit and replaced concurrently: every answer equals
// the serial one (SUCCESS and its size with a GPU; NO_DEVICE without).
TEST(Threads, WorkspaceSizesAndPlansAtOnce) {
    constexpr int kThreads = 4;
    std::vector<Answer> ws_alone, plan_alone;
    for (int s = 0; s < kShapes; ++s) {
        ws_alone.push_back(workspace_answer(shape_params(s)));
        plan_alone.push_back(plan_answer(shape_params(s)));
    }
    expect_no_failures(run_together(kThreads, [&](int i) -> std::string {
        for (int k = 0; k < 2 * kShapes; ++k) {
            const int s = (k * (2 * i + 1) + 5 * i) % kShapes;  // a thread's own order
            const mla_decode_params p = shape_params(s);
            std::string f = differs("workspace size", s, workspace_answer(p), ws_alone[s]);
            if (f.empty()) f = differs("plan", s, plan_answer(p), plan_alone[s]);
            if (!f.empty()) return f;
        }
        return "";
    }));
}

// Each thread's failing calls name its own value, and a success clears only its own message.
TEST(Threads, LastErrorMessageIsEachThreadsOwn) {
    constexpr int kThreads = 6;
    const HostProblem hp = make_problem(varied_spec(0));
    expect_no_failures(run_together(kThreads, [&](int i) -> std::string {
        std::vector<float> o(hp.o_elements()), lse(hp.lse_elements());
        for (int round = 0; round < 50; ++round) {
            mla_decode_params p = hp.host_params(o.data(), MLA_DTYPE_FP32, lse.data());
            p.batch_size = -(1000 * i + round + 1);
            if (mla_decode_reference(&p) != MLA_STATUS_INVALID_SIZE) return "not refused";
            const std::string want = "got " + std::to_string(p.batch_size);
            std::this_thread::yield();
            const std::string message = mla_last_error_message();
            if (message.find(want) == std::string::npos)
                return "message '" + message + "' is not this thread's ('" + want + "')";
            p = hp.host_params(o.data(), MLA_DTYPE_FP32, lse.data());
            if (round % 10 == 0 && mla_decode_reference(&p) != MLA_STATUS_SUCCESS)
                return std::string("valid call failed: ") + mla_last_error_message();
            if (round % 10 == 0 && mla_last_error_message()[0] != '\0')
                return "a success left a message";
        }
        return "";
    }));
}

// The plan cache's class shared by threads that look up 48 keys (more than its 32 entries) in
// their own orders: every plan found or made is the one of its key, and the maker ran at least
// once per key.
TEST(Threads, PlanCacheSharedByThreads) {
    constexpr int kThreads = 6;
    mla::PlanCache cache;
    std::atomic<int> made{0};
    auto key_of = [](int s) {
        mla::PlanKey k;
        k.batch_size = 1 + s;
        k.num_heads = 8 << (s % 5);
        k.max_kv_len = 100 * s;
        return k;
    };
    expect_no_failures(run_together(kThreads, [&](int i) -> std::string {
        for (int k = 0; k < 4 * kShapes; ++k) {
            const int s = (k * (2 * i + 1) + 7 * i) % kShapes;
            const mla::PlanKey key = key_of(s);
            mla::DevicePlan plan;
            const mla_status st = cache.get(
                key,
                [&](mla::DevicePlan* p) {
                    made.fetch_add(1);
                    p->key = key;
                    p->workspace_bytes = 1000 + static_cast<size_t>(s);
                    return MLA_STATUS_SUCCESS;
                },
                &plan);
            if (st != MLA_STATUS_SUCCESS) return "get failed";
            if (!(plan.key == key) || plan.workspace_bytes != 1000 + static_cast<size_t>(s))
                return "shape " + std::to_string(s) + " got another key's plan";
        }
        return "";
    }));
    EXPECT_GE(made.load(), kShapes);
    mla::DevicePlan plan;  // a failing maker is not kept: the next lookup makes the plan again
    auto failing = [](mla::DevicePlan*) { return MLA_STATUS_DEVICE_ERROR; };
    EXPECT_EQ(cache.get(key_of(kShapes + 1), failing, &plan), MLA_STATUS_DEVICE_ERROR);
    EXPECT_EQ(cache.get(key_of(kShapes + 1), failing, &plan), MLA_STATUS_DEVICE_ERROR);
}

// kThreads threads each ask a DeviceInfoCache for kDevices devices 200 times, every tenth time
// for the ordinal past its table (queried every time, never kept): ask(dev, facts) checks one
// answer, "" when right. Then queries (counted by the callers' makers) must be at least one per
// device plus the ordinal's, at most one per device and thread that missed it plus those.
constexpr int kCacheThreads = 6, kCacheDevices = 4;

template <typename Ask>
void ask_devices_from_threads(const std::atomic<int>& queries, Ask&& ask) {
    expect_no_failures(run_together(kCacheThreads, [&](int i) -> std::string {
        for (int k = 0; k < 200; ++k) {
            const int dev =
                k % 10 == 9 ? mla::DeviceInfoCache::kMaxDevices : (k + i) % kCacheDevices;
            const std::string failure = ask(dev);
            if (!failure.empty()) return failure;
        }
        return "";
    }));
    const int past_table = kCacheThreads * 20;  // ordinal kMaxDevices: queried every time
    EXPECT_GE(queries.load(), kCacheDevices + past_table);
    EXPECT_LE(queries.load(), kCacheThreads * kCacheDevices + past_table);
}

// The device-facts cache's class shared by threads (above): each answer is that device's.
TEST(Threads, DeviceInfoCacheSharedByThreads) {
    mla::DeviceInfoCache cache;
    std::atomic<int> queries{0};
    ask_devices_from_threads(queries, [&](int dev) -> std::string {
        mla::DeviceInfo info;
        const mla_status st = cache.get(
            dev,
            [&](int d, mla::DeviceInfo* out) {
                queries.fetch_add(1);
                out->device = d;
                out->multiprocessors = 100 + d;
                return MLA_STATUS_SUCCESS;
            },
            &info);
        if (st != MLA_STATUS_SUCCESS) return "get failed";
        if (info.device != dev || info.multiprocessors != 100 + dev)
            return "device " + std::to_string(dev) + " got another device's facts";
        return "";
    });
}

// The cache's lazy fact (whether the reduce may be a dependent launch) shared by threads
// (above): never set by get, queried as the facts are, each answer that device's.
TEST(Threads, DeviceInfoCacheKeepsTheDependentReduceAnswer) {
    mla::DeviceInfoCache cache;
    std::atomic<int> queries{0};
    const auto facts = [](int d, mla::DeviceInfo* out) {  // the eager facts: not counted
        out->device = d;
        return MLA_STATUS_SUCCESS;
    };
    ask_devices_from_threads(queries, [&](int dev) -> std::string {
        mla::DeviceInfo info;
        if (cache.get(dev, facts, &info) != MLA_STATUS_SUCCESS) return "get failed";
        if (info.dependent_reduce) return "get set dependent_reduce";
        const bool can = cache.dependent_reduce(dev, [&](int d) {
            queries.fetch_add(1);
            return d % 2 == 0;
        });
        if (can != (dev % 2 == 0))
            return "device " + std::to_string(dev) + " got another device's answer";
        return "";
    });
}

// ---- GPU -------------------------------------------------------------------------------------

#if defined(MLA_HAVE_GPU_RUNTIME)

namespace gpu = mla::gpu;

// One worker's problem on the device, its stream and its host reference.
struct Worker {
    explicit Worker(int i) : host(make_problem(varied_spec(i))), ref(run_reference(host)),
                             dev(host) {}
    HostProblem host;
    Reference ref;
    DeviceProblem dev;
    TestStream stream;
};

// Poisons O and LSE on the worker's stream, runs one decode step (a new plan prepared and run,
// or mla_decode_fwd through the shared plan cache) and checks every element.
std::string step(Worker& w, bool with_plan) {
    const gpu::stream_t s = w.stream.get();
    if (gpu::memset_async(w.dev.o.get(), 0xFF, w.dev.o.bytes(), s) != gpu::kSuccess ||
        gpu::memset_async(w.dev.lse.get(), 0xFF, w.dev.lse.bytes(), s) != gpu::kSuccess)
        return "memset failed";
    mla_status st = MLA_STATUS_SUCCESS;
    DeviceBuffer workspace;
    mla_decode_plan* plan = nullptr;
    if (with_plan) {
        st = mla_decode_plan_create(&w.dev.params, &plan);
        size_t bytes = 0;
        if (st == MLA_STATUS_SUCCESS) st = mla_decode_plan_workspace_size(plan, &bytes);
        if (st == MLA_STATUS_SUCCESS) {
            workspace = DeviceBuffer(bytes);
            st = mla_decode_plan_prepare(plan, &w.dev.params, workspace.get(), bytes, s);
        }
        if (st == MLA_STATUS_SUCCESS)
            st = mla_decode_plan_run(plan, &w.dev.params, workspace.get(), bytes, s);
    } else {
        st = w.dev.run(s);
    }
    const std::string message = mla_last_error_message();
    const gpu::error_t synced = w.stream.synchronize();
    (void)mla_decode_plan_destroy(plan);
    if (st != MLA_STATUS_SUCCESS) return std::string(mla_status_string(st)) + ": " + message;
    if (synced != gpu::kSuccess) return gpu::error_string(synced);
    const ::testing::AssertionResult o = check_o(w.dev.download_o(), w.ref.o, w.host.total_q,
                                                 w.host.spec.num_heads);
    if (!o) return std::string("O: ") + o.message();
    const ::testing::AssertionResult lse = check_lse(w.dev.download_lse(), w.ref.lse);
    if (!lse) return std::string("LSE: ") + lse.message();
    return "";
}

// Four threads on four streams, each making, preparing and running its own plans and calling
// mla_decode_fwd, while two more run the host reference and a seventh churns the plan cache.
TEST(Threads, GpuStepsOnOwnStreamsWithReferenceAndPlanCache) {
    SKIP_WITHOUT_GPU();
    constexpr int kGpuThreads = 4, kRounds = 6;
    std::vector<std::unique_ptr<Worker>> workers;
    for (int i = 0; i < kGpuThreads; ++i) workers.push_back(std::make_unique<Worker>(i));
    for (const auto& w : workers) ASSERT_EQ(w->stream.status(), gpu::kSuccess);
    std::vector<HostProblem> host_problems = {make_problem(varied_spec(5)),
                                              make_problem(varied_spec(6))};
    std::vector<Reference> host_alone = {run_reference(host_problems[0]),
                                         run_reference(host_problems[1])};
    expect_no_failures(run_together(kGpuThreads + 3, [&](int i) -> std::string {
        if (i < kGpuThreads) {
            for (int round = 0; round < kRounds; ++round) {
                const std::string f = step(*workers[i], (round + i) % 2 == 0);
                if (!f.empty()) return "round " + std::to_string(round) + ": " + f;
            }
        } else if (i < kGpuThreads + 2) {
            const int k = i - kGpuThreads;
            for (int round = 0; round < kRounds; ++round) {
                if (run_reference(host_problems[k]).o != host_alone[k].o) return "reference differs";
            }
        } else {
            for (int s = 0; s < kShapes; ++s) {
                const Answer a = plan_answer(shape_params(s));
                if (a.status != MLA_STATUS_SUCCESS)
                    return std::string("plan: ") + mla_status_string(a.status);
                const Answer b = workspace_answer(shape_params(s));
                if (b.status != MLA_STATUS_SUCCESS)
                    return std::string("workspace size: ") + mla_status_string(b.status);
            }
        }
        return "";
    }));
}

#endif  // MLA_HAVE_GPU_RUNTIME

}  // namespace
}  // namespace mla_test
