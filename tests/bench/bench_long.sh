#!/usr/bin/env bash
# The long run: one capture of the simulated trainer lasting 30 minutes
# (`acceltrace record --pid PID --duration 30m`), with acceltrace's RSS and
# CPU sampled every 10 s. Both should stay flat.
#
#   tests/bench/bench_long.sh OUTPUT_DIR      (make bench-long)
#
# Writes the samples to OUTPUT_DIR/bench/long.csv and prints BENCH lines for
# report.py (also kept in OUTPUT_DIR/bench/long.txt). Environment:
#   BENCH_LONG_S          capture length in seconds (default 1800)
#   BENCH_LONG_STEP_TIME  the trainer's --step-time (default 100us: 10,000
#                         steps/s, the trainer-slowdown load, about 250,000
#                         records/s; the capture holds --max-events spans,
#                         so its memory is bounded by the budget, not the
#                         window's length)
#   BENCH_LONG_MAX_RSS_MB stop the capture early (SIGINT: it is still written)
#                         when acceltrace's RSS passes this (default 8192)
#   BENCH_LONG_TOOL       record (default), or daemon: `acceltrace daemon`
#                         (default settings, 60 s flight recorder) for the
#                         same time, triggered every 5 minutes, then SIGTERM
set -euo pipefail

out=${1:-build}
secs=${BENCH_LONG_S:-1800}
step_time=${BENCH_LONG_STEP_TIME:-100us}
max_rss_mb=${BENCH_LONG_MAX_RSS_MB:-8192}
tool=${BENCH_LONG_TOOL:-record}
every=${BENCH_LONG_EVERY_S:-10}
trainer=$(realpath "$out/sim/tpu-trainer")
acceltrace=$(realpath "$out/acceltrace")
mkdir -p "$out/bench"
csv=$out/bench/long.csv
txt=$out/bench/long.txt
work=$(mktemp -d /tmp/acceltrace-bench-long.XXXXXX)
trainer_pid= at_pid=

cleanup() {
	[[ -n $at_pid ]] && kill "$at_pid" 2>/dev/null && wait "$at_pid" 2>/dev/null
	[[ -n $trainer_pid ]] && kill "$trainer_pid" 2>/dev/null && wait "$trainer_pid" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT

if [[ $(id -u) -ne 0 ]]; then
	echo "bench_long: needs root (acceltrace loads BPF programs)" >&2
	exit 77
fi

"$trainer" --steps 0 --duration "$((secs + 120))s" --step-time "$step_time" \
	--data-dir "$work/data" 2>"$work/trainer.log" &
trainer_pid=$!
for _ in $(seq 100); do
	grep -q running "$work/trainer.log" 2>/dev/null && break
	sleep 0.1
done

if [[ $tool == daemon ]]; then
	"$acceltrace" daemon --listen off --socket "$work/d.sock" --logdir "$work/logs" \
		--rule-crash false >"$work/record.log" 2>&1 &
else
	"$acceltrace" record --pid "$trainer_pid" --duration "${secs}s" \
		--logdir "$work/logs" >"$work/record.log" 2>&1 &
fi
at_pid=$!
last_trigger=0
hz=$(getconf CLK_TCK)
echo "t_s,rss_mib,cpu_pct" >"$csv"
t0=$(date +%s.%N)
prev_ticks= prev_t=
stopped_early=0
while kill -0 "$at_pid" 2>/dev/null; do
	sleep "$every"
	[[ -r /proc/$at_pid/stat ]] || break
	now=$(date +%s.%N)
	rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$at_pid/status" 2>/dev/null || echo)
	ticks=$(awk '{ print $14 + $15 }' "/proc/$at_pid/stat" 2>/dev/null || echo)
	[[ -n $rss && -n $ticks ]] || break
	if [[ -n $prev_ticks ]]; then
		awk -v t="$now" -v t0="$t0" -v r="$rss" -v d="$((ticks - prev_ticks))" \
			-v dt="$now" -v pt="$prev_t" -v hz="$hz" \
			'BEGIN { printf "%.0f,%.1f,%.1f\n", t - t0, r / 1024, 100 * d / hz / (dt - pt) }' >>"$csv"
	fi
	prev_ticks=$ticks prev_t=$now
	if [[ $tool == daemon ]]; then
		elapsed=$(awk -v t="$now" -v t0="$t0" 'BEGIN { printf "%d", t - t0 }')
		if ((elapsed >= secs)); then
			kill -TERM "$at_pid"
		elif ((elapsed - last_trigger >= 300)); then
			last_trigger=$elapsed
			"$acceltrace" trigger --socket "$work/d.sock" >>"$work/triggers.log" 2>&1 &
		fi
	fi
	if ((rss / 1024 > max_rss_mb)); then
		echo "bench_long: acceltrace's RSS passed $max_rss_mb MiB: stopping the capture" >&2
		stopped_early=1
		kill -INT "$at_pid"
	fi
done
wait "$at_pid" || true
at_pid=

{
	/usr/bin/python3 - "$csv" "$secs" "$stopped_early" <<'EOF'
import csv, sys

rows = list(csv.DictReader(open(sys.argv[1])))
secs, early = float(sys.argv[2]), sys.argv[3] == "1"
t = [float(r["t_s"]) for r in rows]
rss = [float(r["rss_mib"]) for r in rows]
cpu = [float(r["cpu_pct"]) for r in rows]
def window(vals, lo, hi):
    return [v for tt, v in zip(t, vals) if lo <= tt < hi] or [float("nan")]
def med(v):
    v = sorted(v)
    return v[len(v) // 2]
end = t[-1] if t else 0
first = (60, 360)
last = (max(end - 300, 60), end + 1)
print("BENCH long.seconds s %.0f" % end)
print("BENCH long.stopped_early flag %d" % early)
print("BENCH long.rss_first5 MiB " + " ".join("%.1f" % v for v in window(rss, *first)))
print("BENCH long.rss_last5 MiB " + " ".join("%.1f" % v for v in window(rss, *last)))
print("BENCH long.cpu_first5 % " + " ".join("%.1f" % v for v in window(cpu, *first)))
print("BENCH long.cpu_last5 % " + " ".join("%.1f" % v for v in window(cpu, *last)))
if len(t) > 2 and end > t[0]:
    print("BENCH long.rss_slope MiB/min %.2f" % ((rss[-1] - rss[0]) / ((end - t[0]) / 60)))
EOF
	echo "NOTE long: $tool; trainer $(grep -o 'done steps=[0-9]*' "$work/trainer.log" || echo 'still running'), step time $step_time; $(grep -c 'capture written' "$work/record.log") capture(s) written; $(grep -m1 'capture written' "$work/record.log" || tail -1 "$work/record.log")"
} | tee "$txt"
