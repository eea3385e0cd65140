#!/usr/bin/env bash
# Fifty-sixth session, one device call: the combine in a thread-block cluster
# (MLA_DECODE_COMBINE=cluster; stage1/wgmma/cluster_combine.h). Builds the tree, runs a smoke
# subset of the path suites with the switch, then a checked mla_bench (every element of O and
# LSE against the host reference) of the split shapes, A (the reduce) and B (clusters), twice,
# four formats. MLA_S56_SUITE=1: the whole GPU suite afterwards (ctest_grouped, the .cluster
# registrations included).
#   bash docs/notes/experiments/run_s56_cluster.sh      (no carry; ~300 s)
set -u
cd "$(dirname "$0")/../../.." || exit 1
. docs/notes/experiments/start_builds.sh
device_call s56_cluster
build_release "$L" "$B" || exit 1
timeout 120 env MLA_DECODE_COMBINE=cluster MLA_DECODE_DEBUG=1 "$B/tests/test_gpu_paths" \
  --gtest_filter='AllFormats/GpuPathsFormat.*:GpuLong.*:GpuRows16And32.*:GpuPlans.*:GpuGraph.*' \
  > "$L/smoke.log" 2>&1
echo "smoke rc=$? $SECONDS s"; grep -E "^\[  (PASSED|FAILED) |tests? ran" "$L/smoke.log" | head -20
grep -c "combined in clusters" "$L/smoke.log" | sed 's/^/smoke plans combined in clusters: /'
SHAPES=bs4/kv1024/h16/q1,bs4/kv8192/h16/q1,bs32/kv1024/h16/q1,bs32/kv8192/h16/q1,bs64/kv1024/h16/q1,bs64/kv8192/h16/q1,bs1/kv65536/h16/q1,bs32/kv2048/h16/q2,bs8/kv8192/h64/q2
FORMATS=fp8_e4m3fn,fp8_e4m3fn_qfp8_mma,bf16,mxfp4
run() {  # NAME [ENV=VALUE ...]
  local name=$1; shift
  env "$@" timeout 150 "$B/bench/mla_bench" --mla_extra --mla_iters=30 \
    "--mla_formats=$FORMATS" "--mla_shapes=$SHAPES" "--mla_csv=$L/$name.csv" \
    > "$L/$name.log" 2>&1 || { echo "$name rc=$?"; tail -5 "$L/$name.log"; }
}
for r in 1 2; do run A$r; run B$r MLA_DECODE_COMBINE=cluster; done
echo "bench $SECONDS s"
python3 - "$L" <<'PY'
import collections, math, sys
sys.path.insert(0, "docs/notes/experiments")
from ab_min import load


def extra(v, side, x):  # its checks and its route, per side
    v[side + "ok"] = v.get(side + "ok", "") + x["ok"][:1]
    v[side + "plan"] = ("cluster" if "clusters" in x["plan"] else "reduce"
                        if "reduce" in x["plan"] else "single")
    v["floor"] = x.get("floor_read_us", "")


t = load(sys.argv[1], extra)
print(f"{'format':20} {'shape':>22} {'spl':>4} {'floor':>7} {'A reduce':>9} {'B':>9} {'B/A':>6}"
      f" plans ok")
lg = collections.defaultdict(list)
for k in sorted(t):
    v = t[k]
    a = min(v.get("A", [math.nan])); b = min(v.get("B", [math.nan]))
    print(f"{k[0]:20} {'bs%d kv%d h%d q%d' % k[1:]:>22} {v['splits']:>4} {v['floor']:>7} "
          f"{a:9.2f} {b:9.2f} {b / a:6.3f} {v.get('Aplan')}/{v.get('Bplan')} "
          f"{v.get('Aok')}/{v.get('Bok')}")
    if k[3] == 16 and k[4] == 1 and k[1:3] != (1, 65536):
        lg[k[0]].append((a, b))
for f, ab in lg.items():
    ga = math.exp(sum(math.log(a) for a, _ in ab) / len(ab))
    gb = math.exp(sum(math.log(b) for _, b in ab) / len(ab))
    print(f"{f}: geomean of its {len(ab)} competition split shapes A {ga:.2f} B {gb:.2f}")
PY
if [ "${MLA_S56_SUITE:-0}" = 1 ]; then
  timeout 240 python3 tests/ctest_grouped.py --build "$B" -j 12 -E install_ --log-dir "$L/suite" \
    > "$L/suite.log" 2>&1
  echo "suite rc=$? $SECONDS s"; grep -v "^to ctest" "$L/suite.log" | tail -12
fi
