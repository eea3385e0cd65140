// The emulated GPU's machine (simt.h, machine.h): workgroups of fibers, their barriers and wave
// exchanges, the scheduler, the launch, and the host runtime of arch/runtime.h's emu branch.
#include "arch/emu/simt.h"

#include <algorithm>
#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <new>
#include <random>
#include <vector>

#if !defined(__x86_64__)
#include <ucontext.h>
#endif

#include "arch/emu/machine.h"
#include "arch/runtime.h"

// ---- context switch --------------------------------------------------------------------------
#if defined(__x86_64__)
// mla_emu_switch(save, load): pushes the callee-saved registers, stores the stack pointer in
// *save, takes `load` as the stack pointer and pops what was pushed there (System V ABI).
asm(R"(
    .text
    .globl mla_emu_switch
    .hidden mla_emu_switch
    .type mla_emu_switch, @function
mla_emu_switch:
    pushq %rbp
    pushq %rbx
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
    movq %rsp, (%rdi)
    movq %rsi, %rsp
    popq %r15
    popq %r14
    popq %r13
    popq %r12
    popq %rbx
    popq %rbp
    ret
    .size mla_emu_switch, .-mla_emu_switch
    .pushsection .note.GNU-stack, "", @progbits
    .popsection
)");
extern "C" void mla_emu_switch(void** save, void* load);
#endif

namespace mla::emu {
namespace detail {
Machine* g_machine = nullptr;
Fiber& me() { return g_machine->fibers[static_cast<size_t>(g_machine->current)]; }
}  // namespace detail

namespace {
using namespace detail;

constexpr size_t kStackBytes = 256 * 1024;
constexpr int kMaxThreads = 1024;

std::mutex g_launch;  // one launch at a time (g_machine)

void to_scheduler() {
    Fiber& f = me();
#if defined(__x86_64__)
    mla_emu_switch(&f.sp, g_machine->scheduler_sp);
#else
    swapcontext(&f.context, &g_machine->scheduler);
#endif
}

void complete_generation(Group& g, void (*complete)(void*), void* context) {
    if (complete != nullptr) complete(context);
    g.arrived = 0;
    ++g.generation;
}

// A member left: the collective in progress completes if everyone else is there.
void leave(Group& g) {
    --g.alive;
    if (g.alive > 0 && g.arrived >= g.alive) complete_generation(g, nullptr, nullptr);
}

void leave_all(Fiber& f) {
    f.done = true;
    if (!f.wgmma.empty())
        fail("thread %u returned with %zu wgmma not waited for", f.tid, f.wgmma.size());
    leave(g_machine->block);
    leave(g_machine->waves[f.tid / kWave]);
    leave(g_machine->warpgroups[f.tid / kWarpgroup]);
}

void fiber_main() {
    g_machine->body(g_machine->body_context);
    leave_all(me());
    to_scheduler();  // never resumed
    std::abort();
}

#if !defined(__x86_64__)
void fiber_entry() { fiber_main(); }
#endif

// The order in which the scheduler runs a workgroup's waves (each until all its work-items wait)
// and their lanes, from MLA_EMU_ORDER: forward (wave 0 first, lanes 0, 1, ...; the default),
// reverse, or shuffle (a new random order on every round, seeded by MLA_EMU_SEED, default 1).
// So of two accesses to the same shared bytes by different waves with no barrier between,
// forward runs the lower wave's first and reverse the higher wave's: a kernel that reads what
// another wave writes without a barrier between fails in one of the two.
enum class Order { kForward, kReverse, kShuffle };
Order order_from_environment() {
    const char* v = std::getenv("MLA_EMU_ORDER");
    if (v == nullptr || std::strcmp(v, "forward") == 0 || v[0] == '\0') return Order::kForward;
    if (std::strcmp(v, "reverse") == 0) return Order::kReverse;
    if (std::strcmp(v, "shuffle") == 0) return Order::kShuffle;
    std::fprintf(stderr, "libmla_decode emu: MLA_EMU_ORDER=%s is not forward, reverse or "
                 "shuffle; using forward\n", v);
    return Order::kForward;
}
const Order kOrder = order_from_environment();

bool runnable(Machine& m, const Fiber& f) {
    if (f.done) return false;
    if (f.waiting != nullptr) return f.waiting->generation != f.wait_generation;
    if (f.wait_mbarrier != kNoMbarrier)
        return (m.mbarriers[f.wait_mbarrier].phase & 1u) != f.wait_parity;
    return true;
}

// Lands every asynchronous operation in flight, in issue order; false if there was none.
bool land_in_flight(Machine& m) {
    if (m.in_flight.empty()) return false;
    std::vector<Machine::InFlight> now;
    now.swap(m.in_flight);
    for (auto& op : now) op.land();
    return true;
}

std::vector<Group> members(int n, int size) {
    std::vector<Group> groups(static_cast<size_t>((n + size - 1) / size));
    for (size_t g = 0; g < groups.size(); ++g)
        groups[g].alive = std::min(size, n - static_cast<int>(g) * size);
    return groups;
}

// Runs one workgroup to completion; false if its work-items wait on each other forever (a
// collective that not every live member reaches, a barrier that never completes).
bool run_block(Machine& m) {
    const int n = static_cast<int>(m.block_threads);
    const int waves = (n + kWave - 1) / kWave;
    m.block = Group{n, 0, 0};
    for (auto& once : m.once) once.collective = 0;  // counts restart at 0
    m.waves = members(n, kWave);
    m.warpgroups = members(n, kWarpgroup);
    for (int i = 0; i < 16; ++i) {
        m.named[i] = Group{};
        m.named_threads[i] = 0;
    }
    m.mbarriers.clear();
    m.in_flight.clear();
    start_block_target(m);
    for (int i = 0; i < n; ++i) {
        Fiber& f = m.fibers[static_cast<size_t>(i)];
        f.tid = static_cast<unsigned>(i);
        f.done = false;
        f.waiting = nullptr;
        f.wait_mbarrier = kNoMbarrier;
        f.collectives = 0;
        f.cp_async.clear();
        f.cp_committed = f.cp_issued = 0;
        f.wgmma.clear();
        f.wgmma_committed = 0;
        if (!f.stack) f.stack.reset(new uint8_t[kStackBytes]);
#if defined(__x86_64__)
        // Stack top 16-byte aligned; the first switch pops six registers and returns into
        // fiber_main as if called (its return address slot holds 0).
        uintptr_t top = reinterpret_cast<uintptr_t>(f.stack.get() + kStackBytes) & ~uintptr_t{15};
        void** sp = reinterpret_cast<void**>(top);
        *--sp = nullptr;
        *--sp = reinterpret_cast<void*>(&fiber_main);
        for (int r = 0; r < 6; ++r) *--sp = nullptr;
        f.sp = sp;
#else
        getcontext(&f.context);
        f.context.uc_stack.ss_sp = f.stack.get();
        f.context.uc_stack.ss_size = kStackBytes;
        f.context.uc_link = nullptr;
        makecontext(&f.context, fiber_entry, 0);
#endif
    }
    // Wave by wave: a wave runs until none of its work-items can go on (each waits, or
    // returned) before the next wave starts, in MLA_EMU_ORDER's order of waves and lanes.
    std::vector<int> wave_order(static_cast<size_t>(waves)), lane_order(kWave);
    for (int w = 0; w < waves; ++w)
        wave_order[static_cast<size_t>(w)] = kOrder == Order::kReverse ? waves - 1 - w : w;
    for (int l = 0; l < kWave; ++l)
        lane_order[static_cast<size_t>(l)] = kOrder == Order::kReverse ? kWave - 1 - l : l;
    // A phase (the work between two workgroup barriers) starts with the first wave of the order:
    // once the barrier's generation moves, the round ends and the next starts from the top.
    int live = n;
    while (live > 0) {
        bool progressed = false;
        const uint64_t phase = m.block.generation;
        if (kOrder == Order::kShuffle) std::shuffle(wave_order.begin(), wave_order.end(), m.random);
        for (const int w : wave_order) {
            if (m.block.generation != phase) break;
            if (kOrder == Order::kShuffle)
                std::shuffle(lane_order.begin(), lane_order.end(), m.random);
            for (bool wave_progressed = true; wave_progressed && m.block.generation == phase;) {
                wave_progressed = false;
                for (const int l : lane_order) {
                    const int i = w * kWave + l;
                    if (i >= n || m.block.generation != phase) continue;
                    Fiber& f = m.fibers[static_cast<size_t>(i)];
                    if (!runnable(m, f)) continue;
                    m.current = i;
#if defined(__x86_64__)
                    mla_emu_switch(&m.scheduler_sp, f.sp);
#else
                    swapcontext(&m.scheduler, &f.context);
#endif
                    wave_progressed = progressed = true;
                    if (f.done) --live;
                }
            }
        }
        // Nobody can go on: what is in flight lands now (the latest it may), else a hang.
        if (!progressed && !land_in_flight(m)) return false;
    }
    finish_block_target(m);
    return true;
}

thread_local gpu::error_t t_last_error = gpu::kSuccess;

}  // namespace

namespace detail {
void arrive(Group& g, void (*complete)(void*), void* context) {
    const uint64_t generation = g.generation;
    if (++g.arrived >= g.alive) {
        complete_generation(g, complete, context);
        if (&g == &g_machine->block) to_scheduler();
        return;
    }
    Fiber& f = me();
    f.waiting = &g;
    f.wait_generation = generation;
    to_scheduler();
    f.waiting = nullptr;
}

void arrive_only(Group& g, void (*complete)(void*), void* context) {
    if (++g.arrived >= g.alive) complete_generation(g, complete, context);
}

void wait_mbarrier(uint32_t bar, uint32_t parity) {
    const auto it = g_machine->mbarriers.find(bar);
    if (it == g_machine->mbarriers.end()) {
        fail("a wait on an mbarrier at shared offset %u that was never initialized", bar);
        return;
    }
    if ((it->second.phase & 1u) != parity) return;
    Fiber& f = me();
    f.wait_mbarrier = bar;
    f.wait_parity = parity;
    to_scheduler();
    f.wait_mbarrier = kNoMbarrier;
}

void exit_fiber() {
    leave_all(me());
    to_scheduler();  // never resumed
    std::abort();
}

#if !defined(MLA_EMU_SM90)
void start_block_target(Machine&) {}
void finish_block_target(Machine&) {}
#endif
}  // namespace detail

unsigned thread_index() { return me().tid; }
unsigned block_index() { return g_machine->block_index; }
unsigned block_threads() { return g_machine->block_threads; }
unsigned grid_blocks() { return g_machine->grid; }
void sync_block() { arrive(g_machine->block); }

void fail(const char* format, ...) {
    if (!g_machine->failure.empty()) return;
    char text[512];
    va_list args;
    va_start(args, format);
    std::vsnprintf(text, sizeof(text), format, args);
    va_end(args);
    g_machine->failure = text;
}

const uint8_t* wave_exchange(const void* data, size_t bytes) {
    Fiber& f = me();
    const unsigned wave = f.tid / kWave, lane = f.tid % kWave;
    uint8_t* buffer = g_machine->exchange.data() +
                      (static_cast<size_t>(wave) * 2 + (f.collectives & 1)) * kWave * kSlotBytes;
    ++f.collectives;
    if (bytes > 0) std::memcpy(buffer + lane * kSlotBytes, data, bytes);
    arrive(g_machine->waves[wave]);
    return buffer;
}

uint8_t* wave_once(bool* fresh) {
    const Fiber& f = me();
    Machine::Once& o = g_machine->once[(f.tid / kWave) * 2 + ((f.collectives - 1) & 1)];
    *fresh = o.collective != f.collectives;
    o.collective = f.collectives;
    return o.bytes;
}

namespace {
template <typename T, size_t N, typename F>
std::unique_ptr<T[]> table(F value) {
    std::unique_ptr<T[]> t(new T[N]);
    for (size_t i = 0; i < N; ++i) t[i] = value(i);
    return t;
}
// e4m3 magnitudes of exponent field e and mantissa m with bias `bias`.
float e4m3_magnitude(int e, int m, int bias) {
    return e == 0 ? std::ldexp(static_cast<float>(m), -bias - 2)
                  : std::ldexp(1.0f + static_cast<float>(m) / 8.0f, e - bias);
}
}  // namespace

float f16_value(uint16_t bits) {
    static const std::unique_ptr<float[]> values = table<float, 65536>([](size_t i) {
        const uint16_t b = static_cast<uint16_t>(i);
        _Float16 h;
        std::memcpy(&h, &b, 2);
        return static_cast<float>(h);
    });
    return values[bits];
}
float bf16_value(uint16_t bits) {
    const uint32_t u = static_cast<uint32_t>(bits) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}
// e4m3fn (OCP): bias 7, no infinities, 0x7F / 0xFF NaN, largest 448.
float e4m3fn_value(uint8_t code) {
    static const std::unique_ptr<float[]> values = table<float, 256>([](size_t c) {
        if ((c & 0x7f) == 0x7f) return std::nanf("");
        const float mag = e4m3_magnitude(static_cast<int>(c >> 3) & 15, static_cast<int>(c) & 7, 7);
        return (c & 0x80) ? -mag : mag;
    });
    return values[code];
}
// e4m3fnuz: bias 8, no infinities, 0x80 the only NaN (no negative zero).
float e4m3fnuz_value(uint8_t code) {
    static const std::unique_ptr<float[]> values = table<float, 256>([](size_t c) {
        if (c == 0x80) return std::nanf("");
        const float mag = e4m3_magnitude(static_cast<int>(c >> 3) & 15, static_cast<int>(c) & 7, 8);
        return (c & 0x80) ? -mag : mag;
    });
    return values[code];
}

gpu::error_t launch(unsigned grid, unsigned block, size_t shared_bytes, void (*body)(void*),
                    void* context) {
    if (block == 0 || block > static_cast<unsigned>(kMaxThreads) ||
        shared_bytes > static_cast<size_t>(kLdsBytes))
        return t_last_error = gpu::kErrorInvalidValue;
    std::lock_guard<std::mutex> lock(g_launch);
    static Machine machine;
    g_machine = &machine;
    machine.block_threads = block;
    machine.grid = grid;
    machine.failure.clear();
    if (machine.fibers.size() < block) machine.fibers.resize(block);
    const size_t waves = (block + kWave - 1) / kWave;
    machine.exchange.assign(waves * 2 * kWave * kSlotBytes, 0);
    machine.once.resize(waves * 2);
    machine.body = body;
    machine.body_context = context;
    gpu::error_t e = gpu::kSuccess;
    for (unsigned b = 0; b < grid && e == gpu::kSuccess; ++b) {
        machine.block_index = b;
        poison_lds();
        if (!run_block(machine)) {
            std::fprintf(stderr, "libmla_decode emu: workgroup %u of a grid of %u hangs (a "
                         "collective or barrier not every work-item reaches)%s%s\n", b, grid,
                         machine.failure.empty() ? "" : "; before that: ",
                         machine.failure.c_str());
            e = gpu::kErrorLaunchFailure;
        } else if (!machine.failure.empty()) {
            std::fprintf(stderr, "libmla_decode emu: workgroup %u of a grid of %u: %s\n", b,
                         grid, machine.failure.c_str());
            e = gpu::kErrorLaunchFailure;
        } else if (!lds_untouched_past(shared_bytes)) {
            std::fprintf(stderr, "libmla_decode emu: workgroup %u wrote LDS past the %zu bytes "
                         "its launch asked for\n", b, shared_bytes);
            e = gpu::kErrorLaunchFailure;
        }
    }
    g_machine = nullptr;
    if (e != gpu::kSuccess) {
        // The fibers of the hung workgroup are abandoned; start the next launch afresh.
        machine.fibers.clear();
        t_last_error = e;
    }
    return e;
}

gpu::error_t take_last_error() {
    const gpu::error_t e = t_last_error;
    t_last_error = gpu::kSuccess;
    return e;
}

}  // namespace mla::emu

// ---- the host runtime ------------------------------------------------------------------------
namespace mla::gpu {

const char* error_string(error_t e) {
    switch (e) {
        case kSuccess: return "no error";
        case kErrorInvalidValue: return "invalid argument (emulated device)";
        case kErrorMemoryAllocation: return "out of memory (emulated device)";
        case kErrorInvalidDevice: return "invalid device ordinal (emulated device)";
        case kErrorLaunchFailure: return "unspecified launch failure (emulated device)";
    }
    return "unknown error (emulated device)";
}
error_t get_last_error() { return emu::take_last_error(); }

namespace {
thread_local int t_device = 0;
}  // namespace
error_t get_device(int* d) {
    *d = t_device;
    return kSuccess;
}
error_t set_device(int d) {
    if (d != 0) return kErrorInvalidDevice;
    t_device = d;
    return kSuccess;
}

error_t malloc(void** p, size_t bytes) {
    *p = ::operator new(bytes == 0 ? 1 : bytes, std::align_val_t{256}, std::nothrow);
    return *p != nullptr ? kSuccess : kErrorMemoryAllocation;
}
error_t free(void* p) {
    if (p != nullptr) ::operator delete(p, std::align_val_t{256});
    return kSuccess;
}

struct EmuEvent {
    std::chrono::steady_clock::time_point at;
};
error_t event_create(event_t* e) {
    *e = new EmuEvent{};
    return kSuccess;
}
error_t event_destroy(event_t e) {
    delete e;
    return kSuccess;
}
error_t event_record(event_t e, stream_t) {
    e->at = std::chrono::steady_clock::now();
    return kSuccess;
}
error_t event_elapsed_ms(float* ms, event_t start, event_t stop) {
    *ms = std::chrono::duration<float, std::milli>(stop->at - start->at).count();
    return kSuccess;
}

}  // namespace mla::gpu
