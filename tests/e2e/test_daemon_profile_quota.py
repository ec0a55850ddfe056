#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""ProfilerService quotas (docs/profiler-service.md, "Quotas"), with a real
gRPC client (grpcio) as root and as another local user (nobody):

- past --profile-quota-captures in the hour, a Profile is
  RESOURCE_EXHAUSTED, saying which quota and when it frees, and no
  session directory is made for it;
- a Profile asking more full detail (host_tracer_level 2) than
  --profile-quota-detail leaves is refused the same way; one without full
  detail is not;
- the quota is per client: nobody, on the same loopback, still gets its
  Profile while root's is spent;
- acceltrace_captures_total{result="over_quota"} counts the refusals.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "harness"))
from e2e import check, finish, require_root, skip, tmpdir
from daemon import Daemon, free_port

try:
    import grpc
except ImportError:
    skip("python3-grpcio is not installed")
from profiler_grpc import RPC, status_of, xprof_request  # noqa: E402

# A client run as nobody: its own stubs, in a directory nobody can read.
NOBODY_CLIENT = r'''
import sys
sys.path.insert(0, sys.argv[1])
import grpc
import profiler_options_pb2 as opts
import profiler_service_pb2 as svc
import profiler_service_pb2_grpc as rpc
port, session, root = sys.argv[2], sys.argv[3], sys.argv[4]
o = opts.ProfileOptions(version=1, host_tracer_level=1, device_tracer_level=1,
                        duration_ms=300, session_id=session)
rq = svc.ProfileRequest(duration_ms=300, max_events=1000000, tools=["xplane.pb"], opts=o,
                        session_id=session, host_name="nobodyhost", repository_root=root)
try:
    rpc.ProfilerServiceStub(grpc.insecure_channel("127.0.0.1:" + port)).Profile(rq, timeout=30)
    print("OK")
except grpc.RpcError as e:
    print(e.code().name, e.details())
'''



def as_nobody(work, port, session, root):
    d = tempfile.mkdtemp(prefix="nobody-grpc-", dir=work)
    protos = os.path.join(os.getcwd(), "user", "profiler_service")
    subprocess.run(["/usr/bin/python3", "-m", "grpc_tools.protoc", "-I", protos,
                    "--python_out=" + d, "--grpc_python_out=" + d,
                    os.path.join(protos, "profiler_options.proto"),
                    os.path.join(protos, "profiler_service.proto")], check=True)
    script = os.path.join(d, "client.py")
    with open(script, "w") as f:
        f.write(NOBODY_CLIENT)
    for top in (work, d):
        os.chmod(top, 0o755)
    for n in os.listdir(d):
        os.chmod(os.path.join(d, n), 0o644)
    p = subprocess.run(["setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups",
                        "/usr/bin/python3", script, d, str(port), session, root],
                       capture_output=True, text=True, timeout=60)
    shutil.rmtree(d, ignore_errors=True)
    return (p.stdout.strip() or p.stderr.strip()[-300:])


def over_quota(metrics_port):
    with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % metrics_port, timeout=10) as r:
        text = r.read().decode()
    m = re.search(r'^acceltrace_captures_total\{result="over_quota"\} (\d+)$', text, re.M)
    return int(m.group(1)) if m else None


def main():
    require_root()
    work = tmpdir()
    mport = free_port()
    d = Daemon(work, "--profile-quota-captures", "2", "--profile-quota-detail", "1s",
               listen="127.0.0.1:%d" % mport, profiler_listen="127.0.0.1:0")
    if not d.wait_ready():
        d.stop()
        return
    ch = grpc.insecure_channel("127.0.0.1:%d" % d.profiler_port())
    stub = RPC.ProfilerServiceStub(ch)
    root = os.path.join(d.logdir, "plugins", "profile")
    try:
        # More full detail than the hour's second: refused, nothing made.
        code, det = status_of(lambda: stub.Profile(xprof_request(d, "detail", 2000), timeout=30))
        check(code == grpc.StatusCode.RESOURCE_EXHAUSTED and "full detail" in (det or ""),
              "full detail past its quota: %s %s" % (code, det))
        for s in ("q1", "q2"):
            code, det = status_of(lambda: stub.Profile(xprof_request(d, s, 300), timeout=30))
            check(code == grpc.StatusCode.OK, "Profile %s within the quota: %s %s" %
                  (s, code, det))
        code, det = status_of(lambda: stub.Profile(xprof_request(d, "q3", 300), timeout=30))
        check(code == grpc.StatusCode.RESOURCE_EXHAUSTED and "profile-quota-captures" in
              (det or "") and "uid 0" in (det or ""),
              "the third Profile in the hour: %s %s" % (code, det))
        for s in ("detail", "q3"):
            check(not os.path.exists(os.path.join(root, s)), "no directory for refused %s" % s)
        # Another local user's quota is its own.
        out = as_nobody(work, d.profiler_port(), "n1", root)
        check(out == "OK", "nobody's Profile while root's quota is spent: %s" % out)
        check(os.path.exists(os.path.join(root, "n1", "nobodyhost.xplane.pb")),
              "nobody's capture is written")
        check(over_quota(mport) == 2, "the metric counts the two refusals: %s" %
              over_quota(mport))
    finally:
        ch.close()
        d.stop()


main()
finish()
