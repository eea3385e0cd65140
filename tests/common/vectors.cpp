#include "vectors.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>

#ifndef MLA_TEST_DATA_DIR
#error "MLA_TEST_DATA_DIR must name the tests/data/vectors folder"
#endif

namespace mla_test {
namespace {

namespace fs = std::filesystem;

// One "file NAME = DESCRIPTION shape=AxB" line of a manifest.
struct FileEntry {
    std::string description;
    std::vector<int64_t> shape;

    int64_t elements() const {
        int64_t n = 1;
        for (int64_t d : shape) n *= d;
        return n;
    }
    std::string storage() const { return description.substr(0, description.find(' ')); }
    bool mentions(const std::string& word) const {
        std::istringstream words(description);
        std::string w;
        while (words >> w) {
            if (w == word) return true;
        }
        return false;
    }
};

struct Manifest {
    std::string comment;
    std::map<std::string, std::string> values;
    std::map<std::string, FileEntry> files;

    const std::string& value(const std::string& key) const {
        auto it = values.find(key);
        if (it == values.end()) throw std::runtime_error("manifest has no '" + key + "'");
        return it->second;
    }
    const FileEntry& file(const std::string& name) const {
        auto it = files.find(name);
        if (it == files.end()) throw std::runtime_error("manifest lists no file " + name);
        return it->second;
    }
    bool has_file(const std::string& name) const { return files.count(name) != 0; }
};

std::string trim(const std::string& s) {
    size_t begin = s.find_first_not_of(" \t\r");
    if (begin == std::string::npos) return "";
    size_t end = s.find_last_not_of(" \t\r");
    return s.substr(begin, end - begin + 1);
}

std::vector<int64_t> parse_shape(const std::string& text) {
    std::vector<int64_t> shape;
    std::istringstream parts(text);
    std::string dim;
    while (std::getline(parts, dim, 'x')) shape.push_back(std::stoll(dim));
    return shape;
}

FileEntry parse_file_entry(const std::string& rhs) {
    FileEntry entry;
    size_t at = rhs.rfind("shape=");
    if (at == std::string::npos) throw std::runtime_error("file line without shape=: " + rhs);
    entry.description = trim(rhs.substr(0, at));
    entry.shape = parse_shape(trim(rhs.substr(at + 6)));
    return entry;
}

Manifest read_manifest(const fs::path& path) {
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot open " + path.string());
    Manifest m;
    std::string line;
    while (std::getline(in, line)) {
        line = trim(line);
        if (line.empty()) continue;
        if (line[0] == '#') {
            m.comment = trim(line.substr(1));
            continue;
        }
        size_t eq = line.find('=');
        if (eq == std::string::npos) throw std::runtime_error("bad manifest line: " + line);
        std::string key = trim(line.substr(0, eq)), rhs = trim(line.substr(eq + 1));
        if (key.rfind("file ", 0) == 0) {
            m.files[trim(key.substr(5))] = parse_file_entry(rhs);
        } else {
            m.values[key] = rhs;
        }
    }
    return m;
}

std::vector<int> parse_ints(const std::string& text) {
    std::vector<int> out;
    std::istringstream in(text);
    int v;
    while (in >> v) out.push_back(v);
    return out;
}

int64_t storage_bytes(const std::string& storage) {
    if (storage == "bf16") return 2;
    if (storage == "float32" || storage == "int32") return 4;
    if (storage == "uint8") return 1;
    throw std::runtime_error("unknown storage type " + storage);
}

// Reads a .bin whose size must match its manifest entry.
template <typename T>
std::vector<T> read_bin(const fs::path& dir, const Manifest& m, const std::string& name) {
    const FileEntry& entry = m.file(name);
    const int64_t bytes = entry.elements() * storage_bytes(entry.storage());
    std::ifstream in(dir / name, std::ios::binary);
    if (!in) throw std::runtime_error("cannot open " + (dir / name).string());
    in.seekg(0, std::ios::end);
    if (static_cast<int64_t>(in.tellg()) != bytes) {
        throw std::runtime_error((dir / name).string() + ": size differs from its manifest shape");
    }
    in.seekg(0);
    std::vector<T> data(static_cast<size_t>(bytes) / sizeof(T));
    in.read(reinterpret_cast<char*>(data.data()), bytes);
    return data;
}

float read_scalar(const fs::path& dir, const Manifest& m, const std::string& name) {
    std::vector<float> v = read_bin<float>(dir, m, name);
    if (v.size() != 1) throw std::runtime_error(name + " must hold one float");
    return v[0];
}

mla_dtype fp8_dtype_named_in(const FileEntry& entry) {
    if (entry.mentions("fp8_e4m3fnuz")) return MLA_DTYPE_FP8_E4M3FNUZ;
    if (entry.mentions("fp8_e4m3fn")) return MLA_DTYPE_FP8_E4M3FN;
    throw std::runtime_error("no fp8 dtype in: " + entry.description);
}

// MXFP4 rows (slots, 288) and their padded e8m0 scales (rows, stride).
void load_mxfp4(const fs::path& dir, const Manifest& m, const std::string& data,
                const std::string& scales, VectorCase& c) {
    c.kv_dtype = MLA_DTYPE_MXFP4;
    c.kv = read_bin<uint8_t>(dir, m, data);
    c.kv_stride_slot = m.file(data).shape.at(1);
    c.kv_block_scales = read_bin<uint8_t>(dir, m, scales);
    c.kv_block_scale_stride = m.file(scales).shape.at(1);
}

void load_cache(const fs::path& dir, const Manifest& m, VectorCase& c) {
    if (c.kv_format == "bf16") {
        c.kv_dtype = MLA_DTYPE_BF16;
        c.kv = read_bin<uint8_t>(dir, m, "kv.bin");
        c.kv_stride_slot = m.file("kv.bin").shape.at(1);
    } else if (c.kv_format == "fp8_e4m3fn" || c.kv_format == "fp8_e4m3fnuz") {
        c.kv_dtype = c.kv_format == "fp8_e4m3fn" ? MLA_DTYPE_FP8_E4M3FN : MLA_DTYPE_FP8_E4M3FNUZ;
        c.kv = read_bin<uint8_t>(dir, m, "kv.bin");
        c.kv_stride_slot = m.file("kv.bin").shape.at(1);
        c.kv_scale = read_scalar(dir, m, "kv_scale.bin");
    } else if (c.kv_format == "mxfp4") {
        load_mxfp4(dir, m, "kv.bin", "kv_scale.bin", c);
    } else if (c.kv_format == "mxfp4_k_fp8_v") {
        load_mxfp4(dir, m, "k.bin", "k_scale.bin", c);
        c.v = read_bin<uint8_t>(dir, m, "v.bin");
        c.v_stride_slot = m.file("v.bin").shape.at(1);
        c.v_dtype = fp8_dtype_named_in(m.file("v.bin"));
        c.v_scale = read_scalar(dir, m, "v_scale.bin");
    } else {
        throw std::runtime_error("unknown kv_format " + c.kv_format);
    }
}

void read_fields(const Manifest& m, VectorCase& c) {
    c.comment = m.comment;
    c.batch = std::stoi(m.value("batch"));
    c.heads = std::stoi(m.value("heads"));
    c.d_qk = std::stoi(m.value("d_qk"));
    c.d_v = std::stoi(m.value("d_v"));
    c.total_q = std::stoi(m.value("total_q"));
    c.sm_scale = std::stof(m.value("sm_scale"));
    c.kv_format = m.value("kv_format");
    c.page_size = std::stoi(m.value("page_size"));
    c.total_cache_slots = std::stoll(m.value("total_cache_slots"));
    c.q_lens = parse_ints(m.value("q_lens"));
    c.kv_lens = parse_ints(m.value("kv_lens"));
}

}  // namespace

std::string vector_data_dir() { return MLA_TEST_DATA_DIR; }

int VectorCase::max_q_len() const {
    return q_lens.empty() ? 0 : *std::max_element(q_lens.begin(), q_lens.end());
}

int VectorCase::max_kv_len() const {
    return kv_lens.empty() ? 0 : *std::max_element(kv_lens.begin(), kv_lens.end());
}

VectorCase load_vector_case(const std::string& name) {
    const fs::path dir = fs::path(MLA_TEST_DATA_DIR) / name;
    const Manifest m = read_manifest(dir / "manifest.txt");
    VectorCase c;
    c.name = name;
    read_fields(m, c);
    const std::string q_storage = m.file("q.bin").storage();
    if (q_storage != "bf16") throw std::runtime_error("q.bin must be bf16, is " + q_storage);
    c.q = read_bin<uint8_t>(dir, m, "q.bin");
    c.qo_indptr = read_bin<int32_t>(dir, m, "qo_indptr.bin");
    c.kv_indptr = read_bin<int32_t>(dir, m, "kv_indptr.bin");
    if (m.has_file("page_indptr.bin")) {
        c.page_indptr = read_bin<int32_t>(dir, m, "page_indptr.bin");
        c.page_indices = read_bin<int32_t>(dir, m, "page_indices.bin");
    }
    load_cache(dir, m, c);
    c.expected_o = read_bin<float>(dir, m, "expected_o.bin");
    c.expected_lse = read_bin<float>(dir, m, "expected_lse.bin");
    return c;
}

std::vector<std::string> vector_case_names() {
    std::vector<std::string> names;
    for (const fs::directory_entry& entry : fs::directory_iterator(MLA_TEST_DATA_DIR)) {
        if (entry.is_directory() && fs::exists(entry.path() / "manifest.txt")) {
            names.push_back(entry.path().filename().string());
        }
    }
    std::sort(names.begin(), names.end());
    return names;
}

HostProblem VectorCase::to_problem() const {
    HostProblem host;
    host.spec.num_heads = heads;
    host.spec.q_dtype = q_dtype;
    host.spec.kv_dtype = kv_dtype;
    host.spec.v_dtype = v_dtype;
    host.spec.page_size = page_size;
    host.spec.paged = paged();
    host.spec.sm_scale = sm_scale;
    host.spec.q_lens = q_lens;
    host.spec.kv_lens = kv_lens;
    host.batch_size = batch;
    host.total_q = total_q;
    host.max_q_len = max_q_len();
    host.max_kv_len = max_kv_len();
    host.num_slots = total_cache_slots;
    host.q_stride_token = static_cast<int64_t>(heads) * d_qk;
    host.o_stride_token = static_cast<int64_t>(heads) * d_v;
    host.q = q;
    host.kv = kv;
    host.kv_stride_slot = kv_stride_slot;
    host.kv_scale = kv_scale;
    host.kv_block_scales = kv_block_scales;
    host.kv_block_scale_stride = kv_block_scale_stride;
    host.v = v;
    host.v_stride_slot = v_stride_slot;
    host.v_scale = v_scale;
    host.qo_indptr = qo_indptr;
    host.kv_indptr = kv_indptr;
    host.kv_page_indptr = page_indptr;
    host.kv_page_indices = page_indices;
    return host;
}

mla_decode_params VectorCase::host_params(void* o, mla_dtype o_dtype, float* lse) const {
    mla_decode_params p;
    mla_decode_params_init(&p);
    p.batch_size = batch;
    p.total_q = total_q;
    p.max_q_len = max_q_len();
    p.max_kv_len = max_kv_len();
    p.num_heads = heads;
    p.head_dim_qk = d_qk;
    p.head_dim_v = d_v;
    p.sm_scale = sm_scale;
    p.q = q.data();
    p.q_dtype = q_dtype;
    p.q_stride_head = d_qk;
    p.q_stride_token = static_cast<int64_t>(heads) * d_qk;
    p.kv_cache = kv.data();
    p.kv_dtype = kv_dtype;
    p.kv_scale = kv_scale;
    p.kv_stride_slot = kv_stride_slot;
    if (kv_dtype == MLA_DTYPE_MXFP4) {
        p.kv_block_scales = kv_block_scales.data();
        p.kv_block_scale_stride = kv_block_scale_stride;
    }
    if (!v.empty()) {
        p.v_cache = v.data();
        p.v_dtype = v_dtype;
        p.v_scale = v_scale;
        p.v_stride_slot = v_stride_slot;
    }
    p.num_slots = total_cache_slots;
    if (paged()) {
        p.kv_page_indptr = page_indptr.data();
        p.kv_page_indices = page_indices.data();
        p.page_size = page_size;
    }
    p.qo_indptr = qo_indptr.data();
    p.kv_indptr = kv_indptr.data();
    p.o = o;
    p.o_dtype = o_dtype;
    p.o_stride_head = d_v;
    p.o_stride_token = static_cast<int64_t>(heads) * d_v;
    p.lse = lse;
    return p;
}

}  // namespace mla_test
