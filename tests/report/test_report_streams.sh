#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# acceltrace report on a GPU capture as acceltrace writes it: stream lines
# (`Stream #7(Compute)`, `Stream #9(MemcpyH2D,Memset)`, ...) and an
# estimated XLA Modules line from the host runtime beside them, from
# `test_xspace_streams --emit` (tests/output/test_xspace_streams.c). Steps
# come from the modules; device busy time, input (H2D copies) and top ops
# from the streams' events, unioned across streams: each 200 us step is
# 20 us of MemcpyH2D, 55 us of kernels and memsets, 125 us idle.
set -u
cd "$(dirname "$0")/../.."
. tests/harness/test.sh

EMIT=$OUTPUT/tests/output/test_xspace_streams
[[ -x $EMIT ]] || { fail "$EMIT not built"; test_done; }
"$EMIT" --emit "$TEST_TMP" || { fail "emitting the stream capture"; test_done; }

json=$("$ACCELTRACE" report -j "$TEST_TMP/streams.xplane.pb" 2>"$TEST_TMP/err") ||
	{ fail "report failed: $(cat "$TEST_TMP/err")"; test_done; }
for cond in 'd["steps"]["count"] == 4' 'd["steps"]["program"] == "jit_train_step"' \
	'd["steps"]["device"] == "/device:GPU:0"' 'abs(d["steps"]["avg_ms"] - 0.2) < 1e-9' \
	'abs(d["input_bound_pct"] - 10) < 1e-9' 'abs(d["compute_pct"] - 27.5) < 1e-9' \
	'abs(d["device_idle_pct"] - 62.5) < 1e-9' \
	'd["top_ops"][0]["name"] == "gemm_fusion_dot_2" and d["top_ops"][0]["count"] == 4' \
	'abs(d["top_ops"][0]["self_time_pct"] - 100 * 160 / 405) < 1e-9' \
	'[o["name"] for o in d["top_ops"][1:4]] == ["MemcpyH2D", "Memset", "loop_fusion"]' \
	'not any("XLA Ops" in m for m in d["missing"])'; do
	[[ $(json_get "$json" "bool($cond)") == True ]] || fail "$cond (report: ${json:0:1500})"
done
test_done
