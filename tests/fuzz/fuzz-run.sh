#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# Runs one libFuzzer harness (tests/fuzz/README.md) with acceltrace's limits:
# 2 s and 512 MiB per input (libFuzzer's own are 1200 s and 2 GiB), so an
# input that is merely slow or hungry is a finding too, and a largest input
# suited to its format.
#
#   fuzz-run.sh --smoke NAME        the corpus, then FUZZ_SMOKE_SECONDS (5) of
#                                   fuzzing; exit 0, 1 on a finding (make test)
#   fuzz-run.sh --seconds N NAME    N seconds, past findings (kept in
#                                   $OUTPUT/fuzz/findings/NAME), new inputs in
#                                   $OUTPUT/fuzz/corpus/NAME; ends with the line
#                                   "fuzz NAME executions=E findings=F seconds=S"
set -u
cd "$(dirname "$0")/../.."
out=${OUTPUT:-build}
mode=$1
seconds=${FUZZ_SMOKE_SECONDS:-5}
if [[ $mode == --seconds ]]; then
	seconds=$2
	shift
fi
name=$2
bin=$out/fuzz/fuzz_$name
seeds=tests/fuzz/corpus/$name

# The largest input worth trying, per format.
case $name in
placement) max_len=64 ;;		# a function's first bytes
control) max_len=1100 ;;		# one request line (1024) and some
pjrt) max_len=32808 ;;			# a header and 4096 slots
daemon_config | capture_path) max_len=16384 ;;
proc_maps) max_len=65536 ;;
elf | xspace | agent_xspace) max_len=262144 ;;
mlir | devtrace) max_len=1048576 ;;	# costs that grow with size show here
*) max_len=65536 ;;
esac
limits=(-timeout=2 -rss_limit_mb=512 -malloc_limit_mb=512 -max_len=$max_len)

[[ -x $bin ]] || { echo "fuzz-run: $bin is not built (make fuzz-build)" >&2; exit 1; }
[[ -d $seeds ]] || { echo "fuzz-run: no seed corpus $seeds" >&2; exit 1; }

if [[ $mode == --smoke ]]; then
	work=$(mktemp -d /tmp/fuzz-smoke.XXXXXX)
	trap 'rm -rf "$work"' EXIT
	mkdir -p "$work/corpus"
	"$bin" "${limits[@]}" -max_total_time="$seconds" -print_final_stats=1 \
		-artifact_prefix="$work/" "$work/corpus" "$seeds" >"$work/log" 2>&1
	rc=$?
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log")
	if [[ $rc -ne 0 ]]; then
		tail -n 80 "$work/log"
		for f in "$work"/crash-* "$work"/timeout-* "$work"/oom-* "$work"/leak-*; do
			[[ -e $f ]] || continue
			echo "finding: $(basename "$f"), base64:"
			base64 -w 100 "$f" | head -n 40
		done
		echo "FAIL: fuzz_$name: a finding (exit $rc) after ${runs:-?} executions"
		exit 1
	fi
	echo "fuzz_$name: $(ls "$seeds" | wc -l) seeds and ${runs:-?} executions in ${seconds} s, no finding"
	exit 0
fi

# A campaign: fork mode goes on past a finding, so one known problem does
# not hide the others; each is kept under findings/.
corpus=$out/fuzz/corpus/$name
findings=$out/fuzz/findings/$name
rm -rf "$findings"	# this run's findings only; the corpus grows on
mkdir -p "$corpus" "$findings"
log=$out/fuzz/$name.log
start=$SECONDS
"$bin" "${limits[@]}" -max_total_time="$seconds" -fork=1 -ignore_crashes=1 \
	-ignore_timeouts=1 -ignore_ooms=1 -print_final_stats=1 \
	-artifact_prefix="$findings/" "$corpus" "$seeds" >"$log" 2>&1
# Fork mode's status lines: "#N: cov: C ft: F corp: K exec/s E oom/timeout/crash: O/T/X".
last=$(grep -E '^#[0-9]+:' "$log" | tail -1)
total=$(sed -n 's/^#\([0-9]*\):.*/\1/p' <<<"$last")
cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
kinds=$(sed -n 's|.*oom/timeout/crash: \([0-9/]*\).*|\1|p' <<<"$last")
elapsed=$((SECONDS - start))
nfind=$(find "$findings" -type f | wc -l)
echo "fuzz $name executions=${total:-0} findings=$nfind seconds=$elapsed" \
	"exec_per_s=$(( ${total:-0} / (elapsed > 0 ? elapsed : 1) ))" \
	"cov=${cov:-0} oom_timeout_crash=${kinds:-0/0/0}"
