#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# Device memory in the exports (docs/export.md): per allocator a counter
# track "Device memory in use: <allocator>" under its process, unit bytes,
# holding the timeline since the process started (hours before the window)
# and every allocation and free in it; memory events are not slices.
# Checked by export_memory_check.py (a wire reader of its own for
# Perfetto, gzip+json for Chrome) against XSpaces in the documented form
# (tests/report/synth_memory.py); and the check fails on an export that
# lacks the timeline.
set -u
cd "$(dirname "$0")/../.."
. tests/harness/test.sh

"$PYTHON" -c 'import google.protobuf' 2>/dev/null || test_skip "$PYTHON has no google.protobuf"
command -v protoc >/dev/null || test_skip "protoc is not installed"
"$PYTHON" tests/report/synth_memory.py "$TEST_TMP" || { fail "writing the XSpaces"; test_done; }

for c in mem_leak_eval mem_bad_timeline mem_extreme_times; do
	expect_exit 0 "convert $c to perfetto" -- "$ACCELTRACE" convert --to perfetto \
		-O "$TEST_TMP/$c.perfetto-trace" "$TEST_TMP/$c.xplane.pb"
	expect_exit 0 "convert $c to json" -- "$ACCELTRACE" convert --to json \
		-O "$TEST_TMP/$c.trace.json.gz" "$TEST_TMP/$c.xplane.pb"
done
# Three allocators: two with events, one in the timeline only.
"$PYTHON" tests/export/export_memory_check.py "$TEST_TMP/mem_leak_eval.xplane.pb" \
	"$TEST_TMP/mem_leak_eval.perfetto-trace" "$TEST_TMP/mem_leak_eval.trace.json.gz" 3 ||
	fail "mem_leak_eval: counters differ from the XSpace"
# A malformed timeline: the window's events are still counters.
"$PYTHON" tests/export/export_memory_check.py "$TEST_TMP/mem_bad_timeline.xplane.pb" \
	"$TEST_TMP/mem_bad_timeline.perfetto-trace" "$TEST_TMP/mem_bad_timeline.trace.json.gz" 2 ||
	fail "mem_bad_timeline: counters differ from the XSpace"
# Times at the ends of int64 (a hostile file): converted, the point before
# the clock's 0 left out, the rest as the XSpace implies.
"$PYTHON" tests/export/export_memory_check.py "$TEST_TMP/mem_extreme_times.xplane.pb" \
	"$TEST_TMP/mem_extreme_times.perfetto-trace" "$TEST_TMP/mem_extreme_times.trace.json.gz" 2 ||
	fail "mem_extreme_times: counters differ from the XSpace"
# The check itself: exports without the timeline do not pass for the file with it.
"$PYTHON" tests/export/export_memory_check.py "$TEST_TMP/mem_leak_eval.xplane.pb" \
	"$TEST_TMP/mem_bad_timeline.perfetto-trace" "$TEST_TMP/mem_bad_timeline.trace.json.gz" \
	>/dev/null 2>&1 && fail "the check passed exports that lack the memory timeline"

# Hours before the window: the JSON's zero is the timeline's first point.
zero=$(json_get "$(gzip -dc "$TEST_TMP/mem_leak_eval.trace.json.gz")" 'd["otherData"]["zero_ns"]')
[[ $zero == $((20000 * 10**9 - 3 * 3600 * 10**9 + 600 * 10**9)) ]] ||
	fail "json zero_ns $zero: not the first timeline point's end"
test_done
