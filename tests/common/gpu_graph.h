// Streams and graph capture for the GPU tests, straight on the CUDA or HIP runtime (the
// library's kernels/arch/runtime.h has no graph calls, and needs none). Header only; every
// call returns the runtime's error code (mla::gpu::error_string names it).
#pragma once

#include <gtest/gtest.h>

#include "arch/runtime.h"

#if defined(MLA_HAVE_GPU_RUNTIME)

#if defined(MLA_BACKEND_CUDA)
#define MLA_TEST_RT(name) cuda##name
#else
#define MLA_TEST_RT(name) hip##name
#endif

namespace mla_test {

// A non-blocking stream (not ordered with the legacy default stream, as the side streams of
// frameworks are): synchronize the device before using data copied on the default stream.
class TestStream {
public:
    TestStream() {
        status_ = MLA_TEST_RT(StreamCreateWithFlags)(&stream_, MLA_TEST_RT(StreamNonBlocking));
    }
    ~TestStream() {
        if (stream_ != nullptr) (void)MLA_TEST_RT(StreamDestroy)(stream_);
    }
    TestStream(const TestStream&) = delete;
    TestStream& operator=(const TestStream&) = delete;

    mla::gpu::error_t status() const { return status_; }  // of the creation
    mla::gpu::stream_t get() const { return stream_; }
    mla::gpu::error_t synchronize() const { return MLA_TEST_RT(StreamSynchronize)(stream_); }

private:
    mla::gpu::stream_t stream_ = nullptr;
    mla::gpu::error_t status_ = mla::gpu::kSuccess;
};

// One graph captured from a stream and instantiated, replayed with launch(). Capture modes:
// kGlobal (the default, what torch.cuda.graph uses): while it lasts, a call that is not allowed
// during capture fails in any thread; kThreadLocal: only in the capturing thread (for tests whose
// other threads allocate or copy synchronously meanwhile).
enum class CaptureMode { kGlobal, kThreadLocal };

class CapturedGraph {
public:
    CapturedGraph() = default;
    ~CapturedGraph() {
        if (exec_ != nullptr) (void)MLA_TEST_RT(GraphExecDestroy)(exec_);
        if (graph_ != nullptr) (void)MLA_TEST_RT(GraphDestroy)(graph_);
    }
    CapturedGraph(const CapturedGraph&) = delete;
    CapturedGraph& operator=(const CapturedGraph&) = delete;

    mla::gpu::error_t begin_capture(mla::gpu::stream_t stream,
                                    CaptureMode mode = CaptureMode::kGlobal) {
        const auto rt_mode = mode == CaptureMode::kGlobal
                                 ? MLA_TEST_RT(StreamCaptureModeGlobal)
                                 : MLA_TEST_RT(StreamCaptureModeThreadLocal);
        return MLA_TEST_RT(StreamBeginCapture)(stream, rt_mode);
    }
    // Ends the capture and instantiates the graph. Call it even when a captured call failed:
    // the stream leaves capture mode either way.
    mla::gpu::error_t end_capture(mla::gpu::stream_t stream) {
        mla::gpu::error_t err = MLA_TEST_RT(StreamEndCapture)(stream, &graph_);
        if (err != mla::gpu::kSuccess) return err;
        return MLA_TEST_RT(GraphInstantiateWithFlags)(&exec_, graph_, 0);
    }
    // begin_capture, enqueue() (returns a ::testing::AssertionResult), end_capture: success, or
    // what failed first (the capture is ended either way).
    template <class Enqueue>
    ::testing::AssertionResult capture(mla::gpu::stream_t stream, Enqueue&& enqueue) {
        const mla::gpu::error_t began = begin_capture(stream);
        if (began != mla::gpu::kSuccess)
            return ::testing::AssertionFailure()
                   << "begin of capture: " << mla::gpu::error_string(began);
        const ::testing::AssertionResult queued = enqueue();
        const mla::gpu::error_t ended = end_capture(stream);
        if (!queued) return ::testing::AssertionFailure() << "while capturing: " << queued.message();
        if (ended != mla::gpu::kSuccess)
            return ::testing::AssertionFailure()
                   << "end of capture: " << mla::gpu::error_string(ended);
        return ::testing::AssertionSuccess();
    }
    mla::gpu::error_t launch(mla::gpu::stream_t stream) const {
        return MLA_TEST_RT(GraphLaunch)(exec_, stream);
    }

private:
    MLA_TEST_RT(Graph_t) graph_ = nullptr;
    MLA_TEST_RT(GraphExec_t) exec_ = nullptr;
};

}  // namespace mla_test

#undef MLA_TEST_RT

#endif  // MLA_HAVE_GPU_RUNTIME
