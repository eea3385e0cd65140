set -u
S='bs4/kv1024/h16/q1,bs4/kv8192/h16/q1,bs32/kv1024/h16/q1,bs64/kv8192/h16/q1,bs256/kv8192/h16/q1,bs128/kv4096/h16/q2,bs64/kv4096/h32/q1,bs32/kv8192/h32/q1,bs8/kv16384/h16/q2,bs256/kv1024/h16/q2,bs64/kv4096/h128/q1'
MLA_NO_SUITE=1 MLA_SMOKE='AllFormats/GpuFormatHeads.*:Fp8Q/GpuFp8Query.*:GpuFp8Mma.*:AllFormats/GpuPathsFormat.*' MLA_SMOKE_TIMEOUT=120 MLA_AB_FORMATS=fp8_e4m3fn,bf16 MLA_AB_FILTER='.' MLA_AB_ARGS="--mla_no_check --mla_shapes=$S" MLA_AB_TIMEOUT=330 timeout 520 bash docs/notes/experiments/run_patch.sh docs/notes/experiments/exp_solo_pass4.patch docs/notes/experiments/exp_solo_pass2.patch
B=$(ls -dt /tmp/run_patch_builds.* | head -1)
for side in 1 2; do
  o=$(find $B/$side -name 'stage1_wgmma_fp8.hip.o' | head -1)
  for fn in $(cuobjdump -elf $o 2>/dev/null | grep -o '_ZN3mla7splitkv19stage1_wgmma_kernelILNS0_8KvFormatE1ELi[0-9]*ELb0EEEvNS0_6ParamsE' | sort -u); do
    cuobjdump -sass -fun $fn $o > $OUT/sass_side${side}_$(echo $fn | grep -o 'ELi[0-9]*').txt 2>&1
  done
done
ls -la $OUT; grep -c "STL\|LDL" $OUT/sass_*.txt
