#!/usr/bin/env bash
# Forty-first session: where an AMD wave waits for mma16's staged tile loads, in assembly as a
# real build has it (host only, ~1 min): every mma16 instantiation compiled for gfx940 and
# linked with Debian's device libraries (the one gfx94x target they cover), then, per kernel,
# the depth-1 loop with the most MFMAs: its barriers, global loads, MFMAs and vmcnt waits in
# order, each wait with the instruction after it. Staged copies are right when the only waits
# in the loop feed the store (ds_write) after the loop's first barrier. (Since the arch layer
# takes the work-item ids and the barrier from the compiler's builtins, the CI check's
# -nogpulib gfx942 / gfx950 assembly, build-hip/src/device_check/*.staged.*.s, has no external
# calls either and shows the same; the same Python reads those files.)
#   bash docs/notes/experiments/amd_staged_loop_check.sh [OUTDIR] [-DMLA_MMA16_COPIES_STAGED=1]
set -u
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
OUT=${1:-/tmp/amd_staged_loop}; shift || true
mkdir -p "$OUT"
for f in bf16 fp8 fp8_e4m3 fp8_bf16_rope mxfp4; do
  clang++-19 -x hip --offload-arch=gfx940 --cuda-device-only -S -std=c++17 -O3 \
    --rocm-path=/usr --rocm-device-lib-path=/usr/lib/x86_64-linux-gnu/amdgcn/bitcode \
    -DMLA_DECODE_BUILDING=1 -DMLA_BACKEND_HIP=1 -D__HIP_PLATFORM_AMD__=1 \
    -DMLA_HAVE_MMA16_E4M3=1 -I"$ROOT/include" -I"$ROOT/src" -I"$ROOT/kernels" \
    "${@:--DMLA_MMA16_COPIES_STAGED=1}" -o "$OUT/$f.s" \
    "$ROOT/kernels/splitkv/instantiations/stage1_mma16_$f.hip" > "$OUT/$f.log" 2>&1 &
done
wait
for f in bf16 fp8 fp8_e4m3 fp8_bf16_rope mxfp4; do
  echo "== $f: VGPRs $(grep -E '^\s+\.vgpr_count:' "$OUT/$f.s" | awk '{print $2}' | paste -sd' ')"
  python3 - "$OUT/$f.s" <<'PY'
import re, sys
src = open(sys.argv[1]).read().split('\n')
starts = [i for i, l in enumerate(src) if re.match(r'^_Z\S+:\s*(;.*)?$', l)]
for s0 in starts:
    end = next(j for j in range(s0, len(src)) if 's_endpgm' in src[j])
    kern = re.search(r'KvFormatE(\d+)ELb(\d)', src[s0])
    blocks, cur = {}, None
    for i in range(s0, end):
        m = re.match(r'^(\.LBB\d+_\d+|; %bb\.\d+):', src[i])
        if m:
            h = re.search(r'Header=(BB\d+_\d+) Depth=1', src[i])
            h2 = re.search(r'Loop Header: Depth=1', src[i])
            cur = h.group(1) if h else (m.group(1).lstrip('.L') if h2 else None)
            if cur: blocks.setdefault(cur, []).append(i)
        elif cur:
            blocks[cur].append(i)
    mfma = lambda ls: sum(1 for j in ls if src[j].strip().startswith('v_mfma'))
    head, lines = max(blocks.items(), key=lambda kv: mfma(kv[1]))
    print(f"  format {kern.group(1)} e4m3 {kern.group(2)}: loop {head}, {mfma(lines)} MFMAs")
    last = None
    for j in lines:
        t = src[j].strip()
        wait = t.startswith('s_waitcnt') and 'vmcnt' in t
        if not (wait or t.startswith(('global_load', 's_barrier', 'v_mfma'))):
            continue
        nxt = next((src[k].strip() for k in range(j + 1, end)
                    if src[k].strip() and not src[k].strip().startswith(';')), '')
        what = t.split(',')[0] + ('  -> ' + nxt.split(',')[0] if wait else '')
        key = what if wait else t.split()[0]
        if last and last[0] == key and not wait:
            last[1] += 1
            continue
        if last: print(f"    {last[2]}" + (f" x{last[1]}" if last[1] > 1 else ""))
        last = [key, 1, what]
    if last: print(f"    {last[2]}" + (f" x{last[1]}" if last[1] > 1 else ""))
PY
done
