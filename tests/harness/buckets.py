# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Object stores for the bucket logdir tests (docs/buckets.md).

- S3: s3rver, a real S3-API server from the npm registry (installed by
  tests/e2e/e2e.mk from tests/e2e/servers/). It checks the access key's id
  but not the SigV4 signature, and answers a PUT's If-None-Match: * by
  replacing the object: acceltrace's look before the write is what keeps
  the first session there, on this server.
- A proxy in front of a server that passes bytes through until told to
  stall (accept, read, never answer) or to refuse: "the server made to
  stall or fail mid-upload".
- GCS: a local server that answers the requests Cloud Storage's JSON API,
  the metadata server and the OAuth token endpoint document, and no more:
  bearer tokens checked, media and resumable uploads honouring
  ifGenerationMatch=0 (412 when the object exists), resumable chunks
  answered with 308 and a Range, listing with prefix and pageToken, and a
  service account's JWT checked with `openssl dgst -verify` (RS256).
"""
import base64
import hashlib
import http.server
import json
import os
import socket
import subprocess
import tempfile
import threading
import time
import urllib.parse
import urllib.request

from e2e import protoc_decodes
import xspace

OUTPUT = os.environ.get("OUTPUT", "build")
S3RVER = os.path.join(OUTPUT, "test-servers", "node_modules", ".bin", "s3rver")
S3_KEY = "S3RVER"          # s3rver's default account


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, timeout=30):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return True
        except OSError:
            time.sleep(0.1)
    return False


class S3rver:
    """s3rver on a free loopback port with @buckets made at start."""

    def __init__(self, work, buckets):
        self.port = free_port()
        self.data = os.path.join(work, "s3rver-data")
        os.makedirs(self.data, exist_ok=True)
        # Not --silent: its request log shows which requests were made.
        cmd = [S3RVER, "-d", self.data, "-a", "127.0.0.1", "-p", str(self.port)]
        for b in buckets:
            cmd += ["--configure-bucket", b]
        self.log_path = os.path.join(work, "s3rver.log")
        self.log = open(self.log_path, "w")
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT,
                                     start_new_session=True)
        self.ok = wait_port(self.port)

    def url(self):
        return "http://127.0.0.1:%d" % self.port

    def requests(self):
        """The lines s3rver logged: one a request ("...key?partNumber=1&...
        200 11ms"), its store's ("Stored part 1 of ...")."""
        self.log.flush()
        with open(self.log_path, errors="replace") as f:
            return f.readlines()

    def stop(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.log.close()


def s3_env(endpoint, spool, key=S3_KEY, secret=S3_KEY, **more):
    """An environment for acceltrace against an S3-API endpoint: AWS's
    variables, no instance metadata, a spool of the test's."""
    env = dict(os.environ)
    for k in list(env):
        if k.startswith("AWS_") or k.startswith("ACCELTRACE_STORE_"):
            del env[k]
    env.update({"AWS_ACCESS_KEY_ID": key, "AWS_SECRET_ACCESS_KEY": secret,
                "AWS_ENDPOINT_URL": endpoint, "AWS_REGION": "us-east-1",
                "AWS_EC2_METADATA_DISABLED": "true", "ACCELTRACE_SPOOL_DIR": spool})
    env.update({k: str(v) for k, v in more.items()})
    return env


def curl_s3(endpoint, bucket, key, out=None, method="GET"):
    """An object through curl's own SigV4 (another client than ours):
    (http status, headers text); the body into @out."""
    cmd = ["curl", "-sS", "--aws-sigv4", "aws:amz:us-east-1:s3",
           "--user", "%s:%s" % (S3_KEY, S3_KEY), "-H", "x-amz-content-sha256: UNSIGNED-PAYLOAD"]
    if method == "HEAD":
        cmd += ["-I"]
    else:
        cmd += ["-X", method, "-D", "-", "-o", out or os.devnull]
    cmd.append("%s/%s/%s" % (endpoint, bucket, urllib.parse.quote(key)))
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    status = 0
    for line in p.stdout.splitlines():
        if line.startswith("HTTP/"):
            status = int(line.split()[1])
    return status, p.stdout


class Proxy:
    """TCP proxy to 127.0.0.1:@target; mode "pass", "stall" or "refuse"."""

    def __init__(self, target):
        self.target = target
        self.mode = "pass"
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        self.stalled = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def url(self):
        return "http://127.0.0.1:%d" % self.port

    def _accept(self):
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(c,), daemon=True).start()

    def _serve(self, c):
        if self.mode == "refuse":
            c.close()
            return
        if self.mode == "stall":
            self.stalled += 1
            try:
                while c.recv(65536):
                    pass
            except OSError:
                pass
            c.close()
            return
        try:
            u = socket.create_connection(("127.0.0.1", self.target))
        except OSError:
            c.close()
            return

        def pump(a, b):
            try:
                while True:
                    if self.mode != "pass":
                        # Stalled mid-transfer: hold the connection, answer nothing.
                        self.stalled += 1
                        while a.recv(65536):
                            pass
                        break
                    d = a.recv(65536)
                    if not d:
                        break
                    b.sendall(d)
            except OSError:
                pass
            for s in (a, b):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
        threading.Thread(target=pump, args=(u, c), daemon=True).start()
        pump(c, u)

    def close(self):
        self.sock.close()


# ---------------------------------------------------------------- GCS


def b64url_decode(s):
    return base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))


class GcsState:
    def __init__(self, pubkey=None):
        self.objects = {}          # (bucket, name) -> bytes
        self.uploads = {}          # session id -> dict(bucket, name, size, data)
        self.tokens = {"metadata-token"}
        self.pubkey = pubkey       # a PEM file: JWTs are checked against it
        self.requests = []         # (method, path) seen
        self.metadata_refuses = False
        self.hide_existing = False  # the look answers 404: the race, staged
        self.cut_next_chunk = False  # a resumable chunk kept only in half
        self.page_size = 2
        self.lock = threading.Lock()


class GcsHandler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    state = None

    def log_message(self, *a):
        pass

    def _send(self, code, body=b"", headers=None, ctype="application/json"):
        if isinstance(body, (dict, list)):
            body = json.dumps(body).encode()
        self.send_response(code)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        if body or code not in (204, 308):
            self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _error(self, code, msg):
        self._send(code, {"error": {"code": code, "message": msg}})

    def _body(self):
        n = int(self.headers.get("Content-Length", "0") or 0)
        return self.rfile.read(n) if n else b""

    def _authorized(self):
        a = self.headers.get("Authorization", "")
        return a.startswith("Bearer ") and a[7:] in self.state.tokens

    def _dispatch(self):
        st = self.state
        u = urllib.parse.urlsplit(self.path)
        q = dict(urllib.parse.parse_qsl(u.query, keep_blank_values=True))
        path = u.path
        body = self._body() if self.command in ("POST", "PUT") else b""
        with st.lock:
            st.requests.append((self.command, path, dict(q)))
        # The metadata server (docs: "Access the metadata server").
        if path == "/computeMetadata/v1/instance/service-accounts/default/token":
            if self.headers.get("Metadata-Flavor") != "Google":
                return self._send(403, b"missing Metadata-Flavor", ctype="text/plain")
            if st.metadata_refuses:
                return self._send(403, b"no service account on this VM", ctype="text/plain")
            return self._send(200, {"access_token": "metadata-token", "expires_in": 3599,
                                    "token_type": "Bearer"})
        # The OAuth 2.0 token endpoint, JWT bearer grant (RFC 7523).
        if path == "/token" and self.command == "POST":
            form = dict(urllib.parse.parse_qsl(body.decode()))
            if form.get("grant_type") != "urn:ietf:params:oauth:grant-type:jwt-bearer":
                return self._send(400, {"error": "unsupported_grant_type"})
            if not self._jwt_ok(form.get("assertion", "")):
                return self._send(400, {"error": "invalid_grant",
                                        "error_description": "Invalid JWT Signature."})
            tok = "sa-token-%d" % len(st.tokens)
            st.tokens.add(tok)
            return self._send(200, {"access_token": tok, "expires_in": 3600,
                                    "token_type": "Bearer"})
        if not self._authorized():
            return self._error(401, "Invalid Credentials")
        parts = path.split("/")
        # /upload/storage/v1/b/BUCKET/o
        if path.startswith("/upload/storage/v1/b/") and len(parts) == 7 and parts[6] == "o":
            return self._upload(urllib.parse.unquote(parts[5]), q, body)
        # a resumable session: /upload/session/ID
        if path.startswith("/upload/session/"):
            return self._chunk(parts[-1], body)
        if path.startswith("/storage/v1/b/"):
            bucket = urllib.parse.unquote(parts[4])
            if len(parts) == 6 and parts[5] == "o" and self.command == "GET":
                return self._list(bucket, q)
            if len(parts) >= 7 and parts[5] == "o":
                name = urllib.parse.unquote("/".join(parts[6:]))
                return self._object(bucket, name, q)
        return self._error(404, "Not Found")

    def _jwt_ok(self, jwt):
        try:
            h, c, s = jwt.split(".")
            header = json.loads(b64url_decode(h))
            claims = json.loads(b64url_decode(c))
        except ValueError:
            return False
        if header.get("alg") != "RS256" or "devstorage" not in claims.get("scope", ""):
            return False
        if not (claims.get("iat", 0) <= time.time() + 60 < claims.get("exp", 0)):
            return False
        with tempfile.NamedTemporaryFile() as data, tempfile.NamedTemporaryFile() as sig:
            data.write(("%s.%s" % (h, c)).encode())
            data.flush()
            sig.write(b64url_decode(s))
            sig.flush()
            p = subprocess.run(["openssl", "dgst", "-sha256", "-verify", self.state.pubkey,
                                "-signature", sig.name, data.name], capture_output=True)
        return p.returncode == 0

    def _meta(self, bucket, name):
        data = self.state.objects[(bucket, name)]
        return {"kind": "storage#object", "bucket": bucket, "name": name,
                "size": str(len(data)), "md5Hash": base64.b64encode(
                    hashlib.md5(data).digest()).decode()}

    def _upload(self, bucket, q, body):
        st = self.state
        name = q.get("name", "")
        if not name:
            return self._error(400, "Required parameter: name")
        if q.get("ifGenerationMatch") == "0" and (bucket, name) in st.objects:
            return self._error(412, "At least one of the pre-conditions you specified did "
                                    "not hold.")
        kind = q.get("uploadType")
        if kind == "media":
            st.objects[(bucket, name)] = body
            return self._send(200, self._meta(bucket, name))
        if kind == "resumable":
            sid = "s%d" % len(st.uploads)
            st.uploads[sid] = {"bucket": bucket, "name": name, "data": b"",
                               "cond": q.get("ifGenerationMatch"),
                               "size": int(self.headers.get("X-Upload-Content-Length", "-1"))}
            host = self.headers.get("Host")
            return self._send(200, b"", {"Location": "http://%s/upload/session/%s" % (host, sid)})
        return self._error(400, "uploadType %s" % kind)

    def _chunk(self, sid, body):
        st = self.state
        up = st.uploads.get(sid)
        if not up:
            return self._error(404, "No such upload")
        cr = self.headers.get("Content-Range", "")
        # "bytes A-B/TOTAL" or "bytes */TOTAL" (a status query)
        spec, total = cr[6:].split("/")
        total = int(total)
        if spec != "*":
            a, b = (int(x) for x in spec.split("-"))
            if a != len(up["data"]):
                # Bytes from elsewhere than where the server is: say where.
                pass
            elif st.cut_next_chunk and b + 1 < total:
                st.cut_next_chunk = False
                up["data"] += body[:len(body) // 2]
            else:
                up["data"] += body
        if len(up["data"]) >= total:
            key = (up["bucket"], up["name"])
            if up["cond"] == "0" and key in st.objects:
                return self._error(412, "At least one of the pre-conditions you specified "
                                        "did not hold.")
            st.objects[key] = up["data"][:total]
            return self._send(200, self._meta(*key))
        hdr = {"Range": "bytes=0-%d" % (len(up["data"]) - 1)} if up["data"] else {}
        return self._send(308, b"", hdr)

    def _list(self, bucket, q):
        st = self.state
        prefix = q.get("prefix", "")
        names = sorted(n for (b, n) in st.objects if b == bucket and n.startswith(prefix))
        start = int(q.get("pageToken", "0") or 0)
        page = names[start:start + st.page_size]
        out = {"kind": "storage#objects",
               "items": [{"name": n, "size": str(len(st.objects[(bucket, n)]))} for n in page]}
        if start + st.page_size < len(names):
            out["nextPageToken"] = str(start + st.page_size)
        return self._send(200, out)

    def _object(self, bucket, name, q):
        st = self.state
        there = (bucket, name) in st.objects
        if self.command == "DELETE":
            if not there:
                return self._error(404, "No such object: %s/%s" % (bucket, name))
            del st.objects[(bucket, name)]
            return self._send(204)
        if self.command != "GET":
            return self._error(405, "Method not allowed")
        if not there or (st.hide_existing and q.get("alt") != "media"):
            return self._error(404, "No such object: %s/%s" % (bucket, name))
        if q.get("alt") == "media":
            return self._send(200, st.objects[(bucket, name)],
                              ctype="application/octet-stream")
        return self._send(200, self._meta(bucket, name))

    do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _dispatch


class GcsServer:
    """The GCS, metadata and token endpoints on one loopback port."""

    def __init__(self, pubkey=None):
        self.state = GcsState(pubkey)
        handler = type("H", (GcsHandler,), {"state": self.state})
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def url(self):
        return "http://127.0.0.1:%d" % self.port

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def gcs_env(server, spool, **more):
    """An environment for acceltrace against @server: the emulator's
    endpoint and the metadata server's host, as Google's libraries take them."""
    env = dict(os.environ)
    for k in list(env):
        if k.startswith("GOOGLE_") or k.startswith("GCE_") or k.startswith("ACCELTRACE_STORE_"):
            del env[k]
    env.update({"STORAGE_EMULATOR_HOST": server.url(),
                "GCE_METADATA_HOST": "127.0.0.1:%d" % server.port,
                "ACCELTRACE_SPOOL_DIR": spool})
    env.update({k: str(v) for k, v in more.items()})
    return env


def decodes(path, window_start_ns=0):
    """protoc reads it as an XSpace, and Python's protobuf finds the
    trainer's device plane and its events in it."""
    if not protoc_decodes(path):
        return False
    c = xspace.Capture(path, window_start_ns)
    return any(p.startswith("/device:") for p in c.planes) and len(c.events) > 100


def gcs_fetch(server, bucket, key, out):
    """An object through the JSON API's download, by urllib (not ours)."""
    url = "%s/storage/v1/b/%s/o/%s?alt=media" % (server.url(), bucket,
                                                urllib.parse.quote(key, safe=""))
    rq = urllib.request.Request(url, headers={"Authorization": "Bearer metadata-token"})
    with urllib.request.urlopen(rq, timeout=30) as r, open(out, "wb") as f:
        f.write(r.read())
    return out
