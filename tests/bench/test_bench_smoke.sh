#!/usr/bin/env bash
# Smoke run of the benchmarks (make test): each runs for about a second and
# must print sane, parseable figures, and report.py must render them. The
# figures are not checked against the targets; `make bench` does that.
set -uo pipefail

out=${OUTPUT:-build}
here=$(dirname "$0")
if [[ $(id -u) -ne 0 ]]; then
	echo "SKIP: needs root (the benchmarks load BPF programs)"
	exit 77
fi
for b in bench_probe bench_attach bench_mem bench_collector bench_writer bench_devtrace; do
	if [[ ! -x $out/bench/$b ]]; then
		echo "FAIL: $out/bench/$b is not built"
		exit 1
	fi
done

work=$(mktemp -d /tmp/acceltrace-bench-smoke.XXXXXX)
trap 'rm -rf "$work"' EXIT
res=$work/results.txt
failed=0

run() {
	local name=$1 rc
	shift
	"$@" >>"$res" 2>"$work/$name.log"
	rc=$?
	if ((rc == 77)); then
		echo "SKIP: $name cannot run here: $(tail -n 1 "$work/$name.log")"
		exit 77
	elif ((rc != 0)); then
		echo "FAIL: $name exited $rc:"
		tail -n 20 "$work/$name.log"
		failed=1
	fi
}

SECONDS=0
run probe env BENCH_REPS=1 BENCH_CALLS=5000 "$out/bench/bench_probe"
run attach env BENCH_REPS=1 "$out/bench/bench_attach"
run mem env BENCH_REPS=1 BENCH_MEM_PAIRS=2000 "$out/bench/bench_mem"
run collector env BENCH_COLLECTOR_REPS=1 BENCH_TRIAL_MS=100 BENCH_HOLD_S=1 \
	"$out/bench/bench_collector"
run writer env BENCH_REPS=1 BENCH_WRITER_SIZES=100000,400000 BENCH_LINE_SPANS=50000 \
	"$out/bench/bench_writer"
run devtrace env BENCH_REPS=1 BENCH_DEVTRACE_RECORDS=200000 "$out/bench/bench_devtrace"
run trainer env BENCH_REPS=1 BENCH_TRAINER_S=1 BENCH_TRAINER_CONFIGS="off acceltrace daemon" \
	"$here/bench_trainer.sh" "$out"
if /usr/bin/python3 -c 'import torch' 2>/dev/null; then
	run torch env BENCH_REPS=1 BENCH_TORCH_STEPS=10 BENCH_TORCH_CONFIGS=off \
		"$here/bench_torch.sh" "$out"
	torch_metrics=torch.off
else
	echo "note: python3-torch missing: the PyTorch benchmark is not smoke-tested"
	torch_metrics=
fi
echo "benchmarks ran in ${SECONDS} s"

# Every metric present, every sample a finite number; costs and rates > 0.
# stats.*: the kernel's run time of the program each probe really runs
# (a detail probe runs rt_entry_detail, not rt_entry).
for m in up.push.none up.push.floor up.push.callback up.push.execute up.push.other_pid \
	slice.attach.perf slice.detach.perf \
	mem.call.none mem.call.plain mem.call.mem \
	up.endbr64.floor up.cet.callback tp.pread64.none tp.pread64.traced \
	tp.pread64.untraced col.collector.max_rate col.collector.hold_rate \
	wr.xspace.100000.rate wr.xspace.400000.writer_peak dt.read.uring dt.read.pread \
	dt.read.lost trainer.off \
	stats.callback.entry stats.onready.entry stats.untraced.entry \
	stats.execute.entry stats.execute.return \
	trainer.acceltrace trainer.daemon $torch_metrics; do
	line=$(grep "^BENCH $m " "$res")
	if [[ -z $line ]]; then
		echo "FAIL: no figure for $m"
		failed=1
		continue
	fi
	if ! awk '{ for (i = 4; i <= NF; i++) if ($i !~ /^-?[0-9]+(\.[0-9]+)?$/) exit 1;
		    exit NF < 4 }' <<<"$line"; then
		echo "FAIL: $m: samples are not numbers: $line"
		failed=1
	fi
	case $m in up.*.none | mem.call.none | wr.*.writer_peak | dt.read.lost) continue ;; esac
	if ! awk '{ for (i = 4; i <= NF; i++) if ($i <= 0) exit 1 }' <<<"$line"; then
		echo "FAIL: $m: a sample is not positive: $line"
		failed=1
	fi
done
# A probed call costs more than an unprobed one, and acceltrace's probe
# records what it saw without loss.
awk '$2 == "up.push.none" { n = $4 } $2 == "up.push.floor" { f = $4 }
     END { exit !(f > n) }' "$res" || { echo "FAIL: a probed call is not slower than a bare one"; failed=1; }
grep -q '^BENCH dt.read.lost records 0.000$' "$res" || { echo "FAIL: devtrace records lost: $(grep dt.read.lost "$res")"; failed=1; }
grep -q '^BENCH up.lost count 0$' "$res" || { echo "FAIL: runtime records lost: $(grep up.lost "$res")"; failed=1; }
grep -q '^BENCH mem.lost count 0$' "$res" || { echo "FAIL: memory records lost: $(grep mem.lost "$res")"; failed=1; }

if ! /usr/bin/python3 "$here/report.py" "$res" >"$work/results.md"; then
	echo "FAIL: report.py failed"
	failed=1
fi
grep -q '^| measure ' "$work/results.md" || { echo "FAIL: no table"; failed=1; }
if ((failed)); then
	cat "$res"
	exit 1
fi
cat "$work/results.md"
exit 0
