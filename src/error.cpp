#include "error.h"

#include <cstdarg>
#include <cstdio>

namespace mla {
namespace {
thread_local char g_message[512] = "";
}

mla_status fail(mla_status status, const char* format, ...) {
    va_list args;
    va_start(args, format);
    std::vsnprintf(g_message, sizeof(g_message), format, args);
    va_end(args);
    return status;
}

void clear_error() { g_message[0] = '\0'; }

const char* last_error() { return g_message; }

}  // namespace mla
