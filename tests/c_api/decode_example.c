/* libmla_decode from C99: one bf16 decode step, batch 2 (kv lengths 5 and 300), 16 heads.
 * Compiled with MLA_BACKEND_CUDA or MLA_BACKEND_HIP (it then calls that runtime itself) and given a
 * GPU, it runs mla_decode_fwd and a plan on device buffers; otherwise (MLA_STATUS_NO_DEVICE, a
 * library built with backend "none", or compiled without a runtime: it needs only libmla_decode)
 * it runs the host reference mla_decode_reference. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "mla_decode.h"
#if defined(MLA_BACKEND_HIP)
#include <hip/hip_runtime_api.h>
#define GPU(name) hip##name
#elif defined(MLA_BACKEND_CUDA)
#include <cuda_runtime_api.h>
#define GPU(name) cuda##name
#endif

#define CHECK(call) do { mla_status s_ = (call); if (s_ != MLA_STATUS_SUCCESS) { \
    fprintf(stderr, "%s: %s (%s)\n", #call, mla_status_string(s_), mla_last_error_message()); \
    return 1; } } while (0)
#define RT(call) do { GPU(Error_t) e_ = (call); if (e_ != GPU(Success)) { \
    fprintf(stderr, "%s: %s\n", #call, GPU(GetErrorString)(e_)); return 1; } } while (0)

enum { B = 2, H = 16, DQK = MLA_HEAD_DIM_QK, DV = MLA_HEAD_DIM_V, KV0 = 5, KV1 = 300 };
static uint16_t q[B * H * DQK], kv[(KV0 + KV1) * DQK], o[B * H * DV];
static float lse[B * H];
static const int32_t qo_indptr[B + 1] = {0, 1, 2}, kv_indptr[B + 1] = {0, KV0, KV0 + KV1};

static uint16_t to_bf16(float f) { uint32_t u; memcpy(&u, &f, 4); return (uint16_t)(u >> 16); }
static float from_bf16(uint16_t h) { uint32_t u = (uint32_t)h << 16; float f; memcpy(&f, &u, 4); return f; }
static void fill(uint16_t* x, size_t n, uint32_t* seed) { /* uniform in [-0.5, 0.5) */
    for (; n > 0; --n, ++x) { *seed = *seed * 1664525u + 1013904223u; *x = to_bf16((float)(*seed >> 8) / 16777216.0f - 0.5f); }
}

#ifdef GPU
static int upload(void** dev, const void* host, size_t bytes) {  /* host NULL: allocate only */
    RT(GPU(Malloc)(dev, bytes));
    if (host) RT(GPU(Memcpy)(*dev, host, bytes, GPU(MemcpyHostToDevice)));
    return 0;
}
/* The same step as an engine runs it: one plan and one prepare per decode step, then one run
 * per layer (here two "layers" over the same inputs); each must equal mla_decode_fwd's O. The
 * plan's workspace is sized by the plan (mla_decode_plan_workspace_size), not by the one-shot
 * mla_decode_workspace_size. */
static int run_plan(mla_decode_params* p, void* d_o) {
    static uint16_t o_plan[B * H * DV];
    mla_decode_plan* plan = NULL;
    char route[320];
    size_t plan_ws = 0;
    void* d_ws = NULL;
    int layer;
    CHECK(mla_decode_plan_create(p, &plan));
    CHECK(mla_decode_plan_describe(plan, route, sizeof route));
    CHECK(mla_decode_plan_workspace_size(plan, &plan_ws));
    printf("plan: %s (workspace %zu bytes)\n", route, plan_ws);
    if (plan_ws > 0 && upload(&d_ws, NULL, plan_ws)) return 1;
    CHECK(mla_decode_plan_prepare(plan, p, d_ws, plan_ws, NULL));
    for (layer = 0; layer < 2; ++layer) {
        RT(GPU(Memset)(d_o, 0xff, sizeof o_plan));
        CHECK(mla_decode_plan_run(plan, p, d_ws, plan_ws, NULL));
        RT(GPU(Memcpy)(o_plan, d_o, sizeof o_plan, GPU(MemcpyDeviceToHost)));
        if (memcmp(o_plan, o, sizeof o) != 0) {
            fprintf(stderr, "plan run %d differs from mla_decode_fwd\n", layer);
            return 1;
        }
    }
    CHECK(mla_decode_plan_destroy(plan));
    RT(GPU(Free)(d_ws));
    return 0;
}

static int run_on_gpu(mla_decode_params* p, size_t ws_bytes) {
    void *d[7] = {0}; /* q, kv, qo_indptr, kv_indptr, o, lse, workspace */
    int i;
    if (upload(&d[0], q, sizeof q) || upload(&d[1], kv, sizeof kv) ||
        upload(&d[2], qo_indptr, sizeof qo_indptr) || upload(&d[3], kv_indptr, sizeof kv_indptr) ||
        upload(&d[4], NULL, sizeof o) || upload(&d[5], NULL, sizeof lse) ||
        (ws_bytes > 0 && upload(&d[6], NULL, ws_bytes))) return 1;
    p->q = d[0]; p->kv_cache = d[1]; p->qo_indptr = d[2]; p->kv_indptr = d[3];
    p->o = d[4]; p->lse = (float*)d[5];
    CHECK(mla_decode_fwd(p, d[6], ws_bytes, NULL)); /* NULL: the default stream */
    RT(GPU(Memcpy)(o, d[4], sizeof o, GPU(MemcpyDeviceToHost)));
    RT(GPU(Memcpy)(lse, d[5], sizeof lse, GPU(MemcpyDeviceToHost)));
    if (run_plan(p, d[4])) return 1;
    for (i = 0; i < 7; ++i) RT(GPU(Free)(d[i]));
    return 0;
}
#endif

int main(void) {
    mla_decode_params p;
    size_t ws_bytes = 0, i;
    double sum_o = 0.0, sum_lse = 0.0;
    uint32_t seed = 12345u;
    mla_status st;
    fill(q, B * H * DQK, &seed);
    fill(kv, (KV0 + KV1) * DQK, &seed);
    printf("libmla_decode %s, backend %s\n", mla_version_string(), mla_backend_name());
    if (mla_decode_params_size() != sizeof p) { /* a header from another version */
        fprintf(stderr, "mla_decode_params is %zu bytes in the library, %zu here\n",
                mla_decode_params_size(), sizeof p);
        return 1;
    }
    CHECK(mla_decode_params_init(&p)); /* defaults: bf16 everywhere, 576/512 head dims */
    p.batch_size = B; p.total_q = B; p.max_q_len = 1; p.max_kv_len = KV1; p.num_heads = H;
    p.sm_scale = 1.0f / 24.0f;                          /* 1 / sqrt(576) */
    p.q_stride_token = H * DQK; p.q_stride_head = DQK;
    p.kv_stride_slot = DQK; p.num_slots = KV0 + KV1;    /* contiguous cache, page_size 1 */
    p.o_stride_token = H * DV; p.o_stride_head = DV;

    st = mla_decode_workspace_size(&p, &ws_bytes);
    if (st != MLA_STATUS_NO_DEVICE) CHECK(st);
    if (st == MLA_STATUS_SUCCESS && strcmp(mla_backend_name(), "none") == 0) {
        fprintf(stderr, "workspace size succeeded in a library built without a GPU backend\n");
        return 1;
    }
#ifdef GPU
    if (st == MLA_STATUS_SUCCESS) {
        printf("GPU run, workspace %zu bytes\n", ws_bytes);
        if (run_on_gpu(&p, ws_bytes)) return 1;
    } else
#endif
    {   /* no GPU, or this program compiled without a GPU runtime to allocate device memory */
        if (st == MLA_STATUS_NO_DEVICE)
            printf("no GPU (%s): running the host reference\n", mla_last_error_message());
        else
            printf("compiled without a GPU runtime: running the host reference\n");
        p.q = q; p.kv_cache = kv; p.qo_indptr = qo_indptr; p.kv_indptr = kv_indptr; p.o = o; p.lse = lse;
        CHECK(mla_decode_reference(&p));
    }
    for (i = 0; i < B * H * DV; ++i) sum_o += fabs(from_bf16(o[i]));
    for (i = 0; i < B * H; ++i) sum_lse += lse[i];
    printf("checksum: sum|O| = %.6f, sum LSE = %.6f\n", sum_o, sum_lse);
    return isfinite(sum_o) && isfinite(sum_lse) && sum_o > 0.0 ? 0 : 1;
}
