#!/usr/bin/env bash
# The plugin's PJRT profiler extension from the trainer, at both minors, with
# the devtrace buffers off (--no-devtrace, as the in-process agent's tests
# run it): tpu-trainer --profile writes the XSpace it collected, which
# protoc --decode and Python's protobuf (simcheck.py profile) read and
# compare with the ground truth, execution by execution and op by op.
. tests/harness/test.sh

trainer=$OUTPUT/sim/tpu-trainer
[[ -x $trainer ]] || test_skip "$trainer is not built"
command -v protoc >/dev/null || test_skip "protoc is not installed"
"$PYTHON" -c 'import google.protobuf' 2>/dev/null || test_skip "$PYTHON has no google.protobuf"

for minor in 94 26; do
	dir=$TEST_TMP/m$minor
	xspace=$dir/profile.xplane.pb
	mkdir -p "$dir"
	expect_exit 0 "trainer at minor $minor" -- "$trainer" \
		--plugin "$OUTPUT/sim/pjrt-0.$minor/libtpu.so" --steps 60 \
		--step-time 300us --cores 4 --init-programs 2 --eval-every 20 \
		--no-devtrace --profile "$dir/profile.%p.xplane.pb" \
		--truth "$dir/truth.jsonl" --device-dir "$dir/dev" --compile-ms 0
	contains "$err" "trace_dir=(none)" "startup line says no devtrace"
	contains "$err" "done steps=60 reason=steps" "exit line"
	pid=$(grep -o 'pid=[0-9]* profile=' <<<"$err" | grep -o '[0-9]*')
	[[ -n $pid ]] || fail "minor $minor: no profile line: ${err:0:300}"
	contains "$err" "profile=$dir/profile.$pid.xplane.pb bytes=" "profile line, %p expanded"
	mv "$dir/profile.$pid.xplane.pb" "$xspace" 2>/dev/null || fail "minor $minor: no profile written"
	[[ ! -e $dir/dev/devtrace ]] || fail "minor $minor: --no-devtrace made $dir/dev/devtrace"
	grep -q '"type":"client_create".*"trace_dir":""' "$dir/truth.jsonl" ||
		fail "minor $minor: client_create does not say trace_dir \"\""

	text=$(protoc --decode=tensorflow.profiler.XSpace -I user/output user/output/xplane.proto \
		<"$xspace" 2>"$TEST_TMP/protoc.err") ||
		fail "minor $minor: protoc --decode failed: $(cat "$TEST_TMP/protoc.err")"
	for want in 'name: "/device:TPU:3"' 'name: "XLA Modules"' 'name: "XLA Ops"' \
		'name: "train_step"' 'name: "eval_step"' 'name: "jit_init_1"' \
		'name: "hlo_category"' 'str_value: "convolution"' 'name: "run_id"'; do
		contains "$text" "$want" "minor $minor: protoc text"
	done
	"$PYTHON" tests/sim/simcheck.py profile truth="$dir/truth.jsonl" xspace="$xspace" \
		cores=4 || fail "minor $minor: the XSpace and the truth disagree"
done

# --profile with --trainers needs %p; a bad path fails the run, said.
expect_exit 2 "--trainers 2 --profile without %p" -- "$trainer" --trainers 2 \
	--device-dir "$TEST_TMP/d%p" --profile "$TEST_TMP/one.pb"
expect_exit 1 "a profile that cannot be written" -- "$trainer" --steps 3 \
	--step-time 200us --cores 1 --no-devtrace --readers 0 --compile-ms 0 \
	--device-dir "$TEST_TMP/bad" --profile "$TEST_TMP/no/such/dir/p.pb"
contains "$err" "writing the profile $TEST_TMP/no/such/dir/p.pb failed" "said why"

test_done
