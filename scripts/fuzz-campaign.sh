#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# A fuzzing campaign: every libFuzzer harness of tests/fuzz/ (or those
# named) for MINUTES each, JOBS at a time, then a table of executions and
# findings per harness. Findings (crash-*, timeout-*, oom-*, leak-* inputs)
# stay in $OUTPUT/fuzz/findings/<harness>/, grown corpora in
# $OUTPUT/fuzz/corpus/<harness>/, each run's log in $OUTPUT/fuzz/<harness>.log.
#
#   scripts/fuzz-campaign.sh [-m MINUTES] [-j JOBS] [HARNESS...]
#
# Defaults: 10 minutes, 2 at a time. Exits 1 when any harness found something.
set -euo pipefail
cd "$(dirname "$0")/.."

minutes=10 jobs=2
while getopts "m:j:h" opt; do
	case $opt in
	m) minutes=$OPTARG ;;
	j) jobs=$OPTARG ;;
	*) sed -n '3,13p' "$0"; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
export OUTPUT=${OUTPUT:-build}

if (($#)); then
	names=("$@")
else
	names=()
	for f in tests/fuzz/fuzz_*.c; do
		n=${f#tests/fuzz/fuzz_}
		names+=("${n%.c}")
	done
fi
# Seconds, as fuzz-run.sh and libFuzzer take them (fractions of a minute too).
seconds=$(awk -v m="$minutes" 'BEGIN { printf "%d", m * 60 }')

make -s OUTPUT="$OUTPUT" fuzz-build >/dev/null
results=$(mktemp)
trap 'rm -f "$results"' EXIT
echo "fuzz campaign: ${#names[@]} harnesses, ${seconds} s each, $jobs at a time" >&2
printf '%s\n' "${names[@]}" |
	xargs -P "$jobs" -I{} tests/fuzz/fuzz-run.sh --seconds "$seconds" {} >"$results"

printf '%-14s %13s %9s %6s %18s %9s %8s  %s\n' harness executions exec/s cov oom/timeout/crash findings seconds \
	"findings kept in"
found=0
for n in "${names[@]}"; do
	line=$(grep "^fuzz $n " "$results" || true)
	get() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<"$line"; }
	f=$(get findings)
	printf '%-14s %13s %9s %6s %18s %9s %8s  %s\n' "$n" "$(get executions)" "$(get exec_per_s)" \
		"$(get cov)" "$(get oom_timeout_crash)" "${f:-?}" "$(get seconds)" \
		"$([[ ${f:-0} != 0 ]] && echo "$OUTPUT/fuzz/findings/$n/")"
	[[ ${f:-1} == 0 ]] || found=1
done
exit $found
