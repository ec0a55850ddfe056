#!/usr/bin/env bash
# PyTorch slowdown: a real training loop with two DataLoader workers reading
# real files (tests/bench/torch_train.py, Debian's python3-torch run by
# /usr/bin/python3), with nothing attached, under acceltrace (default
# probes, and every probe: --sched), under bpftrace attaching the
# equivalent probes, and under torch.profiler. Steps per second come from
# the loop itself ("steps_per_s=").
#
# A CPU-only PyTorch process has no PJRT plugin: acceltrace's runtime
# probes have nothing to attach to, so its cost here is the syscall and
# task probes (and sched_switch with --sched) on the main process and its
# workers (--children). It never arms (no device activity), so it is given
# an arm timeout longer than the run and writes no capture.
#
#   tests/bench/bench_torch.sh OUTPUT_DIR
#
# Prints BENCH lines for report.py. Environment: BENCH_REPS (default 5),
# BENCH_TORCH_STEPS (default 200), BENCH_TORCH_CONFIGS (default "off
# acceltrace acceltrace_sched daemon bpftrace profiler").
set -euo pipefail
. "$(dirname "$0")/lib.sh"

out=${1:-build}
reps=${BENCH_REPS:-5}
steps=${BENCH_TORCH_STEPS:-200}
acceltrace=$(realpath "$out/acceltrace")
script=$(realpath "$(dirname "$0")/torch_train.py")
py=/usr/bin/python3
work=$(mktemp -d /tmp/acceltrace-bench-torch.XXXXXX)
trap '[[ -n ${BENCH_KEEP:-} ]] || rm -rf "$work"' EXIT

if ! "$py" -c 'import torch' 2>/dev/null; then
	echo "NOTE torch: $py cannot import torch (python3-torch missing); skipped"
	exit 0
fi

train=("$py" "$script" --data "$work/data" --steps "$steps")
# Make the data files once, outside any measurement.
"${train[@]}" --steps 1 --warmup 1 >/dev/null 2>&1

# bpftrace: the syscall and task tracepoints acceltrace attaches, for the
# main process and its children (the workers), each hit counted.
{
	echo "// bpftrace doing what acceltrace's default probes do in a PyTorch process"
	n=0
	for sc in read pread64 readv preadv ioctl openat close eventfd2; do
		for dir in enter exit; do
			n=$((n + 1))
			echo "tracepoint:syscalls:sys_${dir}_$sc /pid == cpid || curtask->real_parent->tgid == cpid/ { @p$n = count(); }"
		done
	done
	for tp in task:task_newtask task:task_rename sched:sched_process_exit \
		sched:sched_process_exec irq:irq_handler_entry irq:irq_handler_exit; do
		n=$((n + 1))
		echo "tracepoint:$tp /pid == cpid || curtask->real_parent->tgid == cpid/ { @p$n = count(); }"
	done
} >"$work/torch.bt"

rate_of() {
	local v
	v=$(sed -n 's/^steps_per_s=\([0-9.]*\)$/\1/p' "$1" | tail -1)
	echo "${v:-nan}"
}

# Runs one configuration: the loop's stdout in o.log, stderr in e.log;
# a tracer's CPU while the loop ran in cpu.
run() {
	: >"$work/e.log"
	echo nan >"$work/cpu"
	case $1 in
	# The baselines have the traced runs' poller beside them too.
	off)
		"${train[@]}" >"$work/o.log" 2>"$work/e.log" &
		tracer_cpu $! "$work/e.log" >/dev/null ;;
	profiler)
		"${train[@]}" --profiler >"$work/o.log" 2>"$work/e.log" &
		tracer_cpu $! "$work/e.log" >/dev/null ;;
	acceltrace | acceltrace_sched)
		"$acceltrace" record --children $([[ $1 == acceltrace_sched ]] && echo --sched) \
			--arm-timeout 10m --logdir "$work/logs" \
			-- "${train[@]}" >"$work/o.log" 2>"$work/e.log" &
		tracer_cpu $! "$work/e.log" >"$work/cpu" ;;
	bpftrace)
		bpftrace -c "${train[*]}" "$work/torch.bt" >"$work/o.log" 2>"$work/e.log" &
		tracer_cpu $! "$work/e.log" >"$work/cpu" ;;
	daemon)
		# The daemon as deployed, started first: it watches the host; a
		# CPU-only loop uses no accelerator runtime, so it is not traced
		# in detail, and this measures what the daemon costs it anyway.
		"$acceltrace" daemon --listen off --socket "$work/d.sock" --logdir "$work/dlogs" \
			--rule-crash false 2>"$work/d.log" &
		local d=$! i
		for i in $(seq 300); do
			grep -q 'watching every' "$work/d.log" 2>/dev/null && break
			sleep 0.1
		done
		"${train[@]}" >"$work/o.log" 2>"$work/e.log" &
		tracer_cpu $! "$work/e.log" >/dev/null
		kill -TERM "$d"
		wait "$d" 2>/dev/null || true ;;
	esac
}

declare -A rate cpu noted
read -r -a configs <<<"${BENCH_TORCH_CONFIGS:-off acceltrace acceltrace_sched daemon bpftrace profiler}"
for ((r = 0; r < reps; r++)); do
	for ((i = 0; i < ${#configs[@]}; i++)); do
		c=${configs[(i + r) % ${#configs[@]}]}
		run "$c"
		v=$(rate_of "$work/o.log")
		rate[$c]+=" $v"
		[[ $c == off || $c == profiler || $c == daemon ]] || cpu[$c]+=" $(cat "$work/cpu")"
		if [[ $v == nan && -z ${noted[$c]:-} ]]; then
			noted[$c]=1
			echo "NOTE torch.$c failed: $(cat "$work/o.log" "$work/e.log" | grep -v RLIMIT_MEMLOCK | grep -m1 -i 'error' || tail -1 "$work/e.log")"
		fi
		echo "bench_torch: rep $((r + 1)) $c: $v steps/s" >&2
	done
done
for c in "${configs[@]}"; do
	echo "BENCH torch.$c steps/s${rate[$c]}"
done
for c in "${configs[@]}"; do
	[[ $c == off || $c == profiler || $c == daemon ]] && continue
	echo "BENCH torch.$c.tracer_cpu %${cpu[$c]}"
done
