#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""report never gives a confident verdict from what a capture did not keep
(docs/report.md, "What the capture lost"). The simulated trainer,
input-bound 30 %, recorded twice for 2 s:
- with --max-events 4000 (a tenth of the window's events): the budget
  drops the shortest device ops and modules and every host Execute, and
  what is left looks idle; the report says "No verdict", why, and JSON
  verdict_withheld, with the counts the capture gives;
- with the default budget: the verdict, input-bound within 5 points of 30 %,
  and nothing withheld.
"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "harness"))
from e2e import acceltrace, check, finish, record, require_root, running_trainer, tmpdir


def report_of(*record_args):
    work = tmpdir()
    t = running_trainer("--steps", "0", "--duration", "60s", "--step-time", "2ms",
                        "--cores", "4", "--readers", "2", "--input-bound", "0.3",
                        "--data-dir", os.path.join(work, "data"))
    if not t:
        return None
    rc, s, err = record("--pid", str(t.pid), "--duration", "2s",
                        "--logdir", os.path.join(work, "logs"), *record_args)
    t.stop()
    if not check(rc == 0 and s, "record %s exited %d: %s" % (record_args, rc, err[-500:])):
        return None
    rc, out, err = acceltrace("report", "-j", s["path"])
    if not check(rc == 0, "report exited %d: %s" % (rc, err[-500:])):
        return None
    return json.loads(out)


def main():
    d = report_of("--max-events", "4000")
    if d:
        inc = d.get("incomplete") or {}
        check(d.get("verdict_withheld") is True and
              d["recommendation"].startswith("No verdict: the capture's span budget dropped"),
              "a budget-cut capture gives no verdict: %r (input-bound %s, device idle %s)"
              % (d["recommendation"][:200], d.get("input_bound_pct"), d.get("device_idle_pct")))
        check(inc.get("dropped_device_spans", 0) > 0 or inc.get("dropped_input_spans", 0) > 0,
              "and says what the budget dropped: %s" % inc)
    d = report_of()
    if d:
        check(d.get("verdict_withheld") is False and d.get("incomplete") is None,
              "a whole capture: a verdict, nothing withheld: %s" % d.get("incomplete"))
        ib = d.get("input_bound_pct")
        check(ib is not None and abs(ib - 30) <= 5 and "input-bound" in d["recommendation"],
              "and it is right: input-bound %s%%: %r" % (ib, d["recommendation"][:120]))
    finish()


if __name__ == "__main__":
    require_root()
    main()
