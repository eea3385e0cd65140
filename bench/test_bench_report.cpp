// Host tests of the benchmark's report pieces: the peer data file (the shipped one and
// malformed ones), the fields read from mla_decode_plan_describe's line, and the shape tags
// (--mla_shapes).
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include "peer_table.h"
#include "plan_text.h"
#include "shape_tag.h"

namespace {

using mla_bench::parse_plan;
using mla_bench::PeerTable;
using mla_bench::PlanSummary;

std::vector<std::string> fields_of(const std::string& line) {
    std::vector<std::string> f;
    EXPECT_TRUE(mla_bench::split_csv_line(line, &f)) << line;
    return f;
}

TEST(BenchPeerCsv, SplitsFieldsWithQuotes) {
    EXPECT_EQ(fields_of("a,b,,c"), (std::vector<std::string>{"a", "b", "", "c"}));
    EXPECT_EQ(fields_of(""), (std::vector<std::string>{""}));
    EXPECT_EQ(fields_of("1,\"x, y\",\"say \"\"hi\"\"\",z"),
              (std::vector<std::string>{"1", "x, y", "say \"hi\"", "z"}));
    std::vector<std::string> f;
    EXPECT_FALSE(mla_bench::split_csv_line("1,\"open", &f));
}

// The shipped file loads, and its figures are the peers' (docs/SPEC.md's geomeans over the eight
// competition shapes: FlashMLA 73.0 us in the 2026-12-01 side-by-side run, torch 128.8 us and
// the seed's Triton split-KV best 102.3 us on 2026-11-30).
TEST(BenchPeerCsv, ShippedFileHoldsTheAnchors) {
    PeerTable t;
    std::string msg;
    ASSERT_TRUE(t.load(MLA_BENCH_PEERS_CSV, &msg)) << msg;
    EXPECT_EQ(t.size(), 34u);
    EXPECT_DOUBLE_EQ(t.median_us(mla_bench::kPeerFlashMla, 4, 1, 1024, 16), 21.5);
    EXPECT_DOUBLE_EQ(t.median_us(mla_bench::kPeerFlashMla, 64, 2, 4096, 128), 215.04);
    EXPECT_DOUBLE_EQ(t.median_us(mla_bench::kPeerFlashMla, 1, 1, 65536, 16), 98.78);
    EXPECT_DOUBLE_EQ(t.median_us(mla_bench::kPeerSeedSplitKv, 256, 1, 8192, 16), 1068.6);
    EXPECT_EQ(t.median_us(mla_bench::kPeerFlashMla, 4, 1, 1024, 32), 0.0);  // not measured
    EXPECT_EQ(t.median_us("no_such_peer", 4, 1, 1024, 16), 0.0);
    struct Anchor {
        const char* peer;
        double geomean_us;
    };
    for (const Anchor& a : {Anchor{mla_bench::kPeerFlashMla, 73.0},
                            Anchor{mla_bench::kPeerTorch, 128.8},
                            Anchor{mla_bench::kPeerSeedSplitKv, 102.3}}) {
        double log_sum = 0.0;
        int n = 0;
        for (int bs : {4, 32, 64, 256}) {
            for (int kv : {1024, 8192}) {
                const double us = t.median_us(a.peer, bs, 1, kv, 16);
                ASSERT_GT(us, 0.0) << a.peer << " bs" << bs << " kv" << kv;
                log_sum += std::log(us);
                ++n;
            }
        }
        EXPECT_NEAR(std::exp(log_sum / n), a.geomean_us, 0.05) << a.peer;
    }
}

// Writes `text` to a file in the test's temporary directory; returns its path.
std::string write_file(const std::string& name, const std::string& text) {
    const std::string path = ::testing::TempDir() + name;
    std::ofstream(path, std::ios::binary) << text;
    return path;
}

TEST(BenchPeerCsv, ReadsCommentsCrlfQuotesAndAnyColumnOrder) {
    const std::string path = write_file(
        "mla_peers_ok.csv",
        "# a comment\n\n  # an indented comment\r\n"
        "note,peer,heads,kv_len,q_len,bs,median_us\r\n"
        "\"paged 64, sm90a\",flashmla_bf16,16,1024,1,4,21.5\r\n"
        "x,torch_bf16,128,4096,2,64,505.1\n");
    PeerTable t;
    std::string msg;
    ASSERT_TRUE(t.load(path, &msg)) << msg;
    EXPECT_EQ(t.size(), 2u);
    EXPECT_DOUBLE_EQ(t.median_us("flashmla_bf16", 4, 1, 1024, 16), 21.5);
    EXPECT_DOUBLE_EQ(t.median_us("torch_bf16", 64, 2, 4096, 128), 505.1);
}

TEST(BenchPeerCsv, RefusesBadFilesWithTheLine) {
    struct Case {
        const char* name;
        const char* text;
        const char* message;  // a part of the expected message
    };
    const Case cases[] = {
        {"no_header.csv", "# only comments\n", "no header line"},
        {"no_column.csv", "bs,q_len,kv_len,heads,peer\n", "no column 'median_us'"},
        {"fields.csv", "bs,q_len,kv_len,heads,peer,median_us\n4,1,1024,16,p\n", ":2: 5 fields"},
        {"number.csv", "bs,q_len,kv_len,heads,peer,median_us\n4,1,1024,16,p,fast\n", ":2: "},
        {"zero.csv", "bs,q_len,kv_len,heads,peer,median_us\n0,1,1024,16,p,1.0\n", ":2: "},
        {"negative.csv", "bs,q_len,kv_len,heads,peer,median_us\n4,1,1024,16,p,-1\n", ":2: "},
        {"no_peer.csv", "bs,q_len,kv_len,heads,peer,median_us\n4,1,1024,16,,1.0\n", ":2: "},
        {"quote.csv", "bs,q_len,kv_len,heads,peer,median_us\n4,1,1024,16,\"p,1.0\n",
         ":2: unclosed quote"},
        {"twice.csv",
         "bs,q_len,kv_len,heads,peer,median_us\n#\n4,1,1024,16,p,1.0\n4,1,1024,16,p,2.0\n",
         ":4: a second figure of p"},
    };
    for (const Case& c : cases) {
        const std::string path = write_file(std::string("mla_peers_") + c.name, c.text);
        PeerTable t;
        std::string msg;
        EXPECT_FALSE(t.load(path, &msg)) << c.name;
        EXPECT_NE(msg.find(c.message), std::string::npos) << c.name << ": " << msg;
        EXPECT_NE(msg.find(path), std::string::npos) << c.name << ": " << msg;
        EXPECT_EQ(t.size(), 0u) << c.name;
    }
    PeerTable t;
    std::string msg;
    EXPECT_FALSE(t.load(::testing::TempDir() + "mla_peers_absent.csv", &msg));
    EXPECT_NE(msg.find("cannot open"), std::string::npos) << msg;
}

// A failed load empties a table that held figures (no stale peers in the report).
TEST(BenchPeerCsv, FailedLoadEmptiesTheTable) {
    PeerTable t;
    std::string msg;
    ASSERT_TRUE(t.load(MLA_BENCH_PEERS_CSV, &msg)) << msg;
    EXPECT_FALSE(t.load(::testing::TempDir() + "mla_peers_absent.csv", &msg));
    EXPECT_EQ(t.size(), 0u);
}

// The lines of 0.2.0's planner (src/device.cpp), and the variant tokens added after it.
TEST(BenchPlanText, ReadsRouteSplitsAndVariant) {
    const PlanSummary split = parse_plan(
        "route=split_kv kv=fp8_e4m3fn batch=32 q_len<=1 heads=16 kv_len<=8192: metadata + "
        "stage 1 (4 splits of 32 tiles, 128 CTAs, 1 row groups) + LSE reduce on 132 compute "
        "units (cost model 90.1 us), workspace 1234 B");
    EXPECT_EQ(split.route, "split_kv");
    EXPECT_EQ(split.splits, 4);
    EXPECT_EQ(split.variant, "");
    EXPECT_EQ(split.rows_per_cta, 0);
    EXPECT_EQ(split.tile, 0);

    const PlanSummary single = parse_plan(
        "route=single_split kv=bf16 batch=256 q_len<=1 heads=16 kv_len<=8192: stage 1 writes O "
        "directly, 256 CTAs (1 row groups) on 132 compute units; splitting does not pay");
    EXPECT_EQ(single.route, "single_split");
    EXPECT_EQ(single.splits, 1);

    const PlanSummary v = parse_plan(
        "route=split_kv variant=wgmma_ws rows/cta=128 tile=64 splits=8 kv=fp8_e4m3fn batch=64: "
        "(2 splits of nothing)");
    EXPECT_EQ(v.route, "split_kv");
    EXPECT_EQ(v.splits, 8);  // the token wins over the prose
    EXPECT_EQ(v.variant, "wgmma_ws");
    const PlanSummary e4m3 = parse_plan(
        "route=single_split variant=wgmma (e4m3 scores) rows/cta=64 tile=64 splits=1 kv=x");
    EXPECT_EQ(e4m3.variant, "wgmma+e4m3");
    EXPECT_EQ(e4m3.rows_per_cta, 64);
    EXPECT_EQ(v.rows_per_cta, 128);
    EXPECT_EQ(v.tile, 64);

    // A key inside another word is not the key; garbage counts read as not stated.
    const PlanSummary odd = parse_plan("route=x,y xvariant=no rows/cta=abc tile=-4 splits=0");
    EXPECT_EQ(odd.route, "x");
    EXPECT_EQ(odd.variant, "");
    EXPECT_EQ(odd.rows_per_cta, 0);
    EXPECT_EQ(odd.tile, 0);
    EXPECT_EQ(odd.splits, 0);
}

TEST(BenchPlanText, RouteTextOfALineWithoutRoute) {
    EXPECT_EQ(mla_bench::route_text("route=split_kv kv=bf16"), "split_kv");
    EXPECT_EQ(mla_bench::route_text("no plan (MLA_STATUS_NO_DEVICE): no GPU"),
              "no plan (MLA_STATUS_NO_DEVICE)");
    EXPECT_EQ(mla_bench::route_text(std::string(60, 'a')), std::string(40, 'a'));
    EXPECT_EQ(mla_bench::route_text(""), "");
}

// ---- shape tags (--mla_shapes) -------------------------------------------------------------

mla_bench::ShapeSpec spec(int bs, int kv, int heads, int q, int page = 0, bool uneven = false,
                          bool mixed = false) {
    mla_bench::ShapeSpec s;
    s.bs = bs, s.kv_len = kv, s.heads = heads, s.q_len = q, s.page_size = page;
    s.uneven = uneven, s.mixed_q = mixed;
    return s;
}

mla_bench::ShapeSpec ordered(mla_bench::ShapeSpec s) {
    s.ordered_pages = true;
    return s;
}

bool same(const mla_bench::ShapeSpec& a, const mla_bench::ShapeSpec& b) {
    return a.bs == b.bs && a.kv_len == b.kv_len && a.heads == b.heads && a.q_len == b.q_len &&
           a.page_size == b.page_size && a.uneven == b.uneven && a.mixed_q == b.mixed_q &&
           a.ordered_pages == b.ordered_pages;
}

// Every form the benchmark prints reads back as the same shape.
TEST(BenchShapeTag, PrintedTagsReadBack) {
    const mla_bench::ShapeSpec shapes[] = {
        spec(32, 8192, 16, 1),           spec(1, 65536, 16, 1),
        spec(64, 4096, 128, 2),          spec(7, 3000, 64, 3),
        spec(32, 8192, 16, 1, 16),       spec(32, 8192, 16, 1, 1),
        spec(64, 8192, 16, 1, 0, true),  spec(64, 4096, 16, 4, 0, false, true),
        spec(64, 4096, 128, 4, 64, true), spec(1 << 24, 1 << 24, 1 << 24, 1 << 24, 1 << 24),
        ordered(spec(64, 4096, 128, 1, 1)), ordered(spec(64, 4096, 16, 4, 16, true, true)),
    };
    for (const auto& s : shapes) {
        const std::string tag = mla_bench::shape_tag(s);
        mla_bench::ShapeSpec back;
        std::string error;
        ASSERT_TRUE(mla_bench::parse_shape_tag(tag, &back, &error)) << tag << ": " << error;
        EXPECT_TRUE(same(s, back)) << tag << " read back as " << mla_bench::shape_tag(back);
    }
    EXPECT_EQ(mla_bench::shape_tag(spec(64, 4096, 128, 4, 64, true)),
              "bs64/kvuneven4096/h128/q4/page64");
    EXPECT_EQ(mla_bench::shape_tag(spec(64, 4096, 16, 4, 0, false, true)), "bs64/kv4096/h16/q1-4");
    EXPECT_EQ(mla_bench::shape_tag(ordered(spec(64, 4096, 128, 1, 1))),
              "bs64/kv4096/h128/q1/page1/ordered");
    // Only a paged cache has an order: a contiguous one prints (and reads back) without it.
    EXPECT_EQ(mla_bench::shape_tag(ordered(spec(64, 4096, 128, 1))), "bs64/kv4096/h128/q1");
}

TEST(BenchShapeTag, RefusesMalformedTagsAndLeavesTheOutputAlone) {
    const char* bad[] = {
        "", "bs", "bs0/kv1024/h16/q1", "bs4/kv1024/h16", "bs4/kv1024/h16/q", "bs4/kv0/h16/q1",
        "bs4/kv-5/h16/q1", "bs4/kv1024/h16/q1/", "bs4/kv1024/h16/q1/page", "bs4/kv1024/h16/q1/page0",
        "bs4/kv1024/h16/q1/x", " bs4/kv1024/h16/q1", "bs4/kv1024/h16/q2-4", "BS4/kv1024/h16/q1",
        "bs4/kvuneven/h16/q1", "bs16777217/kv1024/h16/q1", "bs99999999999999999999/kv1/h16/q1",
        "bs4/kv1024/q1/h16", "bs4/kv1024/h16/q1/page16/page16", "bs4/kv1024/h16/q1/ordered",
        "bs4/kv1024/h16/q1/page16/ordered/ordered", "bs4/kv1024/h16/q1/page16/order",
        "bs4/kv1024/h16/q1/page/ordered",
    };
    for (const char* tag : bad) {
        mla_bench::ShapeSpec out = spec(9, 9, 9, 9, 9);
        std::string error;
        EXPECT_FALSE(mla_bench::parse_shape_tag(tag, &out, &error)) << "'" << tag << "'";
        EXPECT_NE(error.find("shape '"), std::string::npos) << error;
        EXPECT_TRUE(same(out, spec(9, 9, 9, 9, 9))) << "'" << tag << "'";
    }
}

// The message says what is wrong: a number out of range is not a missing one.
TEST(BenchShapeTag, SaysWhichPartIsWrong) {
    auto error_of = [](const char* tag) {
        mla_bench::ShapeSpec out;
        std::string error;
        EXPECT_FALSE(mla_bench::parse_shape_tag(tag, &out, &error)) << tag;
        return error;
    };
    EXPECT_NE(error_of("bs4/kv1024/h16/q1/page0").find("page size after '/page' out of range"),
              std::string::npos);
    EXPECT_NE(error_of("bs4/kv1024/h16/q1/page").find("no page size"), std::string::npos);
    EXPECT_NE(error_of("bs99999999999999999999/kv1/h16/q1").find("batch after 'bs' out of range"),
              std::string::npos);
    EXPECT_NE(error_of("bs4/kv1024").find("no heads"), std::string::npos);
    EXPECT_NE(error_of("bs4/kv1024/h16/q1x").find("unexpected text at the end"),
              std::string::npos);
}

TEST(BenchShapeTag, ListsInOrderAndNameTheBadTag) {
    std::vector<mla_bench::ShapeSpec> v;
    std::string error;
    ASSERT_TRUE(mla_bench::parse_shape_list("bs8/kv3000/h64/q3,bs1/kv65536/h16/q1", &v, &error))
        << error;
    ASSERT_EQ(v.size(), 2u);
    EXPECT_TRUE(same(v[0], spec(8, 3000, 64, 3)));
    EXPECT_TRUE(same(v[1], spec(1, 65536, 16, 1)));
    EXPECT_FALSE(mla_bench::parse_shape_list("bs8/kv3000/h64/q3,,bs1/kv1/h16/q1", &v, &error));
    EXPECT_FALSE(mla_bench::parse_shape_list("bs8/kv3000/h64/q3,bs1/kvX/h16/q1", &v, &error));
    EXPECT_NE(error.find("bs1/kvX/h16/q1"), std::string::npos) << error;
    EXPECT_EQ(v.size(), 2u);  // unchanged by a failed parse
}

}  // namespace
