#!/usr/bin/env bash
# Runs acceltrace's tests: each argument is one test executable that exits
# 0 (pass), 1 (fail) or 77 (skip). Each runs under a timeout with its output
# kept in build/test-logs/ and shown when it fails. Ends with the line
#   N passed, N failed, N skipped
# and exits non-zero when any test failed.
set -u

timeout_s=120
while [[ $# -gt 0 ]]; do
	case $1 in
	--timeout) timeout_s=$2; shift 2 ;;
	--) shift; break ;;
	*) break ;;
	esac
done

log_dir=${TEST_LOG_DIR:-build/test-logs}
mkdir -p "$log_dir"

passed=0 failed=0 skipped=0
failed_names=() skipped_names=()

for t in "$@"; do
	name=${t#"${OUTPUT:-build}"/}
	log="$log_dir/$(echo "$name" | tr '/' '_').log"
	start=${EPOCHREALTIME/./}
	timeout --kill-after=10 "$timeout_s" "$t" >"$log" 2>&1 </dev/null
	rc=$?
	elapsed_us=$((${EPOCHREALTIME/./} - start))
	secs=$((elapsed_us / 1000000)).$((elapsed_us / 100000 % 10))
	case $rc in
	0)
		passed=$((passed + 1))
		printf 'PASS  %-50s %6ss\n' "$name" "$secs"
		;;
	77)
		skipped=$((skipped + 1))
		reason=$(grep -m1 '^SKIP' "$log" | sed 's/^SKIP:* *//')
		skipped_names+=("$name${reason:+ ($reason)}")
		printf 'SKIP  %-50s %s\n' "$name" "$reason"
		;;
	*)
		failed=$((failed + 1))
		failed_names+=("$name")
		if [[ $rc -eq 124 || $rc -eq 137 ]]; then
			printf 'FAIL  %-50s timed out after %ss\n' "$name" "$timeout_s"
		else
			printf 'FAIL  %-50s exit %d\n' "$name" "$rc"
		fi
		sed 's/^/      | /' "$log" | tail -n 60
		;;
	esac
done

echo
if ((${#skipped_names[@]})); then
	echo "Skipped:"
	printf '  %s\n' "${skipped_names[@]}"
fi
if ((${#failed_names[@]})); then
	echo "Failed:"
	printf '  %s\n' "${failed_names[@]}"
fi
echo "$passed passed, $failed failed, $skipped skipped"
[[ $failed -eq 0 ]]
