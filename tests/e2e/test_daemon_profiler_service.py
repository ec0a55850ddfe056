#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""acceltrace daemon's ProfilerService against a real gRPC client: Debian's
grpcio, with stubs generated at test time by grpc_tools from the upstream
protos (user/profiler_service/*.proto), as XProf's capture dialog,
capture_tpu_profile and jax.collect_profile would call it.

- Profile with XProf's request (duration, max_events, tools, options of
  version 1, repository_root = LOGDIR/plugins/profile, session_id,
  host_name): the file appears at ROOT/SESSION/HOST.xplane.pb, Python's
  protobuf decodes it, it holds the ground truth's executions for the
  window, empty_trace is false; with no trainer, empty_trace says whether
  the file holds any event.
- Terminate ends a long Profile early; Monitor names the trainer's step
  time; a second session while one is pending is ALREADY_EXISTS, the same
  session joins it.
- Bad requests get their status codes (a root outside the logdir or
  through a symbolic link planted in it: PERMISSION_DENIED; a "../x"
  session, duration 0 or absurd: INVALID_ARGUMENT; an unknown method:
  UNIMPLEMENTED), and nothing is written outside the logdir.
- --profiler-listen off (the tests' harness default): no listening socket.
"""
import collections
import os
import re
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "harness"))
from e2e import (PLUGIN, running_trainer, check, check_bounds, finish, require_root, skip,
                 skip_part, tmpdir, truth, truth_split, uprobes_of, wait_for)
from daemon import Daemon
import xspace

try:
    import grpc
except ImportError:
    skip("python3-grpcio is not installed")
from profiler_grpc import OPTS, RPC, SVC, xprof_request  # noqa: E402


def code_of(fn):
    """(status code, details, response)."""
    try:
        r = fn()
    except grpc.RpcError as e:
        return e.code(), e.details(), None
    return grpc.StatusCode.OK, None, r


def snapshot(top):
    """Every path under @top with its size and mtime."""
    out = {}
    for dirpath, dirs, files in os.walk(top):
        for n in dirs + files:
            p = os.path.join(dirpath, n)
            st = os.lstat(p)
            out[p] = (st.st_size, st.st_mtime_ns)
    return out


def written(d, path):
    """The daemon's 'capture written' of @path: a dict with its window."""
    for c in d.captures():
        if c["path"] == path:
            return c
    return None


def events_in(path):
    cap = xspace.Capture(path, 0)
    return len(cap.events)


def executes_match(what, s, tp, pid):
    # The truth is written as the trainer goes: wait until it reaches past
    # the window's stop.
    wait_for(lambda: any(r["type"] == "execute" and r["t_call"] > s["window_stop_ns"] + 2e8
                         for r in truth(tp, pid)), 10, every=0.2,
             what="the truth reaches past the window")
    cap = xspace.Capture(s["path"], s["window_start_ns"])
    got = collections.Counter(e.stats.get("launch_id")
                              for e in cap.named("PJRT_LoadedExecutable_Execute")
                              if (e.line.id & 0xffffffff) == pid)
    recs = [r for r in truth(tp, pid) if r["type"] == "execute"]
    inside, over = truth_split(recs, "t_call", "t_return", s, lambda r: r["launch_id"])
    lost = [w for w in cap.space.warnings if "ring buffer" in w or "lost" in w]
    check_bounds(what + (" (capture warns: %s)" % lost if lost else ""), got, inside, over)


def listening_sockets(pid):
    """Inodes of TCP sockets in LISTEN the process holds."""
    inodes = set()
    for fd in os.listdir("/proc/%d/fd" % pid):
        try:
            m = re.match(r"socket:\[(\d+)\]", os.readlink("/proc/%d/fd/%s" % (pid, fd)))
        except OSError:
            continue
        if m:
            inodes.add(m.group(1))
    out = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as f:
                for line in f.readlines()[1:]:
                    cols = line.split()
                    if cols[3] == "0A" and cols[9] in inodes:
                        out.add(cols[9])
        except OSError:
            pass
    return out


def main():
    require_root()
    work = tmpdir()
    outside = os.path.join(work, "outside")
    os.makedirs(os.path.join(outside, "plugins", "profile"))
    with open(os.path.join(outside, "sentinel"), "w") as f:
        f.write("untouched\n")
    before_outside = snapshot(outside)
    d = Daemon(work, "--flight-recorder", "10s", "--max-trigger-duration", "60s",
               profiler_listen="127.0.0.1:0")
    if not d.wait_ready():
        d.stop()
        return
    port = d.profiler_port()
    if not check(port, "the daemon says the port it listens on: %s" % d.lines[-3:]):
        d.stop()
        return
    ch = grpc.insecure_channel("127.0.0.1:%d" % port)
    stub = RPC.ProfilerServiceStub(ch)
    root = os.path.join(d.logdir, "plugins", "profile")
    try:
        run(d, stub, ch, work, outside, root)
    finally:
        ch.close()
        d.stop()
    check(snapshot(outside) == before_outside, "nothing written outside the logdir")
    check(not os.path.exists(os.path.join(root, "..", "x")), "no ../x session")

    # --profiler-listen off: no listening socket at all (metrics off too).
    d2 = Daemon(tmpdir())
    if d2.wait_ready():
        check(any("ProfilerService off" in l for l in d2.lines), "it says it is off")
        check(not listening_sockets(d2.pid), "--profiler-listen off listens on nothing")
    d2.stop()


def run(d, stub, ch, work, outside, root):
    # No trainer yet: empty_trace says whether the file holds any event
    # (another test's trainer on this host would be traced too).
    code, det, r = code_of(lambda: stub.Profile(xprof_request(d, "quiet", 500), timeout=30))
    if check(code == grpc.StatusCode.OK, "Profile with no trainer: %s %s" % (code, det)):
        path = os.path.join(root, "quiet", "pshost.xplane.pb")
        if check(os.path.exists(path), "the file where XProf looks: %s" % path):
            n = events_in(path)
            check(r.empty_trace == (n == 0),
                  "empty_trace %s for a file of %d events" % (r.empty_trace, n))
            if n:
                skip_part("another accelerator process ran on this host: empty_trace "
                          "true not seen")

    # The bad ones, before anything is pending.
    bad = [
        ("a root outside the logdir", xprof_request(d, "s1", root=os.path.join(outside,
                                                                         "plugins", "profile")),
         grpc.StatusCode.PERMISSION_DENIED),
        ("a ../x session", xprof_request(d, "../x"), grpc.StatusCode.INVALID_ARGUMENT),
        ("duration 0", SVC.ProfileRequest(repository_root=root, session_id="z"),
         grpc.StatusCode.INVALID_ARGUMENT),
        ("an absurd duration", xprof_request(d, "s2", duration_ms=10 ** 12),
         grpc.StatusCode.INVALID_ARGUMENT),
        ("a root with ..", xprof_request(d, "s3", root=d.logdir + "/../outside"),
         grpc.StatusCode.INVALID_ARGUMENT),
    ]
    os.symlink(outside, os.path.join(d.logdir, "link"))
    bad.append(("a root through a planted symlink",
                xprof_request(d, "s4", root=os.path.join(d.logdir, "link", "plugins",
                                                         "profile")),
                grpc.StatusCode.PERMISSION_DENIED))
    for what, req, want in bad:
        code, det, _ = code_of(lambda: stub.Profile(req, timeout=10))
        check(code == want, "%s: %s (%s), expected %s" % (what, code, det, want))
    code, det, _ = code_of(lambda: ch.unary_unary("/tensorflow.ProfilerService/GetSnapShot")(
        b"", timeout=10))
    check(code == grpc.StatusCode.UNIMPLEMENTED, "an unknown method: %s %s" % (code, det))

    tp = os.path.join(work, "truth.jsonl")
    t = running_trainer("--steps", "0", "--duration", "120s", "--step-time", "2ms",
                        "--no-truth-ops", truth=tp)
    if not t:
        return
    try:
        if wait_for(lambda: uprobes_of(d.pid, os.path.abspath(PLUGIN[94])), 30,
                    what="the daemon probes the trainer's runtime"):
            with_trainer(d, stub, ch, t, tp, root)
    finally:
        t.stop()


def with_trainer(d, stub, ch, t, tp, root):
    # XProf's Profile: 2 s, answered after them, the file in the session.
    t0 = time.monotonic()
    code, det, r = code_of(lambda: stub.Profile.with_call(xprof_request(d, "xprof_run"),
                                                          timeout=60))
    took = time.monotonic() - t0
    if code == grpc.StatusCode.OK:
        r, call = r
        check("not honoured" in call.details() and "tools" in call.details(),
              "the OK status's message says what was not honoured: %r" % call.details())
    path = os.path.join(root, "xprof_run", "pshost.xplane.pb")
    if check(code == grpc.StatusCode.OK, "Profile: %s %s" % (code, det)):
        check(not r.empty_trace, "empty_trace false with a trainer running")
        check(len(r.tool_data) == 0, "no tool_data: the server writes the file")
        check(2.0 <= took < 20, "answered after the 2 s window: %.1f s" % took)
        s = written(d, path)
        if check(s, "the daemon wrote %s: %s" % (path, d.captures())):
            w = (s["window_stop_ns"] - s["window_start_ns"]) / 1e9
            check(1.9 <= w <= 2.2, "the window is the 2 s asked for: %.2f s" % w)
            executes_match("Profile: executes of the window", s, tp, t.pid)
    # What was not honoured is said in the daemon's log.
    check(any("not honoured" in l and "tools" in l for l in d.lines),
          "the log says what was not honoured")

    # Monitor: the trainer's step time, per process.
    code, det, m = code_of(lambda: stub.Monitor(
        SVC.MonitorRequest(duration_ms=1500, monitoring_level=2, timestamp=True), timeout=30))
    if check(code == grpc.StatusCode.OK, "Monitor: %s %s" % (code, det)):
        print("Monitor said:\n" + m.data)
        line = [l for l in m.data.splitlines() if "pid %d " % t.pid in l]
        ms = re.search(r"step time ([\d.]+) ms", line[0]) if line else None
        check(ms and 1.0 <= float(ms.group(1)) <= 20.0,
              "Monitor names the trainer's step time (2 ms steps): %r" % m.data)
        check(re.match(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d ", m.data), "timestamped lines")
        check("core " in m.data, "level 2: per-core lines")

    # Two sessions at once: the second is ALREADY_EXISTS; the same joins.
    first = stub.Profile.future(xprof_request(d, "busy_a", 3000), timeout=60)
    wait_for(lambda: any("capture busy_a" in l for l in d.lines), 10, every=0.05,
             what="the first Profile is pending")
    code, det, _ = code_of(lambda: stub.Profile(xprof_request(d, "busy_b", 1000), timeout=10))
    check(code == grpc.StatusCode.ALREADY_EXISTS, "a second session: %s %s" % (code, det))
    code, det, r = code_of(lambda: stub.Profile(xprof_request(d, "busy_a", 3000), timeout=60))
    check(code == grpc.StatusCode.OK, "the same session joins: %s %s" % (code, det))
    code, det, r = code_of(lambda: first.result())
    check(code == grpc.StatusCode.OK, "the first is answered too: %s %s" % (code, det))

    # Terminate ends a 30 s Profile early.
    long_call = stub.Profile.future(xprof_request(d, "long_one", 30000), timeout=60)
    wait_for(lambda: any("capture long_one" in l for l in d.lines), 10, every=0.05,
             what="the long Profile is pending")
    time.sleep(0.5)
    t0 = time.monotonic()
    code, det, _ = code_of(lambda: stub.Terminate(SVC.TerminateRequest(session_id="long_one"),
                                                  timeout=10))
    check(code == grpc.StatusCode.OK, "Terminate: %s %s" % (code, det))
    code, det, r = code_of(lambda: long_call.result())
    took = time.monotonic() - t0
    check(code == grpc.StatusCode.OK and took < 10,
          "the long Profile answered %.1f s after Terminate (asked for 30 s): %s %s"
          % (took, code, det))
    check(os.path.exists(os.path.join(root, "long_one", "pshost.xplane.pb")),
          "its capture written")
    code, det, _ = code_of(lambda: stub.Terminate(SVC.TerminateRequest(session_id="none"),
                                                  timeout=10))
    check(code == grpc.StatusCode.OK, "Terminate with nothing running is OK (upstream's)")

    # A client whose deadline comes before the window ends: it sees
    # DEADLINE_EXCEEDED, the daemon says so and writes the capture anyway.
    code, det, _ = code_of(lambda: stub.Profile(xprof_request(d, "hasty", 2000), timeout=1))
    check(code == grpc.StatusCode.DEADLINE_EXCEEDED, "a 1 s deadline: %s %s" % (code, det))
    hasty = os.path.join(root, "hasty", "pshost.xplane.pb")
    wait_for(lambda: os.path.exists(hasty), 10, what="the hasty client's capture is written")
    check(any("deadline" in l and "hasty" in l for l in d.lines), "the daemon logged it")

    # An older client: ProfileOptions' field 11 a string (backend_name).
    o = OPTS.ProfileOptions(version=1, host_tracer_level=2, device_tracer_level=1)
    ob = o.SerializeToString() + b"\x5a\x03tpu"
    raw = (SVC.ProfileRequest(duration_ms=300, session_id="old_client", host_name="pshost",
                              repository_root=root).SerializeToString()
           + b"\x22" + bytes([len(ob)]) + ob)
    code, det, _ = code_of(lambda: ch.unary_unary("/tensorflow.ProfilerService/Profile")(
        raw, timeout=30))
    check(code == grpc.StatusCode.OK, "an old client's request is served: %s %s" % (code, det))
    check(any("not honoured" in l and "backend_name" in l for l in d.lines),
          "its backend_name said not honoured")
    check(os.path.exists(os.path.join(root, "old_client", "pshost.xplane.pb")),
          "its capture written")


if __name__ == "__main__":
    main()
    finish()
