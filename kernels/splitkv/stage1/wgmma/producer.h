// The wgmma variant's producer warpgroup (stage1/wgmma.h): it only moves bytes, the cache rows
// of kStages tiles ahead into the stage ring (or MXFP4's raw ring), by cp.async or, for whole
// tiles in swizzled stages, by TMA.
#pragma once

#include "splitkv/params.h"
#include "splitkv/work.h"
#include "splitkv/stage1/wgmma/config.h"

// The roles' code exists only in sm_90a device passes (arch/nvidia/sm90.h).
#if defined(MLA_ARCH_SM90)
namespace mla::splitkv {

// ---- producer warpgroup: the cache rows, kStages tiles ahead --------------------------------
namespace wgmma_detail {

// The producer's copies of one tile, warp pw: rows pw + 4 i (i < kTileTokens / 4), each row's
// 16-byte pieces 0..31 (the latent dims, from the latent row: src of row pw + 4 i is lane i's
// my_src) by one instruction, a lane a piece, and pieces 32..35 (the rope dims, from the rope
// row: the same row further on for a 576-wide cache). A row past `valid` is zero-filled (source
// size 0). Two ways to copy the rope pieces:
//   * in blocks: after each block of 8 rows' latent pieces, the rope pieces of those 8 rows by
//     one instruction (lane l: row 8 b + l / 4, piece l % 4);
//   * per row: lanes 0..3 with each row's latent copy (4 lanes of a 32-lane instruction).
// The per-row copies are ~31 shared wavefronts each by ncu (44 % of all at 16 rows). In blocks,
// A/B on the H200: bs256 kv8192 H16 390 -> 359 us, H128 189 -> 184, but CTAs of <= 16 tiles
// 2-6 % slower (bs4 kv8192 21.3 -> 22.5), whether the rope copies go first, last or per block.
// ncu: the same cycles at its locked base clock (bs4 kv8192: 23.8k vs 23.7k), 8 % more at boost
// clock (26.9k vs 24.9k): a latency effect, not understood yet (docs/notes/stage1_wgmma.md).
// So the producer picks by its CTA's tile count; the threshold from A/Bs of 17, 33 and 9 (9:
// bs4 kv8192 22.4 -> 20.7, bs32 kv1024 21.3 -> 19.7, bs64 kv1024 28.4 -> 27.6 us; 16-tile
// CTAs lose per row: bs1 kv65536 36.5 -> 41.4 at 17). bf16 tiles take the same threshold
// (not measured for them).
constexpr int kRopeBlockMinTiles = 9;
// Threads a tile row in the producer on pages of 1, 2, 4 and 8 tokens (kOwnPageLanes; each
// thread 4 rows, a warp's copy 4 rows' 128 bytes): e4m3fnuz at 32 rows with bf16 scores (fp8 at
// 64 rows and e4m3fn at 32 took them until their stages were swizzled), bf16 at 16 (and 16-token
// pages) and 32. Thirty-fifth session, against the shuffled loop: fp8 at 32
// rows (bs128 kv4096 H16 q2) 0.978 / 0.985 on pages of 1 / 4 (113.3 -> 110.8 us; contiguous
// 105.3); bf16 at 16 rows (bs32 kv8192 H16) 0.921-0.926 on 1-token pages (103.7 -> 96.0;
// contiguous 94.1), 0.965 on 16-token pages, at 32 rows (bs128 kv4096 H16 q2) 0.970 / 0.968 on
// 1 / 4; e4m3 scores at 32 rows 0.977 there but 1.034 in CTAs of 8 tiles (bs32 kv2048 H16 q2:
// 30.1 -> 31.2), not taken. 64 rows, A/B on the H200 against the shuffled loop (thirty-fourth
// session, H128 q1 bs64 kv4096): bf16 scores 0.921-0.928 (1-token pages 160.0 -> 147.7 us;
// 16-token pages 144.6, contiguous ~142), H16 q4 bs128 kv4096 0.912-0.916; e4m3 scores 0.973 /
// 0.984 / 0.988 / 1.006 on pages of 1 / 2 / 4 / 8, H16 q4 0.950-0.957. With 4 threads a row (8
// rows' 64 bytes a copy): bf16 scores 0.96-0.97, e4m3 scores 1.02-1.09; 16 spilled 120 bytes
// at the producer's 24 registers.
constexpr int kOwnPageRowThreads = 8;

// The 16-byte pieces of a tile row as the producer's copies take them (copy_tile_rows,
// copy_tile_rows_consecutive): the latent ones kLatentPerLane a lane, the rope ones of
// kBlockRows rows per instruction in blocks.
template <class Cfg>
struct TileRowPieces {
    static constexpr int kPieces = Cfg::kRowBytes / 16;
    static constexpr int kLatentPieces = kKvLoraRank * Cfg::Decode::kDimBytes / 16;
    static constexpr int kRopePieces = kPieces - kLatentPieces;
    static constexpr int kLatentPerLane = kLatentPieces / 32;
    static_assert(kLatentPieces % 32 == 0 && 32 % kRopePieces == 0,
                  "whole latent pieces per lane, the rope pieces of whole rows per instruction");
    static constexpr int kBlockRows = 32 / kRopePieces;
    static_assert((Cfg::kTileTokens / 4) % kBlockRows == 0, "whole blocks of rows per warp");
};

// bf16 rows (72 pieces): two latent pieces per lane and row (lane, lane + 32), the rope pieces
// of 4 rows per instruction in blocks, or lanes 0..7 per row.
template <class Cfg, bool kRopeBlocks>
MLA_DEVICE void copy_tile_rows(uint8_t* dst, const uint8_t* my_src, const uint8_t* my_rope,
                               int valid, int pw, int lane) {
    using R = TileRowPieces<Cfg>;
    constexpr int kLatentPieces = R::kLatentPieces, kRopePieces = R::kRopePieces;
    constexpr int kLatentPerLane = R::kLatentPerLane, kBlockRows = R::kBlockRows;
#pragma unroll 1
    for (int b = 0; b < Cfg::kTileTokens / 4 / kBlockRows; ++b) {
#pragma unroll
        for (int j = 0; j < kBlockRows; ++j) {
            const int i = kBlockRows * b + j;
            const int row = pw + 4 * i;
            const uint8_t* src = reinterpret_cast<const uint8_t*>(
                __shfl_sync(0xffffffffu, reinterpret_cast<uintptr_t>(my_src), i));
            uint8_t* d = dst + row * Cfg::kRowPitch;
#pragma unroll
            for (int k = 0; k < kLatentPerLane; ++k)
                arch::copy_16_async(d + 16 * (lane + 32 * k), src + 16 * (lane + 32 * k),
                                    row < valid);
            if (!kRopeBlocks) {
                const uint8_t* rope = reinterpret_cast<const uint8_t*>(
                    __shfl_sync(0xffffffffu, reinterpret_cast<uintptr_t>(my_rope), i));
                if (lane < kRopePieces)
                    arch::copy_16_async(d + 16 * (kLatentPieces + lane), rope + 16 * lane,
                                        row < valid);
            }
        }
        if (kRopeBlocks) {
            const int i = kBlockRows * b + lane / kRopePieces;
            const int piece = lane % kRopePieces;
            const int row = pw + 4 * i;
            const uint8_t* rope = reinterpret_cast<const uint8_t*>(
                __shfl_sync(0xffffffffu, reinterpret_cast<uintptr_t>(my_rope), i));
            arch::copy_16_async(dst + row * Cfg::kRowPitch + 16 * (kLatentPieces + piece),
                                rope + 16 * piece, row < valid);
        }
    }
}

// copy_tile_rows where the tile's rows lie in consecutive cache slots (wgmma_producer_tiles'
// kConsecutive: 32 rows of bf16, WgmmaConfig::kConsecutiveRows (until 0.7.20 also 64 rows of
// fp8 and long CTAs); with kWarpRun e4m3fnuz at 32 rows on pages of a multiple of 16): the
// same copies, each row's source 4 rows' strides after the previous one of the warp, from the
// warp's first row (src0, rope0: row pw's, or row 0's where the warp has no valid row) instead
// of a lane's shuffled address. It was written from ncu of the 16-row long-CTA kernel (bs256
// kv8192), where in the shuffled loop a chain of shuffle, address add and copy per row at the
// producer's 32 registers kept it issuing ~90 % of its time; there it paid only from ~112 tiles
// a CTA on contiguous caches (0.993-0.996 at 128) and on 64-token pages (0.935-0.952 at 40-128
// tiles), at 64 rows it did (0.92-0.94). Rows past `valid` (zero-filled) keep the last valid
// row's address. kWarpRun: warp pw takes the tile's rows 16 pw .. 16 pw + 15 instead of pw,
// pw + 4, ... (the caller's steps are then one row's strides): on pages of a multiple of 16
// tokens (and on a contiguous cache) the warp's rows lie in consecutive slots
// (wgmma_producer_tiles' kWarpRun).
template <class Cfg, bool kRopeBlocks, bool kWarpRun = false>
MLA_DEVICE void copy_tile_rows_consecutive(uint8_t* dst, const uint8_t* src0,
                                           const uint8_t* rope0, int64_t src_step,
                                           int64_t rope_step, int valid, int pw, int lane) {
    using R = TileRowPieces<Cfg>;
    constexpr int kLatentPieces = R::kLatentPieces, kRopePieces = R::kRopePieces;
    constexpr int kLatentPerLane = R::kLatentPerLane, kBlockRows = R::kBlockRows;
    constexpr int kRowStep = kWarpRun ? 1 : 4;  // tile rows between a warp's consecutive rows
    const int row0 = kWarpRun ? pw * (Cfg::kTileTokens / 4) : pw;
    const uint8_t* src = src0;
    const uint8_t* rope = rope0;
#pragma unroll 1
    for (int b = 0; b < Cfg::kTileTokens / 4 / kBlockRows; ++b) {
        const uint8_t* block_rope = rope;  // the warp's row kBlockRows b (kRopeBlocks)
#pragma unroll
        for (int j = 0; j < kBlockRows; ++j) {
            const int row = row0 + kRowStep * (kBlockRows * b + j);
            uint8_t* d = dst + row * Cfg::kRowPitch;
#pragma unroll
            for (int k = 0; k < kLatentPerLane; ++k)
                arch::copy_16_async(d + 16 * (lane + 32 * k), src + 16 * (lane + 32 * k),
                                    row < valid);
            if (!kRopeBlocks && lane < kRopePieces)
                arch::copy_16_async(d + 16 * (kLatentPieces + lane), rope + 16 * lane,
                                    row < valid);
            if (row + kRowStep < valid) {
                src += src_step;
                rope += rope_step;
            }
        }
        if (kRopeBlocks) {
            const int i = lane / kRopePieces;  // of the block's rows
            const int piece = lane % kRopePieces;
            const int row = row0 + kRowStep * (kBlockRows * b + i);
            arch::copy_16_async(dst + row * Cfg::kRowPitch + 16 * (kLatentPieces + piece),
                                (row < valid ? block_rope + i * rope_step : block_rope) +
                                    16 * piece,
                                row < valid);
        }
    }
}

// fp8 and bf16 rows on pages of 1, 2, 4 or 8 tokens, and 16 for bf16 at 16 rows (a power of two
// up to 128 / L; wgmma_producer_tiles' kOwnPageLanes = L, threads a row): thread pt of the
// producer warpgroup copies rows q + (128 / L) j (q = pt / L, j < L / 2), each from its own
// page (pages[j], the row at in_page in it: no shuffle), its
// latent pieces s, s + L, .. (s = pt % L; 32 / L of fp8's 32, 64 / L of bf16's 64) and, where
// s < kRopePieces (4, 8), rope piece s, all at immediate offsets from the row's one address: a
// warp's instruction covers 32 / L rows' 16 L contiguous bytes. Rows past `valid` are
// zero-filled (source size 0). dst_s: the stage's shared address.
template <class Cfg, int L>
MLA_DEVICE void copy_tile_rows_own_pages(uint32_t dst_s, const Params& p,
                                         const int32_t (&pages)[L / 2], int page_shift,
                                         int64_t in_page, int valid, int q, int s) {
    using R = TileRowPieces<Cfg>;
    static_assert(R::kLatentPieces % L == 0 && R::kRopePieces <= L,
                  "whole latent pieces a thread, at most one rope piece");
    static_assert(L == 4 || L == 8 || L == 16, "4, 8 or 16 threads a row");
#pragma unroll
    for (int j = 0; j < L / 2; ++j) {
        const int row = q + (128 / L) * j;
        const bool ok = row < valid;
        const int64_t slot = (int64_t{pages[j]} << page_shift) | in_page;
        const uint8_t* src = p.kv + slot * p.kv_stride_bytes + 16 * s;
        const uint8_t* rope = p.kpe + slot * p.kpe_stride_bytes + 16 * s;
        const uint32_t d = dst_s + row * Cfg::kRowPitch + 16 * s;
#pragma unroll
        for (int k = 0; k < R::kLatentPieces / L; ++k)
            arch::copy_16_async(d + 16 * L * k, src + 16 * L * k, ok);
        arch::copy_16_async_if(d + 16 * R::kLatentPieces, rope, ok, s < R::kRopePieces);
    }
}

// Cfg::kSwizzled (wgmma_swizzled_stages): producer thread pt copies stage rows m = r + 16 j
// (r = pt / 8, j < 4) of the tile, token m, its 16-byte piece c = pt % 8 of each 128-byte
// latent block and (c < kRopePieces) rope piece c, to ss_offset: a warp's instruction reads 4
// rows' 128 contiguous bytes and, through the swizzle, writes them without bank conflicts. The
// slot of token t of the warp's 16 rows is t plus lane l < 16's `page`, taken by shuffle: a
// paged cache's page offsets (ss_tile_page, loaded a tile ahead), a contiguous cache's first
// slot. Rows past `valid` are zero-filled.
template <class Cfg>
MLA_DEVICE void copy_tile_rows_ss(uint32_t dst_s, const Params& p, int64_t tile_tok0, int valid,
                                  int pt, int32_t page) {
    using R = TileRowPieces<Cfg>;
    static_assert(R::kLatentPieces == 32 && R::kRopePieces <= 8, "4 blocks of 8 pieces a row");
    const int r = pt / 8, c = pt % 8;
    // (Row m = r + 16 j: m % 8 = r % 8, so its pieces lie 16 rows, two 1 KB latent atoms and
    // two 512-byte rope atoms, further on each j.)
    const int tok_r = r;
    const uint32_t lat_s = dst_s + Cfg::ss_offset(r, 16 * c);
    const uint32_t rope_s = dst_s + Cfg::ss_offset(r, 512 + 16 * (c % 4));
#pragma unroll 1
    for (int j = 0; j < 4; ++j) {
        const int tok = tok_r + 16 * j;
        const bool ok = tok < valid;
        const int64_t t = tile_tok0 + (ok ? tok : 0);
        const int32_t delta = __shfl_sync(0xffffffffu, page, (pt % 32) / 8 + 4 * j);
        const int64_t slot = t + delta;
        const uint8_t* src = p.kv + slot * p.kv_stride_bytes + 16 * c;
        const uint32_t d = lat_s + 2048 * j;
#pragma unroll
        for (int k = 0; k < 4; ++k)
            arch::copy_16_async(d + k * Cfg::kSsBlockBytes, src + 128 * k, ok);
        arch::copy_16_async_if(rope_s + 1024 * j, p.kpe + slot * p.kpe_stride_bytes + 16 * c, ok,
                               c < R::kRopePieces);
    }
}
// The slot of copy_tile_rows_ss's row j = l / 4 of r = 4 pw + l % 4 (lane l < 16 of producer
// warp pw; lanes 16..31 repeat lanes 0..15) of the tile at tile_tok0, less its token.
template <class Cfg>
MLA_DEVICE int32_t ss_tile_page(const Params& p, const Stage1Work& work, int64_t tile_tok0,
                                int valid, int pw, int lane) {
    const int32_t* list = p.page_indices + p.page_indptr[work.batch];
    const int tok = 4 * pw + lane % 4 + 16 * ((lane % 16) / 4);
    const int32_t t = static_cast<int32_t>(tile_tok0) + (tok < valid ? tok : 0);
    const int32_t page = t / p.page_size;
    // (A cache's slots number below 2^31: its rows are 576 bytes or more.)
    return (list[page] - page) * p.page_size;
}

// MXFP4 rows: the 18 packed pieces of the 288-byte row (an MXFP4 cache is never split into
// latent and rope rows: the validation refuses it, and Params::kpe is kv + 256) and the row's
// scale codes into the 32-byte slot after them, one row per instruction: lanes 0..17 the
// pieces, lanes 18.. the codes, by the alignment of the scale tensor (Params::ScaleCopy): two
// 16-byte or five 4-byte copies, or byte by byte as plain loads and stores (the producer then
// arrives on the stage's barrier only after them: wgmma_producer). Rows past `valid` are
// zero-filled, codes too (code 0: zeros, never NaN, where P is 0). Lane i < 16 holds the cache
// slot of row pw + 4 i; each lane forms its own address from the shuffled slot (shuffling the
// two addresses instead spilled the producer's 24 registers). At 16 and 32 rows (staged
// decode) the loop is unrolled Cfg::kMxfp4RowUnroll times (Cfg::kProducerRegs). Row pitch
// Cfg::kMxfp4Pitch (the raw ring's where decoder warpgroups decode the tiles).
// kConsecutive (the tile's rows in consecutive cache slots; 16- and 4-byte scale copies; 32
// rows): my_slot is instead the warp's first row's (warp-uniform, in every lane; row 0's where
// the warp has no valid row), and each lane walks its own source 4 rows' strides a row, as
// copy_tile_rows_consecutive (no shuffle, no slot product a row); rows past `valid` keep the
// last valid row's address.
// MXFP4 keys beside fp8 values (Cfg::Decode::kSeparateV; shuffled loop only): each row's V row
// too, the same slot's row of the V cache (Params::v), a 16-byte piece a lane (32 pieces: 512
// codes) at kVRowOffset, a second copy instruction a row.
template <class Cfg, ScaleCopy kMode, bool kConsecutive = false>
MLA_DEVICE void copy_tile_rows_mxfp4(uint8_t* dst, const Params& p, int64_t my_slot, int valid,
                                     int pw, int lane) {
    static_assert(!kConsecutive || kMode != ScaleCopy::kBytes, "byte-wise codes: shuffled loop");
    constexpr bool kSeparateV = Cfg::Decode::kSeparateV;
    static_assert(!kConsecutive || !kSeparateV, "V rows beside MXFP4 keys: shuffled loop");
    static_assert(!kSeparateV || kHeadDimV == 32 * 16, "a V piece a lane");
    // The copies' shared addresses from one conversion per tile (a generic pointer converted
    // per row cost two S2UR SR_CgaCtaId and their dependent ULEAs a row: ncu, sixteenth session).
    const uint32_t dst_s = arch::sm90::smem_addr(dst);
    constexpr int kPieces = kMxfp4RowBytes / 16;
    constexpr int kCodeLanes = 32 - kPieces;
    static_assert(kCodeLanes >= 5, "the 4-byte scale copies in one instruction");
    // Per lane, fixed over the tile: what it copies (a data piece, a piece of codes, or nothing),
    // from which tensor (base, row stride) to which offset of the row. Each row is then one
    // predicated copy instruction of the warp (two in the 4-byte mode) with no branch: the
    // if / else of data and code lanes made every row a divergent branch and its
    // reconvergence, ~37 instructions a row, and the producer's issue bounded the staged kernel
    // (ncu, nineteenth session: 97 % of its time in the row loop, stalls on fixed latencies and
    // branch resolution, none on memory).
    const bool data = lane < kPieces;
    const int j = lane - kPieces;
    constexpr int kCodeBytes = kMode == ScaleCopy::k16Bytes ? 16 : 4;  // per copy
    const bool code = !data && j < (kMode == ScaleCopy::k16Bytes ? 2 : 5);
    const int code_off = kCodeBytes * (code ? j : 0);
    const uint8_t* base = data ? p.kv + 16 * lane : p.kv_scales + code_off;
    const int64_t stride = data ? p.kv_stride_bytes : p.kv_scale_stride;
    const uint32_t lane_off = data ? 16 * lane : WgmmaMxfp4Decode::kScaleOffset + code_off;
    const uint8_t* walk = base + my_slot * stride;  // kConsecutive: this lane's source row
#pragma unroll(Cfg::kMxfp4RowUnroll)
    for (int i = 0; i < Cfg::kTileTokens / 4; ++i) {
        const int row = pw + 4 * i;
        const bool ok = row < valid;
        const uint8_t* src = walk;
        int64_t slot = 0;  // (the shuffled loop's)
        if constexpr (kConsecutive) {
            if (row + 4 < valid) walk += 4 * stride;
        } else {
            slot = __shfl_sync(0xffffffffu, my_slot, i);
        }
        const uint32_t d = dst_s + row * Cfg::kMxfp4Pitch + lane_off;
        if constexpr (!kConsecutive) src = base + slot * stride;
        if constexpr (kSeparateV)
            arch::copy_16_async(dst_s + row * Cfg::kMxfp4Pitch + Cfg::Decode::kVRowOffset +
                                    16 * lane,
                                p.v + slot * p.v_stride_bytes + 16 * lane, ok);
        if constexpr (kMode == ScaleCopy::k16Bytes) {
            arch::copy_16_async_if(d, src, ok, data || code);
        } else if constexpr (kMode == ScaleCopy::k4Bytes) {
            arch::copy_16_async_if(d, src, ok, data);
            arch::copy_4_async_if(d, src, ok, code);
        } else {
            arch::copy_16_async_if(d, src, ok, data);
            if (!data) {  // byte by byte as plain loads and stores (scale rows not 4-byte aligned)
                const uint8_t* codes = p.kv_scales + slot * p.kv_scale_stride;
                uint8_t* sg = dst + row * Cfg::kMxfp4Pitch + WgmmaMxfp4Decode::kScaleOffset;
                for (int k = j; k < kMxfp4RowScales; k += kCodeLanes)
                    sg[k] = ok ? codes[k] : uint8_t{0};
            }
        }
    }
}

// The full barrier that tile t's copies complete on: its stage's, or with per-consumer full
// barriers (solo, Cfg::kFullSets) the stage's of the tile's consumer.
template <class Cfg>
MLA_DEVICE int producer_full_bar(int stage, int t) {
    return Cfg::kStagedDecode || Cfg::kFullSets == 1
               ? stage
               : stage * Cfg::kFullSets + t % Cfg::kConsumers;
}

}  // namespace wgmma_detail

// The producer's tile loop; kMode: MXFP4's scale-copy mode (a template argument, so that the
// producer's registers, Cfg::kProducerRegs, hold one mode's copy code only; other formats
// ignore it). It fills the consumers' stages, or with Cfg::kStagedDecode the raw ring.
// kConsecutive (Cfg::kConsecutiveRows: 32 rows of bf16 and MXFP4; and with kWarpRun, fp8 at
// 32 rows on pages of a multiple of 16; chosen per CTA by
// wgmma_producer): every tile's rows lie in consecutive cache slots (a contiguous cache, or
// pages of a multiple of the tile's tokens: tiles start at multiples of it), so a warp's rows
// are found from its first row's slot (copy_tile_rows_consecutive, MXFP4's
// copy_tile_rows_mxfp4).
// kWarpRun (with kConsecutive; (bf16 scores) 32 rows of e4m3fnuz, 32 of bf16, on pages of a
// multiple of 16 tokens): warp pw copies the tile's rows 16 pw .. 16 pw + 15, which lie in one page
// (tiles start at multiples of 64 tokens: stage1_work), from that page's slot, one row's strides
// a row; with kPagedAhead that page is loaded a tile ahead, after the tile's copies (late).
// kOwnPageLanes = L > 0 (pages of 1 to 8 tokens, 16 for bf16 at 16 rows: wgmma_producer; a
// thread's rows are 128 / L apart, so pages of at most 128 / L tokens): L threads a row, each
// thread L / 2 rows from their own pages (copy_tile_rows_own_pages), loaded a tile ahead after
// the tile's copies (late). Tiles start at multiples of 64 tokens, so row r lies at page(r) *
// page_size + r % page_size.
template <class Cfg, ScaleCopy kMode, bool kConsecutive = false, bool kPagedAhead = false,
          bool kWarpRun = false, int kOwnPageLanes = 0>
MLA_DEVICE void wgmma_producer_tiles(const Params& p, const Stage1Work& work,
                                     const WgmmaRows& rows, const WgmmaShared<Cfg>& sh, int pw,
                                     int lane) {
    namespace hw = arch::sm90;
    constexpr bool kRaw = Cfg::kStagedDecode;
    constexpr int kRing = kRaw ? Cfg::kRawStages : Cfg::kStages;
    constexpr int kRingBytes = kRaw ? Cfg::kRawStageBytes : Cfg::kStageBytes;
    uint64_t* const full = kRaw ? sh.raw_full : sh.full;
    uint64_t* const empty = kRaw ? sh.raw_empty : sh.empty;
    uint8_t* const ring = kRaw ? sh.raw : sh.stages;
    const bool rope_blocks = rows.n_tiles >= wgmma_detail::kRopeBlockMinTiles;
    // kPagedAhead (a paged cache, shuffled loop): the page of row pw + 4 lane (lanes 0..15) of
    // tile t + 1 is loaded before tile t is copied ("early"), so that the page-table load's
    // latency is not in front of each tile's copies.
    // With kWarpRun the look-ahead loads the page of the warp's first row of tile t + 1 (every
    // lane the same; page 0 where the warp has no valid row there) after tile t's copies
    // ("late"), so its latency hides behind the wait on a free stage. (Late was measured at 64
    // rows of fp8, whose producer has 24 registers, before their stages were swizzled: early
    // 1.011-1.017x with 16-token pages, late 0.968x with 1-token pages, 1.000x with 16; late at
    // 16 / 32 rows in the shuffled loop 1.05-1.15x.)
    constexpr bool kAheadLate = kWarpRun;
    const int ahead_row = kWarpRun ? pw * (Cfg::kTileTokens / 4) : pw + 4 * (lane & 15);
    const auto page_of_tile = [&](int t) -> int32_t {
        const int64_t tok0 = work.tok_begin + static_cast<int64_t>(t) * Cfg::kTileTokens;
        if (ahead_row >= work.tok_end - tok0) return 0;
        return p.page_indices[int64_t{p.page_indptr[work.batch]} +
                              static_cast<int32_t>(tok0 + ahead_row) / p.page_size];
    };
    int32_t next_page = 0;
    if constexpr (kPagedAhead) next_page = page_of_tile(0);
    // kOwnPageLanes: this thread's rows q + (128 / L) j, their pages in the tile to come (0 for
    // rows at or past the CTA's token end), and the page size as a shift (a power of two up to
    // 128 / L: 8, or 16 for bf16 at 16 rows).
    constexpr int kOwnL = kOwnPageLanes > 0 ? kOwnPageLanes : 4;
    const int own_q = (pw * 32 + lane) / kOwnL;
    const int page_shift = kOwnPageLanes > 0 ? __ffs(p.page_size) - 1 : 0;
    const auto own_pages = [&](int t, int32_t (&pages)[kOwnL / 2]) {
        const int64_t tok0 = work.tok_begin + static_cast<int64_t>(t) * Cfg::kTileTokens;
        const int32_t* list = p.page_indices + p.page_indptr[work.batch];
#pragma unroll
        for (int j = 0; j < kOwnL / 2; ++j) {
            const int row = own_q + (128 / kOwnL) * j;
            pages[j] = row < work.tok_end - tok0
                           ? list[static_cast<int32_t>(tok0 + row) >> page_shift]
                           : 0;
        }
    };
    int32_t own_page[kOwnL / 2] = {};
    if constexpr (kOwnPageLanes > 0) own_pages(0, own_page);
    for (int t = 0; t < rows.n_tiles; ++t) {
        const int stage = t % kRing;
        const int use = t / kRing;
        if (use > 0) hw::mbarrier_wait(&empty[stage], (use - 1) & 1);
        const int64_t tile_tok0 = work.tok_begin + static_cast<int64_t>(t) * Cfg::kTileTokens;
        const int valid = static_cast<int>(min(int64_t{Cfg::kTileTokens}, work.tok_end - tile_tok0));
        uint8_t* dst = ring + stage * kRingBytes;
        const int32_t my_page = next_page;
        if constexpr (kPagedAhead && !kAheadLate) {
            if (t + 1 < rows.n_tiles) next_page = page_of_tile(t + 1);
        }
        if constexpr (kOwnPageLanes > 0) {
            // (Every row of the thread lies at the same offset in its page, q % page size: the
            // tile's first token and (128 / L) are multiples of the page size.)
            wgmma_detail::copy_tile_rows_own_pages<Cfg, kOwnL>(
                hw::smem_addr(dst), p, own_page, page_shift, own_q & (p.page_size - 1), valid,
                own_q, lane % kOwnL);
            hw::copy_async_arrive_noinc(&full[wgmma_detail::producer_full_bar<Cfg>(stage, t)]);
            if (t + 1 < rows.n_tiles) own_pages(t + 1, own_page);
            continue;
        } else if constexpr (kConsecutive && kWarpRun) {
            // The warp's first row (a uniform value: one page-table load a warp), 1 row a step.
            const int first = pw * (Cfg::kTileTokens / 4);
            const int64_t slot0 =
                kPagedAhead ? int64_t{my_page} * p.page_size +
                                  static_cast<int32_t>(tile_tok0 + first) % p.page_size
                            : cache_slot(p, work, tile_tok0 + (first < valid ? first : 0));
            if (rope_blocks)
                wgmma_detail::copy_tile_rows_consecutive<Cfg, true, true>(
                    dst, p.kv + slot0 * p.kv_stride_bytes, p.kpe + slot0 * p.kpe_stride_bytes,
                    p.kv_stride_bytes, p.kpe_stride_bytes, valid, pw, lane);
            else
                wgmma_detail::copy_tile_rows_consecutive<Cfg, false, true>(
                    dst, p.kv + slot0 * p.kv_stride_bytes, p.kpe + slot0 * p.kpe_stride_bytes,
                    p.kv_stride_bytes, p.kpe_stride_bytes, valid, pw, lane);
            hw::copy_async_arrive_noinc(&full[wgmma_detail::producer_full_bar<Cfg>(stage, t)]);
            if constexpr (kPagedAhead && kAheadLate) {
                if (t + 1 < rows.n_tiles) next_page = page_of_tile(t + 1);
            }
            continue;
        } else if constexpr (kConsecutive) {
            // The warp's first row (a uniform value: one page-table load a warp), 4 rows a step.
            const int64_t slot0 = cache_slot(p, work, tile_tok0 + (pw < valid ? pw : 0));
            if constexpr (Cfg::kMxfp4Rows) {
                wgmma_detail::copy_tile_rows_mxfp4<Cfg, kMode, true>(dst, p, slot0, valid, pw,
                                                                     lane);
            } else {
                const uint8_t* src0 = p.kv + slot0 * p.kv_stride_bytes;
                const uint8_t* rope0 = p.kpe + slot0 * p.kpe_stride_bytes;
                const int64_t src_step = 4 * p.kv_stride_bytes;
                const int64_t rope_step = 4 * p.kpe_stride_bytes;
                if (rope_blocks)
                    wgmma_detail::copy_tile_rows_consecutive<Cfg, true>(
                        dst, src0, rope0, src_step, rope_step, valid, pw, lane);
                else
                    wgmma_detail::copy_tile_rows_consecutive<Cfg, false>(
                        dst, src0, rope0, src_step, rope_step, valid, pw, lane);
            }
            hw::copy_async_arrive_noinc(&full[wgmma_detail::producer_full_bar<Cfg>(stage, t)]);
            continue;
        }
        // Addresses of row pw + 4 lane (lanes 0..15), then one row at a time.
        const int my_row = pw + 4 * (lane & 15);
        int64_t my_slot = 0;
        if (my_row < valid) {
            if constexpr (kPagedAhead) {
                my_slot = int64_t{my_page} * p.page_size +
                          static_cast<int32_t>(tile_tok0 + my_row) % p.page_size;
            } else {
                my_slot = cache_slot(p, work, tile_tok0 + my_row);
            }
        }
        const uint8_t* my_src = p.kv + my_slot * p.kv_stride_bytes;
        const uint8_t* my_rope = p.kpe + my_slot * p.kpe_stride_bytes;
        if constexpr (Cfg::kMxfp4Rows) {
            wgmma_detail::copy_tile_rows_mxfp4<Cfg, kMode>(dst, p, my_slot, valid, pw, lane);
            if constexpr (kMode == ScaleCopy::kBytes) {
                // The codes were plain stores: a release arrive once this thread's copies of
                // the tile have landed too (the asynchronous arrive orders only the copies).
                hw::copy_async_wait_all();
                hw::mbarrier_arrive(&full[wgmma_detail::producer_full_bar<Cfg>(stage, t)]);
                continue;
            }
        } else if (rope_blocks) {
            wgmma_detail::copy_tile_rows<Cfg, true>(dst, my_src, my_rope, valid, pw, lane);
        } else {
            wgmma_detail::copy_tile_rows<Cfg, false>(dst, my_src, my_rope, valid, pw, lane);
        }
        hw::copy_async_arrive_noinc(&full[wgmma_detail::producer_full_bar<Cfg>(stage, t)]);
        if constexpr (kPagedAhead && kAheadLate) {
            if (t + 1 < rows.n_tiles) next_page = page_of_tile(t + 1);
        }
    }
    hw::copy_async_wait_all();  // leave only once this thread's copies have landed
}

// Cfg::kSwizzled (wgmma_swizzled_stages): the producer's tile loop, for every cache form.
// A whole tile of a contiguous cache or of pages of a multiple of 64 tokens (the only caches
// the maps exist for; tiles start at multiples of 64 tokens, so its slots are consecutive from
// its first token's, tile_tok0 + ss_page of lane 0 of warp 0): four latent boxes and the rope's
// by one thread, which announces the stage's bytes, the other producer threads only arriving.
// Other tiles: copy_tile_rows_ss (a tile's rows past `valid` must be zeros, not the next slots,
// which may hold NaN). Token counts in 32 bits (an element's tokens number below 2^31), in the
// producer's 24 registers (64 rows, and e4m3fn's 32; 32 in the 16-row kernels).
template <class Cfg>
MLA_DEVICE void wgmma_producer_tiles_ss(const Params& p, const Stage1Work& work,
                                        const WgmmaRows& rows, const WgmmaShared<Cfg>& sh, int pw,
                                        int lane) {
    namespace hw = arch::sm90;
    constexpr int kTile = Cfg::kTileTokens;
    const int tok_begin = static_cast<int>(work.tok_begin);
    const int tok_end = static_cast<int>(work.tok_end);
    // The slot of each of the warp's rows less its token (copy_tile_rows_ss): a contiguous
    // cache's first slot (slots number below 2^31), or on a paged cache the pages of the tile
    // to come, loaded a tile ahead (ss_tile_page). A CTA without tiles (an empty element) reads
    // no page list: its list may be the next element's or past the end, or NULL in an empty
    // pool.
    const auto pages_of_tile = [&](int tile_tok0) {
        return wgmma_detail::ss_tile_page<Cfg>(p, work, tile_tok0,
                                               min(kTile, tok_end - tile_tok0), pw, lane);
    };
    int32_t ss_page = static_cast<int32_t>(work.kv_begin);
    if (p.page_indptr != nullptr && rows.n_tiles > 0) ss_page = pages_of_tile(tok_begin);
    const uint32_t ring = hw::smem_addr(sh.stages);
    for (int t = 0; t < rows.n_tiles; ++t) {
        const int stage = (rows.tile0 + t) % Cfg::kStages;
        const int use = (rows.tile0 + t) / Cfg::kStages;
        if (use > 0) hw::mbarrier_wait(&sh.empty[stage], (use - 1) & 1);
        const int tile_tok0 = tok_begin + t * kTile;
        const int valid = min(kTile, tok_end - tile_tok0);
        const uint32_t dst = ring + stage * Cfg::kStageBytes;
        uint64_t* const bar = &sh.full[wgmma_detail::producer_full_bar<Cfg>(stage, t)];
        if (sh.tma->ok != 0 && valid == kTile) {
            if (pw == 0 && lane == 0) {
                hw::mbarrier_arrive_expect_tx(bar, Cfg::kStageBytes);
                const int y = tile_tok0 + ss_page;  // the slot of the tile's first token
#pragma unroll
                for (int k = 0; k < 4; ++k)
                    hw::tma_load_2d(dst + k * Cfg::kSsBlockBytes, sh.tma->kv, 128 * k, y, bar);
                hw::tma_load_2d(dst + 4 * Cfg::kSsBlockBytes, sh.tma->kpe, 0, y, bar);
            } else {
                hw::mbarrier_arrive(bar);
            }
        } else {
            wgmma_detail::copy_tile_rows_ss<Cfg>(dst, p, tile_tok0, valid, pw * 32 + lane,
                                                 ss_page);
            hw::copy_async_arrive_noinc(bar);
        }
        // The next tile's pages, late (their latency behind the wait on a free stage).
        if (p.page_indptr != nullptr && t + 1 < rows.n_tiles)
            ss_page = pages_of_tile(tile_tok0 + kTile);
    }
    hw::copy_async_wait_all();  // leave only once this thread's copies have landed
}

template <class Cfg>
MLA_DEVICE void wgmma_producer(const Params& p, const Stage1Work& work, const WgmmaRows& rows,
                               const WgmmaShared<Cfg>& sh, int pw, int lane) {
    // The consecutive-slot loop where it pays (Cfg::kConsecutiveRows) and every tile's rows lie
    // in consecutive slots (a contiguous cache, or whole-tile pages).
    if constexpr (Cfg::kMxfp4Rows) {
        constexpr ScaleCopy k16 = ScaleCopy::k16Bytes, k4 = ScaleCopy::k4Bytes;
        if constexpr (Cfg::kConsecutiveRows) {  // (MXFP4 keys beside fp8 values: never)
            const bool consecutive =
                p.page_indptr == nullptr || p.page_size % Cfg::kTileTokens == 0;
            if (p.scale_copy == k16)
                return consecutive
                           ? wgmma_producer_tiles<Cfg, k16, true>(p, work, rows, sh, pw, lane)
                           : wgmma_producer_tiles<Cfg, k16>(p, work, rows, sh, pw, lane);
            if (p.scale_copy == k4)
                return consecutive
                           ? wgmma_producer_tiles<Cfg, k4, true>(p, work, rows, sh, pw, lane)
                           : wgmma_producer_tiles<Cfg, k4>(p, work, rows, sh, pw, lane);
        } else {
            if (p.scale_copy == k16)
                return wgmma_producer_tiles<Cfg, k16>(p, work, rows, sh, pw, lane);
            if (p.scale_copy == k4)
                return wgmma_producer_tiles<Cfg, k4>(p, work, rows, sh, pw, lane);
        }
        return wgmma_producer_tiles<Cfg, ScaleCopy::kBytes>(p, work, rows, sh, pw, lane);
    } else {
        if constexpr (Cfg::kSwizzled)  // one loop for every cache form
            return wgmma_producer_tiles_ss<Cfg>(p, work, rows, sh, pw, lane);
        // (64 rows of fp8 took the loops below until 0.7.20; the measurements of them are
        // kept.) Pages of a multiple of 16 tokens: a run of 16 rows a warp in one page
        // (kWarpRun). At 64 rows of fp8 on the H200 (thirty-second session), H128 q1 bs64 kv4096, bf16 Q:
        // against the shuffled loop 0.932-0.935 (159.5 -> 149.1 us on 16-token pages; H16 q4
        // bs128 kv4096 0.938), and with each warp's page loaded a tile ahead (late) another
        // 0.977-0.986 on pages of 16, 32 and 64 tokens (147.5 -> 144.1 us on 16; 64-token
        // pages took the 4-row-step loop before; loaded early: 1.04-1.06x). e4m3 scores: the
        // runs 0.971-0.973 on pages of 16 and 32, the look-ahead 1.002-1.008 (not taken; since
        // the thirty-third session their runs also serve contiguous caches and 64-token
        // pages). bf16 caches' 32-row kernel (shuffled loop with the early look-ahead before;
        // 4-row steps on 64-token pages): H128 q1 bs64 kv4096 0.941-0.944 on pages of 16 and 32
        // (323.5 -> 305.4 us), 0.969 on 64 (contiguous 307.6), H16 q2 bs128 kv4096 0.939 on 16.
        // (The page runs of pages of 4 to 32 tokens from a shuffled slot, with a test per row,
        // had lost 1.5-2 %; a page walk by shuffled page numbers lost 3 % on 16-token pages and
        // 16 / 35 % on 4-token ones; pages of 1-8 tokens as runs whose rows' addresses are
        // staged in shared memory 0.989-0.994 (thirty-third session), not kept.)
        // Pages of 1, 2, 4 or 8 tokens (32 rows of e4m3fnuz with bf16 scores, of e4m3fn until
        // 0.7.30, of fp8 at 64 until 0.7.20; bf16 at 16 and 32 rows): kOwnPageRowThreads threads a
        // row, each row from its own page, no shuffles (kOwnPageLanes; the shuffled loop cost these
        // 5-12 % over contiguous caches, pages in order or not: thirty-fourth and thirty-fifth
        // sessions' probes, docs/notes/stage1_wgmma.md). Other page sizes below 16 (3, 12, ...)
        // keep the shuffled loop, as do bf16's 16 rows on pages of more than 16 tokens (no runs).
        // Pages of a multiple of 16: the runs below, also for fp8 at 32 rows (e4m3fnuz since
        // 0.7.30; measured on e4m3fn, bs128 kv4096 H16 q2: 0.977 on 16-token pages, 0.950 on 64;
        // runs on a contiguous cache lost, 1.018-1.024). bf16 at 16 rows takes its own-page rows on
        // 16-token pages too (bs32 kv8192 H16 0.965, bs32 kv1024 0.974; runs there spilled its
        // producer). e4m3 scores at 32 rows took the shuffled loop until 0.7.31 (swizzled since):
        // own-page rows and runs (64-token pages) ran 0.95-0.98 in CTAs of 64 tiles (bs128 kv4096
        // H16 q2) but 1.034-1.044 in CTAs of 8 (bs32 kv2048 H16 q2), as faster producers did in the
        // 16-row seesaw's short CTAs.
        if constexpr (!Cfg::kMxfp4Rows &&
                      (Cfg::Decode::kDimBytes == 2 || (Cfg::N == 32 && !Cfg::Decode::kQCodes))) {
            // (A thread's rows are 128 / kOwnPageRowThreads = 16 apart: pages up to 16 tokens.
            // bf16 at 16 rows takes 16-token pages here: the runs spilled its producer.)
            constexpr int kMaxPage = Cfg::N == 16 ? 16 : 8;
            static_assert(128 / wgmma_detail::kOwnPageRowThreads % kMaxPage == 0, "");
            if (p.page_indptr != nullptr && p.page_size <= kMaxPage &&
                (p.page_size & (p.page_size - 1)) == 0)
                return wgmma_producer_tiles<Cfg, ScaleCopy::k16Bytes, false, false, false,
                                            wgmma_detail::kOwnPageRowThreads>(
                    p, work, rows, sh, pw, lane);
        }
        if constexpr (Cfg::N == 32 && !Cfg::kMxfp4Rows && !Cfg::Decode::kQCodes) {
            if (p.page_indptr != nullptr && p.page_size % (Cfg::kTileTokens / 4) == 0)
                return wgmma_producer_tiles<Cfg, ScaleCopy::k16Bytes, true, true, true>(
                    p, work, rows, sh, pw, lane);
        }
        // (e4m3 scores at 64 rows took the runs on contiguous caches and on pages of a multiple
        // of 16 until 0.7.18; since 0.7.19 copy_tile_rows_ss, above. bf16 scores' runs on a
        // contiguous cache measured 0.993-0.999 against the 4-row-step loop: not taken.)
        if constexpr (Cfg::kConsecutiveRows) {
            if (p.page_indptr == nullptr || p.page_size % Cfg::kTileTokens == 0)
                return wgmma_producer_tiles<Cfg, ScaleCopy::k16Bytes, true>(p, work, rows, sh,
                                                                            pw, lane);
        }
        // A paged cache in the shuffled loop: the page-table look-ahead (1-token pages 0.80-0.93x,
        // 16-token pages 0.94-0.97x on H200; fp8 at 64 rows loaded it late until 0.7.20: 0.968x /
        // 1.000x).
        // Not for bf16 at 16 rows (its producer spills 4 bytes with it).
        if constexpr (Cfg::Decode::kDimBytes == 1 || Cfg::N > 16) {
            if (p.page_indptr != nullptr)
                return wgmma_producer_tiles<Cfg, ScaleCopy::k16Bytes, false, true>(
                    p, work, rows, sh, pw, lane);
        }
        return wgmma_producer_tiles<Cfg, ScaleCopy::k16Bytes>(p, work, rows, sh, pw, lane);
    }
}

}  // namespace mla::splitkv
#endif  // MLA_ARCH_SM90
