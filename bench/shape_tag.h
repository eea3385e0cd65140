// A benchmark case's shape and its tag, the name mla_bench prints for it and takes back in
// --mla_shapes: "bs<batch>/kv<len>/h<heads>/q<q_len>", with "kvuneven<max>" for uneven lengths
// (zeros among them, one element at the maximum), "q1-<max>" for query lengths 1, 2, .., max
// mixed in one batch, "/page<size>" for a paged cache (shuffled pages of that size), and
// "/page<size>/ordered" for pages in order (each element's pages consecutive, as a fresh
// allocator hands them out: the same page-table walk over sequential memory).
#pragma once

#include <string>
#include <vector>

namespace mla_bench {

struct ShapeSpec {
    int bs = 0;
    int kv_len = 0;  // every element's length, or the maximum when uneven
    int heads = 16;
    int q_len = 1;   // every element's query tokens, or the maximum when mixed_q
    int page_size = 0;  // 0: contiguous cache; else paged (shuffled pages of this size)
    bool ordered_pages = false;  // paged: pages in order, not shuffled
    bool uneven = false;
    bool mixed_q = false;  // q_len 1, 2, .., q_len, 1, 2, .. over the batch
};

// "bs32/kv8192/h16/q1", "bs64/kvuneven4096/h128/q4/page64", "bs64/kv4096/h16/q1-4",
// "bs64/kv4096/h128/q1/page1/ordered".
std::string shape_tag(const ShapeSpec& s);

// The shape of a tag (the form shape_tag writes; numbers are decimal, batch, length, heads and
// q_len at least 1, a page size at least 1, none above 1 << 24). False with a message in
// *error for anything else; *out is then unchanged.
bool parse_shape_tag(const std::string& tag, ShapeSpec* out, std::string* error);

// Comma-separated tags, in order; false with a message naming the first bad one.
bool parse_shape_list(const std::string& list, std::vector<ShapeSpec>* out, std::string* error);

}  // namespace mla_bench
