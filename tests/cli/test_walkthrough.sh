#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# docs/walkthrough.md, the new user's walk from a clone to an answer, a
# daemon and a fleet capture, run as written (issue 26): the blocks marked
# `<!-- walkthrough: run -->` are taken from the page, in order, into one
# bash script (build/ replaced by $OUTPUT/) and run against the simulated
# TPU trainer; then what each step printed is checked. The page cannot
# drift from the tool without this failing.
set -u
cd "$(dirname "$0")/../.."
. tests/harness/test.sh
require_root "record and the daemon load BPF programs"
[[ -x $OUTPUT/sim/tpu-trainer ]] || test_skip "no simulator at $OUTPUT/sim (make all)"

DOC=docs/walkthrough.md
script=$TEST_TMP/walk.sh
{
	echo 'set -euo pipefail'
	# What the page starts in the background is ended whatever happens.
	echo 'trap '\''kill ${DAEMON:-} ${TRAINER:-} ${OTHER:-} 2>/dev/null || true; wait 2>/dev/null || true'\'' EXIT'
	awk '/<!-- walkthrough: run -->/ { want = 1; next }
	     want && /^```sh/ { inblock = 1; want = 0; next }
	     inblock && /^```/ { inblock = 0; print ""; next }
	     inblock { print }' "$DOC" | sed "s#\bbuild/#$OUTPUT/#g"
} >"$script"
blocks=$(grep -c '<!-- walkthrough: run -->' "$DOC")
((blocks >= 8)) || fail "$DOC: $blocks runnable blocks, expected the whole walk (8 or more)"
# The daemon's default listen port may be taken on a test machine; the page
# turns it off, so nothing here depends on it.
grep -q -- '--listen off' "$script" || fail "the daemon's block should not need a free port"

# The walk's own waits are bounded by the test's timeout; each step takes
# seconds. Python with Debian's packages, as a user's python3 would be.
WALK=$TEST_TMP/walk PATH=/usr/bin:$PATH timeout 240 bash "$script" >"$TEST_TMP/out" 2>"$TEST_TMP/err"
rc=$?
out=$(cat "$TEST_TMP/out")
((rc == 0)) || { fail "the walk failed (exit $rc): $(grep -v 'clock:' "$TEST_TMP/err" | tail -n 20)
stdout: $(tail -n 20 "$TEST_TMP/out")"; test_done; }
W=$TEST_TMP/walk

# 3. record
rec=$(cat "$W/record.txt")
contains "$rec" "capture written: $W/logdir/plugins/profile/" "record: the capture's path"
contains "$rec" "perfetto" "record: the Perfetto trace beside it"
contains "$rec" "events span" "record: the window and the events span"
ls "$W"/logdir/plugins/profile/*/*.xplane.pb >/dev/null 2>&1 || fail "record: no .xplane.pb"
ls "$W"/logdir/plugins/profile/*/*.perfetto-trace >/dev/null 2>&1 || fail "record: no Perfetto trace"

# 4. report: an answer, the one the trainer was built to give (~30% input).
rep=$(cat "$W/report.txt")
contains "$rep" "input-bound" "report: the verdict"
contains "$rep" "Recommendation" "report: the advice"
contains "$rep" "events span" "report: the events span, in record's words"
grep -Eq 'moderately input-bound|HIGHLY input-bound' <<<"$rep" ||
	fail "report: the simulated trainer is input-bound about 30%: $(grep -A1 'input-bound' <<<"$rep")"
"$PYTHON" - "$W/report.json" <<'PY' || fail "report -j: steps.list and input_bound_pct"
import json, sys
r = json.load(open(sys.argv[1]))
ok = r["steps"]["complete"] > 100 and len(r["steps"]["list"]) == r["steps"]["complete"]
ok &= 10 <= r["input_bound_pct"] <= 50
print("input-bound %.1f%%, %d steps listed" % (r["input_bound_pct"], len(r["steps"]["list"])))
sys.exit(0 if ok else 1)
PY

# 5. convert
[[ -s $W/trace.perfetto-trace ]] || fail "convert: no Perfetto trace at $W/trace.perfetto-trace"

# 6. -- CMD: a capture, and the same two words in record and report.
cmd=$(cat "$W/cmd.txt")
contains "$cmd" "capture written: $W/cmd-logdir/plugins/profile/" "record -- CMD: the capture's path"
contains "$cmd" "window" "record -- CMD: the window"

# 7. the daemon's trigger, 8. the fleet session
trig=$(cat "$W/trigger.txt")
[[ $trig == "$W/daemon-logdir/plugins/profile/"*.xplane.pb* ]] ||
	fail "trigger: prints the capture's path: '$trig'"
# 7. a whole-host capture of two jobs, reported per process: the walk's
# trainer input-bound, the other not.
two=$(cat "$W/two-jobs.txt")
# (The daemon watches the whole host: another job there is reported too.)
[[ $(grep -c '^=== process' <<<"$two") -ge 2 ]] || fail "two jobs: a report per process: $two"
contains "$two" "(other_job), " "two jobs: the second job named by its command"
"$PYTHON" - "$two" <<'PY' || fail "two jobs: each its own verdict: $two"
import re, sys
lines = sys.argv[1].splitlines()
verdict = {}
for i, l in enumerate(lines):
    m = re.match(r"=== process \d+ \((\S+)\)", l)
    if m and i + 1 < len(lines):
        verdict[m.group(1)] = float(re.search(r"([\d.]+)%", lines[i + 1]).group(1))
print(verdict)
sys.exit(0 if verdict.get("other_job", 99) < 5 and
         any(v >= 10 for k, v in verdict.items() if k != "other_job") else 1)
PY
fleet=$(cat "$W/fleet.txt")
[[ $fleet == "$W/daemon-logdir/plugins/profile/fleet-1/"*.xplane.pb* ]] ||
	fail "trigger --at --session: the capture under the fleet's session: '$fleet'"
contains "$out" "acceltrace report: $W/daemon-logdir/plugins/profile/fleet-1" \
	"report on the fleet's session"
test_done
