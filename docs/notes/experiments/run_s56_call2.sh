#!/usr/bin/env bash
# Fifty-sixth session, second call (~250 s, no carry): (0) run_s56_cta_timeline.sh (its own
# tgz); (1) the no-reduce probe
# (exp_s56_no_reduce_probe.patch: the bench with the reduce not launched, O unwritten: the most
# a combine inside stage 1 could win) against the same build, on the split shapes; (2) the
# cluster combine's smoke with its solo-epilogue fix (exp_s56_cluster_combine.patch), the
# subset that failed in call 1.
set -u
cd "$(dirname "$0")/../../.." || exit 1
. docs/notes/experiments/start_builds.sh
. docs/notes/experiments/build_bench.sh
bash docs/notes/experiments/run_s56_cta_timeline.sh
device_call s56_call2
mkdir -p "$L/probe" "$L/cluster"
nvcc -arch=sm_90a -o /tmp/cop docs/notes/experiments/cluster_occupancy_probe.cu &&
  /tmp/cop | tee "$L/cluster_occupancy.txt"
# The cluster tree: a copy with the patch, test_gpu_paths only, beside the probe's bench build.
CS=$(mktemp -d /tmp/cl_src.XXXX); CB=$(mktemp -d /tmp/cl_bld.XXXX)
tar --exclude='./build*' --exclude=./.git -cf - . | tar -xf - -C "$CS"
(cd "$CS" && patch -p1 --batch < docs/notes/experiments/exp_s56_cluster_combine.patch \
  > "$L/cluster/patch.log" 2>&1 && cmake -S . -B "$CB" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CUDA_ARCHITECTURES=90a -DMLA_BACKEND=cuda > "$L/cluster/build.log" 2>&1 &&
  timeout 250 cmake --build "$CB" -j8 --target test_gpu_paths >> "$L/cluster/build.log" 2>&1) &
cl_pid=$!
PB=$(build_bench "$L/probe" docs/notes/experiments/exp_s56_no_reduce_probe.patch) || exit 1
echo "probe built $SECONDS s"
SHAPES=bs4/kv1024/h16/q1,bs4/kv8192/h16/q1,bs32/kv1024/h16/q1,bs32/kv8192/h16/q1,bs64/kv1024/h16/q1,bs64/kv8192/h16/q1,bs1/kv65536/h16/q1
for r in 1 2; do
  for side in A B; do
    env $( [ $side = B ] && echo MLA_PROBE_NO_REDUCE=1 ) timeout 100 "$PB/bench/mla_bench" \
      --mla_no_check --mla_iters=30 --mla_formats=fp8_e4m3fn,bf16,mxfp4 "--mla_shapes=$SHAPES" \
      "--mla_csv=$L/probe/$side$r.csv" > "$L/probe/$side$r.log" 2>&1 || echo "$side$r failed"
  done
done
python3 docs/notes/experiments/ab_min.py "$L/probe" --diff
echo "probe done $SECONDS s"
wait $cl_pid || { echo "cluster build failed"; tail -20 "$L/cluster/build.log"; exit 1; }
echo "cluster built $SECONDS s"
timeout 120 env MLA_DECODE_COMBINE=cluster "$CB/tests/test_gpu_paths" \
  --gtest_filter='AllFormats/GpuPathsFormat.*:GpuRows16And32.SettledMaximaMoveLate:GpuPlans.*' \
  > "$L/cluster/smoke.log" 2>&1
echo "cluster smoke rc=$? $SECONDS s"
grep -E "^\[  (PASSED|FAILED) " "$L/cluster/smoke.log" | head -20
