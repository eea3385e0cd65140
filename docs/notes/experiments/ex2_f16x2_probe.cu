// Fiftieth session: what ptxas makes of ex2.approx.f16x2 on sm_90a (one MUFU for both halves, or
// two?), beside ex2.approx.ftz.f32 and the f16 -> f32 conversion. Compiled and disassembled on the
// GPU machine (cuobjdump is not installed here): run_s50_call.sh.
#include <cstdint>
__global__ void probe_f16x2(const uint32_t* x, uint32_t* y) {
    uint32_t d;
    asm("ex2.approx.f16x2 %0, %1;" : "=r"(d) : "r"(x[threadIdx.x]));
    y[threadIdx.x] = d;
}
__global__ void probe_f32(const float* x, float* y) {
    float d;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(d) : "f"(x[threadIdx.x]));
    y[threadIdx.x] = d;
}
__global__ void probe_cvt(const uint32_t* x, float* y) {
    float a, b;
    const uint32_t w = x[threadIdx.x];
    asm("cvt.f32.f16 %0, %1;" : "=f"(a) : "h"(static_cast<uint16_t>(w)));
    asm("cvt.f32.f16 %0, %1;" : "=f"(b) : "h"(static_cast<uint16_t>(w >> 16)));
    y[threadIdx.x] = a + b;
}
