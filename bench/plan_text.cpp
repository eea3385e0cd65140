#include "plan_text.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>

namespace mla_bench {

std::string plan_word(const std::string& description, const std::string& key) {
    const std::string k = key + "=";
    for (size_t at = description.find(k); at != std::string::npos;
         at = description.find(k, at + 1)) {
        if (at > 0 && description[at - 1] != ' ') continue;  // "xsplits=" is not "splits="
        const size_t begin = at + k.size();
        return description.substr(begin, description.find_first_of(" ,;:", begin) - begin);
    }
    return "";
}

namespace {

// A positive count from a word, 0 when the word is not one (absent, garbage or <= 0).
int count_of(const std::string& word) {
    if (word.empty()) return 0;
    char* end = nullptr;
    const long n = std::strtol(word.c_str(), &end, 10);
    return (*end == '\0' && n > 0 && n <= 1 << 30) ? static_cast<int>(n) : 0;
}

// "N splits" in the prose of the line (0.2.0 writes "(4 splits of 16 tiles, ...").
int prose_splits(const std::string& description) {
    const std::string word = " splits";
    for (size_t at = description.find(word); at != std::string::npos;
         at = description.find(word, at + 1)) {
        const size_t after = at + word.size();  // "splits=N" is the token, not prose
        if (after < description.size() && description[after] == '=') continue;
        size_t begin = at;
        while (begin > 0 && std::isdigit(static_cast<unsigned char>(description[begin - 1])))
            --begin;
        if (begin < at) return count_of(description.substr(begin, at - begin));
    }
    return 0;
}

}  // namespace

PlanSummary parse_plan(const std::string& description) {
    PlanSummary s;
    s.route = plan_word(description, "route");
    s.splits = count_of(plan_word(description, "splits"));
    if (s.splits == 0) s.splits = prose_splits(description);
    if (s.splits == 0 && s.route.find("single") != std::string::npos) s.splits = 1;
    s.variant = plan_word(description, "variant");
    // "variant=wgmma (e4m3 scores)": the scores of MLA_DECODE_FLAG_FP8_MMA
    if (!s.variant.empty() &&
        description.find("variant=" + s.variant + " (e4m3 scores)") != std::string::npos)
        s.variant += "+e4m3";
    s.rows_per_cta = count_of(plan_word(description, "rows/cta"));
    s.tile = count_of(plan_word(description, "tile"));
    return s;
}

std::string route_text(const std::string& description) {
    const std::string route = plan_word(description, "route");
    if (!route.empty()) return route;
    return description.substr(0, std::min<size_t>(description.find(':'), 40));
}

}  // namespace mla_bench
