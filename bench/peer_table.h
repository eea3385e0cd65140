// Peer medians (FlashMLA, torch, the seed's Triton kernels) read at run time from a CSV data
// file (bench/data/h200_peers.csv), so every figure the benchmark prints beside ours carries
// its source, date and method in the file instead of living in the code.
//
// File format: lines starting with '#' (after optional blanks) and empty lines are comments;
// the first other line is the header. Columns are found by name; bs, q_len, kv_len, heads,
// peer and median_us are required, others (kv_format, date, note, ...) are carried along
// unread. Fields may be quoted ("a, b" with "" for a quote). A shape has at most one figure
// per peer.
#pragma once

#include <map>
#include <string>
#include <tuple>
#include <vector>

namespace mla_bench {

// Peer names of the data file that the benchmark prints.
inline constexpr char kPeerFlashMla[] = "flashmla_bf16";
inline constexpr char kPeerTorch[] = "torch_bf16";
inline constexpr char kPeerSeedSplitKv[] = "seed_triton_splitkv_fp8_best";

// One CSV line split into fields; false when a quoted field is not closed.
bool split_csv_line(const std::string& line, std::vector<std::string>* fields);

class PeerTable {
public:
    // Reads `path`, replacing what the table held. On failure (the file cannot be opened, a
    // column is missing, a line is malformed or repeats a shape) returns false with a message
    // naming the file and line, and the table is left empty.
    bool load(const std::string& path, std::string* message);

    // The median of `peer` for the shape in microseconds, 0 when the file has none.
    double median_us(const std::string& peer, int bs, int q_len, int kv_len, int heads) const;

    size_t size() const { return medians_.size(); }

private:
    using Key = std::tuple<std::string, int, int, int, int>;  // peer, bs, q_len, kv_len, heads
    std::map<Key, double> medians_;
};

}  // namespace mla_bench
