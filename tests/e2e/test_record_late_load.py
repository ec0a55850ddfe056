#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""A plugin dlopen'ed after acceltrace attached, found by nothing but its
mapping: the trainer names it with --plugin (not in its environment) and
record gets no --library, so acceltrace learns of the library when the
trainer maps it executable (the mmap syscall exit), not at the next
250 ms rescan of /proc/PID/maps.

At 10,000 executions a second, with the first execution about 55 ms
after the load (--compile-ms 50: real frameworks compile for far longer),
every Execute after plugin_load must reach the collector (1% allowed for
a GetPjrtApi caught mid-call, whose table a quick rescan finds): the trainer runs
a fixed number of steps after the load and exits, so the collector's count
of Execute calls (window or not) is compared with the ground truth's, and
the number missed is printed. The trainer makes no device node
(--no-device-node): its open would otherwise make acceltrace examine the
process too, at Client_Create. With the rescan alone, a load the rescan
found more than 55 ms late lost every execution until then (up to 2,000
at 250 ms); three runs make that near certain to show. The window itself
must hold exactly the truth's executes, and start at the first of them
although the completion callback is probed only after it (it left about
2% out when the window waited for the callback probe).

LATE_LOAD_COMPILE_MS overrides the compile time (ms), LATE_LOAD_RUNS the
number of runs (default 3). With --compile-ms 1 some executions are still
missed: see docs/probes.md for that window.
"""
import collections
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "harness"))
from e2e import (Trainer, capture_of, check, check_bounds, finish, record,
                 require_root, tmpdir, truth, truth_split)

STEPS = 10000


def typed(T, typ):
    return [r for r in T if r["type"] == typ]


def run(i, compile_ms):
    work = tmpdir()
    tp = os.path.join(work, "truth.jsonl")
    t = Trainer("--steps", str(STEPS), "--step-time", "100us", "--fetch-every", "0",
                "--batch-bytes", "4096", "--compile-ms", str(compile_ms),
                "--no-device-node", "--late-load", "5s", truth=tp)
    rc, s, err = record("--pid", str(t.pid), "--duration", "30s",
                        "--logdir", os.path.join(work, "logs"))
    t.stop()
    what = "late load at 10k/s (run %d)" % i
    if not check(rc == 0 and s, "%s: record exited %d: %s" % (what, rc, err)):
        return None
    T = truth(tp, t.pid)
    load = typed(T, "plugin_load")
    if not check(load and s["probes_attached_ns"] < load[0]["t_call"],
                 "%s: probes attached before the dlopen" % what):
        return None
    t_load = load[0]["t"]
    lib = [l for l in s["libraries"] if l["pack"] == "PJRT plugin"]
    check(lib, "%s: the plugin recognised: %s" % (what, s["libraries"]))
    after = [r for r in typed(T, "execute") if r["t_call"] >= t_load]
    seen = s["collector"]["executions"]
    missed = len(after) - seen
    first = min((r["t_call"] for r in after), default=t_load)
    print("%s: %d executes after plugin_load (the first %.3f ms after it), "
          "%d reached the collector, %d missed (%d code_mapped records; losses %s)"
          % (what, len(after), (first - t_load) / 1e6, seen, missed,
             s["collector"]["records"].get("code_mapped", 0), s["losses"]))
    # Typically none is missed. A GetPjrtApi that was running when its
    # probe was placed leaves the table to a scan, repeated every 20 ms
    # until found: at most 1% missed then. The 250 ms rescan alone missed
    # up to 20%.
    check(len(after) >= STEPS and missed <= len(after) // 100,
          "%s: every Execute after plugin_load reaches the collector (1%% allowed): "
          "%d of %d missed" % (what, missed, len(after)))
    # The window starts at the first step seen, although the completion
    # callback was probed only after it: none of them is left out (the
    # same 1% as above for a table found by a rescan).
    before = sum(1 for r in after if r["t_call"] < s["window_start_ns"])
    check(before <= len(after) // 100,
          "%s: the window starts at the first step seen: %d executes after the load "
          "came before it" % (what, before))
    cap = capture_of(s)
    inside, over = truth_split(typed(T, "execute"), "t_call", "t_return", s,
                               lambda r: r["launch_id"])
    check_bounds("%s: executes in the window" % what,
                 collections.Counter(e.stats.get("launch_id") for e in
                                     cap.named("PJRT_LoadedExecutable_Execute")),
                 inside, over)
    return missed


if __name__ == "__main__":
    require_root()
    compile_ms = int(os.environ.get("LATE_LOAD_COMPILE_MS", "50"))
    runs = int(os.environ.get("LATE_LOAD_RUNS", "3"))
    missed = [run(i, compile_ms) for i in range(runs)]
    print("missed per run: %s" % missed)
    finish()
