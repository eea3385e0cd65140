// The emulated GPU's machine state (simt.h), shared by simt.cpp (fibers, collectives, the
// scheduler, the launch) and ptx.cpp (the sm_90a target's barriers, copies and matrix
// instructions). Not included by kernels.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#if !defined(__x86_64__)
#include <ucontext.h>
#endif

#include "arch/emu/simt.h"

namespace mla::emu::detail {

// A collective's members: `alive` of them take part (exited work-items leave workgroup, wave
// and warpgroup collectives), `arrived` are waiting in the current generation.
struct Group {
    int alive = 0;
    int arrived = 0;
    uint64_t generation = 0;
};

// One cp.async of a thread, not yet landed: `bytes` from src (src_bytes of them; the rest zero).
struct CpAsync {
    uint8_t* dst;
    const uint8_t* src;
    uint32_t bytes, src_bytes;
    uint64_t group;  // the thread's commit count when issued (its group)
    uint64_t seq;    // issue order in the thread
};

// One wgmma of a thread, not yet executed (it runs at the warpgroup's wait, the latest moment
// the hardware may read its operands): the thread's A fragment (register form) or A
// descriptor, B's descriptor, and where its accumulators are.
struct WgmmaOp {
    int kind;  // 0 f16, 1 bf16, 2 e4m3 (A from registers), 3 e4m3 (A from shared memory)
    int n;
    uint32_t a[4];
    uint64_t a_desc, b_desc;
    float* d;
    bool accumulate;
    uint64_t group;  // the thread's wgmma commit count when issued
    uint64_t a_digest = 0, b_digest = 0;  // the operands' shared bytes at issue (ptx.cpp)
};

inline constexpr uint32_t kNoMbarrier = ~0u;
inline constexpr int kWarpgroup = 128;  // consecutive threads of a warpgroup (sm_90a's wgmma)

struct Fiber {
    unsigned tid = 0;
    bool done = false;
    Group* waiting = nullptr;  // the collective it waits in, and that collective's generation
    uint64_t wait_generation = 0;
    uint32_t wait_mbarrier = kNoMbarrier;  // or the mbarrier (shared offset) and phase parity
    uint32_t wait_parity = 0;
    uint64_t collectives = 0;  // wave collectives so far (the exchange buffer's parity)
    std::vector<CpAsync> cp_async;
    uint64_t cp_committed = 0, cp_issued = 0;
    std::vector<WgmmaOp> wgmma;
    uint64_t wgmma_committed = 0;
#if defined(__x86_64__)
    void* sp = nullptr;
#else
    ucontext_t context;
#endif
    std::unique_ptr<uint8_t[]> stack;
};

// An mbarrier (PTX ISA "Parallel Synchronization and Communication Instructions: mbarrier"),
// kept beside shared memory by its offset: the phase completes when its pending arrivals and
// its transaction count are both zero; then the pending count starts again at `expected`.
struct Mbarrier {
    uint32_t expected = 0;
    uint32_t pending = 0;
    int64_t tx = 0;
    uint32_t phase = 0;  // completed phases
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
    std::vector<Group> warpgroups;  // kWarpgroup consecutive threads each
    Group named[16];                // named barriers (bar.sync id, count); 0 unused (block)
    int named_threads[16] = {};
    bool named_any[16][2] = {};     // bar.red.or's result, by generation parity
    std::unordered_map<uint32_t, Mbarrier> mbarriers;
    // Asynchronous operations issued and not yet landed (bulk and tensor copies, cp.async
    // arrivals on mbarriers), in issue order: they land when no work-item can go on without
    // them, the latest moment the hardware may complete them. `bar`: the mbarrier each
    // completes on (mbarrier.inval checks that none is in flight for its barrier).
    struct InFlight {
        uint32_t bar;
        std::function<void()> land;
    };
    std::vector<InFlight> in_flight;
    // Per wave, two exchange buffers (by collective parity) of kWave slots, and two scratch
    // areas with the collective (the wave's count of them) each was filled for.
    std::vector<uint8_t> exchange;
    struct Once {
        uint64_t collective = 0;
        alignas(16) uint8_t bytes[kOnceBytes];
    };
    std::vector<Once> once;
    unsigned block_index = 0;
    unsigned block_threads = 0;
    unsigned grid = 0;
    void (*body)(void*) = nullptr;
    void* body_context = nullptr;
    std::string failure;  // the launch's first failure
    std::mt19937 random{[] {
        const char* seed = std::getenv("MLA_EMU_SEED");
        return seed != nullptr ? static_cast<unsigned>(std::strtoul(seed, nullptr, 10)) : 1u;
    }()};
};

extern Machine* g_machine;  // the machine of the launch in progress
Fiber& me();
// Arrive at a collective of group g; returns once every live member has arrived. The arrival
// that completes it first calls complete(context) (if given), before any member goes on.
void arrive(Group& g, void (*complete)(void*) = nullptr, void* context = nullptr);
// Arrive at g without waiting (bar.arrive): completes the generation if this is the last.
void arrive_only(Group& g, void (*complete)(void*) = nullptr, void* context = nullptr);
// Waits until the mbarrier at shared offset `bar` has completed the phase of parity `parity`.
void wait_mbarrier(uint32_t bar, uint32_t parity);
// Leaves the work-item (a trap): it counts as returned.
[[noreturn]] void exit_fiber();
// Target hooks (ptx.cpp; no-ops for gfx942): the state of a workgroup before it starts, and the
// checks when it has finished.
void start_block_target(Machine& m);
void finish_block_target(Machine& m);

}  // namespace mla::emu::detail
