// Internal error reporting: a status plus a thread-local message, set at the point of failure.
#pragma once

#include "mla_decode.h"

namespace mla {

// Record `status` with a printf-style message as this thread's last error and return `status`.
// Usage: `return fail(MLA_STATUS_INVALID_SIZE, "batch_size must be >= 1, got %d", b);`
mla_status fail(mla_status status, const char* format, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

// Clear this thread's last error message (every ABI entry point does this first).
void clear_error();

// This thread's last error message; "" if none.
const char* last_error();

}  // namespace mla

// Propagate a non-success status from an internal call.
#define MLA_TRY(expr)                                                                              \
    do {                                                                                           \
        mla_status mla_try_status_ = (expr);                                                       \
        if (mla_try_status_ != MLA_STATUS_SUCCESS) return mla_try_status_;                         \
    } while (0)
