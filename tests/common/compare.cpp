#include "compare.h"

#include "mla_problem.h"  // bf16_ulp

#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>

namespace mla_test {
namespace {

constexpr int kDimV = 512;
constexpr int kShownFailures = 8;

// Collects failures and prints their count and the first few.
class FailureLog {
public:
    void add(const std::string& where, double got, double want, double allowed) {
        if (count_ < kShownFailures) {
            first_ << "\n  " << where << ": got " << got << ", want " << want << ", allowed |diff| "
                   << allowed;
        }
        ++count_;
    }

    ::testing::AssertionResult result(const char* what, int64_t checked) const {
        if (count_ == 0) return ::testing::AssertionSuccess();
        return ::testing::AssertionFailure() << count_ << " of " << checked << " " << what
                                             << " values out of tolerance; first ones:"
                                             << first_.str();
    }

private:
    int64_t count_ = 0;
    std::ostringstream first_;
};

std::string o_position(int64_t t, int h, int d) {
    std::ostringstream s;
    s << "O(row " << t << ", head " << h << ", dim " << d << ")";
    return s.str();
}

double row_max_abs(const float* ref_row) {
    double m = 0.0;
    for (int d = 0; d < kDimV; ++d) m = std::max(m, std::fabs(static_cast<double>(ref_row[d])));
    return m;
}

// Calls f(t, h, d, got, want, allowed) for every O element, allowed as check_o documents it
// (0 in a row whose reference is all zero: that row must be exactly zero).
template <class F>
void for_each_o(const float* got, const float* ref, int64_t total_q, int heads,
                const Tolerance& tol, F f) {
    for (int64_t t = 0; t < total_q; ++t) {
        for (int h = 0; h < heads; ++h) {
            const int64_t base = (t * heads + h) * kDimV;
            const double row_max = row_max_abs(ref + base);
            const double row_allowed = row_max == 0.0 ? 0.0 : tol.o_row_rel * row_max + tol.o_atol;
            for (int d = 0; d < kDimV; ++d) {
                const double w = ref[base + d];
                const double allowed =
                    row_max == 0.0 ? 0.0 : std::max(row_allowed, tol.o_bf16_ulps * bf16_ulp(w));
                f(t, h, d, static_cast<double>(got[base + d]), w, allowed);
            }
        }
    }
}

}  // namespace

::testing::AssertionResult check_o(const float* got, const float* ref, int64_t total_q, int heads,
                                   const Tolerance& tol) {
    FailureLog log;
    for_each_o(got, ref, total_q, heads, tol,
               [&](int64_t t, int h, int d, double g, double w, double allowed) {
                   const bool ok = !std::isnan(g) && !std::isnan(w) && std::fabs(g - w) <= allowed;
                   if (!ok) log.add(o_position(t, h, d), g, w, allowed);
               });
    return log.result("O", total_q * heads * kDimV);
}

double worst_o_ratio(const std::vector<float>& got, const std::vector<float>& ref,
                     int64_t total_q, int heads, const Tolerance& tol) {
    const size_t n = static_cast<size_t>(total_q) * heads * kDimV;
    if (got.size() < n || ref.size() < n) return INFINITY;
    double worst = 0.0;
    for_each_o(got.data(), ref.data(), total_q, heads, tol,
               [&](int64_t, int, int, double g, double w, double allowed) {
                   const double diff = std::fabs(g - w);
                   if (std::isnan(g) || std::isnan(w) || std::isnan(diff)) {  // inf - inf too
                       worst = INFINITY;
                   } else if (diff > 0.0) {
                       worst = std::max(worst, allowed > 0.0 ? diff / allowed : INFINITY);
                   }
               });
    return worst;
}

::testing::AssertionResult check_o(const std::vector<float>& got, const std::vector<float>& ref,
                                   int64_t total_q, int heads, const Tolerance& tol) {
    const size_t n = static_cast<size_t>(total_q) * heads * kDimV;
    if (got.size() < n || ref.size() < n) {
        return ::testing::AssertionFailure() << "O buffers too small: got " << got.size()
                                             << ", ref " << ref.size() << ", need " << n;
    }
    return check_o(got.data(), ref.data(), total_q, heads, tol);
}

::testing::AssertionResult check_lse(const float* got, const float* ref, int64_t n,
                                     const Tolerance& tol) {
    FailureLog log;
    for (int64_t i = 0; i < n; ++i) {
        double g = got[i], w = ref[i];
        bool ok = false;
        double allowed = 0.0;
        if (std::isnan(g) || std::isnan(w)) {
            ok = false;
        } else if (!std::isfinite(w)) {
            ok = g == w;  // -inf (nothing visible) must stay -inf
        } else {
            allowed = tol.lse_atol + tol.lse_rtol * std::fabs(w);
            ok = std::fabs(g - w) <= allowed;
        }
        if (!ok) log.add("LSE[" + std::to_string(i) + "]", g, w, allowed);
    }
    return log.result("LSE", n);
}

::testing::AssertionResult check_lse(const std::vector<float>& got, const std::vector<float>& ref,
                                     const Tolerance& tol) {
    if (got.size() != ref.size()) {
        return ::testing::AssertionFailure()
               << "LSE sizes differ: got " << got.size() << ", ref " << ref.size();
    }
    return check_lse(got.data(), ref.data(), static_cast<int64_t>(ref.size()), tol);
}

std::vector<float> dense_o_from_bf16(const uint16_t* o, int64_t total_q, int heads,
                                     int64_t o_stride_token) {
    std::vector<float> dense(static_cast<size_t>(total_q) * heads * kDimV);
    for (int64_t t = 0; t < total_q; ++t) {
        for (int64_t e = 0; e < static_cast<int64_t>(heads) * kDimV; ++e) {
            uint32_t bits = static_cast<uint32_t>(o[t * o_stride_token + e]) << 16;
            std::memcpy(&dense[t * heads * kDimV + e], &bits, sizeof(float));
        }
    }
    return dense;
}

std::vector<float> dense_o_from_fp32(const float* o, int64_t total_q, int heads,
                                     int64_t o_stride_token) {
    std::vector<float> dense(static_cast<size_t>(total_q) * heads * kDimV);
    for (int64_t t = 0; t < total_q; ++t) {
        std::copy(o + t * o_stride_token, o + t * o_stride_token + heads * kDimV,
                  dense.begin() + t * heads * kDimV);
    }
    return dense;
}

Tolerance fp32_tolerance() {
    Tolerance tol;
    tol.o_row_rel = std::ldexp(1.0, -20);
    tol.o_bf16_ulps = 0.0;
    tol.o_atol = 0.0;
    tol.lse_atol = 1e-6;
    tol.lse_rtol = 1e-6;
    return tol;
}

// SPEC's rule for a path that runs Q in fp8: |got - ref| <= 8e-3 + 2e-2 |ref|. Returns the worst
// ratio of error to that bound over n values (infinity for NaN, or for a non-finite reference
// not matched exactly).
double worst_fp8_rule_ratio(const std::vector<float>& got, const std::vector<float>& ref) {
    double worst = 0.0;
    for (size_t i = 0; i < ref.size(); ++i) {
        const double r = ref[i], g = got[i];
        if (!std::isfinite(r)) {
            if (!(g == r)) return INFINITY;
            continue;
        }
        if (!std::isfinite(g)) return INFINITY;
        worst = std::max(worst, std::fabs(g - r) / (8e-3 + 2e-2 * std::fabs(r)));
    }
    return worst;
}

}  // namespace mla_test
