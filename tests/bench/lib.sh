# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Shell helpers the slowdown benchmarks share (sourced).

hz=$(getconf CLK_TCK)

# tracer_cpu PID LOG: the tracer's CPU while the traced program trains, as
# % of one core: its user + system time between the program's "running"
# line and its "done steps=" line in LOG (the tracer's start-up, and its
# work after the program ends, such as writing the capture, left out),
# sampled every 0.1 s from /proc/PID/stat. Waits for the tracer to exit;
# prints "nan" when the program never got going.
tracer_cpu() {
	local pid=$1 log=$2 t0= c0= t1= c1= c
	while kill -0 "$pid" 2>/dev/null; do
		c=$(awk '{ print $14 + $15 }' "/proc/$pid/stat" 2>/dev/null) || break
		if grep -q 'done steps=' "$log" 2>/dev/null; then
			break
		elif [[ -n $t0 ]]; then
			t1=$EPOCHREALTIME c1=$c
		elif grep -q ' running' "$log" 2>/dev/null; then
			t0=$EPOCHREALTIME c0=$c
		fi
		sleep 0.1
	done
	wait "$pid" 2>/dev/null || true
	if [[ -n $t1 ]]; then
		awk -v c="$((c1 - c0))" -v hz="$hz" -v a="$t0" -v b="$t1" \
			'BEGIN { d = b - a; printf "%.1f", (d > 0 ? 100 * c / hz / d : 0) }'
	else
		echo nan
	fi
}
