#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# acceltrace convert --to perfetto|json holds what the XSpace holds: the
# same spans at the same times (true times for clipped spans), one flow per
# launch and device, interned names, the clock snapshot; checked by
# export_check.py with Python's protobuf (Perfetto's upstream schema when
# found) and Python's gzip+json. Inputs: the writer's sample capture
# (clipped spans, a launch with its device work), the H100 fixtures when
# present (JAX's profiler's XSpace too). Bad input: a clear error, exit 1,
# no file left behind.
set -u
cd "$(dirname "$0")/../.."
. tests/harness/test.sh

EMIT=$OUTPUT/tests/output/test_xspace_writer
command -v protoc >/dev/null || test_skip "protoc is not installed"
"$PYTHON" -c 'import google.protobuf' 2>/dev/null || test_skip "$PYTHON has no google.protobuf"
[[ -x $EMIT ]] || { fail "$EMIT not built"; test_done; }
"$EMIT" --emit "$TEST_TMP" >/dev/null 2>&1 || { fail "emitting the sample capture"; test_done; }

inputs=("$TEST_TMP/sample.xplane.pb")
FIXTURES=${ACCELTRACE_FIXTURES:-tests/fixtures/h100}
for f in "$FIXTURES"/jax-profiler.xplane.pb "$FIXTURES"/acceltrace-jax-pid.xplane.pb; do
	[[ -r $f ]] && inputs+=("$f")
done
[[ ${#inputs[@]} -gt 1 ]] || skip_part "no fixtures at $FIXTURES; the sample capture only"

for in in "${inputs[@]}"; do
	name=$(basename "$in" .xplane.pb)
	pf=$TEST_TMP/$name.perfetto-trace js=$TEST_TMP/$name.trace.json.gz
	expect_exit 0 "convert $name to perfetto" -- "$ACCELTRACE" convert --to perfetto -O "$pf" "$in"
	expect_exit 0 "convert $name to json" -- "$ACCELTRACE" convert --to json -O "$js" "$in"
	"$PYTHON" tests/export/export_check.py "$in" "$pf" "$js" || fail "$name: exports differ from the XSpace"
done

# Default output: beside the .xplane.pb, named after it; -j says where.
cp "$TEST_TMP/sample.xplane.pb" "$TEST_TMP/vm.xplane.pb"
expect_exit 0 "convert beside" -- "$ACCELTRACE" convert -j --to json "$TEST_TMP/vm.xplane.pb"
[[ -s $TEST_TMP/vm.trace.json.gz ]] || fail "no vm.trace.json.gz beside the input"
[[ $(json_get "$out" 'd[0]["output"]') == "$TEST_TMP/vm.trace.json.gz" ]] || fail "-j output: $out"

# -O with a name whose suffix does not say what is written: written all the
# same, with a warning on stderr naming a suffix that fits; none for names
# that fit.
expect_exit 0 "convert json into a .json name" -- "$ACCELTRACE" convert --to json -O "$TEST_TMP/out.json" "$TEST_TMP/vm.xplane.pb"
contains "$err" "gzip-compressed Chrome trace JSON" "a .json name for gzip: the warning says what it holds"
contains "$err" "out.trace.json.gz" "a .json name for gzip: the warning offers a name that fits"
[[ -s $TEST_TMP/out.json ]] || fail "the warning kept the file from being written"
expect_exit 0 "convert perfetto into a .json.gz name" -- "$ACCELTRACE" convert --to perfetto -O "$TEST_TMP/p.trace.json.gz" "$TEST_TMP/vm.xplane.pb"
contains "$err" "'.perfetto-trace'" "a .json.gz name for Perfetto: the suffix that fits"
for ok in "json:x.json.gz" "perfetto:x.perfetto-trace" "perfetto:x.pftrace"; do
	expect_exit 0 "convert to ${ok#*:}" -- "$ACCELTRACE" convert --to "${ok%%:*}" -O "$TEST_TMP/${ok#*:}" "$TEST_TMP/vm.xplane.pb"
	[[ -z $err ]] || fail "${ok#*:}: a name that fits got: $err"
done

# Refusals.
expect_exit 2 "unknown format" -- "$ACCELTRACE" convert --to svg "$TEST_TMP/vm.xplane.pb"
expect_exit 2 "no format" -- "$ACCELTRACE" convert "$TEST_TMP/vm.xplane.pb"
head -c 100 "$TEST_TMP/vm.xplane.pb" >"$TEST_TMP/cut.xplane.pb"
expect_exit 1 "truncated input" -- "$ACCELTRACE" convert --to perfetto "$TEST_TMP/cut.xplane.pb"
contains "$err" "truncated or corrupt" "truncated input: the reason"
[[ ! -e $TEST_TMP/cut.perfetto-trace ]] || fail "a file was left for a truncated input"
mkdir "$TEST_TMP/ro" && chmod 500 "$TEST_TMP/ro"
if [[ $(id -u) -ne 0 ]]; then
	expect_exit 1 "unwritable directory" -- "$ACCELTRACE" convert --to json -O "$TEST_TMP/ro/x.json.gz" "$TEST_TMP/vm.xplane.pb"
fi

# A full disk (a 64 KiB tmpfs in a private mount namespace): a clear error
# naming the file, exit 1, nothing left behind, for both formats.
if [[ $(id -u) -eq 0 ]] && command -v unshare >/dev/null; then
	"$PYTHON" - "$TEST_TMP/big.xplane.pb" <<'PY'
import os, sys
sys.path.insert(0, "tests/report")
import synth_xspace as sx
space = sx.pb2.XSpace()
host = sx.Plane(space, "/host:CPU", 1)
line = host.line("python3", 7)
for i in range(20000):
    host.event(line, "op%d" % (i % 50), i * 1000000, 500000, bytes=i)
open(sys.argv[1], "wb").write(space.SerializeToString())
PY
	mkdir "$TEST_TMP/full"
	for fmt in perfetto json; do
		unshare -m bash -c 'mount -t tmpfs -o size=64k none "$1" || exit 99
			"$2" convert --to "$3" -O "$1/out" "$4"; rc=$?; ls -A "$1" >"$5"; exit $rc' \
			_ "$TEST_TMP/full" "$ACCELTRACE" "$fmt" "$TEST_TMP/big.xplane.pb" \
			"$TEST_TMP/left" 2>"$TEST_TMP/stderr"
		rc=$?
		[[ $rc -eq 99 ]] && { skip_part "no tmpfs mount here; full-disk check skipped"; break; }
		[[ $rc -eq 1 ]] || fail "$fmt on a full disk: exit $rc"
		contains "$(cat "$TEST_TMP/stderr")" "disk full" "$fmt on a full disk: the reason"
		contains "$(cat "$TEST_TMP/stderr")" "$TEST_TMP/full/out" "$fmt on a full disk: the file"
		[[ ! -s $TEST_TMP/left ]] || fail "$fmt on a full disk left: $(cat "$TEST_TMP/left")"
	done
else
	skip_part "not root or no unshare: full-disk check skipped"
fi
test_done
