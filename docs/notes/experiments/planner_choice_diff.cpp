// Which planner choices a change of the stage-1 cost table moves (host only, no GPU): for every
// (batch, q_len, cache length, heads) of a grid, the (variant, rows per CTA, split count) that
// src/planner.cpp's plan_split_kv picks for an fp8 e4m3fn cache on 132 SMs under the OLD and
// the NEW figures below, and the shapes where they differ, as mla_bench --mla_shapes tags.
// Twelfth session: the row owners' measured 32- / 64-row tile times (1.85 / 2.6 us against
// 2.0 / 3.0) move 113 of 4,320 shapes, none of the benchmark's. Thirteenth session: OLD is the
// table before, NEW the table after that session's change (wgmma's fixed cost 2.0 us, not 3.0:
// 133 shapes move, 110 of them from mma16 to wgmma); arguments replace NEW figures for a trial,
// e.g. `wgmma32=1.75,2.0 wgmma64=2.55,2.0` (the table the session measured and did not keep).
//   g++ -std=c++17 -O1 -Isrc -Ikernels -Iinclude -DMLA_BACKEND_NONE=1
//       docs/notes/experiments/planner_choice_diff.cpp src/planner.cpp -o /tmp/planner_choice_diff
//   (one command line)
//   /tmp/planner_choice_diff            (prints the moved shapes, then the count, then one
//                                        --mla_shapes list of them)
//   LIST=1 /tmp/planner_choice_diff     (every NEW choice: diff two builds of a planner change)
// Eighteenth session: a first argument --mxfp4 takes src/plan.cpp's MXFP4 figures as OLD and
// NEW (and the MXFP4 cache's streamed bytes), e.g. `--mxfp4 wgmma16=2.9,2.0`.
// Twenty-fifth session: --bf16 likewise (a candidate NEW table after the solo consumers).
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <string>

#include "planner.h"
#include "splitkv/formats.h"

using namespace mla;

struct Cost {
    const char* name;
    double tile_us;
    int parallelism;
    double fixed_us;
    int rows;
    double split_us = 0.0;  // SplitKvShape::split_cta_us (twenty-fourth session)
};
// src/plan.cpp's stage1_cost for fp8 e4m3fn: mma16, then wgmma at 16 / 32 / 64 rows. OLD: the
// table of 0.7.0-0.7.7; NEW: the twenty-fourth session's (the split charge past 64 splits is
// src/planner.cpp's, the same for both: diff LIST=1 of two builds for a change of it).
// Forty-first session: OLD is the current table (0.7.24, the twenty-fourth session's figures);
// the table of 0.7.0-0.7.7 was {1.37, 2.0, 3.0} at 16 / 32 / 64 rows without split costs.
// Fifty-third session: OLD was 0.7.32's table, NEW 0.7.33's (32 rows 1.55 us a tile, split
// charge 4: 276 shapes moved). Sixty-eighth session: OLD is 0.7.41's table (0.7.33's), NEW
// 0.7.42's (mma16's fixed cost 4.0: 230 shapes move, all from mma16 to wgmma's 16 rows).
// mma16's row groups (32 / 64 rows, 0.7.39) are not among the candidates here.
constexpr Cost kOld[] = {{"mma16", 2.4, 1, 2.0, 16, 1.0},
                         {"wgmma16", 1.37, 2, 2.0, 16, 1.0},
                         {"wgmma32", 1.55, 2, 2.0, 32, 4.0},
                         {"wgmma64", 2.55, 2, 2.0, 64, 12.0}};
Cost kNew[] = {{"mma16", 2.4, 1, 4.0, 16, 1.0},
               {"wgmma16", 1.37, 2, 2.0, 16, 1.0},
               {"wgmma32", 1.55, 2, 2.0, 32, 4.0},
               {"wgmma64", 2.55, 2, 2.0, 64, 12.0}};
// src/plan.cpp's stage1_cost for MXFP4 (--mxfp4; 0.7.4-0.7.7 as OLD; 0.7.3's wgmma16 was
// 2.8,2.0,1 and wgmma32 3.6,2.0,2), and NEW before the arguments.
Cost kOldMxfp4[] = {{"mma16", 3.3, 1, 2.0, 16}, {"wgmma16", 2.0, 1, 2.0, 16},
                    {"wgmma32", 2.25, 1, 4.0, 32}, {"wgmma64", 4.4, 2, 2.0, 64}};
constexpr Cost kNewMxfp4[] = {{"mma16", 3.3, 1, 2.0, 16, 2.0},
                              {"wgmma16", 2.0, 1, 2.0, 16, 2.0},
                              {"wgmma32", 2.0, 1, 4.0, 32, 4.0},
                              {"wgmma64", 4.4, 2, 2.0, 64, 12.0}};
// src/plan.cpp's stage1_cost for bf16 caches (--bf16; 0.7.9's as OLD: no 64-row kernel, so
// wgmma64 never wins), and NEW: a candidate after the solo consumers (twenty-fifth session:
// bf16 16 / 32 rows ~0.8x; a bf16 tile is bandwidth bound in the model at 2.7 us on 132 units
// anyway), wgmma's fixed cost as fp8's measured 2.0 (bf16 kept the 3.0 estimate) and fp8's
// split costs (the same partial O epilogue). Not A/B-timed.
constexpr double kNever = 1e9;
constexpr Cost kOldBf16[] = {{"mma16", 3.25, 1, 2.0, 16}, {"wgmma16", 2.05, 2, 3.0, 16},
                             {"wgmma32", 3.25, 2, 3.0, 32}, {"wgmma64", kNever, 2, 2.0, 64}};
constexpr Cost kNewBf16[] = {{"mma16", 3.25, 1, 2.0, 16},
                             {"wgmma16", 2.05, 2, 2.0, 16, 1.0},
                             {"wgmma32", 2.5, 2, 2.0, 32, 3.0},
                             {"wgmma64", kNever, 2, 2.0, 64}};
splitkv::KvFormat g_format = splitkv::KvFormat::kFp8E4M3FN;

struct Choice {
    const char* name = "";
    int splits = 0;
};

Choice choose(const Cost (&costs)[4], int bs, int q, int kv, int heads) {
    Choice c;
    double best = 1e300;
    for (const Cost& k : costs) {
        const SplitKvShape shape{bs, bs * q, q, kv, heads,
                                 splitkv::kv_traits(g_format).streamed_bytes,
                                 k.tile_us, 64, 132, k.rows, k.parallelism, k.fixed_us,
                                 k.split_us};
        const SplitKvPlan plan = plan_split_kv(shape, 0);
        if (plan.predicted_us < best) {
            best = plan.predicted_us;
            c.name = k.name;
            c.splits = plan.num_splits;
        }
    }
    return c;
}

// Arguments (optional) replace the NEW figures: NAME=TILE_US,FIXED_US[,PARALLELISM[,SPLIT_US]],
// e.g.
//   /tmp/planner_choice_diff wgmma32=1.75,3.0 wgmma64=2.55,3.0
int main(int argc, char** argv) {
    const Cost(*old_costs)[4] = &kOld;
    int first = 1;
    if (argc > 1 && std::string(argv[1]) == "--mxfp4") {
        g_format = splitkv::KvFormat::kMxfp4;
        old_costs = &kOldMxfp4;
        for (int k = 0; k < 4; ++k) kNew[k] = kNewMxfp4[k];
        first = 2;
    } else if (argc > 1 && std::string(argv[1]) == "--bf16") {
        g_format = splitkv::KvFormat::kBf16;
        old_costs = &kOldBf16;
        for (int k = 0; k < 4; ++k) kNew[k] = kNewBf16[k];
        first = 2;
    }
    for (int i = first; i < argc; ++i) {
        const std::string arg = argv[i];
        const size_t eq = arg.find('='), comma = arg.find(',');
        bool known = false;
        for (Cost& c : kNew) {
            if (eq == std::string::npos || comma == std::string::npos || arg.substr(0, eq) != c.name)
                continue;
            c.tile_us = std::stod(arg.substr(eq + 1, comma - eq - 1));
            c.fixed_us = std::stod(arg.substr(comma + 1));
            const size_t comma2 = arg.find(',', comma + 1);
            if (comma2 != std::string::npos) c.parallelism = std::stoi(arg.substr(comma2 + 1));
            const size_t comma3 =
                comma2 == std::string::npos ? comma2 : arg.find(',', comma2 + 1);
            if (comma3 != std::string::npos) c.split_us = std::stod(arg.substr(comma3 + 1));
            known = true;
        }
        if (!known) {
            std::fprintf(stderr, "expected NAME=TILE_US,FIXED_US (mma16, wgmma16/32/64): %s\n",
                         argv[i]);
            return 2;
        }
    }
    int total = 0, moved = 0;
    std::string tags;
    for (int bs : {1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 512, 1024})
        for (int q : {1, 2, 3, 4})
            for (int kv : {64, 200, 1000, 1024, 2048, 3000, 4096, 8192, 16384, 32768, 65536,
                           131072})
                for (int heads : {8, 16, 32, 64, 128}) {
                    const Choice a = choose(*old_costs, bs, q, kv, heads);
                    const Choice b = choose(kNew, bs, q, kv, heads);
                    ++total;
                    if (std::getenv("LIST") != nullptr) {  // every NEW choice, for a diff of two
                        std::printf("bs%d/kv%d/h%d/q%d %s %d\n", bs, kv, heads, q, b.name,  // builds
                                    b.splits);
                        continue;
                    }
                    if (std::string(a.name) == b.name && a.splits == b.splits) continue;
                    ++moved;
                    const std::string tag = "bs" + std::to_string(bs) + "/kv" +
                                            std::to_string(kv) + "/h" + std::to_string(heads) +
                                            "/q" + std::to_string(q);
                    std::printf("%-26s %s / %d splits -> %s / %d\n", tag.c_str(), a.name,
                                a.splits, b.name, b.splits);
                    tags += (tags.empty() ? "" : ",") + tag;
                }
    std::printf("%d of %d shapes move\n--mla_shapes=%s\n", moved, total, tags.c_str());
}
