#include "fp8_mma.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "formats.h"

namespace mla_test {
namespace {

constexpr int kDimQk = MLA_HEAD_DIM_QK;
constexpr int kDimV = MLA_HEAD_DIM_V;

double e4m3fn(uint8_t code) { return mla::fmt::fp8_to_double(MLA_DTYPE_FP8_E4M3FN, code); }

// Batch element of query row t.
int element_of(const HostProblem& host, int t) {
    const auto it = std::upper_bound(host.qo_indptr.begin(), host.qo_indptr.end(), t);
    return static_cast<int>(it - host.qo_indptr.begin()) - 1;
}

// e4m3fn code of dim d of cache token j of element e, or of query row (t, h): from the latent
// row, or (split forms) the rope row past kDimV.
uint8_t k_code(const HostProblem& host, int e, int64_t j, int d) {
    const int64_t slot = host.slot(e, j);
    if (d >= kDimV && host.spec.kpe_dtype != 0)
        return host.kpe[static_cast<size_t>(slot * host.kpe_stride_slot + (d - kDimV))];
    return host.kv[static_cast<size_t>(slot * host.kv_stride_slot + d)];
}
uint8_t q_code(const HostProblem& host, int64_t t, int h, int d) {
    if (d >= kDimV && host.spec.split_q)
        return host.q_pe[static_cast<size_t>(t * host.q_pe_stride_token + h * host.q_pe_stride_head +
                                             (d - kDimV))];
    return host.q[static_cast<size_t>(t * host.q_stride_token + h * host.q_stride_head + d)];
}

double spec_allowance(double ref) { return kSpecFp8QAtol + kSpecFp8QRtol * std::fabs(ref); }

}  // namespace

Fp8MmaBounds fp8_mma_bounds(const HostProblem& host, const Reference& ref, const Tolerance& base) {
    const ProblemSpec& spec = host.spec;
    if (spec.q_dtype != MLA_DTYPE_FP8_E4M3FN || spec.kv_dtype != MLA_DTYPE_FP8_E4M3FN ||
        spec.v_dtype != 0)
        throw std::invalid_argument("fp8_mma_bounds: e4m3fn Q on an e4m3fn cache only");
    if (spec.kpe_dtype != 0 && spec.kpe_dtype != spec.kv_dtype)
        throw std::invalid_argument("fp8_mma_bounds: the rope cache in the latent's format only");
    const int heads = spec.num_heads;
    const int64_t rows = static_cast<int64_t>(host.total_q) * heads;
    Fp8MmaBounds b;
    b.o = o_allowances(ref.o.data(), host.total_q, heads, base);
    b.lse = lse_allowances(ref.lse.data(), rows, base);
    b.score_abs.assign(static_cast<size_t>(rows), 0.0);
    b.max_abs_logit.assign(static_cast<size_t>(rows), 0.0);
    const double c = static_cast<double>(spec.sm_scale) * host.q_scale * host.kv_scale;

    // Each element's cache rows as code values (floats hold every e4m3 value exactly).
    std::vector<std::vector<float>> k_of(static_cast<size_t>(host.batch_size));
    parallel_for(host.batch_size, [&](int e) {
        const int kv_len = host.kv_indptr[e + 1] - host.kv_indptr[e];
        std::vector<float>& k = k_of[e];
        k.resize(static_cast<size_t>(kv_len) * kDimQk);
        for (int j = 0; j < kv_len; ++j)
            for (int d = 0; d < kDimQk; ++d)
                k[static_cast<size_t>(j) * kDimQk + d] = static_cast<float>(e4m3fn(k_code(host, e, j, d)));
    });

    parallel_for(static_cast<int>(rows), [&](int r) {
        const int t = r / heads, h = r % heads;
        const int e = element_of(host, t);
        const int q_len = host.qo_indptr[e + 1] - host.qo_indptr[e];
        const int kv_len = host.kv_indptr[e + 1] - host.kv_indptr[e];
        const int visible = std::max(0, kv_len - q_len + (t - host.qo_indptr[e]) + 1);
        if (visible == 0) return;  // O = 0 and LSE = -inf must be exact: allowances stay 0
        const std::vector<float>& k = k_of[e];
        std::vector<double> q(kDimQk), s(visible), o(kDimV, 0.0), mad(kDimV, 0.0);
        for (int d = 0; d < kDimQk; ++d) q[d] = e4m3fn(q_code(host, t, h, d));
        double a_max = 0.0, s_max = -INFINITY, abs_max = 0.0;
        for (int j = 0; j < visible; ++j) {
            const float* kj = &k[static_cast<size_t>(j) * kDimQk];
            double dot = 0.0, abs_sum = 0.0;
            for (int d = 0; d < kDimQk; ++d) {
                dot += q[d] * kj[d];
                abs_sum += std::fabs(q[d] * kj[d]);
            }
            s[j] = c * dot;
            a_max = std::max(a_max, c * abs_sum);
            s_max = std::max(s_max, s[j]);
            abs_max = std::max(abs_max, std::fabs(s[j]));
        }
        const double delta = kFp8MmaScoreRel * a_max;
        b.score_abs[r] = a_max;
        b.max_abs_logit[r] = abs_max;
        b.lse[r] += delta;
        // The weights p_j (in s), O and the weighted mean absolute deviation of V per dim.
        double sum = 0.0;
        for (int j = 0; j < visible; ++j) sum += (s[j] = std::exp(s[j] - s_max));
        const double v_scale = host.kv_scale;
        for (int j = 0; j < visible; ++j) {
            const float* kj = &k[static_cast<size_t>(j) * kDimQk];
            for (int d = 0; d < kDimV; ++d) o[d] += s[j] / sum * v_scale * kj[d];
        }
        for (int j = 0; j < visible; ++j) {
            const float* kj = &k[static_cast<size_t>(j) * kDimQk];
            for (int d = 0; d < kDimV; ++d) mad[d] += s[j] / sum * std::fabs(v_scale * kj[d] - o[d]);
        }
        const double grow = std::expm1(2.0 * delta);
        for (int d = 0; d < kDimV; ++d) {
            const size_t i = static_cast<size_t>(r) * kDimV + d;
            b.o[i] = std::min(spec_allowance(ref.o[i]), b.o[i] + grow * mad[d]);
        }
    });
    return b;
}

Fp8MmaErrors fp8_mma_errors(const std::vector<float>& o, const std::vector<float>& lse,
                            const Reference& ref, const Fp8MmaBounds& bounds) {
    Fp8MmaErrors e;
    auto ratio = [](double err, double allowed) {
        return allowed > 0.0 ? err / allowed : (err > 0.0 ? INFINITY : 0.0);
    };
    const size_t n_o = std::min({o.size(), ref.o.size(), bounds.o.size()});
    for (size_t i = 0; i < n_o; ++i) {
        const double err = std::fabs(static_cast<double>(o[i]) - ref.o[i]);
        if (err > e.o_err || std::isnan(err)) {
            e.o_err = std::isnan(err) ? INFINITY : err;
            e.o_allowed = bounds.o[i];
        }
        e.o_ratio = std::max(e.o_ratio, std::isnan(err) ? INFINITY : ratio(err, bounds.o[i]));
        e.o_spec_ratio = std::max(e.o_spec_ratio, ratio(err, spec_allowance(ref.o[i])));
    }
    const size_t n_lse = std::min({lse.size(), ref.lse.size(), bounds.lse.size()});
    for (size_t i = 0; i < n_lse; ++i) {
        if (!std::isfinite(ref.lse[i])) continue;  // -inf rows: checked exactly by check_lse
        const double err = std::fabs(static_cast<double>(lse[i]) - ref.lse[i]);
        if (err > e.lse_err || std::isnan(err)) {
            e.lse_err = std::isnan(err) ? INFINITY : err;
            e.lse_allowed = bounds.lse[i];
        }
        e.lse_ratio = std::max(e.lse_ratio, ratio(err, bounds.lse[i]));
        if (bounds.score_abs[i] > 0.0) e.lse_eps = std::max(e.lse_eps, err / bounds.score_abs[i]);
    }
    for (double m : bounds.max_abs_logit) e.max_abs_logit = std::max(e.max_abs_logit, m);
    return e;
}

std::string describe(const Fp8MmaErrors& e) {
    char line[512];
    std::snprintf(line, sizeof(line),
                  "max |dO| %.3g (allowed there %.3g; max |dO|/allowed %.3g, /SPEC rule %.3g), "
                  "max |dLSE| %.3g (allowed there %.3g; max ratio %.3g), max |dLSE|/A %.3g "
                  "(model eps %.3g), max |logit| %.3g",
                  e.o_err, e.o_allowed, e.o_ratio, e.o_spec_ratio, e.lse_err, e.lse_allowed,
                  e.lse_ratio, e.lse_eps, kFp8MmaScoreRel, e.max_abs_logit);
    return line;
}

}  // namespace mla_test
