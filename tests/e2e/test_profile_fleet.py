#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""scripts/profile-fleet.py against ProfilerService servers written here
with Debian's grpcio and stubs that grpc_tools generates from the upstream
protos (a client and a server we did not write the wire of), one per
loopback address (127.0.0.1-3), each recording the requests it got:

- a fleet capture: each host gets one Profile, all at once, with the same
  session_id (XProf's timestamp by default), repository_root =
  LOGDIR/plugins/profile (absolute), its own host_name (the address's
  host, or --override-hostnames), tools [xplane.pb], max_events 1000000,
  opts version 1 with the tracer levels, duration and start_timestamp_ns
  = now + --delay-ms; the session directory on stdout, exit 0;
- every host ALREADY_EXISTS at first: retried, the same session again;
- every host's trace empty: "No trace event is collected from ADDR" for
  each, retried --num-tracing-attempts times, exit 1; one host empty
  among good ones: no retry, exit 0;
- no server listening: UNAVAILABLE, exit 1;
- bad command lines: exit 2 naming the problem; --stubs DIR works.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from concurrent import futures

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "harness"))
from e2e import check, finish, skip  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
CLIENT = os.path.join(ROOT, "scripts", "profile-fleet.py")
PROTOS = os.path.join(ROOT, "user", "profiler_service")

try:
    import grpc
    from grpc_tools import protoc
except ImportError:
    skip("grpcio or grpc_tools missing (python3-grpcio, python3-grpc-tools)")

STUBS = tempfile.mkdtemp(prefix="at-fleet-stubs-")
if protoc.main(["grpc_tools.protoc", "-I" + PROTOS, "--python_out=" + STUBS,
                "--grpc_python_out=" + STUBS,
                os.path.join(PROTOS, "profiler_options.proto"),
                os.path.join(PROTOS, "profiler_service.proto")]) != 0:
    check(False, "grpc_tools could not generate the stubs")
    finish()
sys.path.insert(0, STUBS)
import profiler_service_pb2 as pb  # noqa: E402
import profiler_service_pb2_grpc as pb_grpc  # noqa: E402


class Host(pb_grpc.ProfilerServiceServicer):
    """One host's ProfilerService: answers by @plan, a list of 'ok',
    'empty' or a status code name per call (the last repeats)."""

    def __init__(self, addr):
        self.addr = addr
        self.calls = []
        self.plan = ["ok"]
        self.lock = threading.Lock()
        self.server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
        pb_grpc.add_ProfilerServiceServicer_to_server(self, self.server)
        self.port = self.server.add_insecure_port("%s:0" % addr)
        self.server.start()

    def Profile(self, request, context):
        with self.lock:
            n = len(self.calls)
            self.calls.append((time.time_ns(), request))
            what = self.plan[min(n, len(self.plan) - 1)]
        if what not in ("ok", "empty"):
            context.abort(getattr(grpc.StatusCode, what), "host %s says %s" % (self.addr, what))
        time.sleep(request.duration_ms / 1000.0)
        return pb.ProfileResponse(empty_trace=(what == "empty"))

    def target(self):
        return "%s:%d" % (self.addr, self.port)


def run(*args):
    p = subprocess.run(["/usr/bin/python3", CLIENT] + list(args), capture_output=True,
                       text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def reset(hosts, plan):
    for h in hosts:
        h.calls = []
        h.plan = plan


def fleet(hosts, logdir):
    reset(hosts, ["ok"])
    addrs = ",".join("grpc://" + h.target() for h in hosts)
    before = time.time_ns()
    rc, out, err = run("--service-addr", addrs, "--logdir", logdir, "--duration-ms", "400",
                       "--delay-ms", "300", "--host-tracer-level", "3",
                       "--device-tracer-level", "0", "--num-tracing-attempts", "1")
    check(rc == 0, "fleet capture: exit 0 (got %d): %s" % (rc, err))
    check(all(len(h.calls) == 1 for h in hosts),
          "one Profile per host: %s" % [len(h.calls) for h in hosts])
    if not all(h.calls for h in hosts):
        return
    reqs = [h.calls[0][1] for h in hosts]
    sessions = {r.session_id for r in reqs}
    check(len(sessions) == 1, "the same session_id for every host: %s" % sessions)
    sid = reqs[0].session_id
    check(re.fullmatch(r"\d{4}(_\d{2}){5}", sid) is not None,
          "the default session_id is XProf's timestamp: %r" % sid)
    check(out.strip() == os.path.join(logdir, "plugins", "profile", sid),
          "stdout names the session directory: %r" % out)
    for h, r in zip(hosts, reqs):
        check(r.repository_root == os.path.join(logdir, "plugins", "profile"),
              "repository_root is LOGDIR/plugins/profile: %r" % r.repository_root)
        check(r.host_name == h.addr, "host_name is the address's host: %r vs %r"
              % (r.host_name, h.addr))
        check(list(r.tools) == ["xplane.pb"] and r.max_events == 1000000,
              "tools and max_events as XProf's client: %s %d" % (list(r.tools), r.max_events))
        o = r.opts
        check(o.version == 1 and o.host_tracer_level == 3 and o.device_tracer_level == 0
              and o.duration_ms == 400 and r.duration_ms == 400,
              "opts: version 1, the tracer levels and the duration: %s" % o)
        check(before + 300e6 <= o.start_timestamp_ns <= time.time_ns() + 300e6,
              "start_timestamp_ns is now + delay: %d (before %d)"
              % (o.start_timestamp_ns, before))
    arrivals = [h.calls[0][0] for h in hosts]
    check(max(arrivals) - min(arrivals) < 300e6,
          "all hosts asked at once, not one after the other (%.0f ms apart)"
          % ((max(arrivals) - min(arrivals)) / 1e6))
    # Named hosts, a given session.
    reset(hosts, ["ok"])
    rc, out, err = run("--service-addr", ",".join(h.target() for h in hosts), "--logdir",
                       logdir, "--duration-ms", "100", "--session-id", "run42",
                       "--override-hostnames", "fleet-a,fleet-b,fleet-c", "--stubs", STUBS)
    check(rc == 0 and out.strip().endswith("/plugins/profile/run42"),
          "--session-id, --stubs: exit 0 (%d), %r: %s" % (rc, out, err))
    check([h.calls[0][1].host_name for h in hosts if h.calls] == ["fleet-a", "fleet-b",
                                                                  "fleet-c"],
          "--override-hostnames name the hosts in order")
    check(all(h.calls[0][1].session_id == "run42" for h in hosts if h.calls),
          "--session-id is every host's")


def retries(hosts, logdir):
    addrs = ",".join(h.target() for h in hosts)
    reset(hosts, ["ALREADY_EXISTS", "ok"])
    rc, out, err = run("--service-addr", addrs, "--logdir", logdir, "--duration-ms", "50")
    check(rc == 0, "ALREADY_EXISTS then ok: exit 0 (%d): %s" % (rc, err))
    check(all(len(h.calls) == 2 for h in hosts), "ALREADY_EXISTS is retried: %s"
          % [len(h.calls) for h in hosts])
    check("Automatically retrying" in err, "the retry is said: %s" % err)
    check(len({r.session_id for h in hosts for _, r in h.calls}) == 1,
          "the retry keeps the session")

    reset(hosts, ["empty"])
    rc, out, err = run("--service-addr", addrs, "--logdir", logdir, "--duration-ms", "50",
                       "--num-tracing-attempts", "2")
    check(rc == 1 and not out.strip(), "every trace empty: exit 1, nothing on stdout (%d)" % rc)
    check(all(len(h.calls) == 2 for h in hosts), "empty traces are retried up to the "
          "attempts: %s" % [len(h.calls) for h in hosts])
    for h in hosts:
        check("No trace event is collected from %s" % h.target() in err,
              "the empty host %s is named: %s" % (h.target(), err))
    check("after 2 attempt(s)" in err, "the last attempt is said: %s" % err)

    reset(hosts, ["ok"])
    hosts[1].plan = ["empty"]
    rc, out, err = run("--service-addr", addrs, "--logdir", logdir, "--duration-ms", "50")
    check(rc == 0 and all(len(h.calls) == 1 for h in hosts),
          "one host empty among good ones: exit 0, no retry (%d, %s): %s"
          % (rc, [len(h.calls) for h in hosts], err))
    check("No trace event is collected from %s" % hosts[1].target() in err,
          "and that host is named: %s" % err)


def failures(logdir):
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    rc, out, err = run("--service-addr", "127.0.0.1:%d" % port, "--logdir", logdir,
                       "--duration-ms", "50", "--num-tracing-attempts", "1")
    check(rc == 1 and "UNAVAILABLE" in err, "nobody listening: exit 1, UNAVAILABLE (%d): %s"
          % (rc, err))
    for args, says in ((["--service-addr", "a:1,b:2", "--override-hostnames", "x"],
                        "2 addresses"),
                       (["--service-addr", "nohostport"], "HOST:PORT"),
                       (["--service-addr", "a:1", "--duration-ms", "0"], "--duration-ms"),
                       (["--service-addr", "a:1", "--session-id", "../x"], "--session-id")):
        rc, out, err = run(*(args + ["--logdir", logdir]))
        check(rc == 2 and says in err, "%s: exit 2 naming '%s' (%d): %s" % (args, says, rc, err))


def main():
    work = tempfile.mkdtemp(prefix="at-fleet-")
    hosts = []
    try:
        try:
            hosts = [Host("127.0.0.%d" % i) for i in (1, 2, 3)]
        except RuntimeError as e:
            skip("cannot listen on 127.0.0.1-3: %s" % e)
        logdir = os.path.join(work, "logs")
        fleet(hosts, logdir)
        retries(hosts, logdir)
        failures(logdir)
    finally:
        for h in hosts:
            h.server.stop(0)
        shutil.rmtree(work, ignore_errors=True)
        shutil.rmtree(STUBS, ignore_errors=True)


if __name__ == "__main__":
    main()
    finish()
