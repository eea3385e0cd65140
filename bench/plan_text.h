// What the benchmark reads from mla_decode_plan_describe's one-line description of a plan: the
// route, the split count, the stage-1 variant and its rows per CTA and tile. The line is meant
// for people, so every field is optional; a field the line does not state reads as empty / 0
// and is printed as "-".
#pragma once

#include <string>

namespace mla_bench {

struct PlanSummary {
    std::string route;    // "route=" ("split_kv", "single_split", ...); "" when absent
    int splits = 0;       // "splits=N" or "N splits"; 1 for a single-split route; 0 = not stated
    std::string variant;  // "variant=" (the stage-1 kernel); "" when absent
    int rows_per_cta = 0; // "rows/cta=" (query rows one CTA serves per KV tile); 0 = absent
    int tile = 0;         // "tile=" (tokens per KV tile); 0 = absent
};

// The value of `key=` in a description, "" when absent: keys start a word (after a space or
// at the start); values end at a space, ',', ';' or ':'.
std::string plan_word(const std::string& description, const std::string& key);

PlanSummary parse_plan(const std::string& description);

// The route for the table and the benchmark label: the route, or, when the line names none
// (no plan could be made), its head up to the first ':' and at most 40 characters.
std::string route_text(const std::string& description);

}  // namespace mla_bench
