#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Capture a profile of several hosts as one session, as XProf's "Capture
Profile" dialog, capture_tpu_profile and tf.profiler.experimental.client.trace
do with a comma-separated list of service addresses, without TensorFlow.

Every address gets one ProfilerService.Profile call, all at once, with the
same session_id, repository_root = LOGDIR/plugins/profile and its own
host_name; each server writes <repository_root>/<session_id>/<host>.xplane.pb
itself, so LOGDIR must be a path every host can write (shared storage) and
the client reads nothing back. The attempt succeeds when at least one host
returned trace data ("No trace event is collected from ADDR" for those that
did not); when none did, it fails UNAVAILABLE, and UNAVAILABLE and
ALREADY_EXISTS are retried up to --num-tracing-attempts times (XProf's
capture_profile.cc). On success the session directory is printed on stdout
and the exit status is 0; otherwise 1 (2 for a bad command line).

The gRPC stubs are generated at run time from user/profiler_service/*.proto
with grpc_tools.protoc (Debian: python3-grpc-tools), or taken from --stubs.
"""
import argparse
import concurrent.futures
import os
import re
import shutil
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_PROTOS = os.path.join(HERE, "..", "user", "profiler_service")
# What XProf's client asks of every host (capture_profile.cc,
# session_manager.cc PopulateProfileRequest).
MAX_EVENTS = 1000000
TOOLS = ["xplane.pb"]
# Responses are not read for data here, but a server may send some: bound it.
MAX_RESPONSE_BYTES = 64 << 20
MAX_HOSTS = 1024
MAX_DURATION_MS = 24 * 3600 * 1000
RETRY_CODES = ("UNAVAILABLE", "ALREADY_EXISTS")


def say(msg):
    print(msg, file=sys.stderr, flush=True)


def load_stubs(stubs, protos):
    """The generated modules (profiler_service_pb2, _pb2_grpc) and a temp
    dir to remove (None with --stubs)."""
    tmp = None
    if not stubs:
        try:
            from grpc_tools import protoc
        except ImportError:
            raise SystemExit("profile-fleet: grpc_tools is missing (Debian: python3-grpc-tools); "
                             "or give --stubs DIR with profiler_service_pb2*.py")
        protos = os.path.abspath(protos)
        files = [os.path.join(protos, f) for f in ("profiler_options.proto",
                                                   "profiler_service.proto")]
        for f in files:
            if not os.path.isfile(f):
                raise SystemExit("profile-fleet: %s not found (--protos DIR)" % f)
        tmp = tempfile.mkdtemp(prefix="profile-fleet-stubs-")
        rc = protoc.main(["grpc_tools.protoc", "-I" + protos, "--python_out=" + tmp,
                          "--grpc_python_out=" + tmp] + files)
        if rc != 0:
            shutil.rmtree(tmp, ignore_errors=True)
            raise SystemExit("profile-fleet: generating the gRPC stubs from %s failed" % protos)
        stubs = tmp
    sys.path.insert(0, os.path.abspath(stubs))
    try:
        import profiler_service_pb2 as pb
        import profiler_service_pb2_grpc as pb_grpc
    except ImportError as e:
        raise SystemExit("profile-fleet: the stubs in %s: %s" % (stubs, e))
    return pb, pb_grpc, tmp


def split_address(addr):
    """'grpc://host:port' or 'host:port' or '[v6]:port' -> (target, host)."""
    a = addr.strip()
    if a.startswith("grpc://"):
        a = a[len("grpc://"):]
    m = re.fullmatch(r"\[([0-9A-Fa-f:.]+)\]:(\d+)", a) or re.fullmatch(r"([^:/\s]+):(\d+)", a)
    if not m or not 0 < int(m.group(2)) < 65536:
        raise ValueError("'%s' is not HOST:PORT (optionally grpc://HOST:PORT)" % addr)
    return a, m.group(1)


def default_session_id():
    # XProf's GetCurrentTimeStampAsString: local time.
    return time.strftime("%Y_%m_%d_%H_%M_%S")


def parse_args(argv):
    p = argparse.ArgumentParser(
        prog="profile-fleet.py",
        description="Capture every host of a fleet into one XProf session through the "
                    "ProfilerService gRPC (what XProf's capture dialog does with a "
                    "comma-separated list of addresses).",
        epilog="Exit status: 0 when at least one host returned trace data (the session "
               "directory on stdout); 1 when none did after every attempt, or on an "
               "error; 2 on a usage error.")
    p.add_argument("--service-addr", required=True,
                   help="comma-separated grpc://HOST:PORT (or HOST:PORT) of every host")
    p.add_argument("--logdir", required=True,
                   help="the TensorBoard/XProf logdir, as every host sees it; the session "
                        "goes to LOGDIR/plugins/profile/SESSION/")
    p.add_argument("--duration-ms", type=int, default=1000, help="default 1000")
    p.add_argument("--session-id", help="default: the local time, as XProf names sessions")
    p.add_argument("--num-tracing-attempts", type=int, default=3, help="default 3")
    p.add_argument("--override-hostnames",
                   help="comma-separated host names, one per address (default: the "
                        "address's host)")
    p.add_argument("--host-tracer-level", type=int, default=2, help="0-3, default 2")
    p.add_argument("--device-tracer-level", type=int, default=1, help="0-1, default 1")
    p.add_argument("--python-tracer-level", type=int, default=0, help="0-1, default 0")
    p.add_argument("--delay-ms", type=int, default=0,
                   help="start this long after now (default 0)")
    p.add_argument("--stubs", help="a directory with profiler_service_pb2*.py already made")
    p.add_argument("--protos", default=DEFAULT_PROTOS,
                   help="where profiler_service.proto and profiler_options.proto are")
    a = p.parse_args(argv)
    try:
        a.targets = [split_address(x) for x in a.service_addr.split(",") if x.strip()]
    except ValueError as e:
        p.error("--service-addr: %s" % e)
    if not a.targets:
        p.error("--service-addr: no address")
    if len(a.targets) > MAX_HOSTS:
        p.error("--service-addr: more than %d addresses" % MAX_HOSTS)
    if a.override_hostnames is not None:
        names = [x.strip() for x in a.override_hostnames.split(",")]
        if len(names) != len(a.targets):
            p.error("--override-hostnames: %d names for %d addresses" %
                    (len(names), len(a.targets)))
        a.hosts = names
    else:
        a.hosts = [h for _, h in a.targets]
    for h in a.hosts:
        if not h or "/" in h or h in (".", ".."):
            p.error("host name '%s' cannot name a file" % h)
    if not 0 < a.duration_ms <= MAX_DURATION_MS:
        p.error("--duration-ms: expected 1 to %d, got %d" % (MAX_DURATION_MS, a.duration_ms))
    if not 0 <= a.delay_ms <= MAX_DURATION_MS:
        p.error("--delay-ms: expected 0 to %d, got %d" % (MAX_DURATION_MS, a.delay_ms))
    if a.num_tracing_attempts < 1:
        p.error("--num-tracing-attempts: at least 1")
    for name, v, hi in (("--host-tracer-level", a.host_tracer_level, 3),
                        ("--device-tracer-level", a.device_tracer_level, 1),
                        ("--python-tracer-level", a.python_tracer_level, 1)):
        if not 0 <= v <= hi:
            p.error("%s: expected 0 to %d, got %d" % (name, hi, v))
    a.session_id = a.session_id or default_session_id()
    if "/" in a.session_id or a.session_id in (".", ".."):
        p.error("--session-id '%s' cannot name a directory" % a.session_id)
    # A local path is sent absolute (the servers do not share our cwd);
    # gs://... and the like go as given.
    a.repo_logdir = a.logdir if "://" in a.logdir else os.path.abspath(a.logdir)
    return a


def build_request(pb, a, host, start_ns):
    r = pb.ProfileRequest()
    r.duration_ms = a.duration_ms
    r.max_events = MAX_EVENTS
    r.tools.extend(TOOLS)
    r.repository_root = a.repo_logdir.rstrip("/") + "/plugins/profile"
    r.session_id = a.session_id
    r.host_name = host
    o = r.opts
    # Only fields 1-10 (xprof-contract 7.4: field 11 differs between copies).
    o.version = 1
    o.include_dataset_ops = True
    o.host_tracer_level = a.host_tracer_level
    o.device_tracer_level = a.device_tracer_level
    o.python_tracer_level = a.python_tracer_level
    o.enable_hlo_proto = True
    o.start_timestamp_ns = start_ns
    o.duration_ms = a.duration_ms
    return r


def profile_one(grpc, pb_grpc, target, request, timeout_s):
    """(code name, empty_trace, details) of one host's Profile."""
    opts = [("grpc.max_receive_message_length", MAX_RESPONSE_BYTES),
            ("grpc.enable_http_proxy", 0)]
    with grpc.insecure_channel(target, options=opts) as ch:
        stub = pb_grpc.ProfilerServiceStub(ch)
        try:
            resp = stub.Profile(request, timeout=timeout_s)
        except grpc.RpcError as e:
            return e.code().name, True, e.details() or ""
    return "OK", resp.empty_trace, ""


def attempt(grpc, pb, pb_grpc, a):
    """One Profile of every host at once: 'OK' or the failure's code name."""
    start_ns = time.time_ns() + a.delay_ms * 1000000
    # XProf's session manager: max(60 s, 2 x duration) + delay.
    timeout_s = (max(60000, 2 * a.duration_ms) + a.delay_ms) / 1000.0
    reqs = [build_request(pb, a, host, start_ns) for host in a.hosts]
    with concurrent.futures.ThreadPoolExecutor(max_workers=min(len(reqs), 64)) as ex:
        futs = [ex.submit(profile_one, grpc, pb_grpc, t, r, timeout_s)
                for (t, _), r in zip(a.targets, reqs)]
        results = [f.result() for f in futs]
    with_data, codes = 0, set()
    for (target, _), host, (code, empty, details) in zip(a.targets, a.hosts, results):
        if code != "OK":
            say("%s returned %s: %s" % (target, code, details))
            codes.add(code)
        elif empty:
            say("No trace event is collected from %s" % target)
            codes.add("UNAVAILABLE")
        else:
            say("%s: %s.xplane.pb written" % (target, host))
            with_data += 1
    if with_data:
        return "OK"
    say("No trace event was collected because there were no responses from clients or "
        "the responses did not have trace data.")
    # Every host busy with another session: that is worth a retry as such.
    return "ALREADY_EXISTS" if codes == {"ALREADY_EXISTS"} else "UNAVAILABLE"


def main(argv):
    a = parse_args(argv)
    try:
        import grpc
    except ImportError:
        raise SystemExit("profile-fleet: grpcio is missing (Debian: python3-grpcio)")
    pb, pb_grpc, tmp = load_stubs(a.stubs, a.protos)
    try:
        remaining = a.num_tracing_attempts
        while True:
            remaining -= 1
            say("Starting to trace for %d ms. Remaining attempt(s): %d" %
                (a.duration_ms, remaining))
            status = attempt(grpc, pb, pb_grpc, a)
            if status == "OK" or remaining <= 0 or status not in RETRY_CODES:
                break
            say("No trace event is collected. Automatically retrying.")
        if status != "OK":
            if status in RETRY_CODES:
                say("No trace event is collected after %d attempt(s). Perhaps, you want to "
                    "try again (with more attempts?).\nTip: increase number of attempts "
                    "with --num-tracing-attempts." % a.num_tracing_attempts)
            return 1
        print(os.path.join(a.repo_logdir.rstrip("/"), "plugins", "profile", a.session_id))
        return 0
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
