#include "gpu_test.h"

#if defined(MLA_HAVE_GPU_RUNTIME)

#include <algorithm>
#include <cstdio>
#include <utility>
#include <vector>

#include "device_info.h"     // current_device_info (src/)
#include "splitkv/launch.h"  // stage1_shape: whether this build has the wgmma kernels

namespace mla_test {
namespace {

::testing::AssertionResult succeeded(mla_status status, const char* call) {
    if (status == MLA_STATUS_SUCCESS) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << call << ": " << mla_status_string(status) << ": "
                                         << mla_last_error_message();
}

::testing::AssertionResult buffer_holds(const DeviceBuffer& buffer, uint8_t byte,
                                        const char* name) {
    std::vector<uint8_t> bytes(buffer.bytes());
    buffer.download(bytes.data(), bytes.size());
    const auto it = std::find_if(bytes.begin(), bytes.end(), [&](uint8_t b) { return b != byte; });
    if (it == bytes.end()) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << name << " was written: byte " << (it - bytes.begin())
                                         << " of " << bytes.size() << " is "
                                         << static_cast<int>(*it) << ", not "
                                         << static_cast<int>(byte);
}

}  // namespace

// ---- Plan --------------------------------------------------------------------------------

Plan::~Plan() { (void)mla_decode_plan_destroy(plan_); }

mla_status Plan::create(const mla_decode_params& params) {
    mla_decode_plan* made = nullptr;
    const mla_status status = mla_decode_plan_create(&params, &made);
    if (status == MLA_STATUS_SUCCESS) {
        (void)mla_decode_plan_destroy(plan_);
        plan_ = made;
    }
    return status;
}

size_t Plan::workspace_bytes() const {
    size_t bytes = 0;
    const mla_status status = mla_decode_plan_workspace_size(plan_, &bytes);
    EXPECT_TRUE(succeeded(status, "mla_decode_plan_workspace_size"));
    return status == MLA_STATUS_SUCCESS ? bytes : 0;
}

std::string Plan::describe() const {
    char line[1024];
    const mla_status status = mla_decode_plan_describe(plan_, line, sizeof(line));
    EXPECT_TRUE(succeeded(status, "mla_decode_plan_describe"));
    return status == MLA_STATUS_SUCCESS ? std::string(line) : std::string();
}

// ---- running and checking ------------------------------------------------------------------

bool hopper_with_wgmma() {
    mla::DeviceInfo device;
    if (mla::current_device_info(&device, false) != MLA_STATUS_SUCCESS) {
        ADD_FAILURE() << "current_device_info: " << mla_last_error_message();
        return false;
    }
    const bool built = mla::splitkv::stage1_shape(mla::splitkv::Stage1Variant::kWgmma,
                                                  mla::splitkv::KvFormat::kFp8E4M3FN)
                           .tile_tokens > 0;
    return device.cc_major == 9 && built;
}

::testing::AssertionResult synchronize_device() {
    const mla::gpu::error_t err = mla::gpu::device_synchronize();
    if (err == mla::gpu::kSuccess) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "device synchronize: " << mla::gpu::error_string(err);
}

::testing::AssertionResult run_on_gpu(const DeviceProblem& dev, Api api,
                                      mla::gpu::stream_t stream) {
    Plan plan;
    ::testing::AssertionResult made = succeeded(plan.create(dev.params), "mla_decode_plan_create");
    if (!made) return made;
    std::printf("[ route    ] %s\n", plan.describe().c_str());
    if (api == Api::kFwd) {
        ::testing::AssertionResult ran = succeeded(dev.run(stream), "mla_decode_fwd");
        if (!ran) return ran;
        return synchronize_device();
    }
    const size_t bytes = plan.workspace_bytes();
    DeviceBuffer workspace(bytes);  // freed after the synchronization below
    poison_workspace(workspace);
    ::testing::AssertionResult prepared = succeeded(
        mla_decode_plan_prepare(plan.get(), &dev.params, workspace.get(), bytes, stream),
        "mla_decode_plan_prepare");
    if (!prepared) return prepared;
    ::testing::AssertionResult ran = succeeded(
        mla_decode_plan_run(plan.get(), &dev.params, workspace.get(), bytes, stream),
        "mla_decode_plan_run");
    if (!ran) return ran;
    return synchronize_device();
}

void expect_outputs_match(const DeviceProblem& dev, const Reference& ref, const Tolerance& tol) {
    const HostProblem& host = *dev.host;
    EXPECT_TRUE(check_o(dev.download_o(), ref.o, host.total_q, host.spec.num_heads, tol));
    if (dev.lse.get() != nullptr) {
        EXPECT_TRUE(check_lse(dev.download_lse(), ref.lse, tol));
    }
}

::testing::AssertionResult outputs_untouched(const DeviceProblem& dev, uint8_t byte) {
    ::testing::AssertionResult synced = synchronize_device();
    if (!synced) return synced;
    ::testing::AssertionResult o = buffer_holds(dev.o, byte, "O");
    if (!o) return o;
    return buffer_holds(dev.lse, byte, "LSE");
}

void expect_matches_reference(const ProblemSpec& spec, const Tolerance& tol, Api api) {
    expect_matches_reference(make_problem(spec), tol, api);
}

void expect_matches_reference(const HostProblem& host, const Tolerance& tol, Api api) {
    const Reference ref = run_reference(host);
    DeviceProblem dev(host);
    dev.poison_outputs(0xFF);
    ASSERT_TRUE(run_on_gpu(dev, api));
    expect_outputs_match(dev, ref, tol);
}

ProblemSpec format_spec(mla_dtype kv_dtype, mla_dtype v_dtype, int heads,
                        std::vector<int> kv_lens, std::vector<int> q_lens, uint64_t seed) {
    ProblemSpec s;
    s.kv_dtype = kv_dtype;
    s.v_dtype = v_dtype;
    s.num_heads = heads;
    s.kv_lens = std::move(kv_lens);
    s.q_lens = std::move(q_lens);
    s.seed = seed;
    return s;
}

std::string format_name(mla_dtype kv_dtype, mla_dtype v_dtype) {
    auto name = [](mla_dtype d) -> std::string {
        switch (d) {
            case MLA_DTYPE_BF16: return "bf16";
            case MLA_DTYPE_FP8_E4M3FN: return "fp8_e4m3fn";
            case MLA_DTYPE_FP8_E4M3FNUZ: return "fp8_e4m3fnuz";
            case MLA_DTYPE_MXFP4: return "mxfp4";
            default: return "other";
        }
    };
    if (v_dtype == 0) return name(kv_dtype);
    return name(kv_dtype) + "_k_" + name(v_dtype) + "_v";
}

}  // namespace mla_test

#endif  // MLA_HAVE_GPU_RUNTIME
