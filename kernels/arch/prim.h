// Block-wide primitives from the vendor library: rocPRIM on AMD, CUB on NVIDIA. Kernels use
// these names only (device compilation units; include after arch/device.h).
#pragma once

#include "arch/device.h"

#if defined(MLA_ARCH_AMD)
#include <rocprim/block/block_scan.hpp>
#else
#include <cub/block/block_scan.cuh>
#endif

namespace mla::arch {

// Exclusive prefix sum of one int per thread over a block of kThreads threads, plus the total.
template <int kThreads>
struct BlockExclusiveSum {
#if defined(MLA_ARCH_AMD)
    using Scan = rocprim::block_scan<int, kThreads>;
    using TempStorage = typename Scan::storage_type;
    MLA_DEVICE static void run(TempStorage& temp, int in, int& out, int& total) {
        Scan().exclusive_scan(in, out, 0, total, temp, rocprim::plus<int>());
    }
#else
    using Scan = cub::BlockScan<int, kThreads>;
    using TempStorage = typename Scan::TempStorage;
    MLA_DEVICE static void run(TempStorage& temp, int in, int& out, int& total) {
        Scan(temp).ExclusiveSum(in, out, total);
    }
#endif
};

}  // namespace mla::arch
