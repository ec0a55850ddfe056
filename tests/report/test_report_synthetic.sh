#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# acceltrace report on XSpaces written by Python's protobuf (not by
# acceltrace), each with a known answer (tests/report/synth_xspace.py):
# train/eval alternation (steps are the train program's executions only),
# infeed ops (input-bound % from hlo_category) with top ops and FLOP rate,
# GPU kernels grouped into executions by correlation id, framework step
# markers on the host, a host-only capture (unknowns are null and named),
# a device-only one (device idle over its span); a capture of two jobs
# (a report per process, --pid for one); a device stuck in one op (the
# verdict leads with it);
# and refusals of missing, empty, truncated and garbage files.
set -u
cd "$(dirname "$0")/../.."
. tests/harness/test.sh

"$PYTHON" -c 'import google.protobuf' 2>/dev/null || test_skip "$PYTHON has no google.protobuf"
command -v protoc >/dev/null || test_skip "protoc is not installed"
"$PYTHON" tests/report/synth_xspace.py "$TEST_TMP" || { fail "writing the synthetic XSpaces"; test_done; }

# check CASE PYTHON-CONDITION... over the JSON report `d`
check() {
	local case=$1 json
	shift
	json=$("$ACCELTRACE" report -j "$TEST_TMP/$case.xplane.pb" 2>"$TEST_TMP/err") ||
		{ fail "$case: report failed: $(cat "$TEST_TMP/err")"; return; }
	for cond in "$@"; do
		[[ $(json_get "$json" "bool($cond)") == True ]] ||
			fail "$case: $cond (report: ${json:0:1500})"
	done
}

check tpu_train_eval 'd["steps"]["count"] == 20' 'd["steps"]["program"] == "train_step"' \
	'abs(d["steps"]["avg_ms"] - 10) < 1e-9' 'd["steps"]["stddev_ms"] < 1e-9' \
	'abs(d["device_idle_pct"] - 100 * (1 - (19 * 4 + 3 * 3) / 190)) < 1e-6' \
	'd["top_ops"] == []' 'any("no XLA Ops line" in m for m in d["missing"])'
check tpu_infeed_ops 'd["steps"]["count"] == 10' 'abs(d["input_bound_pct"] - 20) < 1e-9' \
	'abs(d["device_idle_pct"] - 20) < 1e-9' 'abs(d["compute_pct"] - 60) < 1e-9' \
	'd["top_ops"][0]["name"] == "convolution.7"' 'd["top_ops"][0]["category"] == "convolution"' \
	'abs(d["top_ops"][0]["self_time_pct"] - 75) < 1e-9' \
	'abs(d["top_ops"][0]["flops_per_s"] - 1e12) < 1' \
	'd["top_ops"][1]["category"] == "infeed" and d["top_ops"][1]["flops_per_s"] is None'
check gpu_kernels 'd["steps"]["count"] == 8' 'd["steps"]["program"] == "jit_step"' \
	'abs(d["steps"]["avg_ms"] - 5) < 1e-9' 'abs(d["input_bound_pct"] - 40) < 1e-9' \
	'd["input_pipeline"]["host"]["enqueue_ms"] > 0' 'len(d["top_ops"]) == 4'
check host_markers 'd["steps"]["count"] == 6' 'd["steps"]["source"].startswith("framework")' \
	'abs(d["steps"]["avg_ms"] - 3) < 1e-9' 'd["input_bound_pct"] is None' \
	'abs(d["host_idle_pct"] - 100 / 3) < 1e-6'
check host_only 'd["steps"]["count"] == 0' 'd["steps"]["avg_ms"] is None' \
	'd["input_bound_pct"] is None' 'd["device_idle_pct"] is None' \
	'any(m.startswith("steps:") for m in d["missing"])' \
	'd["losses"] == ["ring buffer drops: 12"]'
# No host plane and no step time: device idle over the capture's own span
# (its start was once taken as INT64_MAX and the end overflowed past it).
check device_only 'd["steps"]["count"] <= 1' 'd["host_idle_pct"] is None' \
	'd["device_idle_pct"] is not None and abs(d["device_idle_pct"] - 25) < 1e-9' \
	'any(m.startswith("host idle") for m in d["missing"])'
# Two jobs in one capture: a report each, from its own device and
# threads (jobB's reads fall in jobA's idle time: mixed, jobA would read
# 40 % input-bound), and --pid for one.
check two_processes 'len(d["reports"]) == 2' \
	'[(r["process"]["pid"], r["process"]["name"]) for r in d["reports"]] == [(100, "jobA"), (200, "jobB")]' \
	'd["reports"][0]["process"]["container"] == "c0ffee" * 8 + "0" * 16 and d["reports"][0]["process"]["pod"] == "pod-a"' \
	'[(r["process"]["children_without_device"], r["process"]["children"]) for r in d["reports"]] == [(1, [150]), (0, [])]' \
	'all(r["processes_with_device"] == 2 for r in d["reports"])' \
	'abs(d["reports"][0]["steps"]["avg_ms"] - 10) < 1e-9 and d["reports"][0]["steps"]["count"] == 10' \
	'abs(d["reports"][0]["input_bound_pct"] - 20) < 1e-9' \
	'sorted(o["count"] for o in d["reports"][0]["input_pipeline"]["ops"]) == [5, 10]' \
	'abs(d["reports"][1]["steps"]["avg_ms"] - 5) < 1e-9 and d["reports"][1]["steps"]["count"] == 20' \
	'abs(d["reports"][1]["input_bound_pct"]) < 1e-9' \
	'[o["count"] for o in d["reports"][1]["input_pipeline"]["ops"]] == [20]'
# A device stuck in one op at the stop: the headline, the advice and the
# step program (train_step, not the long_step run once) say so.
check stuck_op 'd["stuck"] is True' 'd["steps"]["program"] == "train_step"' \
	'd["steps"]["count"] == 20' \
	'[(x["plane"], x["name"], x["program"]) for x in d["still_running"]] == [("/device:TPU:1", "all-reduce.3", ""), ("/device:TPU:0", "convolution.77", "long_step")]' \
	'abs(d["still_running"][0]["running_ms"] - 300000) < 1e-6' \
	'abs(d["still_running"][1]["running_ms"] - 1899.5) < 1e-6' \
	'd["recommendation"].startswith("/device:TPU:1 has been in all-reduce.3 for 300.0 s")'
text=$("$ACCELTRACE" report "$TEST_TMP/stuck_op.xplane.pb")
[[ $(sed -n 3p <<<"$text") == "STILL RUNNING when the window ended" ]] ||
	fail "stuck_op: the text does not lead with what is still running: ${text:0:300}"
contains "$text" "/device:TPU:0 has been in convolution.77 (program long_step) for 1.9 s, and still is" \
	"stuck_op: the stalled op, its program and for how long"
check tpu_infeed_ops 'd["stuck"] is False' 'd["still_running"] == []' 'd["threads_waiting"] == []'
# No step completed, the scheduler's spans there: which threads waited.
check host_waiting '[(w["thread"], w["thread_id"], w["waits"], w["how"]) for w in d["threads_waiting"]] == [("main", 7, 9, "blocked"), ("reader", 8, 2, "preempted")]' \
	'abs(d["threads_waiting"][0]["off_cpu_pct"] - 90) < 1e-9' \
	'abs(d["threads_waiting"][1]["off_cpu_pct"] - 10) < 1e-9' \
	'd["recommendation"].startswith("No step completed: the job was waiting")'
contains "$("$ACCELTRACE" report "$TEST_TMP/host_waiting.xplane.pb")" \
	"main                     tid 7        off CPU  90.0% of the window, mostly blocked (9 waits)" \
	"host_waiting: the text names the waiting threads"
text=$("$ACCELTRACE" report "$TEST_TMP/tpu_infeed_ops.xplane.pb")
[[ $(sed -n 3p <<<"$text") == "Recommendation" ]] || fail "the verdict first: ${text:0:200}"
# A capture that did not keep what a verdict rests on gives none; one that
# lost a little says so beside it.
check budget_dropped 'd["verdict_withheld"] is True' \
	'd["recommendation"].startswith("No verdict: the capture'"'"'s span budget dropped 5000 device_op,")' \
	'd["incomplete"]["dropped_device_spans"] == 5000 and d["incomplete"]["dropped_input_spans"] == 0'
contains "$("$ACCELTRACE" report "$TEST_TMP/budget_dropped.xplane.pb")" \
	"Overview (NOT the job's: of what the capture kept)" "budget_dropped: the overview says whose figures"
check few_lost 'd["verdict_withheld"] is False' 'd["incomplete"]["lost_records"] == 3' \
	'd["recommendation"].startswith("The job is HIGHLY input-bound")' \
	'"(Caveat: the capture lost 3 records on the way (under 1% of what it saw)" in d["recommendation"]'
check many_lost 'd["verdict_withheld"] is True' \
	'd["recommendation"].startswith("No verdict: the capture lost 40 records on the way")'
check tpu_infeed_ops 'd["verdict_withheld"] is False' 'd["incomplete"] is None'

json=$("$ACCELTRACE" report -j --pid 200 "$TEST_TMP/two_processes.xplane.pb") ||
	fail "report --pid 200 failed"
[[ $(json_get "$json" 'd["process"]["pid"] == 200 and "reports" not in d') == True ]] ||
	fail "report --pid 200: that process's report alone: ${json:0:300}"
text=$("$ACCELTRACE" report "$TEST_TMP/two_processes.xplane.pb")
contains "$text" "=== process 100 (jobA), 1 of 2 with a device in this capture ===" "text heads jobA"
contains "$text" "process                200 (jobB)" "text says whose report"
contains "$text" "container              c0ffeec0ffee" "text names jobA's container"
contains "$text" "with the threads of    1 child process without a device (150)" \
	"text says jobA's report holds its worker's threads"
[[ $text != *$'\e'* && $text != *$'\nforged'* ]] ||
	fail "a container name's escape or newline printed as such"
expect_exit 1 "report --pid of no process there" -- \
	"$ACCELTRACE" report --pid 300 "$TEST_TMP/two_processes.xplane.pb"
contains "$err" "no process 300 in this capture; processes with a device: 100 (jobA), 200 (jobB)" \
	"--pid 300 names the processes there are"

# Text output: the sections, the chart and the verdict.
text=$("$ACCELTRACE" report "$TEST_TMP/tpu_infeed_ops.xplane.pb")
for want in "Run environment" "Steps" "Overview" "HIGHLY input-bound" "Top device ops" \
	"Input pipeline" "What the capture lost" "Recommendation" "|IIIIIIII############"; do
	contains "$text" "$want" "text report"
done

# Unknowns are said, not printed as zeros.
text=$("$ACCELTRACE" report "$TEST_TMP/host_only.xplane.pb")
for want in "input-bound            unknown" "device idle            unknown" \
	"What the capture cannot tell" "steps: no Steps line" "No step time"; do
	contains "$text" "$want" "text report without steps"
done
[[ $text != *"input-bound            0"* && $text != *"step time   "* ]] ||
	fail "a host-only report prints a figure it cannot know"

# Several files: a logdir reported whole, {"reports": [...]} in JSON.
mkdir -p "$TEST_TMP/logs/plugins/profile/2026_01_01_00_00_00" "$TEST_TMP/logs/plugins/profile/2026_01_02_00_00_00"
cp "$TEST_TMP/gpu_kernels.xplane.pb" "$TEST_TMP/logs/plugins/profile/2026_01_01_00_00_00/a.xplane.pb"
cp "$TEST_TMP/host_only.xplane.pb" "$TEST_TMP/logs/plugins/profile/2026_01_02_00_00_00/a.xplane.pb"
json=$("$ACCELTRACE" report -j "$TEST_TMP/logs")
[[ $(json_get "$json" '[r["steps"]["count"] for r in d["reports"]]') == "[8, 0]" ]] ||
	fail "logdir: both sessions, oldest first: ${json:0:300}"

# Refusals: a clear sentence, exit 1, no crash.
expect_exit 1 "missing file" -- "$ACCELTRACE" report /nonexistent.xplane.pb
contains "$err" "/nonexistent.xplane.pb" "missing file: names it"
: >"$TEST_TMP/empty.xplane.pb"
expect_exit 1 "empty file" -- "$ACCELTRACE" report "$TEST_TMP/empty.xplane.pb"
contains "$err" "empty (0 bytes)" "empty file"
size=$(stat -c %s "$TEST_TMP/gpu_kernels.xplane.pb")
head -c $((size - 9)) "$TEST_TMP/gpu_kernels.xplane.pb" >"$TEST_TMP/cut.xplane.pb"
expect_exit 1 "truncated file" -- "$ACCELTRACE" report "$TEST_TMP/cut.xplane.pb"
contains "$err" "truncated or corrupt" "truncated file"
head -c 4096 /dev/urandom >"$TEST_TMP/garbage.xplane.pb"
"$ACCELTRACE" report "$TEST_TMP/garbage.xplane.pb" >/dev/null 2>&1
rc=$?
[[ $rc -eq 1 ]] || fail "garbage: exit $rc, expected 1"
expect_exit 2 "no argument" -- "$ACCELTRACE" report
test_done
