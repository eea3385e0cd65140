// The emulated AMD GPU's machine (simt.h): workgroups of fibers, their barriers and wave
// exchanges, the launch, and the host runtime of arch/runtime.h's emu branch.
#include "arch/emu/simt.h"

#include <algorithm>
#include <chrono>
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
namespace {

constexpr size_t kStackBytes = 256 * 1024;
constexpr int kMaxThreads = 1024;

struct Group {
    int alive = 0;
    int arrived = 0;
    uint64_t generation = 0;
};

struct Fiber {
    unsigned tid = 0;
    bool done = false;
    Group* waiting = nullptr;  // the collective it waits in, and that collective's generation
    uint64_t wait_generation = 0;
    uint64_t collectives = 0;  // wave collectives so far (the exchange buffer's parity)
#if defined(__x86_64__)
    void* sp = nullptr;
#else
    ucontext_t context;
#endif
    std::unique_ptr<uint8_t[]> stack;
};

struct Machine {
    std::vector<Fiber> fibers;
    int current = -1;
#if defined(__x86_64__)
    void* scheduler_sp = nullptr;
#else
    ucontext_t scheduler;
#endif
    Group block;
    std::vector<Group> waves;
    // Per wave, two exchange buffers (by collective parity) of 64 slots, and two MFMA products
    // with the collective (the wave's count of them) each was computed for.
    std::vector<uint8_t> exchange;
    struct Product {
        uint64_t collective = 0;
        float ab[16][16];
    };
    std::vector<Product> products;
    unsigned block_index = 0;
    unsigned block_threads = 0;
    void (*body)(void*) = nullptr;
    void* body_context = nullptr;
    std::mt19937 random{[] {
        const char* seed = std::getenv("MLA_EMU_SEED");
        return seed != nullptr ? static_cast<unsigned>(std::strtoul(seed, nullptr, 10)) : 1u;
    }()};
};

Machine* g_machine = nullptr;  // the machine of the launch in progress (under g_launch)
std::mutex g_launch;

Fiber& me() { return g_machine->fibers[static_cast<size_t>(g_machine->current)]; }

void to_scheduler() {
    Fiber& f = me();
#if defined(__x86_64__)
    mla_emu_switch(&f.sp, g_machine->scheduler_sp);
#else
    swapcontext(&f.context, &g_machine->scheduler);
#endif
}

// Arrive at a collective of group g; returns once every live member has arrived. The arrival
// that completes a workgroup barrier goes back to the scheduler too, which starts the next
// phase in its own order (else that work-item's wave would always run it first).
void arrive(Group& g) {
    const uint64_t generation = g.generation;
    if (++g.arrived >= g.alive) {
        g.arrived = 0;
        ++g.generation;
        if (&g == &g_machine->block) to_scheduler();
        return;
    }
    Fiber& f = me();
    f.waiting = &g;
    f.wait_generation = generation;
    to_scheduler();
    f.waiting = nullptr;
}

// A member left: the collective in progress completes if everyone else is there.
void leave(Group& g) {
    --g.alive;
    if (g.alive > 0 && g.arrived >= g.alive) {
        g.arrived = 0;
        ++g.generation;
    }
}

void fiber_main() {
    g_machine->body(g_machine->body_context);
    Fiber& f = me();
    f.done = true;
    leave(g_machine->block);
    leave(g_machine->waves[f.tid / kWave]);
    to_scheduler();  // never resumed
    std::abort();
}

#if !defined(__x86_64__)
void fiber_entry() { fiber_main(); }
#endif

// The order in which the scheduler runs a workgroup's waves (each until all its work-items wait
// on the workgroup barrier) and their lanes, from MLA_EMU_ORDER: forward (wave 0 first, lanes
// 0, 1, ...; the default), reverse, or shuffle (a new random order on every round, seeded by
// MLA_EMU_SEED, default 1). So of two accesses to the same LDS bytes by different waves with no
// barrier between, forward runs the lower wave's first and reverse the higher wave's: a kernel
// that reads what another wave writes without a barrier between fails in one of the two.
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

// Runs one workgroup to completion; false if its work-items wait on each other forever (a
// collective that not every live member reaches).
bool run_block(Machine& m) {
    const int n = static_cast<int>(m.block_threads);
    const int waves = (n + kWave - 1) / kWave;
    m.block = Group{n, 0, 0};
    for (auto& product : m.products) product.collective = 0;  // counts restart at 0
    m.waves.assign(static_cast<size_t>(waves), Group{});
    for (int w = 0; w < waves; ++w)
        m.waves[static_cast<size_t>(w)].alive = n - w * kWave < kWave ? n - w * kWave : kWave;
    for (int i = 0; i < n; ++i) {
        Fiber& f = m.fibers[static_cast<size_t>(i)];
        f.tid = static_cast<unsigned>(i);
        f.done = false;
        f.waiting = nullptr;
        f.collectives = 0;
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
    // Wave by wave: a wave runs until every one of its work-items waits on the workgroup barrier
    // (or returned) before the next wave starts, in MLA_EMU_ORDER's order of waves and lanes.
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
                    if (f.done ||
                        (f.waiting != nullptr && f.waiting->generation == f.wait_generation))
                        continue;
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
        if (!progressed) return false;
    }
    return true;
}

thread_local gpu::error_t t_last_error = gpu::kSuccess;

}  // namespace

unsigned thread_index() { return me().tid; }
unsigned block_index() { return g_machine->block_index; }
unsigned block_threads() { return g_machine->block_threads; }
void sync_block() { arrive(g_machine->block); }

const uint8_t* wave_exchange(const void* data, size_t bytes) {
    Fiber& f = me();
    const unsigned wave = f.tid / kWave, lane = f.tid % kWave;
    uint8_t* buffer = g_machine->exchange.data() +
                      (static_cast<size_t>(wave) * 2 + (f.collectives & 1)) * kWave * kSlotBytes;
    ++f.collectives;
    std::memcpy(buffer + lane * kSlotBytes, data, bytes);
    arrive(g_machine->waves[wave]);
    return buffer;
}

float (&wave_product(bool* fresh))[16][16] {
    const Fiber& f = me();
    Machine::Product& p = g_machine->products[(f.tid / kWave) * 2 + ((f.collectives - 1) & 1)];
    *fresh = p.collective != f.collectives;
    p.collective = f.collectives;
    return p.ab;
}

namespace {
template <typename T, size_t N, typename F>
std::unique_ptr<T[]> table(F value) {
    std::unique_ptr<T[]> t(new T[N]);
    for (size_t i = 0; i < N; ++i) t[i] = value(i);
    return t;
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
// e4m3fnuz: bias 8, no infinities, 0x80 the only NaN (no negative zero).
float e4m3fnuz_value(uint8_t code) {
    static const std::unique_ptr<float[]> values = table<float, 256>([](size_t c) {
        if (c == 0x80) return std::nanf("");
        const int e = static_cast<int>(c >> 3) & 15, m = static_cast<int>(c) & 7;
        const float mag = e == 0 ? std::ldexp(static_cast<float>(m), -10)
                                 : std::ldexp(1.0f + static_cast<float>(m) / 8.0f, e - 8);
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
    if (machine.fibers.size() < block) machine.fibers.resize(block);
    const size_t waves = (block + kWave - 1) / kWave;
    machine.exchange.assign(waves * 2 * kWave * kSlotBytes, 0);
    machine.products.resize(waves * 2);
    machine.body = body;
    machine.body_context = context;
    gpu::error_t e = gpu::kSuccess;
    for (unsigned b = 0; b < grid && e == gpu::kSuccess; ++b) {
        machine.block_index = b;
        poison_lds();
        if (!run_block(machine)) {
            std::fprintf(stderr, "libmla_decode emu: workgroup %u of a grid of %u hangs (a "
                         "collective not every work-item reaches)\n", b, grid);
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
