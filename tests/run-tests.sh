#!/usr/bin/env bash
# Runs acceltrace's tests: each argument is one test executable that exits
# 0 (pass), 1 (fail) or 77 (skip). Each runs under a timeout with its output
# kept in build/test-logs/ and shown when it fails. Ends with the line
#   N passed, N failed, N skipped, N parts skipped
# and exits non-zero when any test failed.
#
# A passing test that could not run some of its parts prints a line
# "SKIP-PART: reason" for each (test.h, test.sh and e2e.py have helpers):
# they are counted and listed, so that a pass that checked less is seen.
#
# After each test the kernel log is read from where it stood before the
# test (as liburing's runner does): a BUG, WARNING, Oops or BPF splat the
# kernel logged meanwhile fails the test, with the kernel's lines in its
# log. TEST_KERNEL_LOG=warn lists them without failing, =off skips the
# check; where the log cannot be read it is said once and not checked.
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

# The kernel log's records, read without waiting for more. /dev/kmsg gives
# one record per read, "PRIO,SEQ,USEC,FLAGS;text", followed by " KEY=value"
# lines; KERNEL_LOG names another file of that form (the runner's test).
kernel_log=${KERNEL_LOG:-/dev/kmsg}
klog_mode=${TEST_KERNEL_LOG:-fail}
# What the kernel prints when something broke in it (lockdep, KASAN and
# UBSAN reports start with one of these too); "BPF:" starts the lines of
# the kernel's BTF and verifier complaints.
klog_splat='kernel BUG at|BUG:|WARNING:|Oops|general protection fault|Internal error|INFO: (possible|suspicious|task .* blocked|rcu)|UBSAN:|KASAN:|KFENCE:|Kernel panic|unreferenced object|verifier bug|^BPF:'
# Splats of the kernel's own that a test's work reaches without being at
# fault (one pattern a line, each with its reason in docs/testing.md):
# kept in the test's log and listed, but they fail nothing.
klog_known=${KERNEL_LOG_KNOWN:-$(dirname "$0")/harness/kernel-log-known.txt}

# Prints "SEQ<TAB>text" of each record after sequence number $1.
klog_after() {
	dd if="$kernel_log" iflag=nonblock bs=16384 status=none 2>/dev/null |
		awk -v after="$1" '
			/^ / { next }	# a record continued: its dictionary
			{
				i = index($0, ";")
				if (!i)
					next
				split(substr($0, 1, i - 1), h, ",")
				if (h[2] + 0 > after + 0)
					print h[2] "\t" substr($0, i + 1)
			}'
}

klog_last_seq() {
	local last
	last=$(klog_after -1 | tail -n 1)
	echo "${last%%$'\t'*}"
}

if [[ $klog_mode == off ]]; then
	klog_on=false
elif [[ -r $kernel_log ]] && (: <"$kernel_log") 2>/dev/null && [[ -n $(klog_last_seq) ]]; then
	klog_on=true
else
	klog_on=false
	echo "note: the kernel log ($kernel_log) cannot be read here: tests are not checked for kernel BUG/WARNING splats"
fi

passed=0 failed=0 skipped=0 parts_skipped=0
failed_names=() skipped_names=() partly_names=() klog_names=()

for t in "$@"; do
	name=${t#"${OUTPUT:-build}"/}
	log="$log_dir/$(echo "$name" | tr '/' '_').log"
	$klog_on && klog_seq=$(klog_last_seq)
	start=${EPOCHREALTIME/./}
	timeout --kill-after=10 "$timeout_s" "$t" >"$log" 2>&1 </dev/null
	rc=$?
	elapsed_us=$((${EPOCHREALTIME/./} - start))
	secs=$((elapsed_us / 1000000)).$((elapsed_us / 100000 % 10))

	# The kernel's complaints while it ran, kept in its log.
	splat=""
	if $klog_on; then
		klog_new=$(klog_after "${klog_seq:--1}")
		splat=$(cut -f2- <<<"$klog_new" | grep -E "$klog_splat" |
			{ if [[ -r $klog_known ]]; then grep -v -E -f "$klog_known"; else cat; fi; } |
			head -n 1)
		if [[ -n $splat ]]; then
			{
				echo "--- the kernel logged while this test ran (the log is the host's: another process may have caused it):"
				cut -f2- <<<"$klog_new"
			} >>"$log"
			klog_names+=("$name: $splat")
			if [[ $klog_mode == fail && ($rc -eq 0 || $rc -eq 77) ]]; then
				rc=1
				echo "FAIL: the kernel logged: $splat" >>"$log"
			fi
		fi
	fi

	case $rc in
	0)
		passed=$((passed + 1))
		parts=$(grep -c '^SKIP-PART:' "$log")
		if ((parts)); then
			parts_skipped=$((parts_skipped + parts))
			while IFS= read -r reason; do
				partly_names+=("$name: $reason")
			done < <(grep '^SKIP-PART:' "$log" | sed 's/^SKIP-PART: *//')
			printf 'PASS  %-50s %6ss  (%d part%s skipped)\n' "$name" "$secs" \
				"$parts" "$( ((parts > 1)) && echo s)"
		else
			printf 'PASS  %-50s %6ss\n' "$name" "$secs"
		fi
		;;
	77)
		skipped=$((skipped + 1))
		reason=$(grep -m1 '^SKIP:' "$log" | sed 's/^SKIP: *//')
		skipped_names+=("$name${reason:+ ($reason)}")
		printf 'SKIP  %-50s %s\n' "$name" "$reason"
		;;
	*)
		failed=$((failed + 1))
		failed_names+=("$name")
		if [[ $rc -eq 124 || $rc -eq 137 ]]; then
			printf 'FAIL  %-50s timed out after %ss\n' "$name" "$timeout_s"
		elif [[ -n $splat && $klog_mode == fail ]]; then
			printf 'FAIL  %-50s the kernel logged: %s\n' "$name" "$splat"
		else
			printf 'FAIL  %-50s exit %d\n' "$name" "$rc"
		fi
		sed 's/^/      | /' "$log" | tail -n 60
		;;
	esac
	if [[ -n $splat && $klog_mode != fail ]]; then
		printf '      kernel log: %s\n' "$splat"
	fi
done

echo
if ((${#skipped_names[@]})); then
	echo "Skipped:"
	printf '  %s\n' "${skipped_names[@]}"
fi
if ((${#partly_names[@]})); then
	echo "Parts skipped (in passing tests):"
	printf '  %s\n' "${partly_names[@]}"
fi
if ((${#klog_names[@]})); then
	echo "Kernel log splats (in $kernel_log while the test ran):"
	printf '  %s\n' "${klog_names[@]}"
fi
if ((${#failed_names[@]})); then
	echo "Failed:"
	printf '  %s\n' "${failed_names[@]}"
fi
echo "$passed passed, $failed failed, $skipped skipped, $parts_skipped parts skipped"
[[ $failed -eq 0 ]]
