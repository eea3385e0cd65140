# generates wg_ops.h (the wgmma wrappers of wgmma_rate_probe.cu): python3 gen_wg_ops.py
Ns = [16, 32, 64, 128, 256]
out = []
def ops(n):
    return ",".join("%%%d" % i for i in range(n // 2))
for N in Ns:
    R = N // 2
    outs = ", ".join('"+f"(d[%d])' % i for i in range(R))
    # RS
    out.append(f'''__device__ __forceinline__ void wg_rs_{N}(float (&d)[{R}], const uint32_t (&a)[4], uint64_t desc) {{
    asm volatile("{{\\n.reg .pred p;\\nsetp.ne.b32 p, 1, 0;\\nwgmma.mma_async.sync.aligned.m64n{N}k16.f32.f16.f16 {{{ops(N)}}}, {{%{R},%{R+1},%{R+2},%{R+3}}}, %{R+4}, p, 1, 1, 0;\\n}}\\n"
                 : {outs} : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc));
}}
__device__ __forceinline__ void wg_ss_{N}(float (&d)[{R}], uint64_t adesc, uint64_t desc) {{
    asm volatile("{{\\n.reg .pred p;\\nsetp.ne.b32 p, 1, 0;\\nwgmma.mma_async.sync.aligned.m64n{N}k16.f32.f16.f16 {{{ops(N)}}}, %{R}, %{R+1}, p, 1, 1, 0, 0;\\n}}\\n"
                 : {outs} : "l"(adesc), "l"(desc));
}}
''')
open(__import__('os').path.join(__import__('os').path.dirname(__file__), 'wg_ops.h'), 'w').write("#pragma once\n#include <cstdint>\n" + "\n".join(out))
