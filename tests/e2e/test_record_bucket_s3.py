#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""A bucket as the logdir, against a real S3-API server (s3rver, from the
npm registry: the S3 server that installs here without a container or a
GitHub checkout; tests/harness/buckets.py says what it does not check).

- record --logdir s3://BUCKET/PREFIX of the simulated trainer: the capture
  lands at PREFIX/plugins/profile/SESSION/HOST.xplane.pb, curl (its own
  SigV4) fetches it, protoc and Python's protobuf decode it; the spool is
  left empty; report reads it back from the bucket and agrees with report
  on the local copy;
  convert writes beside the object, or to a bucket URL, never over one.
- A second record into the same session never replaces the first: it
  goes to SESSION-2, the first object's bytes unchanged.
- Above the part size (ACCELTRACE_STORE_PART_MIB=1) the upload is a
  multipart one (s3rver's log shows it started, its parts, its completion)
  and decodes the same way.
- A refused credential (an unknown key id) is said at start, before any
  window, naming the server's refusal; the trainer is never started.
- The server stalled mid-upload (a proxy that stops answering), then made
  to fail (refusing): record says the capture could not be uploaded and
  where it is kept; the kept file decodes; nothing partial is in the bucket.
"""
import gzip
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "harness"))
from e2e import (acceltrace, check, finish, record, require_root, skip,
                 tmpdir, trainer_cmd)
import buckets  # noqa: E402

BUCKET = "captures"



def trainer(seconds=4):
    return trainer_cmd("--steps", "0", "--duration", "%ds" % seconds, "--step-time", "2ms")


def objects(srv, prefix=""):
    """Keys in the bucket (s3rver keeps one file a key under its data dir)."""
    out = []
    top = os.path.join(srv.data, BUCKET)
    for d, _, files in os.walk(top):
        for f in files:
            if f.endswith("._S3rver_object"):
                key = os.path.relpath(os.path.join(d, f[:-len("._S3rver_object")]), top)
                if key.startswith(prefix):
                    out.append(key)
    return sorted(out)


def spool_files(spool):
    return [os.path.join(d, f) for d, _, fs in os.walk(spool) for f in fs]


def main():
    require_root()
    if not os.path.exists(buckets.S3RVER):
        skip("s3rver is not installed (make test installs it from the npm registry)")
    work = tmpdir()
    srv = buckets.S3rver(work, [BUCKET])
    if not check(srv.ok, "s3rver did not start: see %s/s3rver.log" % work):
        return
    try:
        run(work, srv)
    finally:
        srv.stop()


def run(work, srv):
    spool = os.path.join(work, "spool")
    env = buckets.s3_env(srv.url(), spool)
    url = "s3://%s/team/run1" % BUCKET

    # A capture lands, decodes, and the spool is left empty.
    rc, s, err = record("--logdir", url, "--session", "one", "--duration", "1s", "--",
                        *trainer(), env=env, timeout=120)
    if not check(rc == 0 and s, "record into %s: rc %d: %s" % (url, rc, err[-800:])):
        return
    want = "%s/plugins/profile/one/" % url
    check(s["path"].startswith(want) and s["path"].endswith(".xplane.pb"),
          "the summary names the object: %s" % s["path"])
    key = s["path"][len("s3://%s/" % BUCKET):]
    check(objects(srv, "team/") == [key], "the bucket holds the capture only (the write "
          "check's object removed): %s" % objects(srv, "team/"))
    got = os.path.join(work, "got.xplane.pb")
    status, _ = buckets.curl_s3(srv.url(), BUCKET, key, out=got)
    check(status == 200 and buckets.decodes(got, s["window_start_ns"]),
          "curl fetches the capture and protoc decodes it (HTTP %d)" % status)
    check(spool_files(spool) == [], "the spool is empty after the upload: %s" % spool_files(spool))

    rc, out, err = acceltrace("report", "-j", url, env=env)
    remote = json.loads(out) if rc == 0 else None
    rc2, out2, _ = acceltrace("report", "-j", got)
    local = json.loads(out2) if rc2 == 0 else None
    if check(remote and local, "report reads the bucket (rc %d: %s)" % (rc, err[-400:])):
        check(remote.get("capture") == s["path"] or s["path"] in out,
              "report names the object, not a temporary file")
        check(remote["steps"] == local["steps"], "the bucket's report is the local one's")
    check(not [f for f in spool_files(spool)], "report's download is removed")

    # convert: beside the object by default, or to a bucket URL; JSON and
    # gzip read by Python's own modules.
    session_url = "%s/plugins/profile/one" % url
    rc, out, err = acceltrace("convert", "-j", "--to", "perfetto", session_url, env=env)
    pk = key[:-len(".xplane.pb")] + ".perfetto-trace"
    check(rc == 0 and pk in objects(srv), "convert writes beside the object: rc %d %s %s" %
          (rc, err[-300:], objects(srv, "team/")))
    dest = "s3://%s/exports/t.trace.json.gz" % BUCKET
    rc, out, err = acceltrace("convert", "--to", "json", "-O", dest, session_url, env=env)
    jz = os.path.join(work, "t.trace.json.gz")
    status, _ = buckets.curl_s3(srv.url(), BUCKET, "exports/t.trace.json.gz", out=jz)
    if check(rc == 0 and status == 200, "convert -O %s: rc %d %s" % (dest, rc, err[-300:])):
        with gzip.open(jz, "rt") as f:
            check(len(json.load(f).get("traceEvents", [])) > 100, "the trace reads as JSON")
    rc, out, err = acceltrace("convert", "--to", "json", "-O", dest, session_url, env=env)
    check(rc != 0 and "not replaced" in err, "convert never replaces an object: %s" % err[-300:])
    check([f for f in spool_files(spool) if f.endswith("t.trace.json.gz")],
          "the output that could not go is kept in the spool")
    for f in spool_files(spool):
        os.unlink(f)

    # The same session again: never over the first.
    first = open(got, "rb").read()
    rc, s2, err = record("--logdir", url, "--session", "one", "--duration", "1s", "--",
                         *trainer(), env=env, timeout=120)
    if check(rc == 0 and s2, "a second record: rc %d: %s" % (rc, err[-500:])):
        check("/plugins/profile/one-2/" in s2["path"], "the second capture goes to one-2: %s"
              % s2["path"])
        buckets.curl_s3(srv.url(), BUCKET, key, out=got)
        check(open(got, "rb").read() == first, "the first capture is unchanged")

    # Multipart above the part size.
    env_mp = buckets.s3_env(srv.url(), spool, ACCELTRACE_STORE_PART_MIB=1)
    rc, s3, err = record("--logdir", url, "--session", "big", "--duration", "3s", "--",
                         *trainer(6), env=env_mp, timeout=120)
    if check(rc == 0 and s3, "a multipart record: rc %d: %s" % (rc, err[-500:])):
        k3 = s3["path"][len("s3://%s/" % BUCKET):]
        size = s3.get("bytes", 0) or 0
        # s3rver gives a multipart object a plain MD5 ETag: its log shows the parts.
        reqs = [l for l in srv.requests() if "/big/" in l]
        check(any("?uploads= 200" in l for l in reqs) and
              any("?partNumber=2&uploadId=" in l and " 200 " in l for l in reqs) and
              any("?uploadId=" in l and " 200 " in l for l in reqs),
              "a multipart upload (started, two parts or more, completed): %s" % reqs[:6])
        big = os.path.join(work, "big.xplane.pb")
        buckets.curl_s3(srv.url(), BUCKET, k3, out=big)
        check(os.path.getsize(big) > 1 << 20 and buckets.decodes(big, s3["window_start_ns"]),
              "the multipart capture (%d bytes, summary %d) decodes" %
              (os.path.getsize(big), size))

    # A refused credential: said at start, no window, no trainer.
    marker = os.path.join(work, "trainer-started")
    bad = buckets.s3_env(srv.url(), spool, AWS_ACCESS_KEY_ID="NOSUCHKEY")
    t0 = time.time()
    rc, out, err = acceltrace("record", "--logdir", url, "--duration", "1s", "--", "sh", "-c",
                              "touch %s; exec %s" % (marker, " ".join(trainer())),
                              env=bad, timeout=60)
    check(rc != 0 and "InvalidAccessKeyId" in err and "cannot write captures to" in err,
          "a refused key is said: rc %d: %s" % (rc, err[-500:]))
    check(time.time() - t0 < 20 and not os.path.exists(marker),
          "before any window: the command never ran")

    # Stalled, then failing, mid-upload: kept in the spool and said.
    proxy = buckets.Proxy(srv.port)
    env_p = buckets.s3_env(proxy.url(), spool, ACCELTRACE_STORE_STALL_S=2,
                           ACCELTRACE_STORE_ATTEMPTS=2, ACCELTRACE_STORE_DEADLINE_S=20)
    for mode in ("stall", "refuse"):
        before = set(objects(srv))
        proc = subprocess.Popen([os.environ.get("ACCELTRACE", "build/acceltrace"), "record",
                                 "-j", "--logdir", url, "--session", mode, "--duration", "2s",
                                 "--"] + trainer(), env=env_p, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        # The check at start passes through; the window is on: then the server goes.
        time.sleep(1.5)
        proxy.mode = mode
        try:
            out, err = proc.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
            check(False, "%s: record did not end within 120 s" % mode)
        proxy.mode = "pass"
        kept = [f for f in spool_files(spool) if "/%s/" % mode in f]
        check(proc.returncode != 0 and "could not be uploaded" in err and
              (kept and kept[0] in err), "%s: record says where the capture is kept "
              "(rc %d): %s" % (mode, proc.returncode, err[-600:]))
        if kept:
            check(buckets.decodes(kept[0]), "%s: the kept capture decodes" % mode)
        check(set(objects(srv)) == before, "%s: nothing partial in the bucket" % mode)
    check(proxy.stalled > 0, "the proxy stalled a transfer")
    proxy.close()


main()
finish()
