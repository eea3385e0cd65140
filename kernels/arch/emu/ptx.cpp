// The emulated NVIDIA GPU (target sm90a): the PTX instructions of emu/ptx_sm80.h and
// emu/ptx_sm90.h and the CUDA helpers of emu/cuda.h, over the machine of simt.cpp (machine.h).
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "arch/emu/cuda.h"
#include "arch/emu/machine.h"
#include "arch/emu/ptx_sm80.h"
#include "arch/emu/ptx_sm90.h"
#include "arch/emu/tensor_map.h"

namespace mla::emu {

using detail::g_machine;
using detail::kWarpgroup;
using detail::me;

namespace {

// The shared bytes [addr, addr + bytes), or nullptr (and the launch fails) outside the window.
uint8_t* shared(uint32_t addr, size_t bytes, const char* what) {
    if (static_cast<size_t>(addr) + bytes > static_cast<size_t>(kLdsBytes)) {
        fail("%s at shared address %u (%zu bytes) is outside the %d-byte window", what, addr,
             bytes, kLdsBytes);
        return nullptr;
    }
    return lds_base() + addr;
}

uint16_t f32_to_f16_bits(float x) {
    if (std::isnan(x)) return 0x7fff;
    const _Float16 h = static_cast<_Float16>(x);  // nearest even
    uint16_t b;
    std::memcpy(&b, &h, 2);
    return b;
}

uint16_t f32_to_bf16_bits(float x) {
    if (std::isnan(x)) return 0x7fff;
    uint32_t u;
    std::memcpy(&u, &x, 4);
    u += 0x7fffu + ((u >> 16) & 1u);
    return static_cast<uint16_t>(u >> 16);
}

// Nearest e4m3fn code (ties to the even code), saturated to +-448; NaN -> 0x7f.
uint8_t f32_to_e4m3fn_satfinite(float x) {
    if (std::isnan(x)) return 0x7f;
    const uint8_t sign = std::signbit(x) ? 0x80 : 0x00;
    const float a = std::fabs(x);
    uint8_t best = 0;
    for (uint8_t c = 1; c <= 0x7e; ++c) {
        const float d = std::fabs(e4m3fn_value(c) - a), db = std::fabs(e4m3fn_value(best) - a);
        if (d < db || (d == db && (c & 1) == 0)) best = c;
    }
    return static_cast<uint8_t>(sign | best);
}

// ---- warp collectives of the sm_80 atoms -------------------------------------------------------
struct MmaOperands {
    uint32_t a[4], b[2];
};

// D = A B + C of an m16n8k(kK) over the warp: element (row, k) of A and (k, col) of B as
// floats, from every lane's operands (the PTX fragment layouts, lane = 4 g + t).
template <int kK, typename Value>
void mma_m16n8(float (&c)[4], const MmaOperands& mine, Value value) {
    const uint8_t* all = wave_put(mine);
    bool fresh = false;
    float(&ab)[16][8] = *reinterpret_cast<float(*)[16][8]>(wave_once(&fresh));
    if (fresh) {
        float a[16][kK], b[kK][8];
        constexpr int kPer = kK / 8;  // elements per 32-bit register: 2 (16-bit) or 4 (e4m3)
        for (int lane = 0; lane < 32; ++lane) {
            const auto& o = *reinterpret_cast<const MmaOperands*>(all + lane * kSlotBytes);
            const int g = lane / 4, t = lane % 4;
            for (int j = 0; j < kPer; ++j) {
                a[g][kPer * t + j] = value(o.a[0], j);
                a[g + 8][kPer * t + j] = value(o.a[1], j);
                a[g][kPer * t + j + kK / 2] = value(o.a[2], j);
                a[g + 8][kPer * t + j + kK / 2] = value(o.a[3], j);
                b[kPer * t + j][g] = value(o.b[0], j);
                b[kPer * t + j + kK / 2][g] = value(o.b[1], j);
            }
        }
        for (int m = 0; m < 16; ++m)
            for (int n = 0; n < 8; ++n) {
                float acc = 0.0f;
                for (int k = 0; k < kK; ++k) acc += a[m][k] * b[k][n];
                ab[m][n] = acc;
            }
    }
    const int lane = static_cast<int>(thread_index()) % 32, g = lane / 4, t = lane % 4;
    for (int i = 0; i < 4; ++i) c[i] += ab[g + 8 * (i / 2)][2 * t + (i % 2)];
}

float half_value(uint32_t r, int j) { return f16_value(static_cast<uint16_t>(r >> (16 * j))); }
float bf16_half_value(uint32_t r, int j) {
    return bf16_value(static_cast<uint16_t>(r >> (16 * j)));
}
float e4m3_byte_value(uint32_t r, int j) {
    return e4m3fn_value(static_cast<uint8_t>(r >> (8 * j)));
}

// ---- mbarriers -------------------------------------------------------------------------------
detail::Mbarrier* mbarrier(uint32_t bar, const char* what) {
    auto& all = g_machine->mbarriers;
    const auto it = all.find(bar);
    if (it == all.end()) {
        fail("%s on an mbarrier at shared offset %u that was never initialized", what, bar);
        return nullptr;
    }
    return &it->second;
}
void phase_check(detail::Mbarrier& b, uint32_t bar) {
    if (b.pending == 0 && b.tx == 0) {
        ++b.phase;
        b.pending = b.expected;
    } else if (b.pending == 0 && b.tx < 0) {
        fail("mbarrier at shared offset %u: %lld more bytes completed than expected", bar,
             static_cast<long long>(-b.tx));
    }
}
void arrive_on(uint32_t bar) {
    detail::Mbarrier* b = mbarrier(bar, "an arrival");
    if (b == nullptr) return;
    if (b->pending == 0) {
        fail("mbarrier at shared offset %u: an arrival past its count (%u)", bar, b->expected);
        return;
    }
    --b->pending;
    phase_check(*b, bar);
}
void complete_tx(uint32_t bar, int64_t bytes) {
    detail::Mbarrier* b = mbarrier(bar, "a copy's completion");
    if (b == nullptr) return;
    b->tx -= bytes;
    phase_check(*b, bar);
}

// ---- cp.async --------------------------------------------------------------------------------
void land(const detail::CpAsync& c) {
    if (c.src_bytes > 0) std::memcpy(c.dst, c.src, c.src_bytes);
    if (c.bytes > c.src_bytes) std::memset(c.dst + c.src_bytes, 0, c.bytes - c.src_bytes);
}
// Lands thread f's copies for which keep() is false, in issue order.
template <typename Keep>
void land_copies(detail::Fiber& f, Keep keep) {
    std::vector<detail::CpAsync> left;
    for (const auto& c : f.cp_async) {
        if (keep(c)) left.push_back(c);
        else land(c);
    }
    f.cp_async.swap(left);
}
void cp_async(uint32_t dst, const void* src, uint32_t bytes, int src_bytes) {
    if (src_bytes < 0 || static_cast<uint32_t>(src_bytes) > bytes || dst % bytes != 0) {
        fail("cp.async of %u bytes to shared %u with %d source bytes", bytes, dst, src_bytes);
        return;
    }
    uint8_t* d = shared(dst, bytes, "cp.async");
    if (d == nullptr) return;
    // Until it lands the destination holds the fill: a thread still reading what it replaces
    // (a missing wait on an empty barrier) reads 0xFF bytes.
    std::memset(d, 0xff, bytes);
    if (src_bytes > 0 && reinterpret_cast<uintptr_t>(src) % bytes != 0) {
        fail("cp.async of %u bytes from a source not %u-byte aligned", bytes, bytes);
        return;
    }
    detail::Fiber& f = me();
    f.cp_async.push_back({d, static_cast<const uint8_t*>(src), bytes,
                          static_cast<uint32_t>(src_bytes), f.cp_committed, f.cp_issued++});
}

// ---- swizzles and descriptors ----------------------------------------------------------------
// The shared address of logical address `a` in the swizzle of `bytes` (128, 64, 32; 0 none):
// its 16-byte piece (bits 4..) XORed with bits 7.. of the address.
uint32_t swizzled(uint32_t a, int bytes) {
    switch (bytes) {
        case 128: return a ^ (((a >> 7) & 7u) << 4);
        case 64: return a ^ (((a >> 7) & 3u) << 4);
        case 32: return a ^ (((a >> 7) & 1u) << 4);
        default: return a;
    }
}

// A K-major operand of a wgmma through its descriptor: byte `kbyte` (0..31) of row `row`.
struct Descriptor {
    uint32_t start, leading, stride;
    int swizzle;  // bytes of the swizzle (0: none)
    explicit Descriptor(uint64_t d)
        : start(static_cast<uint32_t>(d & 0x3fff) << 4),
          leading(static_cast<uint32_t>((d >> 16) & 0x3fff) << 4),
          stride(static_cast<uint32_t>((d >> 32) & 0x3fff) << 4) {
        static constexpr int kBytes[4] = {0, 128, 64, 32};
        swizzle = kBytes[(d >> 62) & 3];
        if (((d >> 49) & 7) != 0) fail("a wgmma descriptor with a base offset (not emulated)");
    }
    uint32_t address(int row, int kbyte) const {
        const uint32_t atom = start + static_cast<uint32_t>(row / 8) * stride;
        if (swizzle == 0)
            return atom + static_cast<uint32_t>(kbyte / 16) * leading +
                   static_cast<uint32_t>((row % 8) * 16 + kbyte % 16);
        return swizzled(atom + static_cast<uint32_t>((row % 8) * swizzle + kbyte), swizzle);
    }
};

// Element k of row `row` of a K-major operand (k16 of 16-bit values or k32 of e4m3 codes).
float operand_value(const Descriptor& desc, int kind, int row, int k) {
    const int width = kind <= 1 ? 2 : 1;
    const uint8_t* p = shared(desc.address(row, width * k), static_cast<size_t>(width), "wgmma");
    if (p == nullptr) return 0.0f;
    if (width == 1) return e4m3fn_value(*p);
    uint16_t bits;
    std::memcpy(&bits, p, 2);
    return kind == 0 ? f16_value(bits) : bf16_value(bits);
}

// Element (m, k) of A from the registers of warpgroup thread `member`'s fragment (m in its
// warp's 16 rows): the mma A layouts, 16-bit (kind 0, 1) or e4m3 (kind 2).
float register_value(int kind, uint32_t reg, int j) {
    return kind == 0 ? half_value(reg, j) : kind == 1 ? bf16_half_value(reg, j)
                                                      : e4m3_byte_value(reg, j);
}

// One past the last thread of the warpgroup starting at `first` (a partial one at the CTA's end).
int members_end(int first) {
    return std::min(first + kWarpgroup, static_cast<int>(g_machine->block_threads));
}

// A digest of the shared bytes a wgmma reads through `desc` (rows x 32 bytes): taken at issue
// and again when it runs, so that an operand that changes in between (a wgmma issued before its
// tile arrived, or a tile overwritten before the wait) fails the launch.
uint64_t operand_digest(uint64_t desc, int rows) {
    const Descriptor d(desc);
    uint64_t h = 1469598103934665603ull;
    for (int r = 0; r < rows; ++r)
        for (int k = 0; k < 32; ++k) {
            const uint8_t* p = shared(d.address(r, k), 1, "wgmma");
            h = (h ^ (p != nullptr ? *p : 0u)) * 1099511628211ull;
        }
    return h;
}

// Runs op i of every live thread of warpgroup `first / 128` (their i-th recorded wgmma).
void run_wgmma(int first, size_t i) {
    auto& fibers = g_machine->fibers;
    const detail::WgmmaOp* lead = nullptr;
    for (int t = first; t < members_end(first); ++t) {
        const detail::Fiber& f = fibers[static_cast<size_t>(t)];
        if (f.done || i >= f.wgmma.size()) continue;
        const detail::WgmmaOp& op = f.wgmma[i];
        if (lead == nullptr) lead = &op;
        else if (op.kind != lead->kind || op.n != lead->n || op.b_desc != lead->b_desc ||
                 op.a_desc != lead->a_desc || op.accumulate != lead->accumulate)
            fail("the threads of warpgroup %d issued different wgmma (thread %d)",
                 first / kWarpgroup, t);
    }
    if (lead == nullptr) return;
    const detail::Fiber& f0 = fibers[static_cast<size_t>(first)];  // it took the digests
    if (!f0.done && i < f0.wgmma.size() &&
        (operand_digest(lead->b_desc, lead->n) != f0.wgmma[i].b_digest ||
         (lead->kind == 3 && operand_digest(lead->a_desc, 64) != f0.wgmma[i].a_digest)))
        fail("warpgroup %d: a wgmma's shared-memory operand changed between its issue and its "
             "wait (issued before its data arrived, or overwritten before the wait)",
             first / kWarpgroup);
    const int kind = lead->kind, n = lead->n, k_steps = kind <= 1 ? 16 : 32;
    float a[64][32], b[64][32];
    const Descriptor bd(lead->b_desc);
    const int b_kind = kind == 3 ? 2 : kind;
    for (int r = 0; r < n; ++r)
        for (int k = 0; k < k_steps; ++k) b[r][k] = operand_value(bd, b_kind, r, k);
    if (kind == 3) {
        const Descriptor ad(lead->a_desc);
        for (int m = 0; m < 64; ++m)
            for (int k = 0; k < k_steps; ++k) a[m][k] = operand_value(ad, 2, m, k);
    } else {
        for (int m = 0; m < 64; ++m)
            for (int k = 0; k < k_steps; ++k) a[m][k] = 0.0f;
        const int per = kind <= 1 ? 2 : 4;  // elements per register
        for (int t = first; t < members_end(first); ++t) {
            const detail::Fiber& f = fibers[static_cast<size_t>(t)];
            if (f.done || i >= f.wgmma.size()) continue;
            const uint32_t* reg = f.wgmma[i].a;
            const int w = (t - first) / 32, lane = t % 32, g = lane / 4, q = lane % 4;
            const int row = 16 * w + g;
            for (int j = 0; j < per; ++j) {
                a[row][per * q + j] = register_value(kind, reg[0], j);
                a[row + 8][per * q + j] = register_value(kind, reg[1], j);
                a[row][per * q + j + k_steps / 2] = register_value(kind, reg[2], j);
                a[row + 8][per * q + j + k_steps / 2] = register_value(kind, reg[3], j);
            }
        }
    }
    // d[4j + 2h + c] = D[16 w + g + 8 h][8 j + 2 t + c] of each thread's own accumulators.
    for (int t = first; t < members_end(first); ++t) {
        const detail::Fiber& f = fibers[static_cast<size_t>(t)];
        if (f.done || i >= f.wgmma.size()) continue;
        const detail::WgmmaOp& op = f.wgmma[i];
        const int w = (t - first) / 32, lane = t % 32, g = lane / 4, q = lane % 4;
        for (int e = 0; e < n / 2; ++e) {
            const int j = e / 4, h = (e / 2) % 2, c = e % 2;
            const int m = 16 * w + g + 8 * h, col = 8 * j + 2 * q + c;
            float acc = 0.0f;
            for (int k = 0; k < k_steps; ++k) acc += a[m][k] * b[col][k];
            op.d[e] = (op.accumulate ? op.d[e] : 0.0f) + acc;
        }
    }
}

// The completion of a warpgroup's wgmma.wait_group n: every thread's groups older than its
// newest n run, in issue order.
struct WgmmaWait {
    int first;
    int n;
};
void run_waited_wgmma(void* context) {
    const auto& w = *static_cast<const WgmmaWait*>(context);
    auto& fibers = g_machine->fibers;
    size_t count = 0;  // the ops every thread runs now (the same in each)
    bool first_thread = true;
    for (int t = w.first; t < members_end(w.first); ++t) {
        const detail::Fiber& f = fibers[static_cast<size_t>(t)];
        if (f.done) continue;
        const uint64_t keep_from =
            f.wgmma_committed > static_cast<uint64_t>(w.n) ? f.wgmma_committed - w.n : 0;
        size_t c = 0;
        while (c < f.wgmma.size() && f.wgmma[c].group < keep_from) ++c;
        if (first_thread) count = c;
        else if (c != count)
            fail("the threads of warpgroup %d wait for different numbers of wgmma",
                 w.first / kWarpgroup);
        first_thread = false;
    }
    for (size_t i = 0; i < count; ++i) run_wgmma(w.first, i);
    for (int t = w.first; t < members_end(w.first); ++t) {
        detail::Fiber& f = fibers[static_cast<size_t>(t)];
        if (f.done) continue;
        f.wgmma.erase(f.wgmma.begin(),
                      f.wgmma.begin() + static_cast<std::ptrdiff_t>(std::min(count,
                                                                              f.wgmma.size())));
    }
}

// ---- named barriers --------------------------------------------------------------------------
detail::Group* named(int id, int threads) {
    if (id <= 0 || id >= 16 || threads <= 0 || threads % 32 != 0) {
        fail("bar.sync %d, %d: not a named barrier of whole warps", id, threads);
        return nullptr;
    }
    detail::Group& g = g_machine->named[id];
    if (g.arrived == 0) {
        g.alive = threads;
        g_machine->named_any[id][g.generation & 1] = false;
    } else if (g.alive != threads) {
        fail("barrier %d is used with %d and %d threads at once", id, g.alive, threads);
    }
    return &g;
}

}  // namespace

[[noreturn]] void trap() {
    fail("thread %u of block %u executed a trap", thread_index(), block_index());
    detail::exit_fiber();
}

size_t shared_offset(const void* p) {
    const uint8_t* b = static_cast<const uint8_t*>(p);
    if (b < lds_base() || b >= lds_base() + kLdsBytes) {
        fail("__cvta_generic_to_shared of an address outside shared memory");
        return 0;
    }
    return static_cast<size_t>(b - lds_base());
}

void full_mask(unsigned mask) {
    if (mask != 0xffffffffu) fail("a warp collective with mask %#x (only full masks)", mask);
}

namespace detail {
void start_block_target(Machine&) {}
void finish_block_target(Machine& m) {
    if (!m.in_flight.empty())
        fail("the CTA ended with %zu asynchronous copies in flight", m.in_flight.size());
    for (const Fiber& f : m.fibers)
        if (f.tid < m.block_threads && !f.cp_async.empty()) {
            fail("thread %u ended with %zu cp.async not waited for", f.tid, f.cp_async.size());
            break;
        }
}
}  // namespace detail

}  // namespace mla::emu

namespace mla::arch::ptx {

using emu::detail::g_machine;
using emu::detail::me;

// ---- sm_80 -----------------------------------------------------------------------------------
uint32_t cvt_rn_f16x2_f32(float a, float b) {
    return static_cast<uint32_t>(emu::f32_to_f16_bits(b)) |
           (static_cast<uint32_t>(emu::f32_to_f16_bits(a)) << 16);
}
float cvt_f32_f16(uint16_t h) { return emu::f16_value(h); }
float ex2_approx_ftz_f32(float x) {
    if (std::fpclassify(x) == FP_SUBNORMAL) x = 0.0f;
    const float r = std::exp2(x);
    return std::fpclassify(r) == FP_SUBNORMAL ? 0.0f : r;
}

void mma_m16n8k16_f16(float (&c)[4], uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3,
                      uint32_t b0, uint32_t b1) {
    emu::mma_m16n8<16>(c, {{a0, a1, a2, a3}, {b0, b1}}, emu::half_value);
}
void mma_m16n8k16_bf16(float (&c)[4], uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3,
                       uint32_t b0, uint32_t b1) {
    emu::mma_m16n8<16>(c, {{a0, a1, a2, a3}, {b0, b1}}, emu::bf16_half_value);
}
void mma_m16n8k32_e4m3(float (&c)[4], uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3,
                       uint32_t b0, uint32_t b1) {
    emu::mma_m16n8<32>(c, {{a0, a1, a2, a3}, {b0, b1}}, emu::e4m3_byte_value);
}

// Matrix i's row j is at lane 8 i + j's address; .trans: register i of lane (g, t) holds
// elements (2t, g) and (2t + 1, g) of matrix i.
void ldmatrix_x4_trans_b16(uint32_t& r0, uint32_t& r1, uint32_t& r2, uint32_t& r3,
                           uint32_t addr) {
    if (addr % 16 != 0) emu::fail("ldmatrix row at the unaligned shared address %u", addr);
    const uint8_t* all = emu::wave_put(addr);
    bool fresh = false;
    uint32_t(&regs)[32][4] = *reinterpret_cast<uint32_t(*)[32][4]>(emu::wave_once(&fresh));
    if (fresh) {
        for (int lane = 0; lane < 32; ++lane)
            for (int i = 0; i < 4; ++i) {
                const int g = lane / 4, t = lane % 4;
                uint16_t v[2] = {0, 0};
                for (int h = 0; h < 2; ++h) {
                    const uint32_t row = emu::lane_value<uint32_t>(all, 8 * i + 2 * t + h);
                    const uint8_t* p = emu::shared(row + 2 * static_cast<uint32_t>(g), 2,
                                                   "ldmatrix");
                    if (p != nullptr) std::memcpy(&v[h], p, 2);
                }
                regs[lane][i] = v[0] | (static_cast<uint32_t>(v[1]) << 16);
            }
    }
    const int lane = static_cast<int>(emu::thread_index()) % 32;
    r0 = regs[lane][0];
    r1 = regs[lane][1];
    r2 = regs[lane][2];
    r3 = regs[lane][3];
}

void cp_async_cg_16(uint32_t dst, const void* src, int src_bytes) {
    emu::cp_async(dst, src, 16, src_bytes);
}
void cp_async_cg_16_if(uint32_t dst, const void* src, int src_bytes, bool issue) {
    if (issue) emu::cp_async(dst, src, 16, src_bytes);
}
void cp_async_ca_4(uint32_t dst, const void* src, int src_bytes) {
    emu::cp_async(dst, src, 4, src_bytes);
}
void cp_async_ca_4_if(uint32_t dst, const void* src, int src_bytes, bool issue) {
    if (issue) emu::cp_async(dst, src, 4, src_bytes);
}
void cp_async_commit_group() { ++me().cp_committed; }
void cp_async_wait_groups(int n) {
    emu::detail::Fiber& f = me();
    const uint64_t keep_from =
        f.cp_committed > static_cast<uint64_t>(n) ? f.cp_committed - static_cast<uint64_t>(n) : 0;
    emu::land_copies(f, [&](const emu::detail::CpAsync& c) { return c.group >= keep_from; });
}

// ---- sm_90a ----------------------------------------------------------------------------------
uint4 ld_shared_v4_u32(uint32_t addr) {
    uint4 v{0, 0, 0, 0};
    if (addr % 16 != 0) emu::fail("ld.shared.v4 at the unaligned shared address %u", addr);
    else if (const uint8_t* p = emu::shared(addr, 16, "ld.shared.v4")) std::memcpy(&v, p, 16);
    return v;
}

void wgmma_commit_group() { ++me().wgmma_committed; }
void wgmma_wait_groups(int n) {
    const int first = static_cast<int>(emu::thread_index()) / emu::kWarpgroup * emu::kWarpgroup;
    emu::WgmmaWait w{first, n};
    emu::detail::arrive(g_machine->warpgroups[static_cast<size_t>(first / emu::kWarpgroup)],
                        emu::run_waited_wgmma, &w);
}
void wgmma_issue(int kind, int n, float* d, const uint32_t* a, uint64_t a_desc, uint64_t b_desc,
                 bool acc) {
    emu::detail::Fiber& f = me();
    emu::detail::WgmmaOp op{};
    op.kind = kind;
    op.n = n;
    if (a != nullptr) std::memcpy(op.a, a, sizeof(op.a));
    op.a_desc = a_desc;
    op.b_desc = b_desc;
    op.d = d;
    op.accumulate = acc;
    op.group = f.wgmma_committed;
    if (emu::thread_index() % emu::kWarpgroup == 0) {  // one digest a warpgroup's wgmma
        op.b_digest = emu::operand_digest(b_desc, n);
        if (kind == 3) op.a_digest = emu::operand_digest(a_desc, 64);
    }
    f.wgmma.push_back(op);
}

void mbarrier_init(uint32_t bar, uint32_t count) {
    if (bar % 8 != 0 || emu::shared(bar, 8, "mbarrier.init") == nullptr || count == 0) {
        emu::fail("mbarrier.init at shared %u with count %u", bar, count);
        return;
    }
    if (g_machine->mbarriers.count(bar) != 0) {
        emu::fail("mbarrier at shared %u initialized twice (no mbarrier.inval between)", bar);
        return;
    }
    emu::detail::Mbarrier b;
    b.expected = b.pending = count;
    g_machine->mbarriers[bar] = b;
}
void mbarrier_inval(uint32_t bar) {
    emu::detail::Mbarrier* b = emu::mbarrier(bar, "mbarrier.inval");
    if (b == nullptr) return;
    size_t mine = 0;  // operations in flight that complete on this barrier
    for (const auto& op : g_machine->in_flight) mine += op.bar == bar ? 1 : 0;
    size_t waiters = 0;  // work-items parked on it (or woken by its last phase, not yet resumed)
    for (unsigned i = 0; i < g_machine->block_threads; ++i) {
        const emu::detail::Fiber& f = g_machine->fibers[i];
        waiters += !f.done && f.wait_mbarrier == bar ? 1 : 0;
    }
    if (waiters != 0) {
        emu::fail("mbarrier.inval at shared %u while %zu work-items wait on it", bar, waiters);
        return;
    }
    if (b->pending != b->expected || b->tx != 0 || mine != 0) {
        emu::fail("mbarrier.inval at shared %u in the middle of a phase (%u of %u arrivals, %lld "
                  "bytes pending, %zu asynchronous operations in flight to it)",
                  bar, b->expected - b->pending, b->expected, static_cast<long long>(b->tx),
                  mine);
        return;
    }
    g_machine->mbarriers.erase(bar);
}
void mbarrier_arrive(uint32_t bar) { emu::arrive_on(bar); }
void mbarrier_arrive_expect_tx(uint32_t bar, uint32_t bytes) {
    if (emu::detail::Mbarrier* b = emu::mbarrier(bar, "expect_tx")) b->tx += bytes;
    emu::arrive_on(bar);
}
void mbarrier_wait_parity(uint32_t bar, uint32_t parity) {
    emu::detail::wait_mbarrier(bar, parity & 1u);
}
void cp_async_mbarrier_arrive_noinc(uint32_t bar) {
    const unsigned tid = emu::thread_index();
    const uint64_t upto = me().cp_issued;
    g_machine->in_flight.push_back({bar, [tid, upto, bar] {
        emu::land_copies(g_machine->fibers[tid],
                         [&](const emu::detail::CpAsync& c) { return c.seq >= upto; });
        emu::arrive_on(bar);
    }});
}
void cp_async_wait_all() {
    emu::land_copies(me(), [](const emu::detail::CpAsync&) { return false; });
}

void cp_async_bulk_tensor_2d_g2s(uint32_t dst, const void* map, int x, int y, uint32_t bar) {
    emu::TensorMap m;
    std::memcpy(&m, map, sizeof(m));
    if (m.magic != emu::TensorMap::kMagic) {
        emu::fail("cp.async.bulk.tensor with a tensor map the emulator did not encode");
        return;
    }
    const uint32_t box = m.box_bytes * m.box_rows;
    if (dst % static_cast<uint32_t>(8 * m.swizzle_bytes) != 0 ||
        emu::shared(dst, box, "cp.async.bulk.tensor") == nullptr) {
        emu::fail("cp.async.bulk.tensor into shared %u (the %d-byte swizzle needs %d-byte "
                  "alignment)", dst, m.swizzle_bytes, 8 * m.swizzle_bytes);
        return;
    }
    std::memset(emu::lds_base() + dst, 0xff, box);  // the fill until it lands (cp_async)
    g_machine->in_flight.push_back({bar, [m, dst, x, y, bar, box] {
        uint8_t* lds = emu::lds_base();
        for (uint32_t r = 0; r < m.box_rows; ++r)
            for (uint32_t c = 0; c < m.box_bytes; ++c) {
                const int64_t row = static_cast<int64_t>(y) + r, col = static_cast<int64_t>(x) + c;
                const bool inside = row >= 0 && col >= 0 && static_cast<uint64_t>(row) < m.rows &&
                                    static_cast<uint64_t>(col) < m.width;
                lds[emu::swizzled(dst + r * m.box_bytes + c, m.swizzle_bytes)] =
                    inside ? m.base[static_cast<uint64_t>(row) * m.stride +
                                    static_cast<uint64_t>(col)]
                           : 0;
            }
        emu::complete_tx(bar, box);
    }});
}
void cp_async_bulk_g2s(uint32_t dst, const void* src, uint32_t bytes, uint32_t bar) {
    if (dst % 16 != 0 || bytes % 16 != 0 || reinterpret_cast<uintptr_t>(src) % 16 != 0 ||
        emu::shared(dst, bytes, "cp.async.bulk") == nullptr) {
        emu::fail("cp.async.bulk of %u bytes to shared %u: not 16-byte aligned", bytes, dst);
        return;
    }
    std::memset(emu::lds_base() + dst, 0xff, bytes);  // the fill until it lands (cp_async)
    g_machine->in_flight.push_back({bar, [dst, src, bytes, bar] {
        std::memcpy(emu::lds_base() + dst, src, bytes);
        emu::complete_tx(bar, bytes);
    }});
}

// Register i of lane (g, t) holds row g, columns 2t, 2t + 1 of matrix i, stored there, or with
// .trans at rows 2t, 2t + 1, column g; matrix i's row j at lane 8 i + j's address. The first
// lane to resume stores the whole warp's, as the one instruction does.
static void stmatrix_x4(bool trans, uint32_t addr, uint32_t r0, uint32_t r1, uint32_t r2,
                        uint32_t r3) {
    if (addr % 16 != 0) emu::fail("stmatrix row at the unaligned shared address %u", addr);
    const uint32_t mine[5] = {addr, r0, r1, r2, r3};
    const uint8_t* all = emu::wave_put(mine);
    bool fresh = false;
    (void)emu::wave_once(&fresh);
    if (!fresh) return;
    for (int lane = 0; lane < 32; ++lane) {
        const int g = lane / 4, t = lane % 4;
        for (int i = 0; i < 4; ++i) {
            const uint32_t reg = emu::lane_value<uint32_t>(all + 4 * (i + 1), lane);
            for (int h = 0; h < 2; ++h) {
                const int row = trans ? 2 * t + h : g, col = trans ? g : 2 * t + h;
                const uint32_t at = emu::lane_value<uint32_t>(all, 8 * i + row);
                const uint16_t v = static_cast<uint16_t>(reg >> (16 * h));
                if (uint8_t* p = emu::shared(at + 2 * static_cast<uint32_t>(col), 2, "stmatrix"))
                    std::memcpy(p, &v, 2);
            }
        }
    }
}
void stmatrix_x4_trans_b16(uint32_t addr, uint32_t r0, uint32_t r1, uint32_t r2, uint32_t r3) {
    stmatrix_x4(true, addr, r0, r1, r2, r3);
}
void stmatrix_x4_b16(uint32_t addr, uint32_t r0, uint32_t r1, uint32_t r2, uint32_t r3) {
    stmatrix_x4(false, addr, r0, r1, r2, r3);
}

uint32_t cvt_rn_f16x2_e4m3x2_lo(uint32_t codes) {
    return cvt_rn_f16x2_f32(emu::e4m3fn_value(static_cast<uint8_t>(codes >> 8)),
                            emu::e4m3fn_value(static_cast<uint8_t>(codes)));
}
uint32_t cvt_rn_f16x2_e4m3x2_hi(uint32_t codes) { return cvt_rn_f16x2_e4m3x2_lo(codes >> 16); }
uint32_t cvt_rn_satfinite_e4m3x2_f32(float a, float b) {
    return static_cast<uint32_t>(emu::f32_to_e4m3fn_satfinite(b)) |
           (static_cast<uint32_t>(emu::f32_to_e4m3fn_satfinite(a)) << 8);
}
uint32_t cvt_rn_bf16x2_f32(float a, float b) {
    return static_cast<uint32_t>(emu::f32_to_bf16_bits(b)) |
           (static_cast<uint32_t>(emu::f32_to_bf16_bits(a)) << 16);
}

void bar_sync(int id, int threads) {
    if (emu::detail::Group* g = emu::named(id, threads)) emu::detail::arrive(*g);
}
bool bar_red_or_pred(int id, int threads, bool pred) {
    emu::detail::Group* g = emu::named(id, threads);
    if (g == nullptr) return pred;
    const uint64_t generation = g->generation;
    g_machine->named_any[id][generation & 1] |= pred;
    emu::detail::arrive(*g);
    return g_machine->named_any[id][generation & 1];
}
void bar_arrive(int id, int threads) {
    if (emu::detail::Group* g = emu::named(id, threads)) emu::detail::arrive_only(*g);
}

}  // namespace mla::arch::ptx
