#include "shape_tag.h"

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <utility>

namespace mla_bench {

std::string shape_tag(const ShapeSpec& s) {
    std::string t = "bs" + std::to_string(s.bs) + "/kv" + (s.uneven ? "uneven" : "") +
                    std::to_string(s.kv_len) + "/h" + std::to_string(s.heads) + "/q" +
                    (s.mixed_q ? "1-" : "") + std::to_string(s.q_len);
    if (s.page_size > 0) t += "/page" + std::to_string(s.page_size);
    return t;
}

namespace {

constexpr long kMaxValue = 1L << 24;

// Reads `word` at *pos; true (and moves past it) when it is there.
bool take(const std::string& t, size_t* pos, const char* word) {
    const std::string w(word);
    if (t.compare(*pos, w.size(), w) != 0) return false;
    *pos += w.size();
    return true;
}

// Reads a decimal number in [1, kMaxValue] at *pos.
bool take_number(const std::string& t, size_t* pos, int* value) {
    long v = 0;
    size_t i = *pos;
    while (i < t.size() && std::isdigit(static_cast<unsigned char>(t[i])) && v <= kMaxValue) {
        v = v * 10 + (t[i] - '0');
        ++i;
    }
    if (i == *pos || v < 1 || v > kMaxValue) return false;
    *pos = i;
    *value = static_cast<int>(v);
    return true;
}

}  // namespace

bool parse_shape_tag(const std::string& tag, ShapeSpec* out, std::string* error) {
    ShapeSpec s;
    size_t pos = 0;
    auto fail = [&](const char* what) {
        *error = "shape '" + tag + "': " + what +
                 " (the form: bs<N>/kv[uneven]<N>/h<N>/q[1-]<N>[/page<N>], numbers 1.." +
                 std::to_string(kMaxValue) + ")";
        return false;
    };
    if (!take(tag, &pos, "bs") || !take_number(tag, &pos, &s.bs)) return fail("no batch 'bs<N>'");
    if (!take(tag, &pos, "/kv")) return fail("no '/kv' after the batch");
    s.uneven = take(tag, &pos, "uneven");
    if (!take_number(tag, &pos, &s.kv_len)) return fail("no cache length after '/kv'");
    if (!take(tag, &pos, "/h") || !take_number(tag, &pos, &s.heads))
        return fail("no heads '/h<N>' after the length");
    if (!take(tag, &pos, "/q")) return fail("no '/q' after the heads");
    s.mixed_q = take(tag, &pos, "1-");
    if (!take_number(tag, &pos, &s.q_len)) return fail("no query length after '/q'");
    if (take(tag, &pos, "/page") && !take_number(tag, &pos, &s.page_size))
        return fail("no page size after '/page'");
    if (pos != tag.size()) return fail("unexpected text at the end");
    *out = s;
    return true;
}

bool parse_shape_list(const std::string& list, std::vector<ShapeSpec>* out, std::string* error) {
    std::vector<ShapeSpec> shapes;
    for (size_t begin = 0; begin <= list.size();) {
        const size_t end = std::min(list.find(',', begin), list.size());
        ShapeSpec s;
        if (!parse_shape_tag(list.substr(begin, end - begin), &s, error)) return false;
        shapes.push_back(s);
        begin = end + 1;
    }
    *out = std::move(shapes);
    return true;
}

}  // namespace mla_bench
