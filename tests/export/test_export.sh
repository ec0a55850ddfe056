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
FIXTURES=${ACCELTRACE_FIXTURES:-../shared/fixtures/h100}
for f in "$FIXTURES"/jax-profiler.xplane.pb "$FIXTURES"/acceltrace-jax-pid.xplane.pb; do
	[[ -r $f ]] && inputs+=("$f")
done
[[ ${#inputs[@]} -gt 1 ]] || echo "note: no fixtures at $FIXTURES; the sample capture only"

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
test_done
