// The split-metadata kernel, once per stage-1 tile size of this build (launch.h).
#include "splitkv/launch.h"
#include "splitkv/metadata.h"
#include "splitkv/stage1/mma16.h"  // Mma16Shape

namespace mla::splitkv {
namespace {

template <int kTileTokens>
gpu::error_t launch_meta(const Params& params, gpu::stream_t stream) {
    split_meta_kernel<kTileTokens><<<1, kMetaThreads, 0, stream>>>(params);
    return gpu::get_last_error();
}

}  // namespace

gpu::error_t launch_split_metadata(const Params& params, int tile_tokens, gpu::stream_t stream) {
    switch (tile_tokens) {
        case Mma16Shape::kTileTokens: return launch_meta<Mma16Shape::kTileTokens>(params, stream);
        default: break;  // a variant with another tile size adds its case here
    }
    return gpu::kErrorInvalidValue;
}

}  // namespace mla::splitkv
