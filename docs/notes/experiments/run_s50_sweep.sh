#!/usr/bin/env bash
# Fiftieth session (~120 s): split sweeps of the bf16 and MXFP4 caches on the competition shapes
# (H16 q1, bs 4 / 32 / 64 / 256 x kv 1024 / 8192), the planner's count ("auto") beside forced
# counts 2-64 (bench/split_sweep.sh, SPEC method, no check). The bf16 geomean was 66.1 us on the
# H200 (s48) against a target of 66; its small shapes (bs4 kv1024 14.5 us over a 6.5 floor) are
# fixed cost; s47's sweep covered the fp8 16-row kernels only (planner within 0.7 %). Question:
# does any forced count beat the plan's by more than noise (>= 2 %)? If so, refit the bf16 /
# MXFP4 16-row fixed cost in src/plan.cpp's table. Then one checked run of both formats.
#   bash docs/notes/experiments/run_s50_sweep.sh [BUILD]   (BUILD: a build folder with
#   bench/mla_bench, e.g. run_patch.sh's side A through MLA_AFTER_AB; else one is built)
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; W=$OUT/sweep; mkdir -p "$W"
. docs/notes/experiments/build_bench.sh
B=${1:-}
[ -n "$B" ] || B=$(build_bench "$W") || exit 1
echo "build $SECONDS s"
nvcc -arch=sm_90a -cubin -o "$W/probe.cubin" docs/notes/experiments/ex2_f16x2_probe.cu &&
  cuobjdump -sass "$W/probe.cubin" > "$W/probe.sass" 2>&1
grep -E "Function|MUFU|HADD2|F2F" "$W/probe.sass"
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
for f in bf16 mxfp4; do
  timeout 90 bash bench/split_sweep.sh "$B/bench/mla_bench" "$W/sweep_$f.csv" \
    "decode/$f/bs(4|32|64|256)/kv(1024|8192)/h16/q1/" ${MLA_SWEEP_COUNTS:-2 4 8 16 32 64} \
    > "$W/sweep_$f.log" 2>&1
  echo "sweep $f rc=$? $SECONDS s"
done
timeout 40 "$B/bench/mla_bench" --mla_formats=bf16,mxfp4 --mla_csv="$W/checked.csv" \
  > "$W/checked.log" 2>&1
echo "checked rc=$? $SECONDS s"; grep -i "geomean" "$W/checked.log" | head
python3 - "$W" <<'PY'
import csv, sys, collections, math
w = sys.argv[1]
for f in ("bf16", "mxfp4"):
    try:
        rows = list(csv.DictReader(open(f"{w}/sweep_{f}.csv")))
    except OSError:
        continue
    t = collections.defaultdict(dict)
    for r in rows:
        key = f"bs{r['bs']} kv{r['kv_len']}"
        t[key][r["forced_splits"]] = (float(r["median_us"]), r["splits"])
    print(f"== {f}: median us per forced split count (auto: the plan's count in brackets)")
    for key, d in t.items():
        a = d.get("auto")
        best = min((v[0], k) for k, v in d.items() if k != "auto")
        print(f"{key:14s} auto {a[0]:8.2f} [{a[1]}]  best {best[0]:8.2f} @ {best[1]:>3s}"
              f"  best/auto {best[0] / a[0]:.3f}  " +
              " ".join(f"{k}:{v[0]:.2f}" for k, v in sorted(d.items()) if k != "auto"))
PY
