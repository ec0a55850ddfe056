#!/usr/bin/env bash
# Trainer slowdown: the simulated TPU trainer at about 10k device
# submissions per second (docs/simulator.md, "10,000 executions/s"), run for
# a fixed time with nothing attached, under acceltrace (default probes, and
# every probe: --sched), under acceltrace daemon (its default settings,
# watching the whole host: core probes, detail in slices; and, for
# reference, --detail full: what a slice costs while it lasts) and under
# bpftrace attaching the equivalent probes.
# Steps per second come from the trainer's own last line
# ("done steps=N reason=duration"), never from the tracer.
#
#   tests/bench/bench_trainer.sh OUTPUT_DIR
#
# Prints BENCH lines (tests/bench/bench.h) for report.py. Environment:
# BENCH_REPS (default 5), BENCH_TRAINER_S (seconds per run, default 8),
# BENCH_TRAINER_STEP_TIME (default 100us: 10k steps/s) and BENCH_TRAINER_NAME
# (the rows' prefix, default trainer: run_bench.sh also runs trainer1k, 1 ms),
# BENCH_TRAINER_CONFIGS (default "off acceltrace acceltrace_sched daemon
# daemon_paused daemon_full bpftrace"; acceltrace_normal: record at
# --cpu-priority normal).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

out=${1:-build}
reps=${BENCH_REPS:-5}
secs=${BENCH_TRAINER_S:-8}
trainer=$(realpath "$out/sim/tpu-trainer")
acceltrace=$(realpath "$out/acceltrace")
plugin=$(realpath "$out/sim/pjrt-0.94/libtpu.so")
work=$(mktemp -d /tmp/acceltrace-bench-trainer.XXXXXX)
bg_pid=

cleanup() {
	if [[ -n $bg_pid ]]; then
		kill "$bg_pid" 2>/dev/null || true
		wait "$bg_pid" 2>/dev/null || true
	fi
	[[ -n ${BENCH_KEEP:-} ]] || rm -rf "$work"
}
trap cleanup EXIT

name=${BENCH_TRAINER_NAME:-trainer}
load=(--steps 0 --duration "${secs}s" --step-time "${BENCH_TRAINER_STEP_TIME:-100us}" --fetch-every 0
      --batch-bytes 4096 --data-dir "$work/data")

# Steps per second from a trainer log: its "done steps=N" line.
steps_per_s() {
	local n
	n=$(sed -n 's/.* done steps=\([0-9]*\) reason=duration.*/\1/p' "$1" | tail -1)
	if [[ -z $n ]]; then
		echo nan
		return
	fi
	awk -v n="$n" -v s="$secs" 'BEGIN { printf "%.1f", n / s }'
}

read -r -a configs <<<"${BENCH_TRAINER_CONFIGS:-off acceltrace acceltrace_sched daemon daemon_paused daemon_full bpftrace}"

# The probes bpftrace attaches, as a bpftrace program in $work/trainer.bt.
bpftrace_program() {
	# ---- the probe offsets bpftrace needs, from `acceltrace probes` ----------
	"$trainer" --steps 0 --duration 20s --step-time 1ms --data-dir "$work/data" \
		2>"$work/probe-trainer.log" &
	bg_pid=$!
	for _ in $(seq 100); do
		grep -q running "$work/probe-trainer.log" 2>/dev/null && break
		sleep 0.1
	done
	"$acceltrace" probes --pid "$bg_pid" -j >"$work/probes.json"
	kill "$bg_pid"
	wait "$bg_pid" 2>/dev/null || true
	bg_pid=

	# The OnReady callback acceltrace probes at run time is the trainer's
	# pjrt_on_ready_callback, at +4 after its endbr64. bpftrace 0.17 attaches
	# at raw addresses only with --unsafe, and even then refuses an address
	# inside a function it has a symbol for ("Can't check if uprobe is in
	# proper place"): its runs use a stripped copy of the trainer (same code
	# and offsets), given the plugin and libsimtruth.so's directory.
	cb_vaddr=$(nm "$trainer" | awk '$3 == "pjrt_on_ready_callback" { print $1 }')
	strip -o "$work/tpu-trainer" "$trainer"
	/usr/bin/python3 - "$work/probes.json" "$work/tpu-trainer" "$cb_vaddr" >"$work/trainer.bt" <<-'EOF'
	import json, sys

	probes = json.load(open(sys.argv[1]))["probes"]
	trainer, cb = sys.argv[2], int(sys.argv[3], 16)
	n = 0

	def probe(spec):
	    global n
	    n += 1
	    print(f"{spec} /pid == cpid/ {{ @p{n} = count(); }}")

	print("// bpftrace doing what acceltrace's default probes do, each hit counted")
	for p in probes:
	    where = f"{p['library']}:0x{p['attach_offset']:x}"
	    if p["target"].startswith("symbol "):
	        # bpftrace refuses symbol+4 in a library it has the symbol for;
	        # these (GetPjrtApi, the TPU C API feeds) are cold in this load, so
	        # +0 costs nothing.
	        where = f"{p['library']}:{p['target'].split()[1]}"
	    probe(f"uprobe:{where}")
	    if p["return_probe"]:
	        probe(f"uretprobe:{where}")
	# The completion callback, +4 after its endbr64 like acceltrace.
	probe(f"uprobe:{trainer}:0x{cb + 4:x}")
	for sc in ["read", "pread64", "readv", "preadv", "ioctl", "openat", "close",
	           "eventfd2"]:
	    probe(f"tracepoint:syscalls:sys_enter_{sc}")
	    probe(f"tracepoint:syscalls:sys_exit_{sc}")
	for tp in ["task:task_newtask", "task:task_rename", "sched:sched_process_exit",
	           "sched:sched_process_exec", "irq:irq_handler_entry",
	           "irq:irq_handler_exit"]:
	    probe(f"tracepoint:{tp}")
	EOF
	echo "bench_trainer: bpftrace attaches $(grep -c count "$work/trainer.bt") probes" >&2
}
if [[ " ${configs[*]} " == *" bpftrace "* ]]; then
	bpftrace_program
fi

# The poller every traced run has beside it, on the trainer itself.
run_off() {
	: >"$work/t.log"
	"$trainer" "${load[@]}" 2>"$work/t.log" &
	tracer_cpu $! "$work/t.log" >/dev/null
}

run_acceltrace() {
	rm -rf "$work/logs"
	: >"$work/t.log"
	"$acceltrace" record "$@" --logdir "$work/logs" -- \
		"$trainer" "${load[@]}" 2>"$work/t.log" >/dev/null &
	tracer_cpu $! "$work/t.log" >"$work/cpu"
}

# The daemon attached before the trainer starts (it finds it as it would
# any new process), stopped once the trainer is done. Arguments: more
# daemon flags (--detail full). With its defaults the run holds the start
# of one 1-s detail slice (the first one, at the daemon's start); the rest
# is the time between slices.
#
# With "paused" first, the daemon is stopped (SIGSTOP) 2 s into the run,
# once it has attached to the trainer: the probes go on firing in the
# trainer (the ring buffers fill, then turn records away) while the daemon
# takes no CPU. That row is what the probes alone cost the trainer; the
# daemon's row minus it, what the daemon's own reading costs it.
run_daemon() {
	local d t paused=
	if [[ ${1:-} == paused ]]; then
		paused=1
		shift
	fi
	rm -rf "$work/dlogs"
	: >"$work/t.log"
	"$acceltrace" daemon --listen off --socket "$work/d.sock" --logdir "$work/dlogs" \
		--rule-crash false "$@" 2>"$work/d.log" &
	d=$!
	for _ in $(seq 300); do
		grep -q 'watching every' "$work/d.log" 2>/dev/null && break
		sleep 0.1
	done
	"$trainer" "${load[@]}" 2>"$work/t.log" &
	t=$!
	# One waiter, so that the stop never comes after the continue.
	(
		if [[ -n $paused ]]; then
			sleep 2
			kill -0 "$t" 2>/dev/null && kill -STOP "$d" 2>/dev/null
		fi
		wait_gone "$t"
		kill -CONT "$d" 2>/dev/null
		kill -TERM "$d" 2>/dev/null
	) &
	tracer_cpu "$d" "$work/t.log" >"$work/cpu"
	wait "$t" 2>/dev/null || true
}

wait_gone() {
	while kill -0 "$1" 2>/dev/null; do
		nap 0.1
	done
}

run_bpftrace() {
	: >"$work/t.log"
	bpftrace --unsafe -c "/usr/bin/env LD_LIBRARY_PATH=$(dirname "$trainer") $work/tpu-trainer --plugin $plugin ${load[*]}" \
		"$work/trainer.bt" >"$work/bt.out" 2>"$work/t.log" &
	tracer_cpu $! "$work/t.log" >"$work/cpu"
}

declare -A rate cpu noted
for ((r = 0; r < reps; r++)); do
	for ((i = 0; i < ${#configs[@]}; i++)); do
		c=${configs[(i + r) % ${#configs[@]}]}
		case $c in
		off) run_off ;;
		acceltrace) run_acceltrace ;;
		acceltrace_sched) run_acceltrace --sched ;;
		# Not in the default list: record's SCHED_IDLE (its default) against
		# normal priority, in the same run.
		acceltrace_normal) run_acceltrace --cpu-priority normal ;;
		daemon) run_daemon ;;
		daemon_full) run_daemon --detail full ;;
		daemon_paused) run_daemon paused ;;
		bpftrace) run_bpftrace ;;
		esac
		v=$(steps_per_s "$work/t.log")
		rate[$c]+=" $v"
		if [[ $v == nan && -z ${noted[$c]:-} ]]; then
			noted[$c]=1
			echo "NOTE $name.$c failed: $(grep -v RLIMIT_MEMLOCK "$work/t.log" | grep -m1 -i 'error' || tail -1 "$work/t.log")"
		fi
		if [[ $c != off ]]; then
			cpu[$c]+=" $(cat "$work/cpu")"
		fi
		echo "bench_trainer: rep $((r + 1)) $c: $v steps/s" >&2
	done
done

for c in "${configs[@]}"; do
	echo "BENCH $name.$c steps/s${rate[$c]}"
done
for c in "${configs[@]}"; do
	[[ $c == off ]] && continue
	echo "BENCH $name.$c.tracer_cpu %${cpu[$c]}"
done
