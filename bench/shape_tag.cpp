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
    if (s.page_size > 0 && s.ordered_pages) t += "/ordered";
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

// Reads a decimal number at *pos: kNumber when it is in [1, kMaxValue] (and moves past it),
// kOutOfRange for 0 or a larger one, kNoNumber when no digit is there.
enum Read { kNumber, kOutOfRange, kNoNumber };
Read take_number(const std::string& t, size_t* pos, int* value) {
    long v = 0;
    size_t i = *pos;
    while (i < t.size() && std::isdigit(static_cast<unsigned char>(t[i]))) {
        if (v <= kMaxValue) v = v * 10 + (t[i] - '0');
        ++i;
    }
    if (i == *pos) return kNoNumber;
    if (v < 1 || v > kMaxValue) return kOutOfRange;
    *pos = i;
    *value = static_cast<int>(v);
    return kNumber;
}

}  // namespace

bool parse_shape_tag(const std::string& tag, ShapeSpec* out, std::string* error) {
    ShapeSpec s;
    size_t pos = 0;
    auto fail = [&](const char* what) {
        *error = "shape '" + tag + "': " + what +
                 " (the form: bs<N>/kv[uneven]<N>/h<N>/q[1-]<N>[/page<N>[/ordered]], numbers 1.." +
                 std::to_string(kMaxValue) + ")";
        return false;
    };
    // A number after `field`: its value, or why not.
    auto number = [&](int* value, const char* field) {
        switch (take_number(tag, &pos, value)) {
            case kNumber: return true;
            case kOutOfRange:
                return fail((std::string(field) + " out of range").c_str());
            case kNoNumber: break;
        }
        return fail((std::string("no ") + field).c_str());
    };
    if (!take(tag, &pos, "bs")) return fail("no batch 'bs<N>' at the start");
    if (!number(&s.bs, "batch after 'bs'")) return false;
    if (!take(tag, &pos, "/kv")) return fail("no '/kv' after the batch");
    s.uneven = take(tag, &pos, "uneven");
    if (!number(&s.kv_len, "cache length after '/kv'")) return false;
    if (!take(tag, &pos, "/h")) return fail("no heads '/h<N>' after the length");
    if (!number(&s.heads, "heads after '/h'")) return false;
    if (!take(tag, &pos, "/q")) return fail("no '/q' after the heads");
    s.mixed_q = take(tag, &pos, "1-");
    if (!number(&s.q_len, "query length after '/q'")) return false;
    if (take(tag, &pos, "/page")) {
        if (!number(&s.page_size, "page size after '/page'")) return false;
        s.ordered_pages = take(tag, &pos, "/ordered");
    }
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
