#!/usr/bin/env bash
# make bench: every benchmark in turn, then the results table.
#
#   tests/bench/run_bench.sh OUTPUT_DIR
#
# Each benchmark's BENCH lines go to OUTPUT_DIR/bench/results.txt, its
# commentary to OUTPUT_DIR/bench/bench.log; the table (markdown, from
# tests/bench/report.py) is printed and kept in OUTPUT_DIR/bench/results.md,
# ready to paste into docs/performance.md. A long run's figures
# (make bench-long, OUTPUT_DIR/bench/long.txt) are included when present.
#
# About 12 minutes on 2 cores. BENCH_REPS (default 5) sets the repetitions;
# BENCH_ONLY="probe collector writer devtrace trainer torch agent" picks benchmarks
# (probe includes attach and the memory probes, bench_mem).
set -uo pipefail

out=${1:-build}
here=$(dirname "$0")
dir=$out/bench
results=$dir/results.txt
log=$dir/bench.log
only=${BENCH_ONLY:-probe collector writer devtrace trainer torch agent}

if [[ $(id -u) -ne 0 ]]; then
	echo "make bench: the benchmarks load BPF programs; run as root" >&2
	exit 1
fi
# BPF programs other processes have on syscall tracepoints and uprobes:
# while any syscall tracepoint is attached, every syscall on the machine
# takes the slow path and runs those programs, baselines included.
other_tracers() {
	bpftool prog show 2>/dev/null | awk '
		/: (tracepoint|raw_tracepoint|tracing|kprobe) / { n[$2]++ }
		END { printf "%d tracepoint, %d raw/BTF tracepoint, %d kprobe/uprobe programs loaded",
		      n["tracepoint"], n["raw_tracepoint"] + n["tracing"], n["kprobe"] }'
}

mkdir -p "$dir"
"$here/deps.sh" || exit 1
: >"$results"
: >"$log"

{
	echo "INFO date $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "INFO commit ${BENCH_COMMIT:-$(git -C "$here" describe --always --dirty 2>/dev/null || echo unknown)}"
	echo "INFO kernel $(uname -r)"
	echo "INFO cpus $(nproc) × $(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo)"
	echo "INFO load-before $(cut -d' ' -f1-3 /proc/loadavg)"
	echo "INFO other-tracers-before $(other_tracers)"
	echo "INFO reps ${BENCH_REPS:-5}"
} >>"$results"

step() {
	local name=$1 start=$SECONDS rc
	shift
	printf '  %-8s %s\n' BENCH "$name" >&2
	echo "== $name" >>"$log"
	"$@" >>"$results" 2>>"$log"
	rc=$?
	if ((rc != 0)); then
		echo "NOTE $name: exited $rc (see $log)" >>"$results"
		echo "  $name exited $rc; its log:" >&2
		tail -n 20 "$log" >&2
	fi
	echo "INFO time-$name $((SECONDS - start)) s" >>"$results"
}

for b in $only; do
	case $b in
	probe) step probe "$out/bench/bench_probe"
		step attach "$out/bench/bench_attach"
		step mem "$out/bench/bench_mem" ;;
	collector) step collector env BENCH_COLLECTOR_REPS="${BENCH_COLLECTOR_REPS:-3}" \
		"$out/bench/bench_collector" ;;
	writer) step writer "$out/bench/bench_writer" ;;
	devtrace) step devtrace "$out/bench/bench_devtrace" ;;
	trainer)
		step trainer "$here/bench_trainer.sh" "$out"
		# The same at 1k steps/s (the daemon's other target rate).
		step trainer1k env BENCH_TRAINER_NAME=trainer1k BENCH_TRAINER_STEP_TIME=1ms \
			BENCH_TRAINER_CONFIGS="off acceltrace daemon daemon_full bpftrace" \
			"$here/bench_trainer.sh" "$out" ;;
	torch) step torch "$here/bench_torch.sh" "$out" ;;
	agent) step agent "$here/bench_agent.sh" "$out" ;;
	esac
done
echo "INFO load-after $(cut -d' ' -f1-3 /proc/loadavg)" >>"$results"
echo "INFO other-tracers-after $(other_tracers)" >>"$results"
[[ -r $dir/long.txt ]] && cat "$dir/long.txt" >>"$results"

/usr/bin/python3 "$here/report.py" "$results" >"$dir/results.md"
cat "$dir/results.md"
echo >&2
echo "make bench: table in $dir/results.md (raw samples in $results)" >&2
