# Sourced by the device-call scripts of this folder (ncu_patch.sh, run_split_costs.sh,
# run_cost_refit_s24_check.sh, run_s3*_call*.sh). build_tree below; build_bench: a copy of the
# checkout (build folders and .git left out) with a
# patch applied, or reversed, built for sm_90a up to the benchmark.
#   build_bench LOGDIR [PATCH [-R]]
# Prints the build folder (mla_bench in its bench/); on failure prints the log's tail to stderr
# and returns 1. Run from the repository root. Logs: LOGDIR/patch.log, LOGDIR/build.log.
# patched_copy LOGDIR [PATCH [-R]]: a copy of the checkout (build folders and .git left out) in
# a new folder under /tmp, with PATCH applied (or reversed); prints the folder. On failure
# prints LOGDIR/patch.log to stderr and returns 1. Run from the repository root.
patched_copy() {
  local logs=$1 patch=${2:-} reverse=${3:-} src
  src=$(mktemp -d /tmp/patched_src.XXXX) || return 1
  tar --exclude='./build*' --exclude=./.git -cf - . | tar -xf - -C "$src"
  if [ -n "$patch" ]; then
    patch=$(realpath -e "$patch") || return 1
    (cd "$src" && patch -p1 $reverse --batch < "$patch") > "$logs/patch.log" 2>&1 \
      || { echo "PATCH FAILED" >&2; cat "$logs/patch.log" >&2; return 1; }
  fi
  echo "$src"
}

build_bench() {
  local logs=$1 patch=${2:-} reverse=${3:-} src bld
  src=$(patched_copy "$logs" "$patch" $reverse) && bld=$(mktemp -d /tmp/bench_build.XXXX) ||
    return 1
  (cmake -S "$src" -B "$bld" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a \
     -DMLA_BACKEND=cuda && timeout 250 cmake --build "$bld" -j16 --target mla_bench) \
    > "$logs/build.log" 2>&1 || { echo "BUILD FAILED" >&2; tail -30 "$logs/build.log" >&2; return 1; }
  echo "$bld"
}

# The checkout as it is (no copy), one target, in a fresh build folder:
#   B=$(build_tree TARGET SECONDS) || exit 1
# Prints the build folder; the log goes to $OUT/build.log, its tail to stderr on failure.
build_tree() {
  local target=$1 seconds=$2 bld
  bld=$(mktemp -d /tmp/tree_build.XXXXXX) || return 1
  (cmake -S . -B "$bld" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a \
     -DMLA_BACKEND=cuda && timeout "$seconds" cmake --build "$bld" -j16 --target "$target") \
    > "$OUT/build.log" 2>&1 || { echo "BUILD FAILED" >&2; tail -20 "$OUT/build.log" >&2; return 1; }
  echo "$bld"
}

# ab_bench DIR A_BENCH B_BENCH SHAPES FORMATS: two rounds of A then B (mla_bench --mla_no_check,
# 30 timed calls) on SHAPES x FORMATS, CSVs DIR/A1.csv, DIR/B1.csv, DIR/A2.csv, DIR/B2.csv (for
# ab_min.py).
ab_bench() {
  local dir=$1 a=$2 b=$3 shapes=$4 formats=$5 r side bin
  for r in 1 2; do
    for side in A B; do
      bin=$b; [ $side = A ] && bin=$a
      timeout 100 "$bin" --mla_no_check --mla_iters=30 "--mla_formats=$formats" \
        "--mla_shapes=$shapes" "--mla_csv=$dir/$side$r.csv" > "$dir/$side$r.log" 2>&1 ||
        echo "$side$r rc=$?"
    done
  done
}

# abb_bench DIR A_BENCH B1_BENCH B2_BENCH: two rounds of A, B1, B2 in turn (as ab_bench) on
# FORMATS x SHAPES (set here from MLA_FORMATS / MLA_SHAPES, default four 64-row shapes x bf16 Q /
# e4m3 scores), CSVs DIR/{A,B1,B2}{1,2}.csv, and each B against A in DIR/ab1 and DIR/ab2 (for
# ab_min.py; the fifty-eighth session's run_s58_q_first.sh, run_s58_tile0.sh).
abb_bench() {
  local dir=$1 a=$2 b1=$3 b2=$4 r side bin
  SHAPES=bs64/kv4096/h128/q1,bs40/kv3000/h128/q1,bs16/kv12000/h128/q1,bs128/kv4096/h16/q4
  SHAPES=${MLA_SHAPES:-$SHAPES}
  FORMATS=${MLA_FORMATS:-fp8_e4m3fn,fp8_e4m3fn_qfp8_mma}
  local shapes=$SHAPES formats=$FORMATS
  mkdir -p "$dir/ab1" "$dir/ab2"
  for r in 1 2; do
    for side in A B1 B2; do
      case $side in A) bin=$a;; B1) bin=$b1;; B2) bin=$b2;; esac
      timeout 100 "$bin" --mla_no_check --mla_iters=30 "--mla_formats=$formats" \
        "--mla_shapes=$shapes" "--mla_csv=$dir/$side$r.csv" > "$dir/$side$r.log" 2>&1 ||
        echo "$side$r rc=$?"
    done
    cp "$dir/A$r.csv" "$dir/ab1/A$r.csv"; cp "$dir/A$r.csv" "$dir/ab2/A$r.csv"
    cp "$dir/B1$r.csv" "$dir/ab1/B$r.csv"; cp "$dir/B2$r.csv" "$dir/ab2/B$r.csv"
  done
}

# side_envs SIDE: the environment of one side of a plan sweep, in the array `envs`: auto (the
# planner's plan), <splits> (MLA_DECODE_NUM_SPLITS), r<rows> (MLA_DECODE_ROWS, the planner's
# splits for those rows), r<rows>s<splits> (both). run_s52_offgrid_sweep.sh, run_s59_call3.sh.
side_envs() {
  local r
  envs=()
  case $1 in
    auto) ;;
    r*s*) r=${1#r}; envs=(MLA_DECODE_ROWS=${r%s*} MLA_DECODE_NUM_SPLITS=${1#*s}) ;;
    r*) envs=(MLA_DECODE_ROWS=${1#r}) ;;
    *) envs=(MLA_DECODE_NUM_SPLITS=$1) ;;
  esac
}

# v020_build: 0.2.0's static library from out/v020/src.tar.gz (`git archive --format=tar.gz
# 72fa160`, carried) into /tmp/v020b, in the background; its pid in `vpid`, its log in
# $L/v020_build.log.
v020_build() {
  mkdir -p /tmp/v020src && tar -xzf out/v020/src.tar.gz -C /tmp/v020src || return 1
  (cmake -S /tmp/v020src -B /tmp/v020b -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CUDA_ARCHITECTURES=90a -DMLA_BACKEND=cuda -DMLA_BUILD_TESTS=OFF -DMLA_BUILD_BENCH=OFF \
    && timeout 200 cmake --build /tmp/v020b -j4 --target mla_decode_static) > "$L/v020_build.log" 2>&1 &
  vpid=$!
}

# v020_offgrid B ROUNDS [ROUND2_BEFORE]: the tree's mla_bench in build B relinked against
# v020_build's library (bench/mla_bench_v020; the C ABI's functions the bench calls are unchanged
# since 0.2.0, fields added since come from the reserved block, zero in the default forms), then
# both (A = 0.2.0, B = the tree) on the 20 off-grid shapes, fp8 e4m3fn, bf16 Q, ROUNDS rounds
# (the second only if $SECONDS < ROUND2_BEFORE), and ab_min.py's table. Logs in $L/v020/.
v020_offgrid() {
  local b=$1 rounds=$2 before=${3:-400} r side bin off
  (cd "$b" && ninja -t commands bench/mla_bench | tail -1 > "$L/link_cmd.txt" &&
   sed 's# src/libmla_decode.a # /tmp/v020b/src/libmla_decode.a #; s#-o bench/mla_bench #-o bench/mla_bench_v020 #' \
     "$L/link_cmd.txt" > "$L/link_v020.sh" && bash "$L/link_v020.sh") > "$L/link.log" 2>&1 \
    || { echo "LINK FAILED"; tail -20 "$L/link.log"; return 1; }
  off=$(tr '\n' ';' < docs/notes/experiments/offgrid_shapes.txt | tr ';' '\n' |
        awk -F, 'NF==4 {printf "%sbs%s/kv%s/h%s/q%s", (n++ ? "," : ""), $1, $3, $4, $2}')
  mkdir -p "$L/v020"
  for r in $(seq 1 "$rounds"); do
    [ "$r" = 1 ] || [ $SECONDS -lt "$before" ] || { echo "round $r skipped ($SECONDS s)"; break; }
    for side in A B; do
      bin=$b/bench/mla_bench; [ $side = A ] && bin=$b/bench/mla_bench_v020
      timeout 150 "$bin" --mla_no_check --mla_iters=30 --mla_formats=fp8_e4m3fn "--mla_shapes=$off" \
        "--mla_csv=$L/v020/$side$r.csv" > "$L/v020/$side$r.log" 2>&1 || echo "$side$r rc=$?"
      echo "$side$r done $SECONDS s"
    done
  done
  grep -m1 'libmla_decode 0' "$L/v020/A1.log"; grep -m1 'libmla_decode 0' "$L/v020/B1.log"
  python3 docs/notes/experiments/ab_min.py "$L/v020"
}
