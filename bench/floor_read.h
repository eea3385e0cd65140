// The floor of a benchmark case: one plain read of exactly the bytes its call must read from
// the KV cache, timed the way the call is (after the same L2 flush, between the same events).
// Under that method the floor is the cold-read time of those bytes, not bytes / peak bandwidth:
// right after a flush, reads of up to ~150 MB run well below the HBM peak (first touch and
// write-back of the flushed lines), so only a read measured the same way says how far a kernel
// is from what the memory allows (docs/METHOD.md, "The cold-read floor").
// GPU builds only (MLA_HAVE_GPU_RUNTIME); the kernel is in floor_read.hip.
#pragma once

#include <cstddef>

#include "arch/runtime.h"

#if defined(MLA_HAVE_GPU_RUNTIME)
namespace mla_bench {

// Queues one launch on `stream` that reads the `bytes` bytes at `data` (device memory, 16-byte
// aligned) with 16-byte loads, one grid filling `multiprocessors` compute units, and adds the
// sum of their 32-bit words to *sum (device memory) so the reads cannot be optimised away.
// Returns the launch's error.
mla::gpu::error_t launch_floor_read(const void* data, size_t bytes, unsigned* sum,
                                    int multiprocessors, mla::gpu::stream_t stream);

}  // namespace mla_bench
#endif
