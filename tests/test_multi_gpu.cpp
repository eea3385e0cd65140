// Two GPUs in one process, as engines run tensor parallelism: one thread per device, each with
// its own plans, streams and workspaces, and the process-wide plan cache shared.
//  - Steps: two threads, bound to devices 0 and 1 (with one GPU: both to device 0), each create
//    a plan, prepare and run it, call mla_decode_fwd through the shared plan cache, and capture
//    a graph of a step and replay it, for every format at once; every output is bitwise equal
//    to the same problem run alone, single-threaded, on device 0 (and that run matches the host
//    reference).
//  - A plan made on device 0 and run while device 1 is current is refused with INVALID_VALUE
//    and its message, outputs untouched (needs two devices; skips with the reason otherwise).
//  - Head split: 128 heads divided 64 / 64 over the two devices (one device: two threads on it)
//    give, concatenated, the 128-head run of one device within the tolerance; the test prints
//    whether they are also bitwise equal (they are where both sides take the same plan).
// GPU builds only; every test skips without a device.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "arch/runtime.h"
#include "compare.h"
#include "device_problem.h"
#include "gpu_graph.h"
#include "gpu_test.h"
#include "mla_decode.h"
#include "mla_problem.h"
#include "run_together.h"

namespace mla_test {
namespace {

namespace gpu = mla::gpu;
constexpr mla_dtype kNoV = MLA_DTYPE_NONE;

int device_count() {
    int n = 0;
    return gpu::device_count(&n) == gpu::kSuccess ? n : 0;
}

// The devices of the two threads: 0 and 1, or 0 twice on a one-GPU machine.
std::vector<int> thread_devices() {
    return device_count() >= 2 ? std::vector<int>{0, 1} : std::vector<int>{0, 0};
}

std::string set_device(int device) {
    const gpu::error_t e = gpu::set_device(device);
    return e == gpu::kSuccess ? "" : std::string("set device: ") + gpu::error_string(e);
}


struct FormatCase {
    const char* name;
    mla_dtype q, kv, v;
};
const FormatCase kFormats[] = {
    {"bf16", MLA_DTYPE_BF16, MLA_DTYPE_BF16, kNoV},
    {"fp8_e4m3fn", MLA_DTYPE_BF16, MLA_DTYPE_FP8_E4M3FN, kNoV},
    {"fp8_e4m3fnuz", MLA_DTYPE_BF16, MLA_DTYPE_FP8_E4M3FNUZ, kNoV},
    {"mxfp4", MLA_DTYPE_BF16, MLA_DTYPE_MXFP4, kNoV},
    {"mxfp4_k_fp8_e4m3fn_v", MLA_DTYPE_BF16, MLA_DTYPE_MXFP4, MLA_DTYPE_FP8_E4M3FN},
    {"fp8_e4m3fn_fp8_q", MLA_DTYPE_FP8_E4M3FN, MLA_DTYPE_FP8_E4M3FN, kNoV},
};

ProblemSpec spec_of(const FormatCase& f, int heads, uint64_t seed) {
    ProblemSpec s;
    s.num_heads = heads;
    s.q_dtype = f.q;
    s.kv_dtype = f.kv;
    s.v_dtype = f.v;
    s.kv_lens = {700, 0, 1500, 64, 2049};
    s.q_lens = {1, 2, 1, 4, 3};
    s.paged = true;
    s.page_size = 16;
    s.seed = seed;
    return s;
}

struct Outputs {
    std::vector<float> o, lse;
};

Outputs download(const DeviceProblem& dev) { return {dev.download_o(), dev.download_lse()}; }

std::string compare_bitwise(const char* what, const Outputs& got, const Outputs& want) {
    if (got.o.size() != want.o.size() ||
        std::memcmp(got.o.data(), want.o.data(), want.o.size() * sizeof(float)) != 0)
        return std::string(what) + ": O differs from the run alone on device 0";
    if (got.lse.size() != want.lse.size() ||
        std::memcmp(got.lse.data(), want.lse.data(), want.lse.size() * sizeof(float)) != 0)
        return std::string(what) + ": LSE differs from the run alone on device 0";
    return "";
}

// O and LSE of dev poisoned on `stream` (stream-ordered: no device-wide synchronization).
std::string poison_on(DeviceProblem& dev, gpu::stream_t stream) {
    if (gpu::memset_async(dev.o.get(), 0xFF, dev.o.bytes(), stream) != gpu::kSuccess ||
        gpu::memset_async(dev.lse.get(), 0xFF, dev.lse.bytes(), stream) != gpu::kSuccess)
        return "memset failed";
    return "";
}

// A plan of dev's problem, its workspace dev's own (allocated before the threads start).
std::string make_plan(DeviceProblem& dev, Plan* plan) {
    if (plan->create(dev.params) != MLA_STATUS_SUCCESS)
        return std::string("plan: ") + mla_last_error_message();
    if (plan->workspace_bytes() > dev.workspace_bytes)
        return "the plan's workspace exceeds mla_decode_workspace_size";
    return "";
}

// One decode step of dev's problem on `stream`, O and LSE poisoned first: a plan of its own
// (create, prepare, run), or mla_decode_fwd through the process-wide plan cache.
std::string step(DeviceProblem& dev, gpu::stream_t stream, bool with_plan) {
    std::string r = poison_on(dev, stream);
    if (!r.empty()) return r;
    mla_status st = MLA_STATUS_SUCCESS;
    if (with_plan) {
        Plan plan;
        r = make_plan(dev, &plan);
        if (!r.empty()) return r;
        st = mla_decode_plan_prepare(plan.get(), &dev.params, dev.workspace.get(),
                                     dev.workspace_bytes, stream);
        if (st == MLA_STATUS_SUCCESS)
            st = mla_decode_plan_run(plan.get(), &dev.params, dev.workspace.get(),
                                     dev.workspace_bytes, stream);
    } else {
        st = dev.run(stream);
    }
    if (st != MLA_STATUS_SUCCESS)
        return std::string(mla_status_string(st)) + ": " + mla_last_error_message();
    const gpu::error_t e = gpu::stream_synchronize(stream);
    return e == gpu::kSuccess ? "" : gpu::error_string(e);
}

// A captured graph of a plan's prepare and run, replayed twice with the outputs poisoned.
std::string graph_steps(DeviceProblem& dev, TestStream& stream, std::vector<Outputs>* out) {
    Plan plan;
    std::string r = make_plan(dev, &plan);
    if (!r.empty()) return r;
    CapturedGraph graph;
    // Thread-local capture: the other thread keeps copying outputs back synchronously, which
    // global mode forbids (and which would invalidate this capture) while one thread captures.
    if (graph.begin_capture(stream.get(), CaptureMode::kThreadLocal) != gpu::kSuccess)
        return "begin capture failed";
    const mla_status prepared = mla_decode_plan_prepare(plan.get(), &dev.params,
                                                        dev.workspace.get(), dev.workspace_bytes,
                                                        stream.get());
    const mla_status ran = mla_decode_plan_run(plan.get(), &dev.params, dev.workspace.get(),
                                               dev.workspace_bytes, stream.get());
    if (graph.end_capture(stream.get()) != gpu::kSuccess) return "end capture failed";
    if (prepared != MLA_STATUS_SUCCESS || ran != MLA_STATUS_SUCCESS)
        return std::string("captured calls: ") + mla_last_error_message();
    for (int replay = 0; replay < 2; ++replay) {
        r = poison_on(dev, stream.get());
        if (!r.empty()) return r;
        if (graph.launch(stream.get()) != gpu::kSuccess) return "graph launch failed";
        if (stream.synchronize() != gpu::kSuccess) return "graph replay failed";
        out->push_back(download(dev));
    }
    return "";
}

TEST(MultiGpu, EveryFormatOnTwoDevicesAtOnceEqualsOneDeviceBitwise) {
    SKIP_WITHOUT_GPU();
    const std::vector<int> devices = thread_devices();
    if (devices[1] == 0) std::printf("[ devices  ] one GPU: both threads on device 0\n");
    const int n = static_cast<int>(sizeof(kFormats) / sizeof(kFormats[0]));
    std::vector<HostProblem> hosts;  // DeviceProblems point into it: no reallocation
    hosts.reserve(n);
    std::vector<Outputs> alone;
    ASSERT_EQ(set_device(0), "");
    for (int f = 0; f < n; ++f) {
        SCOPED_TRACE(kFormats[f].name);
        hosts.push_back(make_problem(spec_of(kFormats[f], 32, 11 + f)));
        DeviceProblem dev(hosts.back());
        dev.poison_outputs(0xFF);
        ASSERT_TRUE(run_on_gpu(dev, Api::kPlan));
        expect_outputs_match(dev, run_reference(hosts.back()));
        alone.push_back(download(dev));
    }
    // Every buffer of both threads (problems, workspaces, streams) is made before they start
    // and freed after they end: CUDA forbids synchronizing a device while any of its streams is
    // being captured, and cudaFree, cudaMemset and the like synchronize it. (An earlier version
    // allocated and poisoned inside the threads; the driver crashed in cuCtxSynchronize in about
    // one run in six.) Inside, each thread uses only its own stream and synchronous copies to the
    // host, which thread-local capture allows.
    std::vector<std::unique_ptr<DeviceProblem>> devs[2];
    std::unique_ptr<TestStream> streams[2];
    for (int t = 0; t < 2; ++t) {
        ASSERT_EQ(set_device(devices[t]), "");
        streams[t] = std::make_unique<TestStream>();
        ASSERT_EQ(streams[t]->status(), gpu::kSuccess);
        for (const HostProblem& h : hosts) devs[t].push_back(std::make_unique<DeviceProblem>(h));
    }
    // Each thread: every format, three rounds of plan / fwd steps, then a graph per format.
    expect_no_failures(run_together(2, [&](int t) -> std::string {
        const std::string bound = set_device(devices[t]);
        if (!bound.empty()) return bound;
        TestStream& stream = *streams[t];
        for (int round = 0; round < 3; ++round) {
            for (int f = 0; f < n; ++f) {
                const bool with_plan = (round + f + t) % 2 == 0;
                std::string r = step(*devs[t][f], stream.get(), with_plan);
                if (r.empty())
                    r = compare_bitwise(with_plan ? "plan" : "fwd", download(*devs[t][f]),
                                        alone[f]);
                if (!r.empty())
                    return std::string(kFormats[f].name) + " round " + std::to_string(round) +
                           ": " + r;
            }
        }
        for (int f = 0; f < n; ++f) {
            std::vector<Outputs> replays;
            std::string r = graph_steps(*devs[t][f], stream, &replays);
            for (const Outputs& o : replays)
                if (r.empty()) r = compare_bitwise("graph replay", o, alone[f]);
            if (!r.empty()) return std::string(kFormats[f].name) + ": " + r;
        }
        return "";
    }));
}

TEST(MultiGpu, PlanRunOnAnotherDeviceIsRefused) {
    SKIP_WITHOUT_GPU();
    if (device_count() < 2) GTEST_SKIP() << "needs two GPUs: this machine has " << device_count();
    ASSERT_EQ(set_device(0), "");
    const HostProblem host = make_problem(spec_of(kFormats[1], 16, 3));
    Plan plan;
    DeviceProblem dev0(host);
    ASSERT_EQ(plan.create(dev0.params), MLA_STATUS_SUCCESS) << mla_last_error_message();
    ASSERT_EQ(set_device(1), "");
    DeviceProblem dev1(host);  // buffers of device 1
    DeviceBuffer workspace(plan.workspace_bytes());
    poison_workspace(workspace);
    dev1.poison_outputs(0xAB);
    EXPECT_EQ(mla_decode_plan_prepare(plan.get(), &dev1.params, workspace.get(), workspace.bytes(),
                                      nullptr),
              MLA_STATUS_INVALID_VALUE);
    EXPECT_NE(std::string(mla_last_error_message()).find("made on device 0 but device 1"),
              std::string::npos)
        << mla_last_error_message();
    EXPECT_EQ(mla_decode_plan_run(plan.get(), &dev1.params, workspace.get(), workspace.bytes(),
                                  nullptr),
              MLA_STATUS_INVALID_VALUE);
    ASSERT_TRUE(synchronize_device());
    EXPECT_TRUE(outputs_untouched(dev1, 0xAB));
    ASSERT_EQ(set_device(0), "");
}

// Heads [h0, h0 + heads) of a problem, as a problem of its own over the same cache.
HostProblem head_slice(const HostProblem& full, int h0, int heads) {
    HostProblem part = full;
    part.spec.num_heads = heads;
    part.q_stride_token = static_cast<int64_t>(heads) * MLA_HEAD_DIM_QK;
    part.o_stride_token = static_cast<int64_t>(heads) * MLA_HEAD_DIM_V;
    const size_t q_bytes = full.spec.q_dtype == MLA_DTYPE_BF16 ? 2 : 1;
    const size_t row = static_cast<size_t>(part.q_stride_token) * q_bytes;
    part.q.assign(static_cast<size_t>(full.total_q) * row, 0);
    for (int64_t r = 0; r < full.total_q; ++r)
        std::memcpy(&part.q[static_cast<size_t>(r) * row],
                    &full.q[(static_cast<size_t>(r * full.q_stride_token) +
                             static_cast<size_t>(h0) * MLA_HEAD_DIM_QK) * q_bytes],
                    row);
    return part;
}

TEST(MultiGpu, HeadSplitOverTwoDevicesEqualsOneDevice) {
    SKIP_WITHOUT_GPU();
    const std::vector<int> devices = thread_devices();
    for (const FormatCase& f : {kFormats[1], kFormats[3]}) {
        SCOPED_TRACE(f.name);
        const HostProblem full = make_problem(spec_of(f, 128, 21));
        ASSERT_EQ(set_device(0), "");
        DeviceProblem whole(full);
        whole.poison_outputs(0xFF);
        ASSERT_TRUE(run_on_gpu(whole, Api::kPlan));
        const Outputs want = download(whole);
        const HostProblem halves[2] = {head_slice(full, 0, 64), head_slice(full, 64, 64)};
        Outputs got[2];
        expect_no_failures(run_together(2, [&](int t) -> std::string {
            const std::string bound = set_device(devices[t]);
            if (!bound.empty()) return bound;
            TestStream stream;
            DeviceProblem dev(halves[t]);
            const std::string r = step(dev, stream.get(), true);
            if (!r.empty()) return r;
            got[t] = download(dev);
            return "";
        }));
        // Concatenate: row r of half t holds heads 64 t .. 64 t + 63 of row r.
        Outputs joined{std::vector<float>(want.o.size()), std::vector<float>(want.lse.size())};
        for (int64_t r = 0; r < full.total_q; ++r)
            for (int t = 0; t < 2; ++t) {
                std::memcpy(&joined.o[static_cast<size_t>((r * 128 + 64 * t) * MLA_HEAD_DIM_V)],
                            &got[t].o[static_cast<size_t>(r * 64 * MLA_HEAD_DIM_V)],
                            64 * MLA_HEAD_DIM_V * sizeof(float));
                std::memcpy(&joined.lse[static_cast<size_t>(r * 128 + 64 * t)],
                            &got[t].lse[static_cast<size_t>(r * 64)], 64 * sizeof(float));
            }
        EXPECT_TRUE(check_o(joined.o, want.o, full.total_q, 128));
        EXPECT_TRUE(check_lse(joined.lse, want.lse));
        const Reference ref = run_reference(full);
        EXPECT_TRUE(check_o(joined.o, ref.o, full.total_q, 128));
        std::printf("[ split    ] %s: 64 + 64 heads %s the 128-head run bitwise\n", f.name,
                    compare_bitwise("", joined, want).empty() ? "equal" : "differ from");
    }
}

}  // namespace
}  // namespace mla_test
