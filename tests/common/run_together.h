// Threads released at once for the concurrency tests (test_threads, test_multi_gpu): each runs
// a body and reports its first failure as text. Header only, no GPU dependency.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace mla_test {

// Runs body(i) on `threads` threads at once (released together) and returns each one's
// failures ("" when it had none); a thread stops at its first failure.
inline std::vector<std::string> run_together(int threads,
                                             const std::function<std::string(int)>& body) {
    std::vector<std::string> failures(threads);
    std::atomic<int> ready{0};
    std::vector<std::thread> pool;
    for (int i = 0; i < threads; ++i) {
        pool.emplace_back([&, i] {
            ready.fetch_add(1);
            while (ready.load() < threads) std::this_thread::yield();
            failures[i] = body(i);
        });
    }
    for (std::thread& t : pool) t.join();
    return failures;
}

inline void expect_no_failures(const std::vector<std::string>& failures) {
    for (size_t i = 0; i < failures.size(); ++i) EXPECT_EQ(failures[i], "") << "thread " << i;
}

}  // namespace mla_test
