#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# What the in-process agent costs a CUDA loop (docs/agent.md): the
# simulated CUDA loop (cuda-app, runtime API, ~40 calls a step) with
# nothing loaded, with the agent loaded and dormant (no acceltrace asking),
# and under record with and without the agent turned on (device detail:
# the simulated CUPTI's records, the agent's translation, acceltrace
# reading them). Configurations alternate within each repetition, so load
# drifts hit them alike; steps/s from the loop's own truth (a device
# synchronize a step). The same for the PJRT backend: the simulated TPU
# trainer (its own devtrace off) bare, with the agent preloaded and
# dormant, and under record with the agent collecting the plugin's
# profiler.
#
#   tests/bench/bench_agent.sh OUTPUT_DIR    BENCH_REPS (default 5), BENCH_AGENT_S (8)
set -euo pipefail
. "$(dirname "$0")/lib.sh"

out=${1:-build}
reps=${BENCH_REPS:-5}
secs=${BENCH_AGENT_S:-8}
app=$(realpath "$out/sim/cuda/cuda-app")
agent=$(realpath "$out/libacceltrace-agent.so")
cupti=$(realpath "$out/sim/cuda/libcupti.so.13")
acceltrace=$(realpath "$out/acceltrace")
work=$(mktemp -d /tmp/acceltrace-bench-agent.XXXXXX)
trap '[[ -n ${BENCH_KEEP:-} ]] || rm -rf "$work"' EXIT

# steps/s of the run whose truth is $1
steps_per_s() {
	local n
	n=$(grep -c '"api":"cudaDeviceSynchronize"' "$1" || true)
	awk -v n="$n" -v s="$secs" 'BEGIN { printf "%.1f", n / s }'
}

# steps/s of the simulated TPU trainer whose truth is $1 (one Execute a step)
tpu_steps_per_s() {
	local n
	n=$(grep -c '"type":"execute"' "$1" || true)
	awk -v n="$n" -v s="$secs" 'BEGIN { printf "%.1f", n / s }'
}

loop=(--mode runtime --steps 0 --duration "$secs")
# The PJRT backend: the simulated TPU trainer with its own devtrace
# buffers off, so the plugin's profiler extension is the device's trace.
trainer=$(realpath "$out/sim/tpu-trainer")
plugin=$(realpath "$out/sim/pjrt-0.94/libtpu.so")
tpu=(--plugin "$plugin" --steps 0 --duration "$secs" --step-time 200us --no-devtrace)
configs=(off dormant record_no_agent record_agent tpu_off tpu_dormant tpu_record_agent)
declare -A samples
for rep in $(seq "$reps"); do
	for cfg in "${configs[@]}"; do
		t=$work/$cfg-$rep.jsonl
		case $cfg in
		off) env -u CUDA_INJECTION64_PATH "$app" "${loop[@]}" --truth "$t" 2>/dev/null ;;
		dormant) CUDA_INJECTION64_PATH=$agent ACCELTRACE_AGENT_CUPTI=$cupti \
				"$app" "${loop[@]}" --truth "$t" 2>/dev/null ;;
		record_no_agent) "$acceltrace" record --no-agent --from-start -o "$work/l" -- \
				"$app" "${loop[@]}" --truth "$t" >/dev/null 2>&1 || true ;;
		record_agent) ACCELTRACE_AGENT_CUPTI=$cupti "$acceltrace" record --from-start \
				-o "$work/l" -- "$app" "${loop[@]}" --truth "$t" >/dev/null 2>&1 || true ;;
		tpu_off) "$trainer" "${tpu[@]}" --truth "$t" 2>/dev/null ;;
		tpu_dormant) LD_PRELOAD=$agent "$trainer" "${tpu[@]}" --truth "$t" 2>/dev/null ;;
		tpu_record_agent) "$acceltrace" record --from-start -o "$work/l" -- \
				"$trainer" "${tpu[@]}" --truth "$t" >/dev/null 2>&1 || true ;;
		esac
		if [[ $cfg == tpu_* ]]; then
			samples[$cfg]+=" $(tpu_steps_per_s "$t")"
		else
			samples[$cfg]+=" $(steps_per_s "$t")"
		fi
		rm -rf "$work/l"
	done
	echo "bench_agent: repetition $rep of $reps done" >&2
done
for cfg in "${configs[@]}"; do
	echo "BENCH agent.$cfg steps/s${samples[$cfg]}"
done
