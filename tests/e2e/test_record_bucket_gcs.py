#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""A gs:// logdir against the requests Cloud Storage's JSON API, the
metadata server and the OAuth token endpoint document (tests/harness/
buckets.py's GcsServer; no GCS emulator installs here).

- With the metadata server's token (what a TPU VM has): record lands the
  capture at PREFIX/plugins/profile/SESSION/HOST.xplane.pb, fetched by
  plain HTTP it decodes with protoc; report reads the logdir back (a
  listing of several pages).
- The conditional write: the look staged to miss the object (the race it
  cannot close), the upload's ifGenerationMatch=0 gets 412 and the capture
  goes to SESSION-2; the first object unchanged.
- Above the part size, a resumable upload; a chunk the server keeps only
  in half is sent again from where the server's Range says.
- The token refused after the start (during the window): the capture
  stays in the spool, said, and decodes.
- A service account's key file: a JWT the server verifies with openssl
  (RS256) gets the token. Another key (not the account's), or a metadata
  server that refuses, is said at start: the command never runs.
"""
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "harness"))
from e2e import (acceltrace, check, finish, record, require_root, tmpdir,
                 trainer_cmd)
import buckets  # noqa: E402

BUCKET = "tpu-pod-logs"



def trainer(seconds=4):
    return trainer_cmd("--steps", "0", "--duration", "%ds" % seconds, "--step-time", "2ms")



def key_of(path):
    return path[len("gs://%s/" % BUCKET):]


def keygen(work, name):
    key = os.path.join(work, name + ".pem")
    pub = os.path.join(work, name + ".pub")
    subprocess.run(["openssl", "genrsa", "-out", key, "2048"], check=True, capture_output=True)
    subprocess.run(["openssl", "rsa", "-in", key, "-pubout", "-out", pub], check=True,
                   capture_output=True)
    return key, pub


def key_file(work, name, pem, token_uri):
    path = os.path.join(work, name + ".json")
    with open(path, "w") as f:
        json.dump({"type": "service_account", "project_id": "p", "private_key_id": "k1",
                   "private_key": open(pem).read(),
                   "client_email": "profiler@p.iam.gserviceaccount.com",
                   "token_uri": token_uri}, f)
    return path


def never_ran(work, env, what):
    marker = os.path.join(work, "ran-" + what)
    t0 = time.time()
    rc, _, err = acceltrace("record", "--logdir", "gs://%s/x" % BUCKET, "--duration", "1s",
                            "--", "sh", "-c", "touch %s" % marker, env=env, timeout=60)
    check(rc != 0 and "cannot write captures to gs://" in err and time.time() - t0 < 20 and
          not os.path.exists(marker), "%s: said at start, the command never ran "
          "(rc %d): %s" % (what, rc, err[-500:]))
    return err


def main():
    require_root()
    work = tmpdir()
    sa_key, sa_pub = keygen(work, "account")
    other_key, _ = keygen(work, "other")
    srv = buckets.GcsServer(pubkey=sa_pub)
    try:
        run(work, srv, sa_key, other_key)
    finally:
        srv.stop()


def run(work, srv, sa_key, other_key):
    spool = os.path.join(work, "spool")
    env = buckets.gcs_env(srv, spool)
    url = "gs://%s/jobs/llm" % BUCKET

    rc, s, err = record("--logdir", url, "--session", "m", "--duration", "1s", "--",
                        *trainer(), env=env, timeout=120)
    if not check(rc == 0 and s, "record into %s: rc %d: %s" % (url, rc, err[-800:])):
        return
    check(s["path"].startswith(url + "/plugins/profile/m/"), "the object: %s" % s["path"])
    got = buckets.gcs_fetch(srv, BUCKET, key_of(s["path"]), os.path.join(work, "m.xplane.pb"))
    check(buckets.decodes(got, s["window_start_ns"]), "the capture fetched by HTTP decodes")
    check(not [f for _, _, fs in os.walk(spool) for f in fs], "the spool is empty")
    first = open(got, "rb").read()

    # The race staged: the look misses, the condition holds the line.
    srv.state.hide_existing = True
    rc, s2, err = record("--logdir", url, "--session", "m", "--duration", "1s", "--",
                         *trainer(), env=env, timeout=120)
    srv.state.hide_existing = False
    if check(rc == 0 and s2, "a second record: rc %d: %s" % (rc, err[-500:])):
        check("/plugins/profile/m-2/" in s2["path"], "412 sends it to m-2: %s" % s2["path"])
        refused = [r for r in srv.state.requests if r[0] == "POST" and
                   r[2].get("ifGenerationMatch") == "0"]
        check(len(refused) >= 3, "every upload was conditional: %s" % refused)
        again = buckets.gcs_fetch(srv, BUCKET, key_of(s["path"]), got)
        check(open(again, "rb").read() == first,
              "the first capture is unchanged")

    # Resumable, with a chunk cut short once.
    srv.state.cut_next_chunk = True
    n0 = len(srv.state.requests)
    env_r = buckets.gcs_env(srv, spool, ACCELTRACE_STORE_PART_MIB=1)
    rc, s3, err = record("--logdir", url, "--session", "big", "--duration", "3s", "--",
                         *trainer(6), env=env_r, timeout=120)
    if check(rc == 0 and s3, "a resumable record: rc %d: %s" % (rc, err[-500:])):
        reqs = srv.state.requests[n0:]
        chunks = [r for r in reqs if r[1].startswith("/upload/session/")]
        check(any(r[2].get("uploadType") == "resumable" for r in reqs) and len(chunks) >= 3,
              "a resumable upload in chunks: %d chunk requests" % len(chunks))
        check(not srv.state.cut_next_chunk, "the server cut a chunk short")
        big = buckets.gcs_fetch(srv, BUCKET, key_of(s3["path"]),
                                os.path.join(work, "big.xplane.pb"))
        check(os.path.getsize(big) > 1 << 20 and buckets.decodes(big, s3["window_start_ns"]),
              "the resumable capture (%d bytes) is whole and decodes" % os.path.getsize(big))

    # report over the logdir: three sessions, listed two objects a page.
    rc, out, err = acceltrace("report", "-j", url, env=env, timeout=120)
    check(rc == 0 and out.count('"steps"') >= 3, "report reads the bucket's three sessions "
          "(rc %d): %s" % (rc, err[-400:]))
    check(any(r[2].get("pageToken") for r in srv.state.requests), "the listing was paged")

    # A service account's key: a signed JWT for a token.
    sa = buckets.gcs_env(srv, spool, GOOGLE_APPLICATION_CREDENTIALS=key_file(
        work, "sa", sa_key, srv.url() + "/token"))
    ntok = len(srv.state.tokens)
    rc, s4, err = record("--logdir", url, "--session", "sa", "--duration", "1s", "--",
                         *trainer(), env=sa, timeout=120)
    check(rc == 0 and s4 and len(srv.state.tokens) > ntok,
          "a service account's key gets a token and the capture lands (rc %d): %s" %
          (rc, err[-500:]))

    # The token refused after the check, during the window: the capture is
    # in the spool before the store is opened, and stays there, said.
    proc = subprocess.Popen([os.environ.get("ACCELTRACE", "build/acceltrace"), "record",
                             "--logdir", url, "--session", "late", "--duration", "2s", "--"] +
                            trainer(), env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    time.sleep(1.5)
    srv.state.metadata_refuses = True
    out, err = proc.communicate(timeout=120)
    srv.state.metadata_refuses = False
    kept = [os.path.join(d, f) for d, _, fs in os.walk(spool) for f in fs if "/late" in d]
    check(proc.returncode != 0 and "could not be uploaded" in err and kept and kept[0] in err
          and buckets.decodes(kept[0]), "a token refused after the window began: the capture "
          "is kept and said (rc %d): %s" % (proc.returncode, err[-500:]))

    # Refused credentials, said at start.
    bad = buckets.gcs_env(srv, spool, GOOGLE_APPLICATION_CREDENTIALS=key_file(
        work, "bad", other_key, srv.url() + "/token"))
    err = never_ran(work, bad, "a key that is not the account's")
    check("invalid_grant" in err or "Invalid JWT" in err, "the refusal is named: %s" % err[-300:])
    srv.state.metadata_refuses = True
    err = never_ran(work, env, "a metadata server that refuses")
    check("metadata server refused" in err, "the refusal is named: %s" % err[-300:])
    srv.state.metadata_refuses = False


main()
finish()
