#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""scripts/demo-fleet.sh's helper (docs/demo-fleet.md).

  demo-fleet-check.py prometheus URL INSTANCE=HOST,... TIMEOUT_S OUT.json
      waits until Prometheus has scraped every daemon (up == 1) and has a
      mean step time for each (rate of acceltrace_step_seconds_sum over
      _count), prints them, writes them to OUT.json; exit 1 at the timeout.
  demo-fleet-check.py check SESSION_DIR HOST=PID,... PROM.json REPORT.json SLOW_HOST PCT
      --check's assertions: the session holds exactly one file per host,
      named by it; each decodes with Python's protobuf (xplane_pb2 made
      from user/output/xplane.proto), names its host and holds its own
      trainer and no other process; Prometheus saw all hosts; the report
      names SLOW_HOST as the straggler by about PCT percent.
"""
import atexit
import glob
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
STEP_Q = ("sum by (instance) (rate(acceltrace_step_seconds_sum[10s])) / "
          "sum by (instance) (rate(acceltrace_step_seconds_count[10s]))")


def pairs(arg):
    return dict(kv.split("=", 1) for kv in arg.split(",") if kv)


def query(url, q):
    u = "%s/api/v1/query?%s" % (url, urllib.parse.urlencode({"query": q}))
    with urllib.request.urlopen(u, timeout=5) as r:
        body = json.loads(r.read().decode())
    if body.get("status") != "success":
        return {}
    return {res["metric"].get("instance", ""): float(res["value"][1])
            for res in body["data"]["result"]}


def prometheus(url, hostmap, timeout_s, out):
    hosts = pairs(hostmap)
    deadline = time.time() + float(timeout_s)
    up, step = {}, {}
    while time.time() < deadline:
        try:
            up = query(url, 'up{job="acceltrace"}')
            step = query(url, STEP_Q)
        except (OSError, ValueError):
            up, step = {}, {}
        if all(up.get(i) == 1 for i in hosts) and \
           all(i in step and math.isfinite(step[i]) for i in hosts):
            break
        time.sleep(0.5)
    else:
        print("Prometheus: up %s, step time %s after %s s" % (up, step, timeout_s),
              file=sys.stderr)
        return 1
    procs = query(url, "acceltrace_traced_processes")
    print("   %-8s %-17s %-3s %-15s %s" % ("host", "instance", "up", "mean step (ms)",
                                            "traced processes"))
    rows = {}
    for inst, h in hosts.items():
        rows[h] = {"instance": inst, "up": up[inst], "step_s": step[inst],
                   "traced_processes": procs.get(inst)}
        print("   %-8s %-17s %-3d %-15.3f %s" % (h, inst, up[inst], step[inst] * 1e3,
                                                 "%g" % procs[inst] if inst in procs else "?"))
    with open(out, "w") as f:
        json.dump(rows, f)
    return 0


def xplane_pb2():
    out = tempfile.mkdtemp(prefix="demo-fleet-pb2-")
    atexit.register(shutil.rmtree, out, True)
    src = os.path.join(ROOT, "user", "output")
    try:
        from grpc_tools import protoc
        rc = protoc.main(["grpc_tools.protoc", "-I" + src, "--python_out=" + out,
                          os.path.join(src, "xplane.proto")])
    except ImportError:
        rc = subprocess.run(["protoc", "-I", src, "--python_out=" + out,
                             os.path.join(src, "xplane.proto")]).returncode
    if rc != 0:
        raise SystemExit("cannot generate xplane_pb2 from %s/xplane.proto" % src)
    sys.path.insert(0, out)
    import xplane_pb2
    return xplane_pb2


class Checks:
    def __init__(self):
        self.failed = 0

    def __call__(self, cond, what):
        print("   %s %s" % ("ok  " if cond else "FAIL", what), flush=True)
        if not cond:
            self.failed += 1
        return cond


def tids_of(pid):
    try:
        return {int(t) for t in os.listdir("/proc/%d/task" % pid)}
    except OSError:
        return set()


def tgid_of(tid):
    try:
        with open("/proc/%d/status" % tid) as f:
            for line in f:
                if line.startswith("Tgid:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def check_session(ok, session, pids):
    pb2 = xplane_pb2()
    files = sorted(os.path.basename(f) for f in glob.glob(os.path.join(session, "*.xplane.pb")))
    want = sorted(h + ".xplane.pb" for h in pids)
    ok(files == want, "the session holds exactly one file per host: %s" % files)
    all_tids = {h: tids_of(p) | {p} for h, p in pids.items()}
    for h, pid in sorted(pids.items()):
        path = os.path.join(session, h + ".xplane.pb")
        if not os.path.exists(path):
            continue
        space = pb2.XSpace()
        try:
            with open(path, "rb") as f:
                space.ParseFromString(f.read())
        except Exception as e:  # noqa: BLE001 (any decode failure is the finding)
            ok(False, "%s decodes with Python's protobuf: %s" % (path, e))
            continue
        ok(list(space.hostnames)[:1] == [h], "%s: XSpace.hostnames %s" % (h, list(space.hostnames)))
        # Thread lines (extra rows: tid + k * 2^32); not the device-memory
        # counter lines, ids 2^62 + i (docs/capture-format.md).
        lines = {ln.id & 0xffffffff for pl in space.planes if pl.name.startswith("/host:")
                 for ln in pl.lines if ln.id < 1 << 62}
        dev = set()
        for pl in space.planes:
            for st in pl.stats:
                if pl.stat_metadata[st.metadata_id].name == "acceltrace.pid":
                    dev.add(st.int64_value)
        others = set().union(*(t for o, t in all_tids.items() if o != h))
        strangers = {t for t in lines if tgid_of(t) not in (None, pid)}
        ok(pid in lines and dev == {pid},
           "%s: its trainer (pid %d) is there: host lines %d, device planes of %s"
           % (h, pid, len(lines), sorted(dev)))
        ok(not (lines & others) and not strangers,
           "%s: no thread of another process: %s" % (h, sorted((lines & others) | strangers)))


def check_prometheus(ok, prom, hosts, slow):
    ok(sorted(prom) == sorted(hosts) and all(r["up"] == 1 for r in prom.values()),
       "Prometheus scraped every daemon: %s" % {h: r["up"] for h, r in prom.items()})
    steps = {h: r["step_s"] for h, r in prom.items()}
    ok(steps and max(steps, key=steps.get) == slow,
       "Prometheus's slowest mean step is %s's: %s" % (slow, {h: round(s * 1e3, 3)
                                                           for h, s in steps.items()}))


def check_report(ok, report, hosts, slow, pct):
    reps = report.get("reports", [report])
    by_host = {}
    for r in reps:
        h = r.get("host") or r.get("environment", {}).get("host")
        by_host[h] = (r.get("steps") or {}).get("avg_ms")
    ok(sorted(by_host) == sorted(hosts), "the report covers every host: %s" % sorted(by_host))
    fleet = report.get("fleet")
    if fleet is not None:
        gap = fleet.get("straggler_gap_pct")
        ok(fleet.get("straggler") == slow and fleet.get("slowest_host") == slow,
           "the report's fleet section names %s the straggler: %s"
           % (slow, {k: fleet.get(k) for k in ("straggler", "slowest_host")}))
        ok(gap is not None and pct * 0.6 <= gap <= pct * 1.4,
           "its step-time gap is near the %d%% slowdown: %s%%" % (pct, gap))
        return
    # Before `report` has its fleet section: the per-host step times.
    print("   note: this report has no fleet section; the per-host step times instead")
    if any(v is None for v in by_host.values()) or slow not in by_host:
        ok(False, "every host's report has a mean step time: %s" % by_host)
        return
    rest = [v for h, v in by_host.items() if h != slow]
    gap = (by_host[slow] / (sum(rest) / len(rest)) - 1) * 100
    ok(max(by_host, key=by_host.get) == slow, "%s has the slowest steps: %s" % (slow, by_host))
    ok(pct * 0.6 <= gap <= pct * 1.4, "by about the %d%% slowdown: %.1f%%" % (pct, gap))


def check(session, pidmap, prom_json, report_json, slow, pct):
    ok = Checks()
    pids = {h: int(p) for h, p in pairs(pidmap).items()}
    check_session(ok, session, pids)
    with open(prom_json) as f:
        check_prometheus(ok, json.load(f), list(pids), slow)
    with open(report_json) as f:
        check_report(ok, json.load(f), list(pids), slow, float(pct))
    print("   %s" % ("all checks held" if not ok.failed else "%d check(s) failed" % ok.failed))
    return 1 if ok.failed else 0


def main(argv):
    if len(argv) == 5 and argv[0] == "prometheus":
        return prometheus(*argv[1:])
    if len(argv) == 7 and argv[0] == "check":
        return check(*argv[1:])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
