#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# convert of a session of several hosts: one Perfetto trace and one Chrome
# JSON of them all (SESSION/all_hosts.*, or -O), checked by
# export_hosts_check.py with Python's protobuf and json: a process group
# per host named after it, no pid or tid on two hosts (h1 and h2 are the
# same capture, so every pid collides), device tracks named after their
# host, each host's spans exactly its XSpace's on the wall clock (h3 has no
# wall-clock start: aligned at the others'). --per-host keeps a file per
# host; -O with several outputs is refused.
set -u
cd "$(dirname "$0")/../.."
. tests/harness/test.sh

EMIT=$OUTPUT/tests/output/test_xspace_writer
command -v protoc >/dev/null || test_skip "protoc is not installed"
"$PYTHON" -c 'import google.protobuf' 2>/dev/null || test_skip "$PYTHON has no google.protobuf"
[[ -x $EMIT ]] || { fail "$EMIT not built"; test_done; }
"$EMIT" --emit "$TEST_TMP" >/dev/null 2>&1 || { fail "emitting the sample capture"; test_done; }
"$PYTHON" - "$TEST_TMP/gpu.xplane.pb" <<'PY' || { fail "writing the GPU capture"; test_done; }
import sys
sys.path.insert(0, "tests/report")
import synth_xspace as sx
space = sx.pb2.XSpace()
sx.gpu_kernels(space)
open(sys.argv[1], "wb").write(space.SerializeToString())
PY
S=$TEST_TMP/session
mkdir "$S"
cp "$TEST_TMP/sample.xplane.pb" "$S/h1.xplane.pb"
cp "$TEST_TMP/sample.xplane.pb" "$S/h2.xplane.pb"
cp "$TEST_TMP/gpu.xplane.pb" "$S/h3.xplane.pb"
hosts=(h1="$S/h1.xplane.pb" h2="$S/h2.xplane.pb" h3="$S/h3.xplane.pb")

expect_exit 0 "convert a session to perfetto" -- "$ACCELTRACE" convert --to perfetto "$S"
contains "$out" "(3 hosts) -> $S/all_hosts.perfetto-trace" "one trace for the session"
expect_exit 0 "convert a session to json" -- "$ACCELTRACE" convert -j --to json "$S"
[[ $(json_get "$out" 'd[0]["output"]') == "$S/all_hosts.trace.json.gz" ]] || fail "-j output: $out"
[[ $(json_get "$out" '",".join(d[0]["hosts"])') == "h1,h2,h3" ]] || fail "-j hosts: $out"
"$PYTHON" tests/export/export_hosts_check.py "$S/all_hosts.perfetto-trace" \
	"$S/all_hosts.trace.json.gz" "${hosts[@]}" || fail "the session's trace differs from its hosts'"
[[ ! -e $S/h1.perfetto-trace ]] || fail "a file per host without --per-host"

expect_exit 0 "convert a session with -O" -- "$ACCELTRACE" convert --to perfetto -O "$TEST_TMP/fleet.pftrace" "$S"
[[ -s $TEST_TMP/fleet.pftrace ]] || fail "-O: no file"
expect_exit 0 "convert json with -O" -- "$ACCELTRACE" convert --to json -O "$TEST_TMP/fleet.json.gz" "$S"
"$PYTHON" tests/export/export_hosts_check.py "$TEST_TMP/fleet.pftrace" \
	"$TEST_TMP/fleet.json.gz" "${hosts[@]}" || fail "-O: differs from the hosts'"

expect_exit 0 "convert --per-host" -- "$ACCELTRACE" convert --to perfetto --per-host "$S"
for h in h1 h2 h3; do
	[[ -s $S/$h.perfetto-trace ]] || fail "--per-host: no $h.perfetto-trace"
done
expect_exit 2 "-O with --per-host" -- "$ACCELTRACE" convert --to perfetto --per-host -O "$TEST_TMP/x.pftrace" "$S"
contains "$err" "make 3 outputs" "-O with several outputs: the reason"

# A host that cannot be read: the session is not converted, the file named.
head -c 100 "$S/h1.xplane.pb" >"$S/h0.xplane.pb"
expect_exit 1 "a truncated host" -- "$ACCELTRACE" convert --to perfetto -O "$TEST_TMP/bad.pftrace" "$S"
contains "$err" "h0.xplane.pb" "a truncated host: named"
[[ ! -e $TEST_TMP/bad.pftrace ]] || fail "a file was written without every host"
test_done
