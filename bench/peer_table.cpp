#include "peer_table.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <utility>

namespace mla_bench {

bool split_csv_line(const std::string& line, std::vector<std::string>* fields) {
    fields->clear();
    std::string field;
    bool quoted = false;
    for (size_t i = 0; i < line.size(); ++i) {
        const char c = line[i];
        if (quoted) {
            if (c != '"') {
                field += c;
            } else if (i + 1 < line.size() && line[i + 1] == '"') {
                field += '"';  // "" inside quotes is one quote
                ++i;
            } else {
                quoted = false;
            }
        } else if (c == '"') {
            quoted = true;
        } else if (c == ',') {
            fields->push_back(field);
            field.clear();
        } else {
            field += c;
        }
    }
    fields->push_back(field);
    return !quoted;
}

namespace {

bool comment_or_blank(const std::string& line) {
    const size_t first = line.find_first_not_of(" \t");
    return first == std::string::npos || line[first] == '#';
}

bool parse_int(const std::string& s, int* out) {
    if (s.empty()) return false;
    char* end = nullptr;
    errno = 0;
    const long v = std::strtol(s.c_str(), &end, 10);
    if (*end != '\0' || errno != 0 || v < 1 || v > (1L << 30)) return false;
    *out = static_cast<int>(v);
    return true;
}

bool parse_median(const std::string& s, double* out) {
    if (s.empty()) return false;
    char* end = nullptr;
    const double v = std::strtod(s.c_str(), &end);
    if (*end != '\0' || !std::isfinite(v) || v <= 0.0) return false;
    *out = v;
    return true;
}

}  // namespace

bool PeerTable::load(const std::string& path, std::string* message) {
    medians_.clear();
    errno = 0;
    std::ifstream in(path);
    if (!in) {
        *message = path + ": cannot open";
        if (errno != 0) *message += std::string(": ") + std::strerror(errno);
        return false;
    }
    static const char* const kRequired[] = {"bs", "q_len", "kv_len", "heads", "peer",
                                            "median_us"};
    constexpr size_t kColumns = std::size(kRequired);
    size_t column[kColumns] = {};
    size_t header_fields = 0;  // 0 until the header is read
    std::map<Key, double> table;
    std::string line;
    std::vector<std::string> f;
    for (int number = 1; std::getline(in, line); ++number) {
        if (!line.empty() && line.back() == '\r') line.pop_back();  // CRLF files
        if (comment_or_blank(line)) continue;
        const std::string where = path + ":" + std::to_string(number) + ": ";
        if (!split_csv_line(line, &f)) {
            *message = where + "unclosed quote";
            return false;
        }
        if (header_fields == 0) {
            for (size_t c = 0; c < kColumns; ++c) {
                column[c] = f.size();
                for (size_t i = 0; i < f.size(); ++i)
                    if (f[i] == kRequired[c]) column[c] = i;
                if (column[c] == f.size()) {
                    *message = where + "the header has no column '" + kRequired[c] + "'";
                    return false;
                }
            }
            header_fields = f.size();
            continue;
        }
        if (f.size() != header_fields) {
            *message = where + std::to_string(f.size()) + " fields, the header has " +
                       std::to_string(header_fields);
            return false;
        }
        int bs = 0, q_len = 0, kv_len = 0, heads = 0;
        double median = 0.0;
        const std::string& peer = f[column[4]];
        if (!parse_int(f[column[0]], &bs) || !parse_int(f[column[1]], &q_len) ||
            !parse_int(f[column[2]], &kv_len) || !parse_int(f[column[3]], &heads) ||
            peer.empty() || !parse_median(f[column[5]], &median)) {
            *message = where + "expected positive whole bs, q_len, kv_len, heads, a peer name "
                               "and a positive median_us";
            return false;
        }
        if (!table.emplace(Key{peer, bs, q_len, kv_len, heads}, median).second) {
            *message = where + "a second figure of " + peer + " for this shape";
            return false;
        }
    }
    if (header_fields == 0) {
        *message = path + ": no header line";
        return false;
    }
    medians_ = std::move(table);
    return true;
}

double PeerTable::median_us(const std::string& peer, int bs, int q_len, int kv_len,
                            int heads) const {
    const auto it = medians_.find(Key{peer, bs, q_len, kv_len, heads});
    return it == medians_.end() ? 0.0 : it->second;
}

}  // namespace mla_bench
