#!/usr/bin/env bash
# Fifty-sixth session: what the reduce kernel costs a small split shape, as an upper bound for a
# combine inside stage 1 (e.g. across a thread-block cluster of an element's splits).
# One build with exp_s56_no_reduce_probe.patch (MLA_PROBE_NO_REDUCE=1: launch_attention returns
# after stage 1, O is not written; --mla_no_check), then A (as built), B (no reduce), C
# (MLA_DECODE_PDL=0: the reduce as a plain launch), twice each, on the split shapes of the
# competition grid and bs1 kv65536, three formats.
#   bash docs/notes/experiments/run_s56_no_reduce_probe.sh      (no carry; ~150 s)
set -u
cd "$(dirname "$0")/../../.." || exit 1
. docs/notes/experiments/start_builds.sh
. docs/notes/experiments/build_bench.sh
open_call s56_no_reduce
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader | tee "$L/gpu.txt"
BLD=$(build_bench "$L" docs/notes/experiments/exp_s56_no_reduce_probe.patch) || exit 1
echo "built $SECONDS s"
SHAPES=bs4/kv1024/h16/q1,bs4/kv8192/h16/q1,bs32/kv1024/h16/q1,bs32/kv8192/h16/q1,bs64/kv1024/h16/q1,bs64/kv8192/h16/q1,bs1/kv65536/h16/q1
FORMATS=${MLA_PROBE_FORMATS:-fp8_e4m3fn,bf16,mxfp4}
run() {  # NAME [ENV=VALUE ...]
  local name=$1; shift
  env "$@" timeout 120 "$BLD/bench/mla_bench" --mla_no_check --mla_iters=30 \
    "--mla_formats=$FORMATS" "--mla_shapes=$SHAPES" "--mla_csv=$L/$name.csv" \
    > "$L/$name.log" 2>&1 || { echo "$name failed"; tail -5 "$L/$name.log"; }
}
for r in 1 2; do
  run A$r; run B$r MLA_PROBE_NO_REDUCE=1; run C$r MLA_DECODE_PDL=0
done
# The shapes whose plans take more than 8 splits, at 8 (a portable cluster's most CTAs) and 4.
SHAPES=bs4/kv8192/h16/q1,bs1/kv65536/h16/q1
for n in 8 4; do
  run S${n}A1 MLA_DECODE_NUM_SPLITS=$n; run S${n}B1 MLA_DECODE_NUM_SPLITS=$n MLA_PROBE_NO_REDUCE=1
done
echo "ran $SECONDS s"
python3 - "$L" <<'PY'
import csv, sys, collections
L = sys.argv[1]
t = collections.defaultdict(dict)
for side in "ABC":
    for r in (1, 2):
        try:
            rows = list(csv.DictReader(open(f"{L}/{side}{r}.csv")))
        except OSError:
            continue
        for x in rows:
            k = (x["kv_format"], int(x["bs"]), int(x["kv_len"]))
            t[k].setdefault(side, []).append(float(x["median_us"]))
            t[k]["splits"] = x["splits"]
            t[k]["floor"] = x.get("floor_read_us", "")
for n in (8, 4):
    for side in "AB":
        try:
            for x in csv.DictReader(open(f"{L}/S{n}{side}1.csv")):
                print(f"splits={n} side {side}: {x['kv_format']} bs{x['bs']} kv{x['kv_len']} "
                      f"{x['median_us']} us (splits {x['splits']})")
        except OSError:
            pass
print(f"{'format':12} {'shape':>14} {'splits':>6} {'floor':>7} {'A':>8} {'B no red':>8} "
      f"{'A-B':>6} {'C no PDL':>8}")
for k in sorted(t):
    v = t[k]
    a, b, c = (min(v.get(s, [float('nan')])) for s in "ABC")
    print(f"{k[0]:12} {'bs%d kv%d' % k[1:]:>14} {v['splits']:>6} {v['floor']:>7} {a:8.2f} "
          f"{b:8.2f} {a - b:6.2f} {c:8.2f}")
PY
