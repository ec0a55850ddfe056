#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# report -j's keys against their documentation: every key docs/report.md's
# table lists is printed, and every key printed is in the table (lists as
# `key[].field`, objects by their fields). Reports on synthetic captures that fill every list.
set -u
cd "$(dirname "$0")/../.."
. tests/harness/test.sh

"$PYTHON" -c 'import google.protobuf' 2>/dev/null || test_skip "$PYTHON has no google.protobuf"
command -v protoc >/dev/null || test_skip "protoc is not installed"
"$PYTHON" tests/report/synth_xspace.py "$TEST_TMP" || { fail "writing the synthetic XSpaces"; test_done; }
"$PYTHON" tests/report/synth_memory.py "$TEST_TMP" || { fail "writing the memory XSpaces"; test_done; }
for c in tpu_infeed_ops gpu_kernels host_only mem_leak_eval stuck_op host_waiting budget_dropped; do
	"$ACCELTRACE" report -j "$TEST_TMP/$c.xplane.pb" >"$TEST_TMP/$c.json" ||
		fail "report -j $c"
done
# One process of two: a report whose "process" is set.
"$ACCELTRACE" report -j --pid 100 "$TEST_TMP/two_processes.xplane.pb" >"$TEST_TMP/pid.json" ||
	fail "report -j --pid 100 two_processes"
"$PYTHON" - docs/report.md "$TEST_TMP"/*.json <<'PY' || fail "keys differ from docs/report.md"
import json, re, sys

doc = open(sys.argv[1]).read()
table = doc.split("<!-- json-keys: begin -->")[1].split("<!-- json-keys: end -->")[0]
documented = set(re.findall(r"^\| `([^`]+)` \|", table, re.M))

def keys(v, prefix, out):
    if isinstance(v, dict):
        for k, x in v.items():
            name = prefix + "." + k if prefix else k
            if not isinstance(x, dict):  # objects are their keys' prefix
                out.add(name)
            keys(x, name, out)
    elif isinstance(v, list):
        for x in v:
            keys(x, prefix + "[]", out)

printed = set()
for path in sys.argv[2:]:
    keys(json.load(open(path)), "", printed)
required = {"steps.count", "steps.avg_ms", "steps.stddev_ms", "input_bound_pct",
            "device_idle_pct", "host_idle_pct", "top_ops", "top_ops[].name",
            "top_ops[].category", "top_ops[].self_time_pct", "top_ops[].flops_per_s",
            "losses", "memory.devices[].peak_bytes", "memory.devices[].peak_time_ns",
            "memory.devices[].growth_bytes_per_step"}
ok = True
for what, s in (("printed, not documented", printed - documented),
                ("documented, not printed", documented - printed),
                ("required by issue 13, missing", required - printed)):
    if s:
        print("%s: %s" % (what, sorted(s)), file=sys.stderr)
        ok = False
sys.exit(0 if ok else 1)
PY
test_done
