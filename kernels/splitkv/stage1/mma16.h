// Stage 1, warp-level variant "mma16": with the matrix atoms of the arch layer (mma.sync
// m16n8k16 on NVIDIA, MFMA 16x16x16 on AMD; m16n8k32 .e4m3 / MFMA 16x16x32 fp8 for e4m3
// scores), one CTA per (batch element, split, block of 16, 32 or 64 query rows: 1, 2 or 4 row
// groups of 16, e.g. 16 heads of one query token, or 8 heads of two) computes the softmax-weighted
// sum of V over its split's cached tokens, plus that range's LSE. The row groups of a CTA meet
// each tile once (Mma16Config). Every format, every architecture. What it shares with other
// variants is in splitkv/: work.h (work contract), q_prologue.h, softmax.h, epilogue.h.
//
// Data flow of one CTA (kWarps warps; kBlocks x kDimSplits of them share the score product):
//   * Tiles of kTileTokens cache rows stream global -> shared memory kStages deep (cp.async),
//     raw (bf16 or fp8 codes), each row padded by 16 bytes so that fragment loads spread over
//     the banks. The cache is read exactly once. Without cp.async (AMD) one tile sits in shared
//     memory, loaded into registers during the previous tile's products and stored after them
//     (staged, kStagedCopies: AMD's default), or copied by plain loads and stores before its
//     products (MLA_MMA16_COPIES=single).
//   * Scores: warp (blk, dsplit) multiplies Q's dims of its dim split with the 16 tokens of
//     block blk, for every row group from the same K fragments. Q lives in registers for the
//     whole CTA (or, where it does not fit, in shared memory: kQShared), already in the atom's
//     fragment layout.
//     K fragments come from shared memory with one 16-byte load per lane and chunk: the dims a
//     lane owns are permuted so that they are contiguous in memory; Q is permuted the same way
//     (a dot product does not care about the order of its terms). fp8 codes are decoded to f16
//     with bit operations (arch/fp8.h); Q is scaled per head by a power of two into f16 range.
//     A bf16 rope beside fp8 latent codes (kRopeBf16): the tile row holds the 512 codes, then
//     the 64 bf16 values; the rope chunk is scored after the latent ones, on the bf16 atom with
//     Q's rope dims as bf16 (neither scaled into f16 range: no f16 overflow, whatever their
//     size), into accumulators of its own, and the two products meet already scaled (the
//     latent's by kv_scale and Q's power of two, the rope's by neither).
//     e4m3 scores (kE4M3: MLA_DECODE_FLAG_FP8_MMA, Q of the cache's flavour, where the
//     device's matrix instructions multiply it): Q's and K's codes go to the e4m3 atom as stored
//     (arch::mma_scores_e4m3, 32 dims a step, no decode, no power of two), the scores scaled by
//     q_scale * kv_scale; K's value dims are still decoded to f16 for the value product.
//   * The dim splits' partial scores meet in shared memory; warps of dim split 0 mask, scale
//     to the log2 domain, publish their block maxima, then write P (f16; bf16 as hi + lo pair
//     so that P keeps f16-like precision) in the value atom's A layout to shared memory.
//   * Values: every warp owns kPvDims of the 512 output dims and multiplies P of all blocks with
//     V fragments read (transposed) from the same shared tile: V = the first 512 dims of K.
//   * Online softmax: one running max per head, identical in every warp because every warp
//     derives it from the same published block maxima.
// The epilogue writes O / sum (fp32) and m + log2(sum) for the reduce kernel to combine.
#pragma once

#include <type_traits>

#include "arch/device.h"
#include "arch/runtime.h"
#include "splitkv/epilogue.h"
#include "splitkv/launch.h"
#include "splitkv/params.h"
#include "splitkv/q_prologue.h"
#include "splitkv/softmax.h"
#include "splitkv/stage1/launcher.h"
#include "splitkv/variants.h"  // Mma16Copies
#include "splitkv/work.h"

namespace mla::splitkv {

// The variant's shape, the same for every format: 256 threads on every architecture (8 warps of
// 32, 4 waves of 64), one CTA per multiprocessor, row groups of 16 query rows (kRows, the atoms'
// row block: 16 heads of one token, or 8 heads of two; Mma16Config takes 1, 2 or 4 of them a
// CTA); as many tiles in flight as shared memory holds, up
// to kMaxStages where copies are asynchronous (cp.async), one where they are plain loads or
// staged through registers (kCopies: variants.h, Mma16Copies).
struct Mma16Shape {
    static constexpr int kRows = 16;
    static constexpr int kThreads = 256;
    static constexpr int kWarps = kThreads / arch::kWarpSize;
    static constexpr Mma16Copies kCopies = kMma16Copies;
    static_assert(kCopies != Mma16Copies::kAsync || arch::kAsyncCopies,
                  "asynchronous copies where the arch layer has them (MLA_MMA16_COPIES)");
    static constexpr bool kStagedCopies = kCopies == Mma16Copies::kStaged;
    static constexpr int kMaxStages = kCopies == Mma16Copies::kAsync ? 3 : 1;
    static constexpr int kSharedBudget = arch::kMaxSharedBytesPerBlock;
    static constexpr int kDimSplits = 2;
    static constexpr int kBlocks = kWarps / kDimSplits;  // 16-token blocks per tile
    static constexpr int kTileTokens = 16 * kBlocks;
};

// The configuration for one format: the shape, plus the format's facts (formats.h: how K
// arrives, where V comes from, which products it feeds) and the shared-memory plan.
// kE4M3: the score product on e4m3 codes (arch::mma_scores_e4m3, Params::fp8_mma): fp8 Q's and
// the cache's codes as stored, 32 dims a step; fp8 caches of 576 fp8 dims only, Q of the
// cache's flavour (the plan pairs them).
// kRowsPerCta: 16, or kGroups = kRowsPerCta / 16 row groups of 16 (the atoms' rows) that meet
// each tile once: K's fragments are loaded and decoded once for every group's score product, V's
// once for every group's value product; each group has its own softmax state, P and O. Q stays
// in registers where every group's Q and O fit beside the rest of the kernel (kQShared false:
// AMD at 32 rows, O in AccVGPRs); otherwise each lane's Q fragments sit in shared memory, in its
// order, and are loaded per chunk (NVIDIA above 16 rows: 80 registers of Q a group). kFits:
// whether the configuration fits the device's shared memory (AMD at 64 rows does not: its Q
// would need shared memory); only those are built and offered (mma16_rows_fit).
template <KvFormat F, bool kE4M3, int kRowsPerCta = 16>
struct Mma16Config : Mma16Shape, KvTraits<F> {
    static constexpr int kGroups = kRowsPerCta / Mma16Shape::kRows;
    static constexpr int kRows = kRowsPerCta;  // the CTA's rows (Mma16Shape::kRows: a group's)
    static_assert(kGroups * Mma16Shape::kRows == kRowsPerCta && kGroups >= 1 && kGroups <= 4,
                  "16, 32, 48 or 64 rows per CTA");
    using Fmt = KvTraits<F>;
    using Fmt::kKFp8;
    using Fmt::kKMxfp4;
    using Fmt::kVSeparate;
    using Fmt::kVFp8;
    using Fmt::kValueMma;
    using Fmt::kRopeBf16;
    static constexpr bool kVFromRawTile = Fmt::kVBf16;  // V multiplied from the tile as stored

    // K bytes of a cache row, and what one lane loads of a row per chunk: kLoadBytes holding kE
    // contiguous elements; a chunk spans the kKGroups lanes of a row, i.e. kChunkDims dims =
    // kStepsPerChunk score-atom steps (k16, or k32 for e4m3 scores).
    using Fmt::kKRowBytes;
    static constexpr int kLoadBytes = kKMxfp4 ? 8 : 16;
    static constexpr int kE = kKMxfp4 ? 16 : (kKFp8 ? 16 : 8);
    static constexpr int kChunkDims = arch::ScoreAtom::kKGroups * kE;
    static constexpr int kChunks = kHeadDimQk / kChunkDims;
    static constexpr bool kE4M3Scores = kE4M3;
    static_assert(!kE4M3Scores || (kKFp8 && !kRopeBf16),
                  "e4m3 scores: Q and all 576 K dims as fp8 codes");
    // Score-atom steps per chunk: k16 steps of 4 values a lane, or k32 steps of 8 e4m3 codes.
    static constexpr int kStepsPerChunk = kE / (kE4M3Scores ? 8 : 4);
    // Q's home. A group holds kQRegs of Q fragments and kORegs of O a lane; kWorkRegs is what
    // the kernel holds beside them (scores, decoded K, staged copies, addresses, softmax state:
    // the 16-row fp8 kernel for gfx942 takes 188 arch VGPRs with 40 of Q; at 32 rows, with 80
    // of Q, clang-19 takes all 256 without scratch; 64 rows of Q in registers there, 160,
    // spilled 388-524 bytes).
    static constexpr int kQRegs = ((kHeadDimQk / kChunkDims + kDimSplits - 1) / kDimSplits) *
                                  kStepsPerChunk * arch::ScoreAtom::kHeadsPerLane * 2;
    static constexpr int kORegs = (kHeadDimV / kWarps / arch::ValueLoader16::kDims) *
                                  arch::ValueLoader16::kTiles * arch::ValueAtom::kOAcc;
    static constexpr int kWorkRegs = 150;
    static constexpr bool kQInRegisters =
        kGroups == 1 ||
        (arch::kAccRegistersPerLane > 0
             ? kGroups * kQRegs + kWorkRegs <= arch::kRegistersPerLane &&
                   kGroups * kORegs <= arch::kAccRegistersPerLane
             : kGroups * (kQRegs + kORegs) + kWorkRegs <= arch::kRegistersPerLane);
    static constexpr bool kQShared = !kQInRegisters;
    // Q groups a warp converts in the prologue: all of them (Q in registers), or group g of
    // warps with blk == g % kBlocks (Q in shared memory, written once for every warp).
    static constexpr int kQGroupsPerWarp =
        kQShared ? (kGroups + kBlocks - 1) / kBlocks : kGroups;
    // Shared Q: per (group, chunk), kQVecs 16-byte vectors a lane, lane-contiguous, each a pair
    // of the lane's quads.
    static constexpr int kQVecs = kStepsPerChunk * arch::ScoreAtom::kHeadsPerLane * 8 / 16;
    static_assert(kStepsPerChunk * arch::ScoreAtom::kHeadsPerLane % 2 == 0,
                  "a lane's quads of a chunk pair into 16-byte vectors");
    static constexpr int kMaxChunks = (kChunks + kDimSplits - 1) / kDimSplits;
    static_assert(kChunks * kChunkDims == kHeadDimQk, "576 dims must split into chunks");
    static_assert(!kKMxfp4 || kE <= kMxfp4BlockSize, "a lane's MXFP4 run must share one scale");
    // A bf16 rope (kRopeBf16) is the last chunk, dims 512..575: chunk kRopeSlot of dim split
    // kRopeSplit; its lane run of kE bf16 values is 2 kLoadBytes.
    static constexpr int kRopeSplit = (kChunks - 1) / kMaxChunks;
    static constexpr int kRopeSlot = (kChunks - 1) % kMaxChunks;
    static_assert(!kRopeBf16 || ((kChunks - 1) * kChunkDims == kKvLoraRank && kE == 16),
                  "a bf16 rope is one chunk of 16-value runs");
    // Whether chunk c of dim split `dsplit` is a bf16 rope.
    MLA_DEVICE static bool is_rope_chunk(int dsplit, int c) {
        return kRopeBf16 && c == kRopeSlot && dsplit == kRopeSplit;
    }
    // Byte of K dim `dim` (a lane run's first) in a tile row.
    MLA_DEVICE static int k_byte(int dim) {
        if constexpr (kRopeBf16)
            return dim < kKvLoraRank ? dim : Fmt::kKLatentBytes + 2 * (dim - kKvLoraRank);
        else
            return dim * kKRowBytes / kHeadDimQk;
    }

    // Shared tiles, per pipeline stage: K rows (raw, padded by 16 bytes so that fragment loads
    // spread over the banks); MXFP4 scale rows; separate fp8 V rows.
    static constexpr int kRowBytes = kKRowBytes + 16;
    static constexpr int kRowCopies = kKRowBytes / 16;
    static constexpr int kScaleRowBytes = kKMxfp4 ? 32 : 0;
    static constexpr int kVRawRowBytes = kVSeparate ? Fmt::kVRowBytes + 16 : 0;
    static constexpr int kVRawCopies = Fmt::kVRowBytes / 16;
    static constexpr int kStageBytes =
        kTileTokens * (kRowBytes + kScaleRowBytes + kVRawRowBytes);
    static constexpr int kThreadsPerRow = kThreads / kTileTokens;
    static_assert(kThreadsPerRow * kTileTokens == kThreads, "copy threads must tile the rows");

    // Values: bf16 tiles are multiplied as they are; otherwise V is decoded once per tile into
    // a 16-bit tile of the 512 value dims that the value product reads. fp8-decoded slots keep
    // the decoder's pair order: within each group of four, slots hold dims (0, 2, 1, 3), so
    // slot -> dim swaps the two low bits. MXFP4-decoded slots are in dim order.
    using VLoader = arch::ValueLoader16;
    static constexpr int kPvDims = kHeadDimV / kWarps;
    static constexpr int kVGroups = kPvDims / VLoader::kDims;
    static_assert(kVGroups * VLoader::kDims == kPvDims, "value loads must tile a warp's dims");
    static constexpr int kPSplit = kValueMma == arch::MmaType::kBF16 ? 2 : 1;
    static constexpr int kVRowBytes = kVFromRawTile ? kRowBytes : kHeadDimV * 2 + 16;
    static constexpr int kVChunks = kHeadDimV / kChunkDims;  // K chunks holding value dims
    MLA_DEVICE static int v_slot_to_dim(int slot) {
        return kVFp8 ? (slot & ~3) | ((slot & 1) << 1) | ((slot >> 1) & 1) : slot;
    }

    // Shared memory: stages | decoded V tile | partial scores | P | block maxima (later row
    // sums) | Q maxima | Q (kQShared). As many stages as fit (at most kMaxStages).
    static constexpr int kVTileBytes = kVFromRawTile ? 0 : kTileTokens * kVRowBytes;
    // Partial scores: the warps of dim splits 1.. (kBlocks of each), every group.
    static constexpr int kPartialBytes =
        (kWarps - kBlocks) * kGroups * arch::ScoreAtom::kAcc * arch::kWarpSize * 4;
    static constexpr int kPBytes =
        kGroups * kBlocks * kPSplit * arch::ValueAtom::kPRegs * arch::kWarpSize * 4;
    static constexpr int kScratchBytes = kPartialBytes > kPBytes ? kPartialBytes : kPBytes;
    static constexpr int kQBytes = kQShared ? kGroups * kChunks * kQVecs * 16 * arch::kWarpSize : 0;
    static constexpr int kFixedBytes = kVTileBytes + kScratchBytes + kQBytes +
                                       kBlocks * kRows * 4 + kDimSplits * kRows * 4;
    static constexpr int kStagesFit = (kSharedBudget - kFixedBytes) / kStageBytes;
    static constexpr bool kFits = kStagesFit >= 1;  // one tile at least
    static constexpr int kStages =
        !kFits ? 1 : (kStagesFit < kMaxStages ? kStagesFit : kMaxStages);
    static_assert(!kStagedCopies || kStages == 1, "staged copies fill the one stage");
    static constexpr int kOffVTile = kStages * kStageBytes;
    static constexpr int kOffPartial = kOffVTile + kVTileBytes;
    static constexpr int kOffP = kOffPartial;  // P is written after the partials are consumed
    static constexpr int kOffBlockMax = kOffPartial + kScratchBytes;
    static constexpr int kOffQMax = kOffBlockMax + kBlocks * kRows * 4;
    static constexpr int kOffQ = kOffQMax + kDimSplits * kRows * 4;
    static constexpr int kSmemBytes = kOffQ + kQBytes;
    // Within a stage: K rows | scale rows | V rows.
    static constexpr int kOffScales = kTileTokens * kRowBytes;
    static constexpr int kOffVRaw = kOffScales + kTileTokens * kScaleRowBytes;
};

// kRopeBf16: s += coef * (Q's rope dims . K's rope dims) for the 16 tokens of block `blk` of
// the tile at `stage`: the rope chunk's lane runs (kE bf16 values, 2 x 16 bytes) as stored, on
// the bf16 atom, f32 accumulation; qf: Q's rope quads (bf16, the same dim order).
template <typename Cfg>
MLA_DEVICE void add_bf16_rope_scores(const uint8_t* stage, int blk, int lane,
                                     const arch::Quad (&qf)[Cfg::kStepsPerChunk]
                                                           [arch::ScoreAtom::kHeadsPerLane],
                                     float coef, float (&s)[arch::ScoreAtom::kAcc]) {
    using SA = arch::ScoreAtom;
    static_assert(Cfg::kStepsPerChunk == 4, "two 16-byte loads of four words per lane");
    arch::Quad kq[Cfg::kStepsPerChunk][SA::kTokensPerLane];
#pragma unroll
    for (int i = 0; i < SA::kTokensPerLane; ++i) {
        const int row = blk * 16 + SA::token(lane, i);
        const uint4* src = reinterpret_cast<const uint4*>(
            stage + row * Cfg::kRowBytes +
            Cfg::k_byte(kKvLoraRank + SA::kgroup(lane) * Cfg::kE));
        const uint4 a = src[0], b = src[1];
        kq[0][i] = arch::Quad{a.x, a.y};
        kq[1][i] = arch::Quad{a.z, a.w};
        kq[2][i] = arch::Quad{b.x, b.y};
        kq[3][i] = arch::Quad{b.z, b.w};
    }
    float r[SA::kAcc];
#pragma unroll
    for (int i = 0; i < SA::kAcc; ++i) r[i] = 0.0f;
#pragma unroll
    for (int st = 0; st < Cfg::kStepsPerChunk; ++st)
        arch::mma_scores<arch::MmaType::kBF16>(r, qf[st], kq[st]);
#pragma unroll
    for (int i = 0; i < SA::kAcc; ++i) s[i] += r[i] * coef;
}

// Copy thread `sub` of the kTpr that share a row: its 16-byte pieces sub, sub + kTpr, ... of
// the kPieces from src to dst, each at a constant offset from the one row address. The loop
// of issue_tile, whose trip count depends on cp_sub, makes ptxas form each piece's 64-bit
// address again from the kernel's parameters (~25 instructions a piece at 255 registers; ncu on
// an H100, fp8 H128: ~1,800 of the tile's ~6,500 warp instructions). Taken where it paid
// (sixty-fourth session, H100, mma16 forced, B / A): MXFP4 keys 0.97-0.99, and MXFP4 keys with
// their separate fp8 V rows (both copied this way) 0.93-0.99. Not for the other keys: fp8
// 0.984-1.006, fp8 with a bf16 rope 1.004-1.019, bf16 0.99-1.07.
template <int kPieces, int kTpr>
MLA_DEVICE void copy_row_pieces(uint8_t* dst, const uint8_t* src, int sub, bool valid) {
#pragma unroll
    for (int i = 0; i < (kPieces + kTpr - 1) / kTpr; ++i) {
        const int c = sub + i * kTpr;
        if (kPieces % kTpr == 0 || c < kPieces)
            arch::copy_16_async(dst + 16 * c, src + 16 * c, valid);
    }
}

template <KvFormat F, bool kE4M3, int kRowsPerCta>
__global__ void __launch_bounds__(Mma16Shape::kThreads, 1)
    stage1_mma16_kernel(const Params p) {
    using Cfg = Mma16Config<F, kE4M3, kRowsPerCta>;
    static_assert(Cfg::kFits, "one tile must fit in shared memory");
    using SA = arch::ScoreAtom;
    using VA = arch::ValueAtom;
    constexpr int kW = arch::kWarpSize;
    constexpr int kG = Cfg::kGroups;  // row group g: CTA rows 16 g .. 16 g + 15
    constexpr int kGR = Mma16Shape::kRows;

    extern __shared__ __align__(16) uint8_t smem[];
    uint8_t* v_tile = smem + Cfg::kOffVTile;
    float* s_partial = reinterpret_cast<float*>(smem + Cfg::kOffPartial);
    uint32_t* s_p = reinterpret_cast<uint32_t*>(smem + Cfg::kOffP);
    float* s_blockmax = reinterpret_cast<float*>(smem + Cfg::kOffBlockMax);
    float* s_qmax = reinterpret_cast<float*>(smem + Cfg::kOffQMax);
    uint4* s_q = reinterpret_cast<uint4*>(smem + Cfg::kOffQ);  // Cfg::kQShared

    const Stage1Work work = stage1_work<Cfg::kTileTokens, Cfg::kRows>(p);
    if (!work.active) {  // no such query token, or no such split: at most -inf LSEs (and zero
                         // rows, Params::reduce_rows_early) to write
        if (work.empty_split) stage1_write_empty_split<Cfg::kRows>(p, work);
        return;
    }
    stage1_allow_reduce(p);
    const int64_t tok_begin = work.tok_begin;
    const int64_t tok_end = work.tok_end;
    const int n_tiles = static_cast<int>((tok_end - tok_begin + Cfg::kTileTokens - 1) /
                                         Cfg::kTileTokens);

    const int warp = arch::warp_id();
    const int lane = arch::lane_id();
    const int blk = warp % Cfg::kBlocks;
    const int dsplit = warp / Cfg::kBlocks;
    const int kgroup = SA::kgroup(lane);

    // ---- tile copies: thread -> (row, every kThreadsPerRow-th 16-byte piece) -----------------
    const int cp_row = static_cast<int>(arch::thread_index()) / Cfg::kThreadsPerRow;
    const int cp_sub = static_cast<int>(arch::thread_index()) % Cfg::kThreadsPerRow;
    auto issue_tile = [&](int t) {
        if (t < n_tiles) {
            const int64_t tok = tok_begin + static_cast<int64_t>(t) * Cfg::kTileTokens + cp_row;
            const bool valid = tok < tok_end;
            const int64_t slot = valid ? cache_slot(p, work, tok) : 0;
            uint8_t* stage = smem + (t % Cfg::kStages) * Cfg::kStageBytes;
            // The latent dims from the latent row, the rope dims from the rope row (the same
            // row, further on, for a 576-wide cache).
            const uint8_t* src = p.kv + slot * p.kv_stride_bytes;
            const uint8_t* rope = p.kpe + slot * p.kpe_stride_bytes;
            uint8_t* dst = stage + cp_row * Cfg::kRowBytes;
            if constexpr (Cfg::kKMxfp4) {
                constexpr int kLatentCopies = Cfg::kKLatentBytes / 16;
                copy_row_pieces<kLatentCopies, Cfg::kThreadsPerRow>(dst, src, cp_sub, valid);
                copy_row_pieces<Cfg::kRowCopies - kLatentCopies, Cfg::kThreadsPerRow>(
                    dst + Cfg::kKLatentBytes, rope, cp_sub, valid);
            } else {
                for (int c = cp_sub; c < Cfg::kRowCopies; c += Cfg::kThreadsPerRow) {
                    const int byte = 16 * c;  // of the 576-dim row in the tile
                    const uint8_t* piece = byte < Cfg::kKLatentBytes
                                               ? src + byte
                                               : rope + (byte - Cfg::kKLatentBytes);
                    arch::copy_16_async(dst + byte, piece, valid);
                }
            }
            if constexpr (Cfg::kKMxfp4) {
                // 18 scale codes of the row (the rest of the 32-byte shared row is not read).
                const uint8_t* ssrc = p.kv_scales + slot * p.kv_scale_stride;
                uint8_t* sdst = stage + Cfg::kOffScales + cp_row * Cfg::kScaleRowBytes;
                if (p.scale_copy == ScaleCopy::k16Bytes) {
                    for (int c = cp_sub; c < 2; c += Cfg::kThreadsPerRow)
                        arch::copy_16_async(sdst + 16 * c, ssrc + 16 * c, valid);
                } else if (p.scale_copy == ScaleCopy::k4Bytes) {
                    for (int c = cp_sub; c < 5; c += Cfg::kThreadsPerRow)
                        arch::copy_4_async(sdst + 4 * c, ssrc + 4 * c, valid);
                } else {
                    for (int c = cp_sub; c < kMxfp4RowScales; c += Cfg::kThreadsPerRow)
                        sdst[c] = valid ? ssrc[c] : uint8_t{0};
                }
            }
            if constexpr (Cfg::kVSeparate) {
                const uint8_t* vsrc = p.v + slot * p.v_stride_bytes;
                uint8_t* vdst = stage + Cfg::kOffVRaw + cp_row * Cfg::kVRawRowBytes;
                copy_row_pieces<Cfg::kVRawCopies, Cfg::kThreadsPerRow>(vdst, vsrc, cp_sub, valid);
            }
        }
        arch::copy_commit();
    };
    if constexpr (Cfg::kStages > 1) {
#pragma unroll
        for (int t = 0; t < Cfg::kStages - 1; ++t) issue_tile(t);
    }

    // ---- staged copies (Cfg::kStagedCopies): issue_tile's pieces through registers ----------
    // load_tile(t) loads this thread's pieces of tile t into registers (zero past the split's
    // end and past the last tile), store_tile() writes them into the one shared tile. A
    // thread's pieces are issue_tile's, c = cp_sub + i * kThreadsPerRow below each bound; an
    // MXFP4 row's 18 scale codes are loaded as bytes whatever their alignment. The registers
    // are zeroed before the loads and written by nothing else until store_tile: on AMD a
    // register that is rewritten while its load is in flight (a zero in an else branch, or
    // another scale mode's registers at a merge) makes the wave wait for the load there, in
    // front of the tile's products. On a paged cache the page of the thread's row is loaded a
    // tile ahead (page_ahead: la_page, widened only where load_tile uses it), so a tile's loads
    // wait for no page-table round trip.
    constexpr int kTpr = Cfg::kThreadsPerRow;
    constexpr auto pieces = [](bool used, int n) { return used ? (n + kTpr - 1) / kTpr : 1; };
    constexpr bool kStagedScales = Cfg::kStagedCopies && Cfg::kKMxfp4;
    constexpr int kKPieces = pieces(Cfg::kStagedCopies, Cfg::kRowCopies);
    constexpr int kVPieces = pieces(Cfg::kStagedCopies && Cfg::kVSeparate, Cfg::kVRawCopies);
    constexpr int kSPieces = pieces(kStagedScales, kMxfp4RowScales);
    uint4 st_k[kKPieces];
    uint4 st_v[kVPieces];
    uint32_t st_s[kSPieces];  // one scale code each
    const bool paged = p.page_indptr != nullptr;
    const int64_t page_list = Cfg::kStagedCopies && paged ? p.page_indptr[work.batch] : 0;
    int32_t la_page = 0;  // the page of this thread's row of the next tile load_tile takes
    auto page_ahead = [&](int t) {
        const int64_t tok = tok_begin + static_cast<int64_t>(t) * Cfg::kTileTokens + cp_row;
        if (paged && t < n_tiles && tok < tok_end)
            la_page = p.page_indices[page_list + static_cast<int32_t>(tok) / p.page_size];
    };
    auto load_tile = [&](int t) {
        const uint4 zero = make_uint4(0u, 0u, 0u, 0u);
#pragma unroll
        for (int i = 0; i < kKPieces; ++i) st_k[i] = zero;
#pragma unroll
        for (int i = 0; i < kVPieces; ++i) st_v[i] = zero;
#pragma unroll
        for (int i = 0; i < kSPieces; ++i) st_s[i] = 0u;
        const int64_t tok = tok_begin + static_cast<int64_t>(t) * Cfg::kTileTokens + cp_row;
        if (t < n_tiles && tok < tok_end) {
            // cache_slot's (work.h), with the page loaded ahead
            const int64_t slot = paged ? slot_in_page(p, la_page, static_cast<int32_t>(tok))
                                       : work.kv_begin + tok;
            const uint8_t* src = p.kv + slot * p.kv_stride_bytes;
            const uint8_t* rope = p.kpe + slot * p.kpe_stride_bytes;
#pragma unroll
            for (int i = 0; i < kKPieces; ++i) {
                const int c = cp_sub + i * kTpr;
                const int byte = 16 * c;
                const uint8_t* piece = byte < Cfg::kKLatentBytes
                                           ? src + byte
                                           : rope + (byte - Cfg::kKLatentBytes);
                if (c < Cfg::kRowCopies) st_k[i] = *reinterpret_cast<const uint4*>(piece);
            }
            if constexpr (kStagedScales) {
                const uint8_t* ssrc = p.kv_scales + slot * p.kv_scale_stride;
#pragma unroll
                for (int i = 0; i < kSPieces; ++i) {
                    const int c = cp_sub + i * kTpr;
                    if (c < kMxfp4RowScales) st_s[i] = ssrc[c];
                }
            }
            if constexpr (Cfg::kStagedCopies && Cfg::kVSeparate) {
                const uint8_t* vsrc = p.v + slot * p.v_stride_bytes;
#pragma unroll
                for (int i = 0; i < kVPieces; ++i) {
                    const int c = cp_sub + i * kTpr;
                    if (c < Cfg::kVRawCopies)
                        st_v[i] = *reinterpret_cast<const uint4*>(vsrc + 16 * c);
                }
            }
        }
        page_ahead(t + 1);
    };
    auto store_tile = [&]() {
        uint8_t* dst = smem + cp_row * Cfg::kRowBytes;
#pragma unroll
        for (int i = 0; i < kKPieces; ++i) {
            const int c = cp_sub + i * kTpr;
            if (c < Cfg::kRowCopies) *reinterpret_cast<uint4*>(dst + 16 * c) = st_k[i];
        }
        if constexpr (kStagedScales) {
            uint8_t* sdst = smem + Cfg::kOffScales + cp_row * Cfg::kScaleRowBytes;
#pragma unroll
            for (int i = 0; i < kSPieces; ++i) {
                const int c = cp_sub + i * kTpr;
                if (c < kMxfp4RowScales) sdst[c] = static_cast<uint8_t>(st_s[i]);
            }
        }
        if constexpr (Cfg::kStagedCopies && Cfg::kVSeparate) {
            uint8_t* vdst = smem + Cfg::kOffVRaw + cp_row * Cfg::kVRawRowBytes;
#pragma unroll
            for (int i = 0; i < kVPieces; ++i) {
                const int c = cp_sub + i * kTpr;
                if (c < Cfg::kVRawCopies) *reinterpret_cast<uint4*>(vdst + 16 * c) = st_v[i];
            }
        }
    };

    // ---- Q fragments, in the permuted dim order of the K fragments --------------------------
    // In registers for every group (qf[g]), or (Cfg::kQShared) converted by the warps of
    // blk == g % kBlocks into shared memory and loaded from there per chunk (q_chunk).
    const int chunk0 = dsplit * Cfg::kMaxChunks;
    const int n_chunks = min(Cfg::kMaxChunks, Cfg::kChunks - chunk0);
    constexpr int kQG = Cfg::kQGroupsPerWarp;
    const auto qgroup = [&](int gi) { return Cfg::kQShared ? blk + gi * Cfg::kBlocks : gi; };
    arch::Quad qf[kQG][Cfg::kMaxChunks][Cfg::kStepsPerChunk][SA::kHeadsPerLane];
    float score_coef[kG][SA::kHeadsPerLane];  // raw dot -> log2-domain score, per head
    int row_end[kG][SA::kHeadsPerLane];       // cache tokens (from tok_begin) the row sees, causal
#pragma unroll
    for (int g = 0; g < kG; ++g)
#pragma unroll
        for (int hs = 0; hs < SA::kHeadsPerLane; ++hs) {
            const Stage1Row row = stage1_row(p, work, g * kGR + SA::head(lane, hs));
            row_end[g][hs] = static_cast<int>(stage1_token_end(work, row.token) - tok_begin);
        }
    {
        constexpr int kWords = Cfg::kE / 2;  // 32-bit words of bf16 Q per lane and chunk
        uint32_t raw[kQG][Cfg::kMaxChunks][SA::kHeadsPerLane][kWords];
#pragma unroll
        for (int gi = 0; gi < kQG; ++gi)
#pragma unroll
            for (int hs = 0; hs < SA::kHeadsPerLane; ++hs) {
                const int g = qgroup(gi);
                const Stage1Row row =
                    stage1_row(p, work, min(g, kG - 1) * kGR + SA::head(lane, hs));
                const QRow q_head = q_row(p, work.q_row + row.token, work.head0 + row.head);
#pragma unroll
                for (int c = 0; c < Cfg::kMaxChunks; ++c) {
#pragma unroll
                    for (int w = 0; w < kWords; ++w) raw[gi][c][hs][w] = 0u;
                    if (c >= n_chunks || g >= kG) continue;
                    const int elem = (chunk0 + c) * Cfg::kChunkDims + kgroup * Cfg::kE;
                    if (!Cfg::kE4M3Scores && p.q_format == QFormat::kBf16)
                        load_q_bf16_words(q_head, elem, raw[gi][c][hs]);
                    else  // fp8 codes as stored (widened below once every load is issued,
                          // unless the scores multiply codes)
                        load_q_codes(q_head, elem, raw[gi][c][hs]);
                }
            }
        if (!Cfg::kE4M3Scores && p.q_format != QFormat::kBf16) {
#pragma unroll
            for (int gi = 0; gi < kQG; ++gi)
#pragma unroll
                for (int hs = 0; hs < SA::kHeadsPerLane; ++hs)
#pragma unroll
                    for (int c = 0; c < Cfg::kMaxChunks; ++c)
                        widen_q_fp8_words(p.q_format, raw[gi][c][hs]);
        }
        const float q_coef = p.sm_scale * kLog2e * p.q_scale;
        if constexpr (!Cfg::kE4M3Scores && Cfg::kScoreMma == arch::MmaType::kF16) {
            // Per-head power-of-two scale into f16 range: max |q| over the whole row.
#pragma unroll
            for (int gi = 0; gi < kQG; ++gi)
#pragma unroll
                for (int hs = 0; hs < SA::kHeadsPerLane; ++hs) {
                    uint32_t m = 0;
#pragma unroll
                    for (int c = 0; c < Cfg::kMaxChunks; ++c)
#pragma unroll
                        for (int w = 0; w < kWords; ++w) {
                            if (Cfg::is_rope_chunk(dsplit, c)) continue;  // stays bf16
                            const uint32_t x = raw[gi][c][hs][w];
                            m = max(m, max(x & 0x7fffu, (x >> 16) & 0x7fffu));
                        }
                    const float amax = SA::reduce_max_across_row(
                        arch::bf16_to_float(static_cast<uint16_t>(m)));
                    const int g = qgroup(gi);
                    if ((Cfg::kQShared || blk == 0) && kgroup == 0 && g < kG)
                        s_qmax[dsplit * Cfg::kRows + g * kGR + SA::head(lane, hs)] = amax;
                }
            arch::sync_block();
            // A row's scale exponent, from both dim splits' maxima.
            const auto row_exponent = [&](int n) {
                float row_max = 0.0f;
                for (int d = 0; d < Cfg::kDimSplits; ++d)
                    row_max = fmaxf(row_max, s_qmax[d * Cfg::kRows + n]);
                return f16_row_scale_exponent(row_max);
            };
#pragma unroll
            for (int g = 0; g < kG; ++g)
#pragma unroll
                for (int hs = 0; hs < SA::kHeadsPerLane; ++hs)
                    score_coef[g][hs] = q_coef * p.kv_scale *
                                        arch::kFp8F16Scale<Cfg::kFp8Flavor> *
                                        exp2_int(-row_exponent(g * kGR + SA::head(lane, hs)));
#pragma unroll
            for (int gi = 0; gi < kQG; ++gi)
#pragma unroll
                for (int hs = 0; hs < SA::kHeadsPerLane; ++hs) {
                    const float up = exp2_int(
                        row_exponent(min(qgroup(gi), kG - 1) * kGR + SA::head(lane, hs)));
#pragma unroll
                    for (int c = 0; c < Cfg::kMaxChunks; ++c)
#pragma unroll
                        for (int s = 0; s < Cfg::kStepsPerChunk; ++s) {
                            const uint32_t w01 = raw[gi][c][hs][2 * s];
                            const uint32_t w23 = raw[gi][c][hs][2 * s + 1];
                            if (Cfg::is_rope_chunk(dsplit, c)) {  // bf16, as for a bf16 cache
                                qf[gi][c][s][hs] = arch::Quad{w01, w23};
                                continue;
                            }
                            // Elements 4s..4s+3 sit in words 2s (e0, e1) and 2s+1 (e2, e3);
                            // the fp8 decoder pairs (e0, e2) and (e1, e3), so Q does too.
                            const float e0 = arch::bf16_to_float(static_cast<uint16_t>(w01));
                            const float e1 = arch::bf16_to_float(static_cast<uint16_t>(w01 >> 16));
                            const float e2 = arch::bf16_to_float(static_cast<uint16_t>(w23));
                            const float e3 = arch::bf16_to_float(static_cast<uint16_t>(w23 >> 16));
                            qf[gi][c][s][hs].lo = arch::pack_f16x2(e0 * up, e2 * up);
                            qf[gi][c][s][hs].hi = arch::pack_f16x2(e1 * up, e3 * up);
                        }
                }
        } else {
            // Q's words as they are: bf16 pairs (bf16 scores), or the codes as stored, 8 (two
            // words) a k32 step, in the K fragments' order (e4m3 scores).
            const float coef = Cfg::kE4M3Scores ? q_coef * p.kv_scale : q_coef;
#pragma unroll
            for (int g = 0; g < kG; ++g)
#pragma unroll
                for (int hs = 0; hs < SA::kHeadsPerLane; ++hs) score_coef[g][hs] = coef;
#pragma unroll
            for (int gi = 0; gi < kQG; ++gi)
#pragma unroll
                for (int hs = 0; hs < SA::kHeadsPerLane; ++hs)
#pragma unroll
                    for (int c = 0; c < Cfg::kMaxChunks; ++c)
#pragma unroll
                        for (int s = 0; s < Cfg::kStepsPerChunk; ++s)
                            qf[gi][c][s][hs] =
                                arch::Quad{raw[gi][c][hs][2 * s], raw[gi][c][hs][2 * s + 1]};
        }
    }
    if constexpr (Cfg::kQShared) {
        // Each chunk's fragments of a lane as kQVecs 16-byte vectors, lane-contiguous (the
        // loop's first barrier orders these stores before q_chunk's loads).
        constexpr int kH = SA::kHeadsPerLane;
#pragma unroll
        for (int gi = 0; gi < kQG; ++gi) {
            const int g = qgroup(gi);
            if (g >= kG) continue;
#pragma unroll
            for (int c = 0; c < Cfg::kMaxChunks; ++c) {
                if (c >= n_chunks) continue;
#pragma unroll
                for (int j = 0; j < Cfg::kQVecs; ++j) {
                    const arch::Quad a = qf[gi][c][(2 * j) / kH][(2 * j) % kH];
                    const arch::Quad b = qf[gi][c][(2 * j + 1) / kH][(2 * j + 1) % kH];
                    s_q[((g * Cfg::kChunks + chunk0 + c) * Cfg::kQVecs + j) * kW + lane] =
                        make_uint4(a.lo, a.hi, b.lo, b.hi);
                }
            }
        }
    }
    // Group g's Q fragments of chunk c of this warp's dim split.
    const auto q_chunk = [&](int g, int c,
                             arch::Quad (&q)[Cfg::kStepsPerChunk][SA::kHeadsPerLane]) {
        if constexpr (Cfg::kQShared) {
            constexpr int kH = SA::kHeadsPerLane;
#pragma unroll
            for (int j = 0; j < Cfg::kQVecs; ++j) {
                const uint4 v =
                    s_q[((g * Cfg::kChunks + chunk0 + c) * Cfg::kQVecs + j) * kW + lane];
                q[(2 * j) / kH][(2 * j) % kH] = arch::Quad{v.x, v.y};
                q[(2 * j + 1) / kH][(2 * j + 1) % kH] = arch::Quad{v.z, v.w};
            }
        } else {
#pragma unroll
            for (int st = 0; st < Cfg::kStepsPerChunk; ++st)
#pragma unroll
                for (int hs = 0; hs < SA::kHeadsPerLane; ++hs) q[st][hs] = qf[g][c][st][hs];
        }
    };

    // ---- online softmax state ------------------------------------------------------------------
    float o_acc[kG][Cfg::kVGroups][Cfg::VLoader::kTiles][VA::kOAcc];
#pragma unroll
    for (int g = 0; g < kG; ++g)
#pragma unroll
        for (int vg = 0; vg < Cfg::kVGroups; ++vg)
#pragma unroll
            for (int j = 0; j < Cfg::VLoader::kTiles; ++j)
#pragma unroll
                for (int i = 0; i < VA::kOAcc; ++i) o_acc[g][vg][j][i] = 0.0f;

    // Over the tile's blocks, the largest of one CTA row's block maxima. (This variant's own layout
    // loops stay lambdas: as always-inline functions they change clang's inlining order, and
    // with it the gfx942 code; the PTX is the same either way.)
    auto tile_max = [&](int n) {
        float m = kNegInf;
#pragma unroll
        for (int b = 0; b < Cfg::kBlocks; ++b) m = fmaxf(m, s_blockmax[b * Cfg::kRows + n]);
        return m;
    };
    if constexpr (Cfg::kStagedCopies) {  // the first tile (the loop's first store waits for it)
        page_ahead(0);
        load_tile(0);
    }
    float m_o[kG][VA::kOAcc];            // running max of the heads of o_acc's rows
    float m_s[kG][SA::kHeadsPerLane];    // the same maxima for this lane's score rows
    float l_s[kG][SA::kHeadsPerLane];    // this lane's share of the row sums
#pragma unroll
    for (int g = 0; g < kG; ++g) {
#pragma unroll
        for (int i = 0; i < VA::kOAcc; ++i) m_o[g][i] = kNegInf;
#pragma unroll
        for (int hs = 0; hs < SA::kHeadsPerLane; ++hs) {
            m_s[g][hs] = kNegInf;
            l_s[g][hs] = 0.0f;
        }
    }

    for (int t = 0; t < n_tiles; ++t) {
        if constexpr (Cfg::kStagedCopies) {
            arch::sync_block();  // every warp is done with the previous tile
            store_tile();        // tile t, loaded during tile t - 1's products
        } else if constexpr (Cfg::kStages == 1) {
            arch::sync_block();  // every warp is done with the previous tile
            issue_tile(t);
            arch::copy_wait<0>();
        } else {
            arch::copy_wait<Cfg::kStages - 2>();  // this thread's copies of tile t landed
        }
        arch::sync_block();  // everyone's copies landed; everyone left tile t-1
        if constexpr (Cfg::kStagedCopies)
            load_tile(t + 1);  // in flight during this tile's products
        else if constexpr (Cfg::kStages > 1)
            issue_tile(t + Cfg::kStages - 1);
        const uint8_t* stage = smem + (t % Cfg::kStages) * Cfg::kStageBytes;

        // 1. Partial scores over this warp's dims, for every group from the same K fragments;
        //    in two accumulator sets (even / odd atom steps) at one group, so that consecutive
        //    matrix products do not wait on each other (the groups' sets do that at more).
        constexpr int kSets = kG == 1 ? 2 : 1;
        float s2[kG][kSets][SA::kAcc];
#pragma unroll
        for (int g = 0; g < kG; ++g)
#pragma unroll
            for (int k = 0; k < kSets; ++k)
#pragma unroll
                for (int i = 0; i < SA::kAcc; ++i) s2[g][k][i] = 0.0f;
#pragma unroll
        for (int c = 0; c < Cfg::kMaxChunks; ++c) {
            if (c >= n_chunks) continue;
            if (Cfg::is_rope_chunk(dsplit, c)) continue;  // after the loop
            const int chunk = chunk0 + c;
            arch::Quad kq[Cfg::kStepsPerChunk][SA::kTokensPerLane];
            uint32_t kw[SA::kTokensPerLane][4];  // e4m3 scores: the codes, for the value tile
#pragma unroll
            for (int i = 0; i < SA::kTokensPerLane; ++i) {
                const int row = blk * 16 + SA::token(lane, i);
                const uint8_t* src = stage + row * Cfg::kRowBytes +
                                     Cfg::k_byte(chunk * Cfg::kChunkDims + kgroup * Cfg::kE);
                if constexpr (Cfg::kKMxfp4) {
                    const uint2 raw = *reinterpret_cast<const uint2*>(src);
                    const int block = (chunk * Cfg::kChunkDims + kgroup * Cfg::kE) / kMxfp4BlockSize;
                    const uint32_t code = stage[Cfg::kOffScales + row * Cfg::kScaleRowBytes + block];
                    const arch::Mxfp4Bf16Table table = arch::mxfp4_bf16_table(code);
                    uint32_t w[2][4];
                    arch::decode_mxfp4x8_bf16(raw.x, table, w[0]);
                    arch::decode_mxfp4x8_bf16(raw.y, table, w[1]);
#pragma unroll
                    for (int st = 0; st < Cfg::kStepsPerChunk; ++st) {
                        kq[st][i].lo = w[st >> 1][2 * (st & 1)];
                        kq[st][i].hi = w[st >> 1][2 * (st & 1) + 1];
                    }
                } else {
                    const uint4 raw = *reinterpret_cast<const uint4*>(src);
                    const uint32_t words[4] = {raw.x, raw.y, raw.z, raw.w};
#pragma unroll
                    for (int st = 0; st < Cfg::kStepsPerChunk; ++st) {
                        if constexpr (Cfg::kE4M3Scores) {  // 8 codes a step, as stored
                            kq[st][i] = arch::Quad{words[2 * st], words[2 * st + 1]};
                        } else if constexpr (Cfg::kKFp8) {
                            kq[st][i] = arch::decode_fp8x4(words[st]);
                        } else {
                            kq[st][i].lo = words[2 * st];
                            kq[st][i].hi = words[2 * st + 1];
                        }
                    }
#pragma unroll
                    for (int w = 0; w < 4; ++w) kw[i][w] = words[w];
                }
            }
#pragma unroll
            for (int g = 0; g < kG; ++g) {
                arch::Quad q[Cfg::kStepsPerChunk][SA::kHeadsPerLane];
                q_chunk(g, c, q);
#pragma unroll
                for (int st = 0; st < Cfg::kStepsPerChunk; ++st) {
                    if constexpr (Cfg::kE4M3Scores)
                        arch::mma_scores_e4m3<Cfg::kFp8Flavor>(s2[g][st % kSets], q[st], kq[st]);
                    else
                        arch::mma_scores<Cfg::kScoreMma>(s2[g][st % kSets], q[st], kq[st]);
                }
            }
            if constexpr (!Cfg::kVFromRawTile && !Cfg::kVSeparate) {
                static_assert(Cfg::kE == 16, "one chunk = 16 values per lane");
                // Hand the decoded value dims to the value product (slots in decoder order).
                if (chunk < Cfg::kVChunks) {
#pragma unroll
                    for (int i = 0; i < SA::kTokensPerLane; ++i) {
                        arch::Quad d[4];  // the lane's 16 values, decoded
#pragma unroll
                        for (int st = 0; st < 4; ++st) {
                            if constexpr (Cfg::kE4M3Scores)
                                d[st] = arch::decode_fp8x4(kw[i][st]);
                            else
                                d[st] = kq[st][i];
                        }
                        uint4* dst = reinterpret_cast<uint4*>(
                            v_tile + (blk * 16 + SA::token(lane, i)) * Cfg::kVRowBytes +
                            (chunk * Cfg::kChunkDims + kgroup * Cfg::kE) * 2);
                        dst[0] = make_uint4(d[0].lo, d[0].hi, d[1].lo, d[1].hi);
                        dst[1] = make_uint4(d[2].lo, d[2].hi, d[3].lo, d[3].hi);
                    }
                }
            }
        }
        if constexpr (Cfg::kVSeparate) {
            // Decode the tile's fp8 V rows into the 16-bit V tile, 16 codes per step.
            constexpr int kPieces = Cfg::kTileTokens * (kHeadDimV / 16);
            for (int piece = static_cast<int>(arch::thread_index()); piece < kPieces;
                 piece += Cfg::kThreads) {
                const int row = piece / (kHeadDimV / 16);
                const int col = piece % (kHeadDimV / 16);
                const uint4 raw = *reinterpret_cast<const uint4*>(
                    stage + Cfg::kOffVRaw + row * Cfg::kVRawRowBytes + 16 * col);
                const arch::Quad a = arch::decode_fp8x4(raw.x), b = arch::decode_fp8x4(raw.y);
                const arch::Quad c = arch::decode_fp8x4(raw.z), d = arch::decode_fp8x4(raw.w);
                uint4* dst = reinterpret_cast<uint4*>(v_tile + row * Cfg::kVRowBytes + 32 * col);
                dst[0] = make_uint4(a.lo, a.hi, b.lo, b.hi);
                dst[1] = make_uint4(c.lo, c.hi, d.lo, d.hi);
            }
        }

        float s[kG][SA::kAcc];
#pragma unroll
        for (int g = 0; g < kG; ++g)
#pragma unroll
            for (int i = 0; i < SA::kAcc; ++i) {
                s[g][i] = s2[g][0][i];
#pragma unroll
                for (int k = 1; k < kSets; ++k) s[g][i] += s2[g][k][i];
            }
        if constexpr (Cfg::kRopeBf16) {
            // The latent's scores scaled here (step 2 then scales nothing), the rope's added.
#pragma unroll
            for (int g = 0; g < kG; ++g) {
#pragma unroll
                for (int i = 0; i < SA::kAcc; ++i) s[g][i] *= score_coef[g][SA::acc_head_slot(i)];
                if (dsplit == Cfg::kRopeSplit) {
                    arch::Quad q[Cfg::kStepsPerChunk][SA::kHeadsPerLane];
                    q_chunk(g, Cfg::kRopeSlot, q);
                    add_bf16_rope_scores<Cfg>(stage, blk, lane, q, p.sm_scale * kLog2e * p.q_scale,
                                              s[g]);
                }
            }
        }

        // 2. Full scores of block `blk` (dim split 0 sums the others' partials), maxima.
        if (dsplit != 0) {
#pragma unroll
            for (int g = 0; g < kG; ++g)
#pragma unroll
                for (int i = 0; i < SA::kAcc; ++i)
                    s_partial[(((warp - Cfg::kBlocks) * kG + g) * SA::kAcc + i) * kW + lane] =
                        s[g][i];
        }
        arch::sync_block();
        if (dsplit == 0) {
#pragma unroll
            for (int g = 0; g < kG; ++g) {
#pragma unroll
                for (int d = 1; d < Cfg::kDimSplits; ++d)
#pragma unroll
                    for (int i = 0; i < SA::kAcc; ++i)
                        s[g][i] += s_partial[((((d - 1) * Cfg::kBlocks + blk) * kG + g) * SA::kAcc +
                                              i) * kW + lane];
                float bmax[SA::kHeadsPerLane];
#pragma unroll
                for (int hs = 0; hs < SA::kHeadsPerLane; ++hs) bmax[hs] = kNegInf;
#pragma unroll
                for (int i = 0; i < SA::kAcc; ++i) {
                    const int hs = SA::acc_head_slot(i);
                    const int tok = t * Cfg::kTileTokens + blk * 16 + SA::acc_token(lane, i);
                    const bool valid = tok < row_end[g][hs];
                    if constexpr (Cfg::kRopeBf16)  // scaled in step 1
                        s[g][i] = valid ? s[g][i] : kNegInf;
                    else
                        s[g][i] = valid ? s[g][i] * score_coef[g][hs] : kNegInf;
                    bmax[hs] = fmaxf(bmax[hs], s[g][i]);
                }
#pragma unroll
                for (int hs = 0; hs < SA::kHeadsPerLane; ++hs) {
                    bmax[hs] = SA::reduce_max_across_row(bmax[hs]);
                    if (kgroup == 0)
                        s_blockmax[blk * Cfg::kRows + g * kGR + SA::head(lane, hs)] = bmax[hs];
                }
            }
        }
        arch::sync_block();

        // 3. New running maxima; rescale O; P = exp2(s - m) to shared memory.
#pragma unroll
        for (int g = 0; g < kG; ++g)
#pragma unroll
            for (int i = 0; i < VA::kOAcc; ++i) {
                const float m_new = fmaxf(m_o[g][i], tile_max(g * kGR + VA::o_head(lane, i)));
                const float alpha = softmax_rescale(m_o[g][i], m_new);
                m_o[g][i] = m_new;
#pragma unroll
                for (int vg = 0; vg < Cfg::kVGroups; ++vg)
#pragma unroll
                    for (int j = 0; j < Cfg::VLoader::kTiles; ++j) o_acc[g][vg][j][i] *= alpha;
            }
        if (dsplit == 0) {
#pragma unroll
          for (int g = 0; g < kG; ++g) {
            float m_use[SA::kHeadsPerLane];
#pragma unroll
            for (int hs = 0; hs < SA::kHeadsPerLane; ++hs) {
                const float m_new = fmaxf(m_s[g][hs], tile_max(g * kGR + SA::head(lane, hs)));
                m_use[hs] = softmax_offset(m_new);
                l_s[g][hs] *= arch::fast_exp2(m_s[g][hs] - m_use[hs]);
                m_s[g][hs] = m_new;
            }
            float pr[SA::kAcc];
#pragma unroll
            for (int i = 0; i < SA::kAcc; ++i) {
                const int hs = SA::acc_head_slot(i);
                pr[i] = arch::fast_exp2(s[g][i] - m_use[hs]);
                l_s[g][hs] += pr[i];
            }
#pragma unroll
            for (int j = 0; j < VA::kPRegs; ++j) {
                const float a = pr[2 * j], b = pr[2 * j + 1];
                uint32_t* dst =
                    s_p + ((g * Cfg::kBlocks + blk) * Cfg::kPSplit * VA::kPRegs + j) * kW + lane;
                if constexpr (Cfg::kValueMma == arch::MmaType::kF16) {
                    dst[0] = arch::pack_f16x2(a, b);
                } else {
                    const uint32_t hi = arch::pack_bf16x2(a, b);
                    const float a_hi = arch::bits_float(hi << 16);
                    const float b_hi = arch::bits_float(hi & 0xffff0000u);
                    dst[0] = hi;
                    dst[VA::kPRegs * kW] = arch::pack_bf16x2(a - a_hi, b - b_hi);
                }
            }
          }
        }
        arch::sync_block();

        // 4. O[:, this warp's dims] += P * V over the tile's blocks, each V fragment loaded
        //    once for every group.
#pragma unroll
        for (int kb = 0; kb < Cfg::kBlocks; ++kb) {
            uint32_t pf[kG][Cfg::kPSplit][VA::kPRegs];
#pragma unroll
            for (int g = 0; g < kG; ++g)
#pragma unroll
                for (int ps = 0; ps < Cfg::kPSplit; ++ps)
#pragma unroll
                    for (int j = 0; j < VA::kPRegs; ++j)
                        pf[g][ps][j] = s_p[(((g * Cfg::kBlocks + kb) * Cfg::kPSplit + ps) *
                                                VA::kPRegs + j) * kW + lane];
#pragma unroll
            for (int vg = 0; vg < Cfg::kVGroups; ++vg) {
                uint32_t v[Cfg::VLoader::kTiles][2];
                Cfg::VLoader::load(Cfg::kVFromRawTile ? stage : v_tile, Cfg::kVRowBytes, kb * 16,
                                   warp * Cfg::kPvDims + vg * Cfg::VLoader::kDims, v);
#pragma unroll
                for (int g = 0; g < kG; ++g)
#pragma unroll
                    for (int j = 0; j < Cfg::VLoader::kTiles; ++j)
#pragma unroll
                        for (int ps = 0; ps < Cfg::kPSplit; ++ps)
                            arch::mma_values<Cfg::kValueMma>(o_acc[g][vg][j], pf[g][ps], v[j]);
            }
        }
    }
    arch::copy_wait<0>();

    // ---- epilogue: row sums meet in shared memory; write O / sum and the LSE -----------------
    if (dsplit == 0) {
#pragma unroll
        for (int g = 0; g < kG; ++g)
#pragma unroll
            for (int hs = 0; hs < SA::kHeadsPerLane; ++hs) {
                const float l = SA::reduce_sum_across_row(l_s[g][hs]);
                if (kgroup == 0) s_blockmax[blk * Cfg::kRows + g * kGR + SA::head(lane, hs)] = l;
            }
    }
    arch::sync_block();
    auto row_sum = [&](int n) {
        float l = 0.0f;
#pragma unroll
        for (int b = 0; b < Cfg::kBlocks; ++b) l += s_blockmax[b * Cfg::kRows + n];
        return l;
    };
    float v_scale = 1.0f;
    if constexpr (Cfg::kKFp8) v_scale = p.kv_scale * arch::kFp8F16Scale<Cfg::kFp8Flavor>;
    if constexpr (Cfg::kVSeparate) v_scale = p.v_scale * arch::kFp8F16Scale<Cfg::kFp8Flavor>;
    const bool single = single_split(work);
    // This lane's values of O row `i` of group g's accumulators, times `scale`, into the row at
    // dst (from this warp's first dim), in the row's type (epilogue.h, o_value).
    auto store_row = [&](auto* dst, int g, int i, float scale) {
#pragma unroll
        for (int vg = 0; vg < Cfg::kVGroups; ++vg)
#pragma unroll
            for (int j = 0; j < Cfg::VLoader::kTiles; ++j)
                dst[Cfg::v_slot_to_dim(vg * Cfg::VLoader::kDims +
                                       Cfg::VLoader::dim(j, VA::o_col(lane, i)))] =
                    o_value(dst, o_acc[g][vg][j][i] * scale);
    };
#pragma unroll
    for (int g = 0; g < kG; ++g)
#pragma unroll
        for (int i = 0; i < VA::kOAcc; ++i) {
            const int n = g * kGR + VA::o_head(lane, i);  // CTA row
            const Stage1Row row = stage1_row(p, work, n);
            const float l = row_sum(n);
            const float scale = l > 0.0f ? v_scale / l : 0.0f;
            const int dim0 = warp * Cfg::kPvDims;
            if (single) {  // the final O, bf16
                store_row(final_o_row(p, work, row.token, row.head) + dim0, g, i, scale);
            } else {  // this split's partial O, fp32
                store_row(partial_o_row(p, work, row.token, row.head) + dim0, g, i, scale);
            }
        }
    if (dsplit == 0 && blk == 0 && kgroup == 0) {
#pragma unroll
        for (int g = 0; g < kG; ++g)
#pragma unroll
            for (int hs = 0; hs < SA::kHeadsPerLane; ++hs) {
                const int n = g * kGR + SA::head(lane, hs);
                const Stage1Row row = stage1_row(p, work, n);
                store_lse(p, work, row.token, row.head, m_s[g][hs], row_sum(n));
            }
    }
}

// Whether format F has an mma16 kernel of `rows` rows per CTA on this architecture (its
// configuration fits: kFits; e4m3 scores need less of everything, so theirs fits too).
template <KvFormat F>
constexpr bool mma16_rows_fit(int rows) {
    return rows == 16   ? Mma16Config<F, false, 16>::kFits
           : rows == 32 ? Mma16Config<F, false, 32>::kFits
           : rows == 64 ? Mma16Config<F, false, 64>::kFits
                        : false;
}

// The launcher of one rows-per-CTA kernel (none where it does not fit: plans never ask).
template <KvFormat F, bool kE4M3, int kRowsPerCta>
gpu::error_t launch_stage1_mma16_rows(const Params& params, gpu::stream_t stream) {
    using Cfg = Mma16Config<F, kE4M3, kRowsPerCta>;
    if constexpr (!mma16_rows_fit<F>(kRowsPerCta)) {
        (void)params;
        (void)stream;
        return gpu::kErrorInvalidValue;
    } else {
        static_assert(Cfg::kFits, "e4m3 scores need less of everything");
        static std::atomic<bool> prepared[kMaxDevices];
        const auto kernel = stage1_mma16_kernel<F, kE4M3, kRowsPerCta>;
        const gpu::error_t e = set_shared_bytes_once(kernel, Cfg::kSmemBytes, prepared);
        if (e != gpu::kSuccess) return e;
        MLA_LAUNCH(kernel, stage1_grid(params), Cfg::kThreads, Cfg::kSmemBytes, stream)(params);
        return gpu::get_last_error();
    }
}

// The launcher, instantiated per format in instantiations/stage1_mma16_*.hip: the kernel of
// params.rows_per_cta (kMma16Rows, variants.h).
template <KvFormat F, bool kE4M3>
gpu::error_t launch_stage1_mma16(const Params& params, gpu::stream_t stream) {
    static_assert(kMma16Rows[0] == 16 && kMma16Rows[1] == 32 && kMma16Rows[2] == 64,
                  "one case per kMma16Rows entry");
    switch (params.rows_per_cta) {
        case 16: return launch_stage1_mma16_rows<F, kE4M3, 16>(params, stream);
        case 32: return launch_stage1_mma16_rows<F, kE4M3, 32>(params, stream);
        case 64: return launch_stage1_mma16_rows<F, kE4M3, 64>(params, stream);
    }
    return gpu::kErrorInvalidValue;
}

}  // namespace mla::splitkv
