# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Shell helpers the slowdown benchmarks share (sourced).

hz=$(getconf CLK_TCK)

# The pollers below run ten times a second beside the program measured, so
# they fork nothing: an external sleep, awk and grep there cost the
# simulated trainer 2.4 % at 10k steps/s (8-s runs, 4 each, 2026-11-25),
# which every traced configuration paid and the baseline did not.

# nap SECONDS: sleep without a fork (a read timing out on a pipe nobody
# writes).
exec {nap_fd}<> <(:)
nap() {
	read -r -t "$1" -u "$nap_fd" _ || true
}

# proc_ticks PID: sets ticks to PID's user + system time (clock ticks)
# from /proc/PID/stat; fails once it is gone.
proc_ticks() {
	local line
	local -a f
	read -r line <"/proc/$1/stat" 2>/dev/null || return 1
	# Fields from the 3rd on, after the command name (which may hold
	# spaces and parentheses): utime and stime are the 14th and 15th.
	read -r -a f <<<"${line##*) }"
	ticks=$((f[11] + f[12]))
}

# log_has FILE TEXT: whether a line of FILE holds TEXT.
log_has() {
	local l
	[[ -r $1 ]] || return 1
	while IFS= read -r l; do
		[[ $l == *"$2"* ]] && return 0
	done <"$1"
	return 1
}

# tracer_cpu PID LOG: the tracer's CPU while the traced program trains, as
# % of one core: its user + system time between the program's "running"
# line and its "done steps=" line in LOG (the tracer's start-up, and its
# work after the program ends, such as writing the capture, left out),
# sampled every 0.1 s from /proc/PID/stat. Waits for the tracer to exit;
# prints "nan" when the program never got going. The baselines run it too
# (on the program itself, the figure discarded), so that every
# configuration has the same poller beside it.
tracer_cpu() {
	local pid=$1 log=$2 t0= c0= t1= c1= ticks
	while kill -0 "$pid" 2>/dev/null; do
		proc_ticks "$pid" || break
		if log_has "$log" 'done steps='; then
			break
		elif [[ -n $t0 ]]; then
			t1=$EPOCHREALTIME c1=$ticks
		elif log_has "$log" ' running'; then
			t0=$EPOCHREALTIME c0=$ticks
		fi
		nap 0.1
	done
	wait "$pid" 2>/dev/null || true
	if [[ -n $t1 ]]; then
		awk -v c="$((c1 - c0))" -v hz="$hz" -v a="$t0" -v b="$t1" \
			'BEGIN { d = b - a; printf "%.1f", (d > 0 ? 100 * c / hz / d : 0) }'
	else
		echo nan
	fi
}
