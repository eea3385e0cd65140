// Host reference of the whole SPEC operation (double accumulation).
#pragma once

#include "mla_decode.h"

namespace mla {

// Runs the reference on host pointers. Expects `p` to have passed
// validate_params(ValidateFor::kHostReference); checks the index arrays' contents itself
// (before writing anything) and returns INVALID_VALUE when they contradict the sizes.
mla_status reference_decode(const mla_decode_params& p);

}  // namespace mla
