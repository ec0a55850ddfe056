#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""A fleet of three simulated hosts in one session (docs/report.md, Fleet;
docs/export.md, A session of several hosts): three trainers, h3's steps
14 ms against h1's and h2's 10 ms, each recorded by `acceltrace record`,
their files put into one session directory as <host>.xplane.pb (as
XProf's capture of a pod lays them out), plus a host with no steps (h4).
- report names h3 as the straggler in text and JSON; each host's mean and
  median step time within 2 % of the truth's (its step period over the
  window, docs/report.md's accuracy), the gap and spread within 2 % of the
  truth's differences; h4 is listed with no steps and left out;
- a session of h1 and h2 alone (equal hosts) names no straggler;
- convert's one Perfetto trace and one Chrome JSON of the session hold a
  process group per host with no pid collision and each host's spans,
  checked with Python's protobuf and json (tests/export/export_hosts_check.py).
"""
import json
import os
import shutil
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "harness"))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "report"))
from e2e import (acceltrace, check, finish, record, require_root, running_trainer,
                 tmpdir, truth)

TOL = 0.02


def capture(work, name, step_ms):
    """(xplane path, truth's step times in ns over the window) of one host."""
    tp = os.path.join(work, name + ".truth.jsonl")
    t = running_trainer("--steps", "0", "--duration", "60s", "--step-time", "%gms" % step_ms,
                        "--fetch-every", "0", truth=tp)
    if not t:
        return None, None
    rc, s, err = record("--pid", str(t.pid), "--duration", "2s",
                        "--logdir", os.path.join(work, name + "-logs"))
    t.stop()
    if not check(rc == 0 and s, "record %s exited %d: %s" % (name, rc, err[-500:])):
        return None, None
    w0, w1 = s["window_start_ns"], s["window_stop_ns"]
    starts = sorted(r["t_start"] for r in truth(tp, t.pid)
                    if r["type"] == "device_execution" and r["core"] == 0
                    and r["module"] == "train_step" and w0 <= r["t_start"] <= w1)
    return s["path"], [b - a for a, b in zip(starts, starts[1:])]


def report(*args):
    rc, out, err = acceltrace("report", *args)
    check(rc == 0, "report %s exited %d: %s" % (args, rc, err[-500:]))
    return out


def near(got, want, what):
    return check(got is not None and abs(got - want) <= TOL * abs(want),
                 "%s: %s, truth %s (within %g %%)" % (what, got, want, 100 * TOL))


def main():
    require_root()
    work = tmpdir()
    session = os.path.join(work, "logdir", "plugins", "profile", "2025_01_01_00_00_00")
    equal = os.path.join(work, "logdir2", "plugins", "profile", "2025_01_01_00_00_01")
    os.makedirs(session)
    os.makedirs(equal)
    want = {}
    for name, ms in (("h1", 10.0), ("h2", 10.0), ("h3", 14.0)):
        path, steps = capture(work, name, ms)
        if not path or not check(len(steps) > 50, "%s: %d truth steps" % (name, len(steps))):
            return
        shutil.copyfile(path, os.path.join(session, name + ".xplane.pb"))
        if name != "h3":
            shutil.copyfile(path, os.path.join(equal, name + ".xplane.pb"))
        want[name] = steps
    # A host that ran no steps: host spans only.
    import synth_xspace as sx
    space = sx.pb2.XSpace()
    sx.host_only(space)
    with open(os.path.join(session, "h4.xplane.pb"), "wb") as f:
        f.write(space.SerializeToString())

    text = report(session)
    check("h3 is a straggler" in text, "the text names h3 the straggler:\n" + text[-1500:])
    d = json.loads(report("-j", session))
    f = d.get("fleet") or {}
    check([r.get("host") for r in d["reports"]] == ["h1", "h2", "h3", "h4"], "reports[].host")
    check(f.get("straggler") == "h3" and f.get("slowest_host") == "h3",
          "fleet.straggler h3: %s" % {k: f.get(k) for k in ("straggler", "slowest_host")})
    by = {h["host"]: h for h in f.get("hosts", [])}
    means = {}
    for name, steps in want.items():
        h = by.get(name, {})
        # The report measures start to next start of the window's steps,
        # as the truth's steps here are taken.
        means[name] = statistics.mean(steps)
        print("%s: mean %s ns (truth %.0f), median %s (truth %.0f), %s steps (truth %d)"
              % (name, h.get("step_time_mean_ns"), means[name], h.get("step_time_median_ns"),
                 statistics.median(steps), h.get("steps"), len(steps)))
        near(h.get("step_time_mean_ns"), means[name], name + " mean")
        near(h.get("step_time_median_ns"), statistics.median(steps), name + " median")
    check(by.get("h4", {}).get("steps") == 0 and f.get("hosts_with_steps") == 3,
          "h4 listed without steps, not counted")
    others = statistics.median([statistics.median(want["h1"]), statistics.median(want["h2"])])
    gap = statistics.median(want["h3"]) - others
    # The gap is a difference of two medians, each within 2 %: allow 2 % of
    # the larger on each.
    check(f.get("straggler_gap_ns") is not None and
          abs(f["straggler_gap_ns"] - gap) <= 2 * TOL * statistics.median(want["h3"]),
          "gap %s ns, truth %.0f" % (f.get("straggler_gap_ns"), gap))
    spread = max(means.values()) - min(means.values())
    check(f.get("step_time_spread_ns") is not None and
          abs(f["step_time_spread_ns"] - spread) <= 2 * TOL * max(means.values()),
          "spread %s ns, truth %.0f" % (f.get("step_time_spread_ns"), spread))

    d2 = json.loads(report("-j", equal))
    check(d2.get("fleet", {}).get("straggler", "x") is None,
          "equal hosts: no straggler: %s" % d2.get("fleet"))
    check("no straggler" in report(equal), "equal hosts: the text says no straggler")

    pf, js = os.path.join(work, "fleet.pftrace"), os.path.join(work, "fleet.json.gz")
    del_h4 = os.path.join(session, "h4.xplane.pb")
    os.unlink(del_h4)
    for fmt, out in (("perfetto", pf), ("json", js)):
        rc, _, err = acceltrace("convert", "--to", fmt, "-O", out, session)
        check(rc == 0, "convert %s exited %d: %s" % (fmt, rc, err[-500:]))
    hosts = ["%s=%s" % (h, os.path.join(session, h + ".xplane.pb")) for h in ("h1", "h2", "h3")]
    p = subprocess.run([sys.executable, os.path.join(os.path.dirname(__file__), "..", "export",
                                                     "export_hosts_check.py"), pf, js] + hosts)
    check(p.returncode == 0, "convert's session trace: one process group per host, its spans")


if __name__ == "__main__":
    main()
    finish()
