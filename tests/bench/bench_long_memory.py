#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The daemon's memory timeline over a leaking trainer's whole run.

`acceltrace daemon` watches a simulated trainer that keeps one more PJRT
buffer of LEAK bytes every step (tpu-trainer --mem-leak). At the report
times the daemon's RSS and its timelines' bytes (the metrics
acceltrace_memory_timeline_bytes and acceltrace_memory_timelines) are
read; at the end a trigger takes a capture, and its memory timeline (the
/host:CPU plane stat acceltrace.memory_timelines, docs/capture-format.md)
must:

- reach back to the trainer's start (within 10 s): the leak from minute 0;
- grow at the leak's rate: the slope of a line fitted to its points within
  3% of LEAK times the trainer's step rate (its ground truth's steps);
- have the tiers' resolution at each age (the newest points the finest);
- agree with acceltrace_device_memory_bytes, scraped just before.

Bounded: the timelines' bytes stay within 40 a point and 1 KiB a timeline
at every report (whatever the age); with three reports
or more, the daemon's RSS at the end is within 10% or 24 MiB of the
second's (the first comes while the flight recorder still fills; the
short run only reports it). `make bench-long` runs it for 30 minutes with the default tiers
(reports at minutes 1, 10, 30); tests/e2e/test_daemon_memory_timeline.py
for 60 s with short tiers (--memory-timeline-tiers).

    tests/bench/bench_long_memory.py [OUTPUT_DIR]
Environment: BENCH_LONG_MEM_S (default 1800), BENCH_LONG_MEM_LEAK (bytes
a step, default 2048), BENCH_LONG_MEM_STEP_TIME (default 20ms).
"""
import json
import os
import re
import subprocess
import sys
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "harness"))
if len(sys.argv) > 1 and __name__ == "__main__":
    os.environ.setdefault("OUTPUT", sys.argv[1])
from e2e import check, finish, require_root, running_trainer, skip_part, tmpdir, truth  # noqa: E402
from daemon import Daemon, free_port  # noqa: E402
import xspace  # noqa: E402

PROMTOOL = "/usr/bin/promtool"
DEFAULT_TIERS = "1s:600,10s:1080,1m:1440,10m:4320"


def rss_mib(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


def scrape(listen):
    with urllib.request.urlopen("http://%s/metrics" % listen, timeout=5) as r:
        return r.read().decode()


def metric(text, name, pid=None):
    """The samples of @name (of @pid's series when given): [(labels, value)]."""
    out = []
    for line in text.splitlines():
        m = re.match(r"^%s(\{[^}]*\})? (\S+)$" % re.escape(name), line)
        if not m:
            continue
        labels = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(1) or ""))
        if pid is None or labels.get("pid") == str(pid):
            out.append((labels, float(m.group(2))))
    return out


def fit_slope(xs, ys):
    """Least squares: (slope, r^2)."""
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys))
    syy = sum((y - my) ** 2 for y in ys)
    if not sxx or not syy:
        return 0.0, 0.0
    return sxy / sxx, sxy * sxy / (sxx * syy)


def parse_tiers(tiers):
    """'1s:20,5s:12' -> [(1e9, 20), (5e9, 12)]."""
    unit = {"ms": 1e6, "s": 1e9, "m": 60e9, "h": 3600e9}
    out = []
    for t in tiers.split(","):
        res, points = t.split(":")
        m = re.match(r"^(\d+)(ms|s|m|h)$", res)
        out.append((int(m.group(1)) * unit[m.group(2)], int(points)))
    return out


def leaking_timeline(space, pid):
    """The pid's allocator whose timeline grew most: (allocator dict) or None."""
    stats = space.plane_stat("acceltrace.memory_timelines")
    text = stats.get("/host:CPU")
    if not check(text, "the capture has the memory timelines (plane stat on /host:CPU; "
                 "planes with it: %s)" % sorted(stats)):
        return None
    doc = json.loads(text)
    check(doc.get("version") == 1, "memory_timelines version 1")
    mine = [a for a in doc.get("allocators", []) if a.get("pid") == pid and a.get("points")]
    if not check(mine, "a timeline of the trainer (pid %d): allocators %s" %
                 (pid, [(a.get("allocator_name"), a.get("pid")) for a in doc.get("allocators", [])])):
        return None
    return max(mine, key=lambda a: a["points"][-1][2] - a["points"][0][2])


def check_timeline(a, summary, started_ns, leak, step_rate, tiers):
    pts = a["points"]
    ws = summary["window_start_ns"]
    first_abs = ws + pts[0][0]
    print("timeline %s: %d points, from %.1f s after the trainer's start to %.1f s; "
          "in use %d -> %d bytes" % (a["allocator_name"], len(pts),
                                     (first_abs - started_ns) / 1e9,
                                     (ws + pts[-1][0] - started_ns) / 1e9, pts[0][2], pts[-1][2]))
    check(first_abs - started_ns < 10e9,
          "the timeline reaches back to the trainer's start: its first point %.1f s after"
          % ((first_abs - started_ns) / 1e9))
    check(all(p[0] + p[1] <= q[0] for p, q in zip(pts, pts[1:])),
          "its points are in order and do not overlap")
    check(len(pts) <= sum(n for _, n in tiers), "at most the tiers' points: %d" % len(pts))
    # Resolution at each age: the newest fine, coarser further back.
    spans = [p[1] for p in pts]
    check(spans[-1] == tiers[0][0], "the newest point has the finest resolution (%d ns)"
          % spans[-1])
    check(all(s1 >= s2 for s1, s2 in zip(spans, spans[1:]) if s1 in dict(tiers) and
              s2 in dict(tiers)), "coarser further back: spans %s" % sorted(set(spans)))
    # The leak: a line, at LEAK times the trainer's step rate. Points at a
    # span's end (t + span) hold its last value.
    # From the first leaked buffers on: before them the runtime started.
    leaking = [p for p in pts if p[2] >= pts[0][2] + 2 * leak] or pts
    xs = [(p[0] + p[1]) / 1e9 for p in leaking]
    ys = [p[2] for p in leaking]
    slope, r2 = fit_slope(xs, ys)
    want = leak * step_rate
    print("leak: %.0f bytes/s fitted (r^2 %.4f); the truth's steps say %.0f bytes/s"
          % (slope, r2, want))
    check(r2 > 0.99, "the leak is a straight line (r^2 %.4f)" % r2)
    check(abs(slope - want) <= 0.03 * want,
          "the timeline's slope %.0f bytes/s is within 3%% of the leak's %.0f" % (slope, want))
    check(all(p[5] >= p[4] >= p[2] >= p[3] for p in pts), "peak >= max >= in use >= min")
    return slope


def step_rate(truth_path, pid):
    starts = sorted(r["t_start"] for r in truth(truth_path, pid) if r["type"] == "step")
    if len(starts) < 10:
        return None
    return (len(starts) - 1) / ((starts[-1] - starts[0]) / 1e9)


def run(secs, report_at, tiers=None, leak=2048, step_time="20ms"):
    """The scenario; checks recorded with e2e.check. @report_at: seconds
    after the trainer's start when RSS and the book's bytes are read."""
    work = tmpdir()
    listen = "127.0.0.1:%d" % free_port()
    args = ["--flight-recorder", "10s"]
    if tiers:
        args += ["--memory-timeline-tiers", tiers]
    d = Daemon(work, *args, listen=listen)
    if not d.wait_ready():
        d.stop()
        return
    tp = os.path.join(work, "truth.jsonl")
    started_ns = time.monotonic_ns()
    t = running_trainer("--steps", "0", "--duration", "%ds" % (secs + 120),
                        "--step-time", step_time, "--mem-leak", str(leak),
                        "--batch-bytes", "4096", "--fetch-every", "0",
                        "--data-dir", os.path.join(work, "data"), truth=tp)
    if not t:
        d.stop()
        return
    reports = []
    try:
        for at in report_at:
            while time.monotonic_ns() - started_ns < at * 1e9:
                if d.proc.poll() is not None or t.proc.poll() is not None:
                    break
                time.sleep(min(5, max(0.1, at - (time.monotonic_ns() - started_ns) / 1e9)))
            text = scrape(listen)
            n = metric(text, "acceltrace_memory_timelines")
            b = metric(text, "acceltrace_memory_timeline_bytes")
            mem = metric(text, "acceltrace_device_memory_bytes", t.pid)
            r = {"at_s": at, "rss_mib": rss_mib(d.pid),
                 "timelines": n[0][1] if n else None, "bytes": b[0][1] if b else None,
                 "in_use": max((v for _, v in mem), default=None)}
            reports.append(r)
            print("minute %.1f: daemon RSS %.1f MiB; %s timelines, %s bytes; trainer's "
                  "device memory %s bytes" % (at / 60, r["rss_mib"] or -1, r["timelines"],
                                              r["bytes"], r["in_use"]))
        last_text = scrape(listen)
        rc, s, err = d.trigger("--duration", "1s")
    finally:
        t.stop()
        rc_d = d.stop()
    check(rc_d == 0, "the daemon exits cleanly (exit %s)" % rc_d)
    check(all(r["in_use"] for r in reports),
          "acceltrace_device_memory_bytes reports the trainer's memory at every report")
    # A timeline's bytes are bounded whatever its age: 40 a point of its
    # tiers at most, and less than 1 KiB of its own; the book's array of
    # entries keeps the size the most timelines so far needed.
    points = sum(n for _, n in parse_tiers(tiers or DEFAULT_TIERS))
    most, bound = 0, []
    for r in reports:
        if r["timelines"] is None or r["bytes"] is None:
            continue
        most = max(most, r["timelines"])
        bound.append(r["timelines"] * (40 * points + 1024) + most * 512 + 4096)
    check(len(bound) == len(reports) and
          all(r["bytes"] <= b for r, b in zip(reports, bound)),
          "the timelines' bytes stay within their bound: %s"
          % [(r["timelines"], r["bytes"]) for r in reports])
    # RSS: from the second report on (the first comes while the flight
    # recorder and the detail slices still grow to their size).
    rss = [r["rss_mib"] for r in reports if r["rss_mib"]]
    if check(len(rss) == len(reports), "RSS read at every report") and len(rss) >= 3:
        check(rss[-1] - rss[1] < max(0.10 * rss[1], 24),
              "the daemon's RSS stays flat: %.1f -> %.1f MiB" % (rss[1], rss[-1]))
    if os.path.exists(PROMTOOL):
        p = subprocess.run([PROMTOOL, "check", "metrics"], input=last_text, text=True,
                           capture_output=True)
        check(p.returncode == 0, "promtool check metrics: %s%s" % (p.stdout, p.stderr))
    else:
        skip_part("promtool is not installed: the exposition's format unchecked")
    if not check(rc == 0 and s, "trigger: exit %s: %s" % (rc, err)):
        return
    space = xspace.Capture(s["path"], s["window_start_ns"])
    a = leaking_timeline(space, t.pid)
    rate = step_rate(tp, t.pid)
    if not a or not check(rate, "the truth has the trainer's steps"):
        return
    check_timeline(a, s, started_ns, leak, rate,
                   parse_tiers(tiers or DEFAULT_TIERS))
    last_metric = reports[-1]["in_use"] if reports else None
    if last_metric:
        # The metric was read before the trigger; the timeline goes on to
        # the capture's stop: within the leak of the seconds between.
        grown = a["points"][-1][2] - last_metric
        check(-65536 <= grown <= leak * rate * 30,
              "the metric and the timeline agree (%d bytes grown between)" % grown)


def main():
    secs = int(os.environ.get("BENCH_LONG_MEM_S", "1800"))
    report_at = sorted({min(60, secs), min(600, secs), secs})
    # 2 KiB a 20 ms step: 184 MB in 30 minutes, inside the simulated
    # device's 256 MiB (4 KiB filled it at minute 22 and the leak stopped).
    run(secs, report_at, leak=int(os.environ.get("BENCH_LONG_MEM_LEAK", "2048")),
        step_time=os.environ.get("BENCH_LONG_MEM_STEP_TIME", "20ms"))


if __name__ == "__main__":
    require_root()
    main()
    finish()
