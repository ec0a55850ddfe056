#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The daemon with a bucket logdir (gs://, against tests/harness/buckets.py's
GcsServer with the metadata server's token, as on a TPU VM):

- a trigger's capture lands at LOGDIR/plugins/profile/SESSION/HOST.xplane.pb
  in the bucket and decodes; the daemon logs the object's URL;
- XProf's capture dialog (a real gRPC client) with repository_root =
  gs://BUCKET/PREFIX/plugins/profile: the capture lands there, under the
  session and host the request names; a root under a bucket profiler-root
  is served too; a root in another bucket is PERMISSION_DENIED and a
  root with ".." INVALID_ARGUMENT, nothing written for either;
- scripts/profile-fleet.py --logdir gs://...: the session it prints is the
  bucket's, with the host's file in it;
- a refused credential at start: the daemon says so and exits, before it
  watches anything.
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "harness"))
from e2e import (check, finish, require_root, running_trainer, skip, tmpdir,
                 uprobes_of, wait_for, PLUGIN)
from daemon import Daemon
import buckets  # noqa: E402

try:
    import grpc
except ImportError:
    skip("python3-grpcio is not installed")
from profiler_grpc import RPC, status_of, xprof_request  # noqa: E402

BUCKET = "tpu-pod-logs"





def main():
    require_root()
    work = tmpdir()
    srv = buckets.GcsServer()
    os.environ.update(buckets.gcs_env(srv, os.path.join(work, "spool")))
    logdir = "gs://%s/pod" % BUCKET
    try:
        bad_start(work, srv, logdir)
        d = Daemon(work, "--logdir", logdir, "--profiler-roots", "gs://%s/xprof" % BUCKET,
                   "--flight-recorder", "10s", profiler_listen="127.0.0.1:0")
        if d.wait_ready():
            try:
                run(work, srv, d, logdir)
            finally:
                d.stop()
    finally:
        srv.stop()


def bad_start(work, srv, logdir):
    srv.state.metadata_refuses = True
    d = Daemon(work, "--logdir", logdir)
    try:
        d.proc.wait(timeout=30)
    except Exception:
        pass
    rc = d.stop()
    srv.state.metadata_refuses = False
    text = "\n".join(d.lines)
    check(rc not in (0, None) and "cannot write captures to " + logdir in text and
          "refused a Cloud Storage token" in text and "watching every accelerator" not in text,
          "a refused credential stops the daemon at start (rc %s): %s" % (rc, text[-500:]))


def run(work, srv, d, logdir):
    t = running_trainer("--steps", "0", "--duration", "60s", "--step-time", "2ms")
    if not t:
        return
    try:
        wait_for(lambda: uprobes_of(d.pid, os.path.abspath(PLUGIN[94])), 30,
                 what="the daemon's probes on the trainer")
        rc, s, err = d.trigger("--duration", "1s", "--session", "trig")
        if check(rc == 0 and s, "trigger: rc %d: %s" % (rc, err[-500:])):
            check(s["path"].startswith(logdir + "/plugins/profile/trig/"),
                  "the trigger's capture is in the bucket: %s" % s["path"])
            got = buckets.gcs_fetch(srv, BUCKET, s["path"][len("gs://%s/" % BUCKET):],
                        os.path.join(work, "trig.xplane.pb"))
            check(buckets.decodes(got, s["window_start_ns"]), "it decodes")
            check(any(s["path"] in l for l in d.lines), "the daemon logs the object's URL")

        port = d.profiler_port()
        ch = grpc.insecure_channel("127.0.0.1:%d" % port)
        stub = RPC.ProfilerServiceStub(ch)
        for session, root in (("xp1", logdir + "/plugins/profile"),
                              ("xp2", "gs://%s/xprof/run7/plugins/profile" % BUCKET)):
            code, det = status_of(lambda: stub.Profile(
                xprof_request(d, session, 1000, root=root), timeout=60))
            key = "%s/%s/pshost.xplane.pb" % (root[len("gs://%s/" % BUCKET):], session)
            if check(code == grpc.StatusCode.OK, "Profile into %s: %s %s" % (root, code, det)):
                check((BUCKET, key) in srv.state.objects, "the capture is at %s" % key)
                got = buckets.gcs_fetch(srv, BUCKET, key,
                                        os.path.join(work, session + ".xplane.pb"))
                check(buckets.decodes(got), "%s decodes" % key)
        before = set(srv.state.objects)
        for what, root, want in (
                ("another bucket", "gs://someone-else/plugins/profile",
                 grpc.StatusCode.PERMISSION_DENIED),
                ("a local root", "/tmp/plugins/profile", grpc.StatusCode.PERMISSION_DENIED),
                ("..", logdir + "/../x/plugins/profile", grpc.StatusCode.INVALID_ARGUMENT)):
            code, det = status_of(lambda: stub.Profile(xprof_request(d, "bad", 500, root=root),
                                                     timeout=30))
            check(code == want, "%s: %s (%s), expected %s" % (what, code, det, want))
        check(set(srv.state.objects) == before, "nothing written for the refused roots")
        ch.close()

        # scripts/profile-fleet.py (what a fleet's capture runs) into the bucket.
        p = subprocess.run(["/usr/bin/python3", "scripts/profile-fleet.py", "--service-addr",
                            "127.0.0.1:%d" % port, "--logdir", logdir, "--duration-ms", "800",
                            "--session-id", "fleet1", "--override-hostnames", "host-a"],
                           capture_output=True, text=True, timeout=120)
        want = logdir + "/plugins/profile/fleet1"
        check(p.returncode == 0 and p.stdout.strip() == want,
              "profile-fleet.py prints the bucket session (rc %d): %r %s" %
              (p.returncode, p.stdout, p.stderr[-300:]))
        check((BUCKET, "pod/plugins/profile/fleet1/host-a.xplane.pb") in srv.state.objects,
              "the fleet's file is in the bucket")
    finally:
        t.stop()


main()
finish()
