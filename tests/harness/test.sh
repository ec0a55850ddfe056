# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Helpers for acceltrace's shell tests, sourced by tests/*/test_*.sh. Tests
# run from the repository root; each check prints what it expected on failure,
# and the script ends with `test_done` (exit 0 or 1) or `test_skip` (77).
# A part that cannot run here says so with `skip_part`; something the test
# needs to have happened is waited for with `wait_until`, not a sleep.

OUTPUT=${OUTPUT:-build}
ACCELTRACE=${ACCELTRACE:-$OUTPUT/acceltrace}
# Debian's python has python3-protobuf; the first python3 on PATH may not.
PYTHON=${PYTHON:-/usr/bin/python3}
test_failures=0

fail() {
	echo "FAIL: $*" >&2
	test_failures=$((test_failures + 1))
}

test_skip() {
	echo "SKIP: $*"
	exit 77
}

test_done() {
	if ((test_failures)); then
		echo "$test_failures check(s) failed" >&2
		exit 1
	fi
	exit 0
}

# skip_part REASON: a part of the test cannot run here (the rest can): one
# "SKIP-PART: REASON" line, counted and listed by tests/run-tests.sh.
skip_part() {
	echo "SKIP-PART: $*"
}

# wait_until SECONDS WHAT -- CMD...: runs CMD every 0.1 s until it
# succeeds; after SECONDS fails the check WHAT (what did not happen).
wait_until() {
	local secs=$1 what=$2 deadline
	shift 3
	deadline=$((${EPOCHREALTIME/./} + secs * 1000000))
	until "$@"; do
		if ((${EPOCHREALTIME/./} >= deadline)); then
			fail "$what: not within ${secs} s"
			return 1
		fi
		sleep 0.1
	done
}

require_root() {
	[[ $(id -u) -eq 0 ]] || test_skip "needs root ($*)"
}

# expect_exit CODE DESCRIPTION -- CMD...: runs CMD, keeps its output in
# $out and $err, and checks its exit status.
expect_exit() {
	local want=$1 what=$2
	shift 3
	out=$("$@" 2>"$TEST_TMP/stderr")
	got=$?
	err=$(cat "$TEST_TMP/stderr")
	[[ $got -eq $want ]] || fail "$what: exit $got, expected $want (stderr: ${err:0:300})"
}

contains() {
	local haystack=$1 needle=$2 what=$3
	[[ $haystack == *"$needle"* ]] || fail "$what: '${haystack:0:300}' does not contain '$needle'"
}

# json_get DOC EXPR: evaluates a Python expression over the parsed document
# `d`; fails the check (and prints nothing) when DOC is not valid JSON.
json_get() {
	"$PYTHON" -c 'import json,sys; d=json.loads(sys.stdin.read()); print(eval(sys.argv[1]))' "$2" <<<"$1"
}

# The XSpace decode tests' start: protoc and $PYTHON's google.protobuf here
# (the test skips otherwise), the emitting test binary $1 built, and its
# capture written into $TEST_TMP (the test fails and ends otherwise).
emit_for_decode() {
	command -v protoc >/dev/null || test_skip "protoc is not installed"
	"$PYTHON" -c 'import google.protobuf' 2>/dev/null || test_skip "$PYTHON has no google.protobuf"
	[[ -x $1 ]] || { fail "$1 not built"; test_done; }
	"$1" --emit "$TEST_TMP" || { fail "$1 --emit: writing its capture"; test_done; }
}

TEST_TMP=$(mktemp -d)
trap 'rm -rf "$TEST_TMP"' EXIT
