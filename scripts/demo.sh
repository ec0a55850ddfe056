#!/usr/bin/env bash
# make demo: the main job on the built-in default. Starts the simulated TPU
# trainer (a PJRT plugin, a device node, an input pipeline reading real
# files), attaches acceltrace to it by PID, records a window, and says where
# the capture is and what it holds, then reports on it (acceltrace report).
set -euo pipefail

out=${1:-build}
logdir=${DEMO_LOGDIR:-demo-logdir}
trainer=$out/sim/tpu-trainer
acceltrace=$out/acceltrace

if [[ $(id -u) -ne 0 ]]; then
	echo "make demo: acceltrace loads BPF programs; run it as root (sudo make demo)" >&2
	exit 1
fi

work=$(mktemp -d)
trainer_pid=
cleanup() {
	[[ -n $trainer_pid ]] && kill "$trainer_pid" 2>/dev/null && wait "$trainer_pid" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT

# A trainer at 500 steps/s on 4 simulated TPU cores, fed by two reader
# threads that are a little too slow (input-bound about 30%).
"$trainer" --steps 0 --duration 60s --step-time 2ms --cores 4 --readers 2 \
	--input-bound 0.3 --data-dir "$work/data" 2>"$work/trainer.log" &
trainer_pid=$!
for _ in $(seq 100); do
	grep -q 'running' "$work/trainer.log" 2>/dev/null && break
	sleep 0.1
done
if ! grep -q 'running' "$work/trainer.log"; then
	echo "make demo: the simulated trainer did not start:" >&2
	cat "$work/trainer.log" >&2
	exit 1
fi

echo "== simulated TPU trainer running as pid $trainer_pid"
echo "== acceltrace record --pid $trainer_pid --duration 3s --logdir $logdir"
"$acceltrace" record --pid "$trainer_pid" --duration 3s --logdir "$logdir"

# The answer, not only the trace: the report of the session just written
# (the newest in the logdir, which may hold earlier demos' sessions).
session=$(ls -td "$logdir"/plugins/profile/*/ | head -n 1)
echo
echo "== acceltrace report $session"
"$acceltrace" report "$session"
