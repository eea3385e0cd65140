// The wgmma variant's configuration (stage1/wgmma.h): WgmmaConfig, the constants of one kernel
// (format, rows per CTA, e4m3 scores, long CTAs): its roles and their registers, the stage ring,
// the shared-memory plan and the lane geometry; WgmmaShared, the shared-memory pieces every role
// sees; WgmmaRows, the CTA's rows and tile count.
#pragma once

#include "arch/nvidia/tma.h"
#include "splitkv/balanced.h"  // BalancedState (kBalanced)
#include "splitkv/params.h"
#include "splitkv/softmax.h"
#include "splitkv/variants.h"
#include "splitkv/work.h"
#include "splitkv/stage1/wgmma/decode.h"

namespace mla::splitkv {

// The continuous pipeline of the balanced schedule (WgmmaConfig::kContinuous; stage1/wgmma.h,
// balanced_cta_continuous): one role's walk over its CTA's items, in shared memory, so that
// nothing of it lives in the role's registers across an item: the item, the stage ring's
// tiles before it (WgmmaRows::tile0) and whether an earlier item announced the Q loads.
struct BalancedWalk {
    BalancedState item;
    int tile0;
    int announced;
};

// kLongCta: the long-CTA kernel of 16-row fp8 plans (variants.h, wgmma_long_cta): three solo
// consumers. kBalanced: the balanced schedule's kernel (balanced.h): its CTA walks items, whose
// state (BalancedState) sits after the mbarriers.
template <KvFormat F, int kRows, bool kFp8Mma = false, bool kLongCta = false,
          bool kBalanced = false>
struct WgmmaConfig {
    static_assert(!(kBalanced && kLongCta), "the balanced schedule has no long-CTA kernel");
    static_assert(kRows == 16 || kRows == 32 || kRows == 64, "16, 32 or 64 rows per CTA");
    static_assert(F != KvFormat::kBf16 || kRows <= 32,
                  "bf16 caches: 16 or 32 rows (two bf16 stages do not fit beside 64 rows' Q^T)");
    static constexpr int N = kRows;  // wgmma's N: every product covers all rows
    static_assert(!kFp8Mma || F == KvFormat::kFp8E4M3FN, "e4m3 MMA: e4m3fn caches only");
    // MXFP4 at 16 and 32 rows: decoder warpgroups (16 rows: two, warps 12..19; 32 rows: one,
    // warps 12..15) turn each MXFP4 tile (the producer's raw ring) into e4m3fn codes with
    // per-token factors, and the consumers run the e4m3fn cache's code on it
    // (WgmmaMxfp4StagedDecode): each element is decoded once to e4m3fn, off the consumers.
    // (64 rows: the consumers decode to bf16, WgmmaMxfp4Decode; their 240 registers leave none
    // for a decoder warpgroup.)
    // kMxfp4Rows: K from MXFP4 rows (the producer's MXFP4 copies), V from them too or, with
    // MXFP4 keys beside fp8 values (WgmmaMxfp4Fp8VDecode), from the fp8 V rows copied beside
    // them; the latter decode K in the consumers at every row count (no decoder warpgroups).
    static constexpr bool kMxfp4Rows = KvTraits<F>::kKMxfp4;
    static constexpr bool kStagedDecode = F == KvFormat::kMxfp4 && kRows <= 32;
    using Decode = std::conditional_t<
        kFp8Mma, std::conditional_t<kRows == 64, WgmmaFp8MmaSsDecode, WgmmaFp8MmaSwizzledDecode>,
        std::conditional_t<kStagedDecode, WgmmaMxfp4StagedDecode,
                           typename WgmmaDecodeOf<F, wgmma_swizzled_stages(F, kRows)>::type>>;

    static constexpr int kTileTokens = kWgmmaTileTokens;  // wgmma's M
    static_assert(kTileTokens == 64, "S^T and V^T fragments assume 64-token tiles");
    // The producer's consecutive-slot loop (wgmma_producer_tiles' kConsecutive, for caches
    // whose tiles lie in consecutive slots: contiguous caches, pages of a multiple of 64
    // tokens) at 32 rows of bf16 and MXFP4 (other page sizes keep the shuffled loop). 64 rows
    // of fp8 and long CTAs took it until 0.7.20 (long CTAs on a contiguous cache from 112
    // tiles); their stages are swizzled now (kSwizzled: wgmma_producer_tiles_ss). A/B on
    // the H200 against the shuffled loop (twenty-seventh session, every kernel): 64 rows
    // 0.923-0.927 (bs64 kv4096 H128 156.2 -> 144.3 us, bs128 kv4096 H16 q4 163.0 -> 151.0);
    // bf16 32 rows 0.983-0.995 (H128 320.2 -> 315.1); fp8 32 rows 1.008-1.014; the 16-row
    // seesaw 1.01-1.13, most at 4-8 tiles a CTA (bs4 kv8192 18.9 -> 21.3 us; bf16 16 rows
    // 1.00-1.03). Twenty-eighth session: MXFP4 32 rows 0.984-0.989, its 16 rows 1.00-1.02
    // contiguous (0.99 on 64-token pages); long CTAs (bs256 H16) 1.020 / 1.015 / 1.003 / 0.993
    // at 40 / 64 / 96 / 128 tiles, and on 64-token pages 0.937 at 128 (351.5 -> 329.4 us: the
    // shuffled loop's per-lane page-table loads). Why the faster producer costs short CTAs is
    // not measured.
    static constexpr bool kConsecutiveRows =
        kRows == 32 && (F == KvFormat::kBf16 || F == KvFormat::kMxfp4);
    // Long CTAs of 16-row fp8 plans: three solo consumers, each taking every third tile;
    // consumers 0 and 1 store the output's halves after the merge.
    static_assert(!kLongCta || wgmma_long_cta(F, kRows, kWgmmaLongCtaTiles),
                  "the long-CTA kernel: 16 rows of fp8 caches");
    static constexpr int kConsumers = kLongCta ? 3 : 2;
    // From 32 rows the producer starts once the consumers have issued their Q loads (write_q):
    // its first tiles otherwise queue ahead of Q, whose wait opens every CTA (fp8 H16 q2 0.97x,
    // H16 q4 0.98x, H128 q1 0.99x on H200). At 16 rows the early tiles paid more (1.03-1.08x).
    static constexpr bool kQLoadsFirst = kRows >= 32;
    static constexpr int kValueDims = kHeadDimV / 2;  // per storing consumer (0 and 1)
    static constexpr int kPairs = kValueDims / 128;            // O^T m-block pairs per consumer
    static constexpr int kProducerWarp = 4 * kConsumers;
    static constexpr int kDecoderWarp = kProducerWarp + 4;  // kStagedDecode: warps 12..
    // kStagedDecode: 16 rows two decoder warpgroups (4 threads a tile row), 32 rows one (2 a
    // row): the consumers, with twice 16 rows' work a tile, then get 200 registers, not 160
    // (ptxas: they spill below ~160).
    static constexpr int kDecoderThreads = kStagedDecode ? (kRows == 16 ? 256 : 128) : 0;
    static constexpr int kThreads = kDecoderWarp * 32 + kDecoderThreads;
    static constexpr int kConsumerThreads = kProducerWarp * 32;
    static constexpr int kProducerThreads = 128;
    // setmaxnreg budgets. The consumers' increase is served only from what the producer's
    // (and the decoders') decrease frees of the CTA's launch allocation (kLaunchRegs per
    // thread, what __launch_bounds__(kThreads, 1) leaves: 96 at 640 threads, 128 at 512, 168 at
    // 384); asking for more blocks forever.
    static constexpr int kLaunchRegs = 65536 / kThreads / 8 * 8;
    // kStagedDecode: the producer's MXFP4 row loop unrolled kMxfp4RowUnroll times (in 32
    // registers at 16 rows, 40 at 32): the producer issued that loop ~85 % of its time (ncu,
    // sixteenth session) and bounded the staged kernel then.
    static constexpr int kMxfp4RowUnroll = kStagedDecode ? 8 : 1;
    // The 16-row seesaw in swizzled stages (fp8, bf16 or e4m3 scores): its producer spilled 4 bytes
    // in 24 registers (the TMA thread's page); 32 leave its consumers 232, which they fit.
    static constexpr bool kSwizzledSeesaw16 =
        Decode::kSwizzledStage && kRows == 16 && !kLongCta;
    // 32 rows in swizzled stages (e4m3fn only: variants.h, wgmma_swizzled_stages): the
    // consumers need 240 (they spill at 232) and leave the producer 24, which derives its work
    // again after the role split (kProducerDerivesWork) and still spills 16 / 28 bytes (36 / 60
    // without; ptxas).
    // (Three solo consumers: the producer spilled 36 / 72 bytes at 24; 32 fits, and leaves the
    // consumers their 160.)
    static constexpr int kProducerRegs =
        kStagedDecode ? (kRows == 16 ? 32 : 40) : (kLongCta || kSwizzledSeesaw16 ? 32 : 24);
    // The producers of 24 registers (64 rows; 32 of e4m3fn) derive their work, tile count and
    // shared pointers again after the role split, so that no value of the prologue's lives into
    // them: at 64 rows ptxas spills 8 bytes instead of 24-28 (forty-second session, H200 A/B
    // 0.989-1.000, geomean 0.998).
    static constexpr bool kProducerDerivesWork =
        Decode::kSwizzledStage && kRows >= 32 && kProducerRegs == 24;
    // 16 rows: 96 - 32 and 2 x (96 - 64) free 64 x 128 + 32 x 256 for 64 x 256 more (160;
    // the decoders, with their rope pieces apart, spill at 48 and 56, the producer fits 32).
    // 32 rows: 128 - 40 and 128 - 72 free 88 x 128 + 56 x 128 for 72 x 256 more (200); the
    // decoder holds its 9 pieces in 72 (64 spilled), the consumers need ~160 (152 spilled).
    static constexpr int kDecoderRegs = kStagedDecode ? (kRows == 16 ? 64 : 72) : 56;
    // Three solo consumers: 128 - 32 free 96 x 128 for 32 x 384 more (160; exact).
    static constexpr int kConsumerRegs =
        kStagedDecode ? (kRows == 16 ? 160 : 200)
                      : (kLongCta ? 160 : (kSwizzledSeesaw16 ? 232 : 240));
    static_assert((kLaunchRegs - kProducerRegs) * kProducerThreads +
                          (kLaunchRegs - kDecoderRegs) * kDecoderThreads >=
                      (kConsumerRegs - kLaunchRegs) * kConsumerThreads,
                  "the consumers' registers come from the producer's (and the decoder's)");
    static constexpr int kCols = N / 4;  // rows (N columns) a lane holds accumulators of
    // Even and odd k16 steps of S^T in two accumulator chains where the registers allow
    // (score_products_latent; score_products_rope keeps one chain: see there).
    static constexpr bool kSplitSChain = N <= 32 && !kLongCta;

    // Cache tile: 64 rows of 576 fp8 codes (bf16 values; MXFP4: 288 packed bytes and the 32-byte
    // code slot; fp8 codes beside a bf16 rope: 512 codes and 128 rope bytes; MXFP4 keys beside
    // fp8 values: the MXFP4 row's 320 bytes and the V row's 512), pitch 592 (1168; MXFP4 336, 80
    // mod 128 as 592; the bf16 rope's 656, 16 mod 128: rows 4 apart are still 64 bytes apart mod
    // 128, rows 2 apart 32; MXFP4 keys beside fp8 values 848, 80 mod 128; see the bank notes
    // above: 16 mod 32).
    static constexpr int kRowBytes = Decode::kRowBytes;
    static constexpr int kRowPitch = kRowBytes + 16;
    static_assert(kRowPitch % 32 == 16, "rows 4 apart in opposite halves of the banks");
    // Decode::kSwizzledStage (wgmma_swizzled_stages): the tile in wgmma's K-major layout,
    // stage row m holding token m, no pad (ss_offset): the latent bytes in 4 blocks of 128 bytes
    // a row (kSsBlockBytes each) of 1 KB atoms (8 rows) with the 128-byte swizzle, then the
    // rope's 64 bytes a row in 512-byte atoms with the 64-byte swizzle; the layout TMA writes,
    // and with Decode::kSsScores (e4m3 scores at 64 rows) the A operand of the score product.
    // (Without a swizzle, core matrices of 8 rows x 16 bytes, e4m3 scores ran 1.36-1.5x slower:
    // thirty-sixth session.)
    static constexpr bool kSsScores = Decode::kSsScores;
    static constexpr bool kSwizzled = Decode::kSwizzledStage;
    static_assert(kSwizzled || !kSsScores, "e4m3 scores from shared memory: a swizzled stage");
    static_assert(kSwizzled == wgmma_swizzled_stages(F, kRows),
                  "the host's view of which kernels keep swizzled stages (variants.h, plans)");
    static constexpr int kSsBlockBytes = kTileTokens * 128;
    static constexpr int kStageBytes =
        kSwizzled ? kTileTokens * kRowBytes : kTileTokens * kRowPitch;
    static constexpr int kChunks = kHeadDimQk / 64;  // chunks of 4 k16 (2 e4m3 k32) steps
    static constexpr int kQtStepBytes = N * 32;      // one k-step of Q^T: N rows x 32 bytes
    static constexpr int kQtBytes = kChunks * Decode::kStepsPerChunk * kQtStepBytes;
    static constexpr int kPtStepBytes = N * 32;      // one k16 step of P^T: N rows x 16 halves
    static constexpr int kPtBytes = (kTileTokens / 16) * kPtStepBytes;  // one part
    static constexpr int kPParts = Decode::kPParts;  // per tile: P, or bf16 hi and lo

    // The softmax's per-row work is done once per row and tile, by the row's owner: thread n of
    // the consumer whose tile it is (kOwnerWarps warps own the N rows).
    static constexpr int kOwnerWarps = (N + 31) / 32;
    static_assert(kOwnerWarps <= 2, "the flag words: two per consumer and round parity");

    // Shared memory: Q^T | P^T per consumer (kPParts parts) | per consumer and round parity:
    // rescale factors, maxima, rescale flags (one word per owner warp) | per consumer: each
    // row's score coefficient and exp2 offset | tile maxima (per consumer x 2 buffers x 4
    // warps) | row sums | score coefficient | token end | mbarriers | the stage ring (as many
    // stages as fit, up to 6).
    static constexpr int kOffQt = 0;
    static constexpr int kOffPt = kOffQt + kQtBytes;
    static constexpr int kOffAlpha = kOffPt + kConsumers * kPParts * kPtBytes;
    static constexpr int kOffMax = kOffAlpha + kConsumers * 2 * N * 4;
    static constexpr int kOffFlag = kOffMax + kConsumers * 2 * N * 4;
    static constexpr int kOffScale = kOffFlag + kConsumers * 2 * 2 * 4;
    static constexpr int kOffRed = kOffScale + kConsumers * N * 8;
    static constexpr int kOffSum = kOffRed + kConsumers * 2 * 4 * N * 4;
    static_assert(kOffRed % 8 == 0 && 8 * N <= kOffSum - kOffRed, "the epilogue's N row addresses");
    static constexpr int kOffCoef = kOffSum + kConsumers * 4 * N * 4;
    static constexpr int kOffEnd = kOffCoef + N * 4;
    static constexpr int kOffBars = (kOffEnd + N * 4 + 15) / 16 * 16;
    static constexpr int kMaxStages = 6;
    // kStagedDecode: the raw ring of MXFP4 tiles (rows of 288 packed bytes and the 32-byte code
    // slot, pitch 336 as WgmmaMxfp4Decode's) after the e4m3fn stages.
    static constexpr int kRawStages = kStagedDecode ? 2 : 0;
    static constexpr int kRawRowPitch = WgmmaMxfp4Decode::kRowBytes + 16;
    static constexpr int kRawStageBytes = kTileTokens * kRawRowPitch;
    // Where the producer puts MXFP4 rows: the raw ring, or the stages the consumers decode.
    static constexpr int kMxfp4Pitch = kStagedDecode ? kRawRowPitch : kRowPitch;
    // kStagedDecode: the decoder arrives on a stage's "front" barrier once the tile's first
    // kFrontChunks chunks of 64 dims are written, so the score chain can start on them.
    static constexpr int kFrontChunks = 4;
    static_assert(kFrontChunks >= 1 && kFrontChunks < kChunks, "the full wait inside the chain");
    static constexpr int kFrontBars = kStagedDecode ? kMaxStages : 0;
    // Solo consumers (wgmma_consumer_solo): consumer w of C takes tiles w, w + C, ... whole (its
    // own running maxima, O^T of all 512 value dims), and the C results merge once per CTA: no
    // hand-over between the consumers. Where it won (A/B on the H200): 32 rows of fp8 and bf16
    // caches (fp8 H16 q2 bs128 kv4096 0.95x, bf16 bs64 kv4096 H128 0.78x) and 16 rows of bf16
    // (bs256 kv8192 0.82x); 16 rows of fp8 lost 1-8 %, so they keep the seesaw but for long
    // CTAs (kLongCta: three solo consumers, 0.969x at bs256 kv8192). Not with the
    // staged MXFP4 decode (its consumers' 200 registers hold no O of 512 dims), not at 64 rows
    // (O of 512 dims would be 256 registers). With e4m3 scores at 32 rows (5 stages) and three
    // consumers (kLongCta) a stage serves the consumers in turn: the per-consumer full barriers
    // below. (Twenty-sixth session: e4m3 scores at 32 rows solo 0.984x at bs128 kv4096 H16 q2.)
    static constexpr bool kSolo =
        kLongCta || (!kStagedDecode && (kRows == 32 || (kRows == 16 && F == KvFormat::kBf16)));
    // Full and empty barriers: kMaxStages each, and solo kernels room for a full barrier per
    // consumer and stage (kFullSets).
    static constexpr int kFullEmptyBars = (kSolo ? kConsumers + 1 : 2) * kMaxStages;
    static constexpr int kBarBytes =
        (kFullEmptyBars + 2 * kRawStages + kFrontBars + 3 * kConsumers) * 8;
    // The balanced schedule's pipeline runs on across items (stage1/wgmma.h, balanced_cta) with
    // seesaw consumers; solo consumers merge in the stages, so their CTAs drain it between items.
    static constexpr bool kContinuous = kBalanced && !kSolo;
    // kBalanced: the BalancedState; kContinuous instead two BalancedWalks, the consumers' and
    // the producer's.
    static constexpr int kOffItem = kOffBars + kBarBytes;
    static constexpr int kItemBytes =
        kContinuous ? 2 * static_cast<int>(sizeof(BalancedWalk))
                    : (kBalanced ? kBalancedStateBytes : 0);
    static constexpr int kSharedBudget = arch::kMaxSharedBytesPerBlock;
    // (kSwizzled: the swizzle atoms' 1 KB alignment; the shared memory starts 1 KB-aligned.)
    static constexpr int kStageAlign = kSwizzled ? 1024 : 128;
    static constexpr int kStagesFit =
        (kSharedBudget - kOffBars - kBarBytes - kItemBytes - (kStageAlign - 1) -
         kRawStages * kRawStageBytes) /
        kStageBytes;
    static constexpr int kStages = kStagesFit < kMaxStages ? kStagesFit : kMaxStages;
    static_assert(kStages >= 2, "two tiles must fit in shared memory");
    // Solo with a stage count the consumers do not divide (5 stages for 2 or 3 consumers): a
    // stage's uses go round the consumers, and a consumer's parity wait on a phase it is not
    // the next waiter of is not exact (a phase behind has the same parity; waiting on the
    // phases between can block on a phase already passed). So each stage then has a "full"
    // barrier per consumer: tile t completes on full[t % kStages][t % kConsumers], whose
    // phases are that consumer's uses of the stage alone (t / (kStages * kConsumers)).
    static constexpr int kFullSets = kSolo && kStages % kConsumers != 0 ? kConsumers : 1;
    static_assert(kFullSets * kStages <= (kSolo ? kConsumers : 1) * kMaxStages,
                  "the full barriers' room");
    static_assert(kFullSets == 1 || kConsumers <= 3,
                  "per-consumer full barriers need kStages and kConsumers coprime: for 2 or 3 "
                  "consumers, not dividing is enough");
    static constexpr int kEmptyArrivals = kSolo ? 4 : 4 * kConsumers;  // warps that read a stage
    static constexpr int kOffStages =
        (kOffItem + kItemBytes + kStageAlign - 1) / kStageAlign * kStageAlign;
    static_assert(kOffStages % kStageAlign == 0 && kStageBytes % kStageAlign == 0,
                  "every stage at the alignment (kSwizzled: the swizzle atoms')");
    static constexpr int kOffRaw = kOffStages + kStages * kStageBytes;
    static constexpr int kSmemBytes = kOffRaw + kRawStages * kRawStageBytes;
    static_assert(kSmemBytes <= kSharedBudget, "shared memory budget");

    // The first byte (of a token row) and dim of a consumer lane's V words, and the dims between
    // its m-block pairs: 4 consecutive dims per pair, 128 apart (MXFP4: 8 consecutive).
    MLA_DEVICE static constexpr int v_lane_byte(int w, int wq, int g) {
        if constexpr (Decode::kBlockScales) return Decode::v_lane_byte(w, wq, g);
        else return Decode::kVRowOffset + Decode::kDimBytes * v_lane_dim(w, wq, g);
    }
    MLA_DEVICE static constexpr int v_lane_dim(int w, int wq, int g) {
        if constexpr (Decode::kBlockScales) return Decode::v_lane_dim(w, wq, g);
        else return kValueDims * w + 32 * wq + 4 * g;
    }
    static constexpr int kVPairDims = Decode::kBlockScales ? 4 : 128;
    // The lazy rescale's slack (softmax.h): P <= 2^8. MXFP4 values reach 1.5 * 2^127 (e8m0
    // code 254), and one such value times P > 1.33 overflows the f32 accumulators of O, so MXFP4
    // values decoded in the consumers (Decode::kBlockScales) keep the exact running max (P <= 1),
    // as mma16 does; bf16 values above 2^120 would need the same (not done: no bf16 test holds
    // such values). The staged MXFP4 tile (Decode::kTokenScales) holds e4m3fn codes (<= 448)
    // with the token factors folded into P, and fp8 values beside MXFP4 keys are codes too, so
    // both keep the lazy rescale.
    static constexpr float kLazyLog2 = Decode::kBlockScales ? 0.0f : kLazyRescaleLog2;
    // Bytes between a token row's words of two m-block pairs (MXFP4: one word serves both).
    MLA_DEVICE static constexpr int v_pair_bytes() {
        if constexpr (Decode::kBlockScales) return 0;
        else if constexpr (kSwizzled) return ss_offset(0, kVPairDims);
        else return kVPairDims * Decode::kDimBytes;
    }
    // Bytes between the V words of tokens 16 apart (a k-step), and of a token and the next
    // (kSwizzled: of PV k indices 8 apart, stage_row).
    static constexpr int kVStepBytes = kSwizzled ? 2 * 1024 : 16 * kRowPitch;
    static constexpr int kVNextTokenBytes = kSwizzled ? 1024 : kRowPitch;

    // Token (of the warp's 16) of S^T row g + 8 h, and PV k index 8 h + g (see the header).
    MLA_DEVICE static int s_row_token(int g, int h) {
        return ((g & 1) ? (((g & 6) + 4) & 7) + 8 : (g & 6)) + h;
    }
    // kSwizzled: the stage row (tile token, of the warp's 16) of S^T row j = g + 8 h, PV k index
    // j: j itself where K is read by descriptor (kSsScores: e4m3 scores at 64 rows; wgmma reads
    // the stage's rows as its M rows), and for K loaded into registers (bf16 scores; e4m3 at 16
    // and 32 rows) j with bit 2 flipped where j is odd. Then the 16-byte K loads of one 8-lane
    // phase (rows g = 2i, 2i + 1: stage rows 5 apart mod 8, t = 0..3) meet 8 distinct 16-byte
    // slots of the 128-byte swizzle (and for the rope the two 64-byte halves of the banks), and
    // the 4-byte V loads of a warp (4 rows stage_row(2t (+1)) with distinct bits 1-2) 8 distinct
    // slots too; k index j + 8 is stage row stage_row(j) + 8, 1 KB on.
    MLA_DEVICE static constexpr int stage_row(int j) { return kSsScores ? j : j ^ (4 * (j & 1)); }
    // The byte of stage row m's byte b.
    static_assert(!kSwizzled || kRowBytes == 576, "512 latent and 64 rope bytes a row");
    MLA_DEVICE static constexpr int ss_offset(int m, int b) {
        if (b < 512)
            return (b / 128) * kSsBlockBytes + (m / 8) * 1024 + (m % 8) * 128 +
                   ((((b / 16) % 8) ^ (m % 8)) * 16) + b % 16;
        return 4 * kSsBlockBytes + (m / 8) * 512 + (m % 8) * 64 +
               ((((b - 512) / 16) ^ ((m % 8) / 2)) * 16) + b % 16;
    }
    // Column (query row) of accumulator i of a lane with quad index t (D layout, sm90.h), its
    // column slot (0 .. kCols-1), and the column of a slot.
    MLA_DEVICE static int col_of(int i, int t) { return 8 * (i / 4) + 2 * t + (i & 1); }
    MLA_DEVICE static int slot_of(int i) { return (i / 4) * 2 + (i & 1); }
    MLA_DEVICE static int col_of_slot(int jj, int t) { return 8 * (jj / 2) + 2 * t + (jj & 1); }
};

// The shared-memory pieces every role sees.
template <class Cfg>
struct WgmmaShared {
    uint8_t* qt;
    uint8_t* pt;      // per consumer: Cfg::kPParts x Cfg::kPtBytes
    // Seesaw: per consumer w and round parity r, at (2 w + r) * N (flag: (2 w + r) * 2): what
    // its tile of round i (r = i % 2) did to each row (written by the row's owner). Solo: per
    // consumer w at w * N (flag: w * 2), its latest tile's; max holds its final maxima.
    float* alpha;     // the rescale factor of everything before the tile
    float* max;       // the running maximum after the tile
    int* flag;        // per owner warp: 1 if a factor of its rows is not 1 (and matters)
    float2* scale;    // per consumer: N x {score coefficient, -exp2 offset} of its latest tile
    // The epilogue reuses red (N row addresses) and coef (N row scales); the solo one also
    // alpha (the merge factors f_w of row n at w * N + n) and the stages (the O exchange).
    float* red;       // per consumer: 2 buffers x 4 warps x N tile maxima
    float* sum;       // per consumer: 4 warps x N row sums
    float* coef;      // N
    int* end;         // N
    uint64_t* full;   // kStages
    uint64_t* empty;  // kStages
    uint64_t* p_full;   // per consumer
    uint64_t* p_empty;  // per consumer
    uint64_t* m_full;   // per consumer
    uint64_t* raw_full;   // kRawStages (kStagedDecode)
    uint64_t* raw_empty;  // kRawStages
    uint64_t* front;      // kStages (kStagedDecode): the first kFrontChunks chunks are written
    uint8_t* stages;
    uint8_t* raw;
    const arch::tma::KvMaps* tma;  // the kernel's maps (a __grid_constant__ parameter)

    MLA_DEVICE WgmmaShared(uint8_t* smem, const arch::tma::KvMaps* maps)
        : qt(smem + Cfg::kOffQt),
          pt(smem + Cfg::kOffPt),
          alpha(reinterpret_cast<float*>(smem + Cfg::kOffAlpha)),
          max(reinterpret_cast<float*>(smem + Cfg::kOffMax)),
          flag(reinterpret_cast<int*>(smem + Cfg::kOffFlag)),
          scale(reinterpret_cast<float2*>(smem + Cfg::kOffScale)),
          red(reinterpret_cast<float*>(smem + Cfg::kOffRed)),
          sum(reinterpret_cast<float*>(smem + Cfg::kOffSum)),
          coef(reinterpret_cast<float*>(smem + Cfg::kOffCoef)),
          end(reinterpret_cast<int*>(smem + Cfg::kOffEnd)),
          full(reinterpret_cast<uint64_t*>(smem + Cfg::kOffBars)),
          empty(full + Cfg::kStages * Cfg::kFullSets),
          p_full(empty + Cfg::kStages),
          p_empty(p_full + Cfg::kConsumers),
          m_full(p_empty + Cfg::kConsumers),
          raw_full(m_full + Cfg::kConsumers),
          raw_empty(raw_full + Cfg::kRawStages),
          front(raw_empty + Cfg::kRawStages),
          stages(smem + Cfg::kOffStages),
          raw(smem + Cfg::kOffRaw),
          tma(maps) {}
};

struct WgmmaRows {
    int row0;     // first element-relative row of the CTA
    int t_first;  // element-relative query token of row 0
    int n_tiles;
    // The stage ring's tiles before this work's first (the balanced schedule's continuous
    // pipeline: a CTA-wide count over its items; 0 in a CTA of one work): tile t of the work
    // takes stage (tile0 + t) % kStages in its use (tile0 + t) / kStages.
    int tile0 = 0;
    // Cfg::kQLoadsFirst: the consumers' Q loads announce themselves to the producer
    // (kQIssuedBarrier) for the CTA's first work only.
    bool announce_q = true;
};

// The tiles of a CTA's work (the last one partial).
template <class Cfg>
__device__ __forceinline__ int wgmma_tile_count(const Stage1Work& work) {
    return static_cast<int>((work.tok_end - work.tok_begin + Cfg::kTileTokens - 1) /
                            Cfg::kTileTokens);
}

}  // namespace mla::splitkv
