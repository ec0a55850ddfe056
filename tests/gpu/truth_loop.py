# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The measured loop both GPU training scripts share: it runs a step until
--steps or --duration, writes one ground-truth JSON line a step (times from
time.monotonic_ns, the CLOCK_MONOTONIC acceltrace's captures use), and
says on stderr "running pid=P" before and "done steps=N step_ms=X" after.
"""
import json
import os
import sys
import time


def parse_duration(s):
    for unit, scale in (("ms", 1e-3), ("s", 1.0), ("m", 60.0)):
        if s.endswith(unit):
            return float(s[:-len(unit)]) * scale
    return float(s)


def add_arguments(ap, warmup):
    ap.add_argument("--truth", required=True)
    ap.add_argument("--duration", default="10s")
    ap.add_argument("--steps", type=int, default=0)
    ap.add_argument("--warmup", type=int, default=warmup)


def measure(args, one_step):
    """one_step() runs a step and returns its truth fields (t0, t1, ...)."""
    print("running pid=%d" % os.getpid(), file=sys.stderr, flush=True)
    limit = parse_duration(args.duration)
    start = time.monotonic()
    n = 0
    with open(args.truth, "w") as truth:
        while True:
            rec = {"step": n}
            rec.update(one_step())
            truth.write(json.dumps(rec) + "\n")
            n += 1
            if (args.steps and n >= args.steps) or time.monotonic() - start >= limit:
                break
    elapsed = time.monotonic() - start
    print("done steps=%d step_ms=%.4f" % (n, 1000.0 * elapsed / max(n, 1)),
          file=sys.stderr)
    return 0
