#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# report's device memory section against XSpaces in docs/capture-format.md's
# form, with answers worked out by hand in tests/report/synth_memory.py:
# peak exact to the allocation and in the eval step; in use at the window's
# start and end; a leak of 4096 B/step found (within 1%) and named, by
# group_id and by the steps' ranges; frees of pre-probe allocations counted
# and not sized; the largest live allocations at the peak, and what was
# made before the window; churn per step; the timeline's growth per hour;
# the reserved layer said to be no tensors; a malformed timelines stat said
# as a loss. A capture without memory has no section.
set -u
cd "$(dirname "$0")/../.."
. tests/harness/test.sh

"$PYTHON" -c 'import google.protobuf' 2>/dev/null || test_skip "$PYTHON has no google.protobuf"
command -v protoc >/dev/null || test_skip "protoc is not installed"
"$PYTHON" tests/report/synth_memory.py "$TEST_TMP" || { fail "writing the XSpaces"; test_done; }
"$PYTHON" tests/report/synth_xspace.py "$TEST_TMP" || { fail "writing the XSpaces"; test_done; }

# check CASE PYTHON-CONDITION... over `m`, the allocator GPU_0_pjrt_buffers
# of pid 42, and `d`, the whole JSON report.
check() {
	local case=$1 json pre
	shift
	json=$("$ACCELTRACE" report -j "$TEST_TMP/$case.xplane.pb" 2>"$TEST_TMP/err") ||
		{ fail "$case: report failed: $(cat "$TEST_TMP/err")"; return; }
	pre='[x for x in d["memory"]["devices"] if x["allocator_name"] == "GPU_0_pjrt_buffers" and x["pid"] == 42]'
	for cond in "$@"; do
		[[ $(json_get "$json" "(lambda m: bool($cond))(($pre or [None])[0])") == True ]] ||
			fail "$case: $cond (memory: $(json_get "$json" "$pre"))"
	done
}

PEAK=$((1000000 + 7 * 4096 + 300000 + 700000))
common=("m['peak_bytes'] == $PEAK" "m['peak_step'] == 6" "m['in_use_start_bytes'] == 1000000"
	"m['in_use_end_bytes'] == 1000000 + 10 * 4096" "m['device_ordinal'] == 0"
	"m['layer'] == 'pjrt_buffers'" "not m['reserved_not_tensors']"
	"abs(m['growth_bytes_per_step'] - 4096) <= 0.01 * 4096" "m['leak']"
	"abs(m['leak_bytes_per_step'] - 4096) <= 0.01 * 4096"
	"m['frees_unknown_size'] == 2" "m['allocs'] == 31 and m['frees'] == 23"
	"m['free_bytes'] == 10 * 300000 + 700000"
	"[a['bytes'] for a in m['largest_at_peak']] == [700000, 200000, 100000] + [4096] * 5"
	"m['largest_at_peak'][0]['api'] == 'eval_buffer'"
	"m['largest_at_peak'][1]['data_type'] == 'f32' and m['largest_at_peak'][1]['tensor_shapes'] == '[500,100]'"
	"m['peak_unattributed_bytes'] == 1000000")
# Steps by group_id: 10 steps; the peak at 61 ms of the first event (step 6's eval).
check mem_leak_eval "${common[@]}" "m['peak_time_ns'] == 61000000" \
	"m['churn_steps'] == 10 and abs(m['allocs_per_step'] - 3.1) < 1e-9" \
	"abs(m['frees_per_step'] - 2.3) < 1e-9" \
	"m['timeline']['points'] == 77 and m['timeline']['start_ns'] == -3 * 3600 * 10**9" \
	"m['timeline']['finest_ns'] == 10**10 and m['timeline']['coarsest_ns'] == 6 * 10**11" \
	"abs(m['timeline']['growth_bytes_per_hour'] - 100000) <= 1000" "m['timeline']['leak']" \
	"len(d['memory']['devices']) == 3" \
	"[x['reserved_not_tensors'] for x in d['memory']['devices'] if x['layer'] == 'cuda_reserved'] == [True, True]" \
	"[(x['leak'], x['growth_bytes_per_step'], x['timeline']['leak']) for x in d['memory']['devices'] if x['allocator_name'] == 'GPU_0_cuda_reserved'] == [(False, 0, False)]" \
	"[(x['untracked'], x['untracked_bytes'], x['alloc_bytes']) for x in d['memory']['devices'] if x['allocator_name'] == 'GPU_0_cuda_reserved'] == [(1, 2 << 20, 2 << 20)]" \
	"[(x['in_use_start_bytes'], x['peak_bytes'], x['largest_at_peak'], x['peak_unattributed_bytes']) for x in d['memory']['devices'] if x['allocator_name'] == 'GPU_0_cuda_reserved'] == [(3 << 20, 3 << 20, [], 3 << 20)]" \
	"m['untracked'] == 0 and m['untracked_bytes'] == 0" \
	"[(x['device_ordinal'], x['peak_bytes'], x['in_use_end_bytes'], x['allocs']) for x in d['memory']['devices'] if x['allocator_name'] == 'GPU_1_cuda_reserved'] == [(1, 5 << 20, 5 << 20, 0)]"
# No group_id: steps are the Steps line's ranges (9 complete steps).
check mem_steps_only "${common[@]}" "m['churn_steps'] == 9" \
	"abs(m['allocs_per_step'] - 28 / 9) < 1e-9" "m['growth_points'] == 9"
check mem_bad_timeline "${common[@]}" "m['timeline']['points'] == 0" \
	"m['timeline']['growth_bytes_per_hour'] is None" \
	"any('memory timelines stat is malformed' in l for l in d['losses'])"
# Timeline times at the ends of int64: read, nothing overflows.
# Three points: no line through them, in the JSON as in the text.
check mem_extreme_times "m['timeline']['points'] == 3" "m['peak_bytes'] == $PEAK" \
	"m['timeline']['growth_bytes_per_hour'] is None and not m['timeline']['leak']"
# Sizes, bytes in use and group ids at the ends of int64: reported, nothing
# overflows (make check-sanitize's build of acceltrace says so), group ids
# too far apart for steps give way to the steps' ranges.
check mem_hostile_stats "m['peak_bytes'] >= 2**63 - 3" "m['churn_steps'] == 9" \
	"m['peak_unattributed_bytes'] == 0"
# No memory in the capture: an empty list, as other lists are.
check tpu_infeed_ops "m is None" "d['memory'] == {'devices': []}"

# The text's summary: two lines an allocator, the leak in them.
text=$("$ACCELTRACE" report "$TEST_TMP/mem_leak_eval.xplane.pb")
for want in "Device memory (report --memory: " "  GPU_0_pjrt_buffers, pid 42
    peak 1.93 MiB at 61.000 ms (step 6); in use 976.56 KiB -> 1016.56 KiB; growth +4.00 KiB/step (LEAK, steady growth); since the process began +97.66 KiB/h (LEAK, steady growth)" \
	"1 allocation past the kernel's live-allocation table: in use short by up to 2.00 MiB"; do
	contains "$text" "$want" "text report's summary"
done
[[ $text != *"largest live allocations"* ]] || fail "the summary lists allocations: $text"
text=$("$ACCELTRACE" report --memory "$TEST_TMP/mem_leak_eval.xplane.pb")
for want in "Device memory" "GPU_0_pjrt_buffers, pid 42, device 0" \
	"peak in the window   1.93 MiB ($PEAK B) at 61.000 ms, step 6" \
	"+4.00 KiB/step (R^2 1.00 over 10 points): LEAK" \
	"2 frees of allocations made before the probes: counted, sizes unknown" \
	"1 allocation (2.00 MiB) past the kernel's live-allocation table: counted, not in use; in use and growth are short by up to that" \
	"made before the window: not known one by one" \
	"reserved (PyTorch's caching allocator, XLA's BFC): not tensors" \
	"timeline from 3.0 h before the window: 77 points" "+97.66 KiB/h"; do
	contains "$text" "$want" "text report --memory"
done
text=$("$ACCELTRACE" report "$TEST_TMP/tpu_infeed_ops.xplane.pb")
[[ $text != *"Device memory"* ]] || fail "a capture without memory has a memory section"
test_done
