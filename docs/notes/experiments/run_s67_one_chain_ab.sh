#!/usr/bin/env bash
# Sixty-seventh session: score_products_rope in one S chain (probe_s67_rope_one_chain.patch) against
# the split chain of N <= 32, timed on the rope format at 16 and 32 rows forced (A = tree, B =
# patched, same machine, alternated twice), then the patched build's rope tests at forced rows.
# Logs in $OUT/s67_one_chain_ab.tgz.
set -u
cd "$(dirname "$0")/../../.." || exit 1
. docs/notes/experiments/start_builds.sh
device_call s67_one_chain_ab
build_release "$L" "$B" mla_bench || exit 1
B2=$(mktemp -d /tmp/s67b.XXXXXX)
cp -r . "$B2/src" 2>/dev/null; (cd "$B2/src" && git apply docs/notes/experiments/probe_s67_rope_one_chain.patch) || exit 1
(cd "$B2/src" && cmake -S . -B "$B2/b" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a \
  -DMLA_BACKEND=cuda && timeout 250 cmake --build "$B2/b" -j14 --target mla_bench test_gpu_input_forms) > "$L/build2.log" 2>&1 || { echo BUILD2 FAILED; tail -20 "$L/build2.log"; exit 1; }
echo "built B $SECONDS s"
shapes=bs4/kv8192/h16/q1,bs32/kv8192/h16/q1,bs256/kv8192/h16/q1,bs128/kv4096/h16/q2,bs32/kv8192/h32/q1,bs64/kv1024/h16/q1
mkdir -p "$L/t"
for rnd in 1 2; do for side in A B; do for rows in 16 32; do
  bin=$B/bench/mla_bench; [ $side = B ] && bin=$B2/b/bench/mla_bench
  MLA_DECODE_STAGE1=wgmma MLA_DECODE_ROWS=$rows timeout 60 "$bin" --mla_no_check --mla_iters=20 \
    --mla_formats=fp8_e4m3fn_bf16_rope "--mla_shapes=$shapes" "--mla_csv=$L/t/$side$rows-$rnd.csv" \
    > "$L/t/$side$rows-$rnd.log" 2>&1 || echo "$side $rows rc=$?"
done; done; done
echo "timed $SECONDS s"
python3 - "$L/t" <<'P'
import csv, sys, collections, glob, os, statistics
t = collections.defaultdict(list)
for f in glob.glob(sys.argv[1] + "/*.csv"):
    side, rest = os.path.basename(f)[0], os.path.basename(f)[1:]
    rows = rest.split("-")[0]
    for x in csv.DictReader(open(f)):
        t[(x["bs"], x["kv_len"], x["heads"], x["q_len"], rows, side)].append(float(x["median_us"]))
keys = sorted({k[:5] for k in t}, key=lambda k: (int(k[4]), int(k[0]), int(k[1])))
print("bs kv heads q rows | A split | B one chain | B/A")
for k in keys:
    a = statistics.median(t[k + ("A",)]); b = statistics.median(t[k + ("B",)])
    print(" ".join(k), f"| {a:.1f} | {b:.1f} | {b/a:.3f}")
P
f='GpuBf16Rope*'
for rows in 16 32; do
  (cd "$B2/b/tests" && MLA_DECODE_STAGE1=wgmma MLA_DECODE_ROWS=$rows timeout 90 ./test_gpu_input_forms \
    "--gtest_filter=$f") > "$L/probe_tests_r$rows.log" 2>&1
  echo "one-chain rope tests rows $rows rc=$? $(grep -E '^\[  (PASSED|FAILED) ' "$L/probe_tests_r$rows.log" | tr '\n' ' ')"
done
echo "total $SECONDS s"
