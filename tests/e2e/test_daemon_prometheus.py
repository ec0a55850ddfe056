#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""acceltrace daemon's metrics as a real Prometheus server (Debian's
`prometheus` package) scrapes them while simulated trainers start and stop.

Two trainers start after the daemon and Prometheus: A device-bound (4 ms
steps), B input-bound (3 ms of device work, readers slowed so that the
device waits about 40% of the time). Steps of milliseconds keep the
estimate's microseconds of callback latency small beside them. Queried through Prometheus' HTTP API:

- step time (the increase of acceltrace_step_seconds_sum over that of
  _count, over 8 s) agrees with the ground truth's mean step period (the
  time between consecutive steps' starts) within 2%;
- acceltrace_input_wait_ratio agrees within 3 points with the truth's
  device input wait over the gauge's last 10 s: for each step, the time
  core 0 sat idle before it (its device execution's start minus the
  previous one's end) while the loop waited for input (at most the step's
  input_wait_ns), over the time those steps took;
- a trainer that exits stops being reported, the other still is.

promtool (from the same package) also checks the exposition's format.
"""
import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "harness"))
from e2e import (running_trainer, check, finish, require_root, skip, tmpdir, truth, wait_for)
from daemon import Daemon, free_port

PROMETHEUS = "/usr/bin/prometheus"
PROMTOOL = "/usr/bin/promtool"


def http_get(url, timeout=5):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.status, r.read().decode()


class Prometheus:
    def __init__(self, work, target):
        self.port = free_port()
        conf = os.path.join(work, "prometheus.yml")
        with open(conf, "w") as f:
            f.write("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
                    "scrape_configs:\n  - job_name: acceltrace\n"
                    "    static_configs:\n      - targets: ['%s']\n" % target)
        self.log = open(os.path.join(work, "prometheus.log"), "w")
        self.proc = subprocess.Popen(
            [PROMETHEUS, "--config.file=" + conf,
             "--storage.tsdb.path=" + os.path.join(work, "tsdb"),
             "--web.listen-address=127.0.0.1:%d" % self.port],
            stdout=self.log, stderr=subprocess.STDOUT)

    def ready(self, timeout=30):
        deadline = time.time() + timeout
        while time.time() < deadline:
            try:
                if http_get("http://127.0.0.1:%d/-/ready" % self.port)[0] == 200:
                    return True
            except OSError:
                pass
            time.sleep(0.3)
        return False

    def query(self, q, at):
        """{pid: value} of an instant query at wall time @at."""
        url = "http://127.0.0.1:%d/api/v1/query?%s" % (
            self.port, urllib.parse.urlencode({"query": q, "time": "%.3f" % at}))
        body = json.loads(http_get(url)[1])
        out = {}
        if body.get("status") == "success":
            for r in body["data"]["result"]:
                out[int(r["metric"].get("pid", 0))] = float(r["value"][1])
        return out

    def last_scrape(self):
        """The time of the latest scrape of the daemon Prometheus holds
        (the timestamp of its `up` sample), or None."""
        try:
            t = self.query('timestamp(up{job="acceltrace"})', time.time())
        except (OSError, ValueError):
            return None
        return t.get(0)

    def scraped_for(self, pids, span):
        """The time of the latest scrape once Prometheus has every one of
        @pids' step counts from a scrape @span seconds before it (the
        trainers were reported that long); else None."""
        at = self.last_scrape()
        if at is None:
            return None
        then = self.query("acceltrace_step_seconds_count", at - span)
        return at if all(p in then for p in pids) else None

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()


def mono_of(wall):
    return int((wall - time.time()) * 1e9) + time.monotonic_ns()


def truth_step_period(tp, pid, t0, t1):
    starts = sorted(r["t_start"] for r in truth(tp, pid)
                    if r["type"] == "step" and t0 <= r["t_start"] <= t1)
    return (starts[-1] - starts[0]) / (len(starts) - 1) / 1e9 if len(starts) > 10 else None


def truth_input_wait(tp, pid, t0, t1):
    recs = truth(tp, pid)
    wait = {r["step"]: r["input_wait_ns"] for r in recs if r["type"] == "step"}
    dev = sorted((r["t_start"], r["t_end"], r["step"]) for r in recs
                 if r["type"] == "device_execution" and r["core"] == 0 and
                 t0 <= r["t_end"] <= t1)
    if len(dev) < 10:
        return None
    idle = sum(max(0, min(s - prev_end, wait.get(step, 0)))
               for (_, prev_end, _), (s, _, step) in zip(dev, dev[1:]))
    return idle / (dev[-1][1] - dev[0][1])


def main():
    work = tmpdir()
    port = free_port()
    textfile = os.path.join(work, "textfile", "acceltrace.prom")
    os.makedirs(os.path.dirname(textfile))
    d = Daemon(work, "--flight-recorder", "5s", "--textfile", textfile,
               "--textfile-interval", "1s", listen="127.0.0.1:%d" % port)
    if not d.wait_ready():
        d.stop()
        return
    prom = Prometheus(work, "127.0.0.1:%d" % port)
    if not check(prom.ready(), "prometheus started"):
        prom.stop()
        d.stop()
        return
    tpa, tpb = os.path.join(work, "a.jsonl"), os.path.join(work, "b.jsonl")
    a = running_trainer("--steps", "0", "--duration", "60s", "--step-time", "4ms",
                        "--no-truth-ops", truth=tpa)
    b = running_trainer("--steps", "0", "--duration", "60s", "--step-time", "3ms",
                        "--input-bound", "0.4", "--no-truth-ops", truth=tpb)
    if not a or not b:
        for t in (a, b):
            if t:
                t.stop()
        prom.stop()
        d.stop()
        return
    # The step time is taken over the last 8 s and the input wait ratio
    # is the daemon's over its last 10 s: both trainers reported for 10 s.
    at = None

    def reported_10s():
        nonlocal at
        at = prom.scraped_for((a.pid, b.pid), 10)
        return at is not None

    if not wait_for(reported_10s, 60, every=0.5,
                    what="Prometheus scrapes both trainers' steps for 10 s"):
        for t in (a, b):
            t.stop()
        prom.stop()
        d.stop()
        return

    # The exposition itself, read by Prometheus' own checker.
    _, text = http_get("http://127.0.0.1:%d/metrics" % port)
    p = subprocess.run([PROMTOOL, "check", "metrics"], input=text, capture_output=True,
                       text=True)
    check(p.returncode == 0, "promtool check metrics: %s%s" % (p.stdout, p.stderr))
    # The port serves the metrics and nothing else.
    try:
        status = http_get("http://127.0.0.1:%d/" % port)[0]
    except urllib.error.HTTPError as e:
        status = e.code
    check(status == 404, "only /metrics is served: / answered %s" % status)
    # node_exporter's textfile: the same exposition, written whole.
    try:
        with open(textfile) as f:
            tf = f.read()
    except OSError as e:
        tf = ""
        check(False, "the textfile was written: %s" % e)
    p = subprocess.run([PROMTOOL, "check", "metrics"], input=tf, capture_output=True, text=True)
    check(tf and p.returncode == 0, "promtool check metrics on the textfile: %s%s"
          % (p.stdout, p.stderr))
    check('acceltrace_step_seconds_count{pid="%d"' % b.pid in tf,
          "the textfile reports the running trainers")

    sum_now = prom.query("acceltrace_step_seconds_sum", at)
    cnt_now = prom.query("acceltrace_step_seconds_count", at)
    sum_then = prom.query("acceltrace_step_seconds_sum", at - 8)
    cnt_then = prom.query("acceltrace_step_seconds_count", at - 8)
    ratio = prom.query("acceltrace_input_wait_ratio", at)
    # Events lost meanwhile (a ring buffer full on a loaded host) make
    # steps look longer: said beside any failure.
    lost = sum(prom.query("sum(acceltrace_lost_events_total)", at).values())
    for name, t, tp in (("A (device-bound)", a, tpa), ("B (input-bound)", b, tpb)):
        pid = t.pid
        if not check(pid in cnt_now and pid in cnt_then and cnt_now[pid] > cnt_then[pid],
                     "%s: Prometheus has its steps: %s" % (name, cnt_now)):
            continue
        got = (sum_now[pid] - sum_then[pid]) / (cnt_now[pid] - cnt_then[pid])
        want = truth_step_period(tp, pid, mono_of(at - 8), mono_of(at))
        check(want and abs(got - want) <= 0.02 * want,
              "%s: step time %.6f s, truth %s s (within 2%%); events lost: %d"
              % (name, got, want, lost))
        want_w = truth_input_wait(tp, pid, mono_of(at - 10), mono_of(at))
        check(pid in ratio and want_w is not None and abs(ratio[pid] - want_w) <= 0.03,
              "%s: input wait ratio %s, truth %s (within 3 points); events lost: %d"
              % (name, ratio.get(pid), want_w, lost))

    # A exits: gone from what Prometheus scrapes; B stays.
    a.stop()
    gone = time.time()
    cnt, now = {}, None

    def a_gone():	# from a scrape taken after the exit
        nonlocal cnt, now
        now = prom.last_scrape()
        if now is None or now <= gone:
            return False
        cnt = prom.query("acceltrace_step_seconds_count", now)
        return a.pid not in cnt

    wait_for(a_gone, 20, every=0.5)
    now = now or time.time()
    check(a.pid not in cnt, "an exited trainer is no longer reported: %s" % cnt)
    check(b.pid in cnt, "the one still running is: %s" % cnt)
    procs = prom.query("acceltrace_traced_processes", now)
    check(procs.get(0) is not None and procs[0] >= 1, "acceltrace_traced_processes %s" % procs)
    b.stop()
    prom.stop()
    check(d.stop() == 0, "the daemon stops cleanly")


if __name__ == "__main__":
    require_root()
    if not os.path.exists(PROMETHEUS) or not os.path.exists(PROMTOOL):
        skip("Debian's prometheus package is not installed (scripts/install-deps.sh)")
    main()
    finish()
