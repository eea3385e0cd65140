// Streams and graph capture for the GPU tests, straight on the CUDA or HIP runtime, or the
// emulated device's (the library's kernels/arch/runtime.h has no graph calls, and needs none).
// Header only; every call returns the runtime's error code (mla::gpu::error_string names it).
#pragma once

#include <gtest/gtest.h>

#include "arch/runtime.h"

#if defined(MLA_HAVE_GPU_RUNTIME)

namespace mla_test {

// Graph capture modes. kGlobal (the default, what torch.cuda.graph uses): while it lasts, a call
// that is not allowed during capture fails in any thread; kThreadLocal: only in the capturing
// thread (for tests whose other threads allocate or copy synchronously meanwhile).
enum class CaptureMode { kGlobal, kThreadLocal };

// The runtime calls of this header, per backend. The emulated device (MLA_BACKEND=emu) records a
// capturing stream's launches and memsets as the graph and replays them in order; it has no
// calls that capture forbids, so both modes are the same there.
namespace rt {
#if defined(MLA_BACKEND_EMU)
using Graph = std::shared_ptr<std::vector<std::function<void()>>>;
inline mla::gpu::error_t stream_create_nonblocking(mla::gpu::stream_t* s) {
    return mla::gpu::stream_create(s);
}
inline mla::gpu::error_t begin_capture(mla::gpu::stream_t s, CaptureMode) {
    if (s == nullptr || s->capture) return mla::gpu::kErrorInvalidValue;
    s->capture = std::make_shared<std::vector<std::function<void()>>>();
    return mla::gpu::kSuccess;
}
inline mla::gpu::error_t end_capture(mla::gpu::stream_t s, Graph* graph) {
    if (s == nullptr || !s->capture) return mla::gpu::kErrorInvalidValue;
    *graph = std::move(s->capture);
    s->capture = nullptr;
    return mla::gpu::kSuccess;
}
inline mla::gpu::error_t graph_launch(const Graph& graph, mla::gpu::stream_t) {
    if (!graph) return mla::gpu::kErrorInvalidValue;
    for (const auto& op : *graph) op();
    return mla::gpu::get_last_error();
}
inline void graph_destroy(Graph&) {}
#else
#if defined(MLA_BACKEND_CUDA)
#define MLA_TEST_RT(name) cuda##name
#else
#define MLA_TEST_RT(name) hip##name
#endif
struct Graph {
    MLA_TEST_RT(Graph_t) graph = nullptr;
    MLA_TEST_RT(GraphExec_t) exec = nullptr;
};
inline mla::gpu::error_t stream_create_nonblocking(mla::gpu::stream_t* s) {
    return MLA_TEST_RT(StreamCreateWithFlags)(s, MLA_TEST_RT(StreamNonBlocking));
}
inline mla::gpu::error_t begin_capture(mla::gpu::stream_t s, CaptureMode mode) {
    const auto rt_mode = mode == CaptureMode::kGlobal ? MLA_TEST_RT(StreamCaptureModeGlobal)
                                                      : MLA_TEST_RT(StreamCaptureModeThreadLocal);
    return MLA_TEST_RT(StreamBeginCapture)(s, rt_mode);
}
// Ends the capture and instantiates the graph.
inline mla::gpu::error_t end_capture(mla::gpu::stream_t s, Graph* g) {
    mla::gpu::error_t err = MLA_TEST_RT(StreamEndCapture)(s, &g->graph);
    if (err != mla::gpu::kSuccess) return err;
    return MLA_TEST_RT(GraphInstantiateWithFlags)(&g->exec, g->graph, 0);
}
inline mla::gpu::error_t graph_launch(const Graph& g, mla::gpu::stream_t s) {
    return MLA_TEST_RT(GraphLaunch)(g.exec, s);
}
inline void graph_destroy(Graph& g) {
    if (g.exec != nullptr) (void)MLA_TEST_RT(GraphExecDestroy)(g.exec);
    if (g.graph != nullptr) (void)MLA_TEST_RT(GraphDestroy)(g.graph);
}
#undef MLA_TEST_RT
#endif
}  // namespace rt

// A non-blocking stream (not ordered with the legacy default stream, as the side streams of
// frameworks are): synchronize the device before using data copied on the default stream.
class TestStream {
public:
    TestStream() {
        status_ = rt::stream_create_nonblocking(&stream_);
    }
    ~TestStream() {
        if (stream_ != nullptr) (void)mla::gpu::stream_destroy(stream_);
    }
    TestStream(const TestStream&) = delete;
    TestStream& operator=(const TestStream&) = delete;

    mla::gpu::error_t status() const { return status_; }  // of the creation
    mla::gpu::stream_t get() const { return stream_; }
    mla::gpu::error_t synchronize() const { return mla::gpu::stream_synchronize(stream_); }

private:
    mla::gpu::stream_t stream_ = nullptr;
    mla::gpu::error_t status_ = mla::gpu::kSuccess;
};

// One graph captured from a stream and instantiated, replayed with launch() (CaptureMode above).

class CapturedGraph {
public:
    CapturedGraph() = default;
    ~CapturedGraph() { rt::graph_destroy(graph_); }
    CapturedGraph(const CapturedGraph&) = delete;
    CapturedGraph& operator=(const CapturedGraph&) = delete;

    mla::gpu::error_t begin_capture(mla::gpu::stream_t stream,
                                    CaptureMode mode = CaptureMode::kGlobal) {
        return rt::begin_capture(stream, mode);
    }
    // Ends the capture and instantiates the graph. Call it even when a captured call failed:
    // the stream leaves capture mode either way.
    mla::gpu::error_t end_capture(mla::gpu::stream_t stream) {
        return rt::end_capture(stream, &graph_);
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
        return rt::graph_launch(graph_, stream);
    }

private:
    rt::Graph graph_;
};

}  // namespace mla_test

#endif  // MLA_HAVE_GPU_RUNTIME
