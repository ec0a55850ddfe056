#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""What tracing costs the simulated trainer, in counts, not times: uprobe
traps per step.

A uprobe's cost is its trap (0.5-5 us a hit on the VMs we measured, a
uretprobe's return a second trap), so the number of traps a step takes is
what a new always-on probe on a hot call changes, on any machine. This
test records the trainer by PID, reads each probe's hits in the traced
process (the kernel's per-probe counters, in record's JSON summary) and
where `acceltrace probes` places each (its place, return probe, detail):

- each probe's hits per Execute equal the trainer's calls per step
  (docs/simulator.md, "Device memory": per core a step's input buffer, its
  output sized once, both destroyed; a completion registered and called
  back), and no probe outside that table fires on the hot path;
- the traps a step costs `record` (every probe) and the daemon's default
  (core probes only: detail comes in slices) stay within the budgets
  below, which say where each trap goes. A change that adds a trap a step
  must raise a budget here, in the same commit, and say why.
"""
import collections
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "harness"))
from e2e import ACCELTRACE, check, finish, record, require_root, running_trainer, tmpdir  # noqa: E402

CORES = 4
# Calls a step (one Execute on CORES cores) makes, by probe.
EXPECTED_PER_STEP = {
    "PJRT_LoadedExecutable_Execute": 1,
    "PJRT_Client_BufferFromHostBuffer": CORES,            # detail: the transfer
    "PJRT_Client_BufferFromHostBuffer (memory)": CORES,   # core: the allocation
    "PJRT_Buffer_OnDeviceSizeInBytes": CORES,             # each output sized once
    "PJRT_Buffer_Destroy": 2 * CORES,                     # the input and the output
    "PJRT_Event_OnReady": CORES,                          # detail
    "PJRT_Event_OnReady callback": CORES,                 # detail
}
# Traps a step. Execute 2 (entry, return); BufferFromHostBuffer 2 per core
# (its transfer and memory probes share one place); OnDeviceSizeInBytes 2
# per core (the size is written by the callee); Destroy 1 per buffer (a
# free is counted at its entry: no return probe); OnReady and its callback
# 1 per core each. The daemon's default has no detail probes between
# slices: Execute and memory only.
RECORD_TRAPS_MAX = 2 + 2 * CORES + 2 * CORES + 2 * CORES + CORES + CORES   # 34
DAEMON_TRAPS_MAX = 2 + 2 * CORES + 2 * CORES + 2 * CORES                   # 26
TOLERANCE = 0.05
# The completion callback is probed where the first registration says it
# is, a moment after the others: it counts a little short, and `probes`
# (which places nothing at run time) does not list it. An entry probe,
# detail.
CALLBACK = "PJRT_Event_OnReady callback"
CALLBACK_PLACE = {"library": "(the callback)", "attach_offset": 0, "return_probe": False,
                  "detail": True}


def probe_places(pid):
    """`acceltrace probes -j --pid`: {function: probe} for the uprobes
    placed, and the function's place (library, offset)."""
    p = subprocess.run([ACCELTRACE, "-j", "probes", "--pid", str(pid)], capture_output=True,
                       text=True)
    try:
        probes = json.loads(p.stdout)["probes"]
    except (ValueError, KeyError):
        check(False, "probes --pid %d: %s" % (pid, p.stderr))
        return {}
    return {pr["function"]: pr for pr in probes
            if not pr.get("refused") and pr.get("mechanism") == "uprobe"}


def traps_per_step(per_step, places, core_only):
    """Traps a step: one a hit at each place, two where a probe there has a
    return probe (probes at one place share its traps)."""
    at = collections.defaultdict(lambda: [0.0, False])
    for fn, n in per_step.items():
        pr = places.get(fn)
        if not pr or (core_only and pr["detail"]):
            continue
        place = at[(pr["library"], pr["attach_offset"])]
        place[0] = max(place[0], n)
        place[1] = place[1] or pr["return_probe"]
    return sum(n * (2 if ret else 1) for n, ret in at.values())


def main():
    require_root()
    work = tmpdir()
    t = running_trainer("--steps", "0", "--duration", "60s", "--step-time", "500us",
                        "--cores", str(CORES), "--fetch-every", "0",
                        "--data-dir", os.path.join(work, "data"))
    if not t:
        return
    try:
        places = probe_places(t.pid)
        rc, s, err = record("--pid", str(t.pid), "--duration", "2s",
                            "--logdir", os.path.join(work, "logs"))
    finally:
        t.stop()
    if not check(rc == 0 and s, "record exited %d: %s" % (rc, err[-800:])):
        return
    # Keys are "function [target]"; hits since the probes were placed.
    hits = {k.rsplit(" [", 1)[0]: v for k, v in s["collector"]["probe_hits"].items()}
    steps = hits.get("PJRT_LoadedExecutable_Execute", 0)
    if not check(steps >= 200, "enough steps to count over: %d Executes" % steps):
        return
    per_step = {fn: n / steps for fn, n in hits.items()}
    for fn, want in EXPECTED_PER_STEP.items():
        got = per_step.get(fn, 0)
        low = 3 * TOLERANCE if fn == CALLBACK else TOLERANCE
        check(want * (1 - low) <= got <= want * (1 + TOLERANCE),
              "%s: %.2f hits a step, the trainer makes %d calls" % (fn, got, want))
    for fn, got in per_step.items():
        check(fn in EXPECTED_PER_STEP or got < 0.01,
              "%s: %.2f hits a step, a probe on the hot path this test does not know "
              "(add it, and its traps to the budgets)" % (fn, got))
    missing = [fn for fn in EXPECTED_PER_STEP if fn not in places and fn != CALLBACK]
    check(not missing, "`probes` lists every probe that fires: %s missing" % missing)
    places.setdefault(CALLBACK, CALLBACK_PLACE)
    per_step[CALLBACK] = max(per_step.get(CALLBACK, 0), EXPECTED_PER_STEP[CALLBACK])

    record_traps = traps_per_step(per_step, places, core_only=False)
    daemon_traps = traps_per_step(per_step, places, core_only=True)
    print("uprobe traps a step: record %.1f (budget %d), daemon default %.1f (budget %d)"
          % (record_traps, RECORD_TRAPS_MAX, daemon_traps, DAEMON_TRAPS_MAX))
    check(record_traps <= RECORD_TRAPS_MAX * (1 + TOLERANCE),
          "record: %.1f traps a step, within its budget of %d" % (record_traps, RECORD_TRAPS_MAX))
    check(daemon_traps <= DAEMON_TRAPS_MAX * (1 + TOLERANCE),
          "daemon default: %.1f traps a step, within its budget of %d"
          % (daemon_traps, DAEMON_TRAPS_MAX))
    # Frees are counted at their entry: the hottest memory call has no
    # return probe.
    destroy = places.get("PJRT_Buffer_Destroy")
    check(destroy and not destroy["return_probe"], "Buffer_Destroy: no return probe")


if __name__ == "__main__":
    main()
    finish()
