// GoogleTest helpers shared by the GPU suites (test_gpu, test_gpu_paths): skipping without a
// device, plan handles, running a problem through mla_decode_fwd or the plan API, and checking
// every element of O and LSE against the host reference. GPU builds only
// (MLA_HAVE_GPU_RUNTIME); library target mla_test_gpu_common.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "compare.h"
#include "device_problem.h"
#include "mla_decode.h"
#include "mla_problem.h"

#if defined(MLA_HAVE_GPU_RUNTIME)

// First statement of every GPU test: without a device the test is skipped, with the reason.
#define SKIP_WITHOUT_GPU()                                                                     \
    do {                                                                                       \
        if (!::mla_test::gpu_available())                                                      \
            GTEST_SKIP() << "no GPU device: GPU path not exercised here";                      \
    } while (0)

namespace mla_test {

// The entry point that runs a problem.
enum class Api {
    kFwd,   // mla_decode_fwd (plan from the process-wide cache, prepare, run)
    kPlan,  // mla_decode_plan_create, _prepare, _run, _destroy with the plan's own workspace
};

// Owning mla_decode_plan handle.
class Plan {
public:
    Plan() = default;
    ~Plan();
    Plan(const Plan&) = delete;
    Plan& operator=(const Plan&) = delete;

    // mla_decode_plan_create for the shape of `params`; the handle stays empty on failure.
    mla_status create(const mla_decode_params& params);
    mla_decode_plan* get() const { return plan_; }
    // mla_decode_plan_workspace_size (a test failure, and 0, if it fails).
    size_t workspace_bytes() const;
    // mla_decode_plan_describe into a buffer of 1024 ("" and a test failure if it fails).
    std::string describe() const;

private:
    mla_decode_plan* plan_ = nullptr;
};

// Whether the current device is Hopper (compute capability 9.x) and this build has the wgmma
// kernels, so that plans take the wgmma variant unless a switch says otherwise (failing to read
// the device is a test failure, and false).
bool hopper_with_wgmma();

// Waits for the device; a runtime error is an assertion failure with its message.
::testing::AssertionResult synchronize_device();

// Runs dev's problem once through `api` on `stream` and waits for it. kPlan makes a plan for
// dev.params with a workspace of its own. Either way the route's description is printed.
::testing::AssertionResult run_on_gpu(const DeviceProblem& dev, Api api,
                                      mla::gpu::stream_t stream = nullptr);

// Every element of dev's O (and LSE, when dev has one) against `ref`.
void expect_outputs_match(const DeviceProblem& dev, const Reference& ref,
                          const Tolerance& tol = Tolerance());

// Every byte of dev's O and LSE still holds `byte` (a refused call wrote nothing).
::testing::AssertionResult outputs_untouched(const DeviceProblem& dev, uint8_t byte);

// Makes `spec`, runs it on the GPU through `api` with O and LSE poisoned first (an unwritten
// element then fails) and compares every element with the host reference.
void expect_matches_reference(const ProblemSpec& spec, const Tolerance& tol = Tolerance(),
                              Api api = Api::kFwd);
void expect_matches_reference(const HostProblem& host, const Tolerance& tol = Tolerance(),
                              Api api = Api::kFwd);

// A spec of the cache format (kv_dtype, v_dtype), heads, kv lengths and q lengths (empty: 1
// each), and seed; everything else ProblemSpec's defaults.
ProblemSpec format_spec(mla_dtype kv_dtype, mla_dtype v_dtype, int heads,
                        std::vector<int> kv_lens, std::vector<int> q_lens, uint64_t seed);

// Test-name form of a cache format: bf16, fp8_e4m3fn, fp8_e4m3fnuz, mxfp4, or
// mxfp4_k_fp8_e4m3fn_v / mxfp4_k_fp8_e4m3fnuz_v with a separate V cache.
std::string format_name(mla_dtype kv_dtype, mla_dtype v_dtype = MLA_DTYPE_NONE);

}  // namespace mla_test

#endif  // MLA_HAVE_GPU_RUNTIME
