#!/usr/bin/env bash
# End-to-end checks of `mace run` and `mace info` on the example model
# (mobilenet_mini, written by mace_make_example_model, which is built next
# to the mace binary).
# Usage: bash tests/tools/run_test.sh <path-to-mace>
set -euo pipefail

source "$(dirname "$0")/test_lib.sh" "$@"
MAKE_MODEL="$(dirname "$MACE")/mace_make_example_model"

# npy_data_offset PATH: where the data of a version 1.0 .npy file starts.
npy_data_offset() {
  echo $((10 + $(od -An -tu2 -j8 -N2 "$1" | tr -d ' ')))
}

"$MAKE_MODEL" "$TMP" >/dev/null
PB="$TMP/mobilenet_mini.pb"
DATA="$TMP/mobilenet_mini.data"
[[ -s "$PB" && -s "$DATA" ]] || fail "the example model was not written"

# ---- runs ------------------------------------------------------------------
LATENCY='^latency_ms init=[0-9.]+ first=[0-9.]+ min=[0-9.]+ median=[0-9.]+ avg=[0-9.]+ max=[0-9.]+ rounds=3 threads=[0-9]+$'
expect 0 "$LATENCY" "$MACE" run --model "$PB" --data "$DATA" --round 3 \
  --output-dir "$TMP/out1"
[[ -f "$TMP/out1/prob.npy" ]] || fail "prob.npy was not written"
[[ "$(head -c 6 "$TMP/out1/prob.npy" | tail -c 5)" == "NUMPY" ]] ||
  fail "prob.npy is not a .npy file"
# 10 float32 values after the header.
size=$(wc -c <"$TMP/out1/prob.npy")
[[ $size -eq $(( $(npy_data_offset "$TMP/out1/prob.npy") + 40 )) ]] ||
  fail "prob.npy has $size bytes"

# The same seed gives the same outputs.
expect 0 'prob \[1,10\]' "$MACE" run --model "$PB" --data "$DATA" \
  --output-dir "$TMP/out_again"
cmp -s "$TMP/out1/prob.npy" "$TMP/out_again/prob.npy" ||
  fail "two runs with the same seed differ"

# --weight-cache-dir: the first run writes the packed weights, the next
# maps them; outputs stay the same. A directory that does not exist is a
# usage error.
mkdir -p "$TMP/packed"
expect 0 'prob \[1,10\]' "$MACE" run --model "$PB" --data "$DATA" \
  --weight-cache-dir "$TMP/packed" --output-dir "$TMP/out_cold"
[[ -s "$TMP/packed/mobilenet_mini.data.packed" ]] ||
  fail "--weight-cache-dir wrote no mobilenet_mini.data.packed"
expect 0 'prob \[1,10\]' "$MACE" run --model "$PB" --data "$DATA" \
  --weight-cache-dir "$TMP/packed" --output-dir "$TMP/out_warm"
cmp -s "$TMP/out1/prob.npy" "$TMP/out_cold/prob.npy" &&
  cmp -s "$TMP/out1/prob.npy" "$TMP/out_warm/prob.npy" ||
  fail "outputs with the packed weight cache differ"
expect 2 "--weight-cache-dir: '$TMP/none' is not an existing directory" \
  "$MACE" run --model "$PB" --data "$DATA" --weight-cache-dir "$TMP/none"

# Validation against its own output passes.
expect 0 'prob +\[1,10\] +1\.000000 +inf +inf +1\.0000 +PASS' \
  "$MACE" run --model "$PB" --data "$DATA" \
  --validate-outputs "prob=$TMP/out1/prob.npy"

# --benchmark prints MACE's eight sections, with non-zero GMACPS for the
# convolutions in the per-op table (after Start, First, Avg, Min, % and
# cdf%), and each op's Min no larger than its Avg.
out="$("$MACE" run --model "$PB" --data "$DATA" --round 3 --benchmark 2>&1)" ||
  fail "--benchmark failed:\n$out"
for section in "Warm Up" "Run without statistics" "Run with statistics" \
    "Sort by Run Order" "Sort by Computation Time" "Stat by Op Type" \
    "Stat by MACs" "Summary of Ops' Stat"; do
  grep -q "$section" <<<"$out" || fail "--benchmark lacks '$section':\n$out"
done
grep -Eq '^\| +Conv2D \|([^|]*\|){6} +[0-9]*[1-9][0-9]*\.[0-9]+ \|' <<<"$out" ||
  grep -Eq '^\| +Conv2D \|([^|]*\|){6} +0\.[0-9]*[1-9][0-9]* \|' <<<"$out" ||
  fail "--benchmark shows no non-zero GMACPS for Conv2D:\n$out"
awk -F'|' '/Sort by Run Order/ { on = 1 } /Sort by Computation/ { on = 0 }
    on && $2 ~ /Conv2D/ { rows++; if ($6 + 0 > $5 + 0) bad = 1 }
    END { exit !(rows > 0 && !bad) }' <<<"$out" ||
  fail "--benchmark per-op Min(ms) missing or above Avg(ms):\n$out"
CHECKS=$((CHECKS + 1))

# MACE's underscore spellings.
expect 0 'rounds=2 threads=1$' "$MACE" run --model_file "$PB" \
  --model_data_file "$DATA" --num_threads 1 --round 2 \
  --cpu_affinity_policy 0 --input_range -1,1 --output_dir "$TMP/out1t" \
  --validate_outputs "prob=$TMP/out1/prob.npy" --validate_threshold 0.999
[[ -f "$TMP/out1t/prob.npy" ]] || fail "--output_dir was not honoured"

# Inputs from a .npy file.
write_zeros_npy "$TMP/zeros.npy" "(1, 32, 32, 3)" 3072
expect 0 'prob \[1,10\]' "$MACE" run --model "$PB" --data "$DATA" \
  --input "input=$TMP/zeros.npy" --output-dir "$TMP/out2"

# Other inputs (all zeros) give other outputs: validation fails with 1.
expect 1 'FAIL' "$MACE" run --model "$PB" --data "$DATA" \
  --validate-outputs "prob=$TMP/out2/prob.npy"
# So does a run on other random inputs (another seed and range).
expect 1 'validation failed' "$MACE" run --model "$PB" --data "$DATA" \
  --seed 7 --input-range 0,0.5 --validate-outputs "prob=$TMP/out1/prob.npy"
# And a perturbed reference: half of the probabilities zeroed.
cp "$TMP/out1/prob.npy" "$TMP/perturbed.npy"
dd if=/dev/zero of="$TMP/perturbed.npy" bs=1 count=20 conv=notrunc \
  seek="$(npy_data_offset "$TMP/perturbed.npy")" status=none
expect 1 'prob +\[1,10\] +0\.[0-9]+ .*FAIL' "$MACE" run --model "$PB" \
  --data "$DATA" --validate-outputs "prob=$TMP/perturbed.npy"
# A threshold of -1 lets everything but exact opposites pass.
expect 0 'PASS' "$MACE" run --model "$PB" --data "$DATA" \
  --validate-outputs "prob=$TMP/perturbed.npy" --validate-threshold -1

# ---- bad input: exit 2 and a message ---------------------------------------
ERR='^mace run: error: '
expect 2 "${ERR}.*cannot open '$TMP/missing.pb'" \
  "$MACE" run --model "$TMP/missing.pb" --data "$DATA"
head -c 200 "$PB" >"$TMP/truncated.pb"
expect 2 "${ERR}" "$MACE" run --model "$TMP/truncated.pb" --data "$DATA"
head -c 1000 "$DATA" >"$TMP/truncated.data"
expect 2 "${ERR}" "$MACE" run --model "$PB" --data "$TMP/truncated.data"
expect 2 "${ERR}.*cannot open weights file" \
  "$MACE" run --model "$PB" --data "$TMP/missing.data"
write_zeros_npy "$TMP/wrong_shape.npy" "(1, 32, 32, 4)" 4096
expect 2 "${ERR}input 'input': .*has shape \(1, 32, 32, 4\), the model expects \(1, 32, 32, 3\)" \
  "$MACE" run --model "$PB" --data "$DATA" --input "input=$TMP/wrong_shape.npy"
printf 'not an npy file' >"$TMP/garbage.npy"
expect 2 "${ERR}npy file '.*garbage.npy': bad magic" \
  "$MACE" run --model "$PB" --data "$DATA" --input "input=$TMP/garbage.npy"
expect 2 "${ERR}unknown flag '--modle'; did you mean '--model'\?" \
  "$MACE" run --modle "$PB" --data "$DATA"
expect 2 "${ERR}--input: 'inptu' is not an input of the model; did you mean 'input'\?" \
  "$MACE" run --model "$PB" --data "$DATA" --input "inptu=$TMP/zeros.npy"
expect 2 "${ERR}--validate-outputs: 'porb' is not an output" \
  "$MACE" run --model "$PB" --data "$DATA" \
  --validate-outputs "porb=$TMP/out1/prob.npy"
expect 2 "${ERR}--validate-outputs: reference for 'prob' has shape" \
  "$MACE" run --model "$PB" --data "$DATA" \
  --validate-outputs "prob=$TMP/zeros.npy"
expect 2 "${ERR}--model is required" "$MACE" run --data "$DATA"
expect 2 "${ERR}--round must be at least 1" \
  "$MACE" run --model "$PB" --data "$DATA" --round 0
expect 2 "${ERR}unknown CPU affinity policy 'fastest'" \
  "$MACE" run --model "$PB" --data "$DATA" --cpu-affinity-policy fastest
expect 2 "${ERR}--input-range expects LO,HI" \
  "$MACE" run --model "$PB" --data "$DATA" --input-range 1
expect 2 "${ERR}flag --round expects an integer" \
  "$MACE" run --model "$PB" --data "$DATA" --round many

# ---- info ------------------------------------------------------------------
expect 0 'ops \(7\)' "$MACE" info "$PB"
expect 0 'conv1 +Conv2D +input, conv1/filter, conv1/bias -> conv1' \
  "$MACE" info "$PB"
for type in DepthwiseConv2d Pooling Reshape FullyConnected Softmax; do
  expect 0 " $type " "$MACE" info "$PB"
done
expect 0 'input +float32 +\[1,32,32,3\] +NHWC' "$MACE" info "$PB"
expect 0 'peak memory [0-9,]+ bytes' "$MACE" info "$PB" --data "$DATA"
expect 0 'total MACs +106,656' "$MACE" info "$PB" --data "$DATA"
expect 2 '^mace info: error: .*cannot open' "$MACE" info "$TMP/missing.pb"
expect 2 '^mace info: error: no model file given' "$MACE" info

# ---- help, version, dispatch -----------------------------------------------
expect 0 '^usage: mace run' "$MACE" run --help
expect 0 '^usage: mace info' "$MACE" info --help
expect 0 '^usage: mace <command>' "$MACE" --help
expect 0 '^usage: mace run' "$MACE" help run
expect 0 '[0-9]+\.[0-9]+' "$MACE" --version
expect 2 "^mace: error: unknown command 'rnu'; did you mean 'run'\?" \
  "$MACE" rnu

echo "run_test: $CHECKS checks passed"
