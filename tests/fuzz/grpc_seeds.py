#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Writes tests/fuzz/corpus/grpc_frames/: what grpcio sends for one unary
call (captured from a socket that answers its SETTINGS), and requests
made by hand around the edges the server checks. Each seed starts with
the harness's chunk-size byte (0: all at once).

Usage: grpc_seeds.py DIR
"""
import os
import socket
import struct
import sys
import threading

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"


def frame(typ, flags, stream, payload=b""):
    return struct.pack(">I", len(payload))[1:] + bytes([typ, flags]) + \
        struct.pack(">I", stream) + payload


def literal(name, value):
    # HPACK literal header field without indexing, new name (RFC 7541 6.2.2).
    return b"\x00" + bytes([len(name)]) + name + bytes([len(value)]) + value


def request(path=b"/test.Echo/Echo", method=b"POST", ctype=b"application/grpc",
            extra=()):
    hdrs = [(b":method", method), (b":scheme", b"http"), (b":path", path),
            (b":authority", b"localhost"), (b"content-type", ctype), (b"te", b"trailers"),
            *extra]
    return frame(1, 4, 1, b"".join(literal(n, v) for n, v in hdrs))


def msg(body, compressed=0, length=None):
    return bytes([compressed]) + struct.pack(">I", len(body) if length is None else length) + body


def capture():
    """The bytes grpcio sends for one call, or None without grpcio."""
    try:
        import grpc
    except ImportError:
        return None
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    got = bytearray()

    def serve():
        conn, _ = srv.accept()
        conn.sendall(frame(4, 0, 0))
        conn.settimeout(1.0)
        try:
            while True:
                b = conn.recv(65536)
                if not b:
                    break
                got.extend(b)
        except socket.timeout:
            pass
        conn.close()

    t = threading.Thread(target=serve)
    t.start()
    ch = grpc.insecure_channel(f"127.0.0.1:{srv.getsockname()[1]}")
    try:
        ch.unary_unary("/tensorflow.ProfilerService/Monitor")(b"\x08\x01", timeout=2)
    except grpc.RpcError:
        pass
    t.join()
    ch.close()
    srv.close()
    return bytes(got)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    head = PREFACE + frame(4, 0, 0)
    seeds = {
        "unary_call": head + request() + frame(0, 1, 1, msg(b"hello")),
        "unary_call_chunked": head + request() + frame(0, 1, 1, msg(b"hello")),
        "empty_message": head + request() + frame(0, 1, 1, msg(b"")),
        "two_messages": head + request() + frame(0, 1, 1, msg(b"a") + msg(b"b")),
        "truncated": head + request() + frame(0, 1, 1, msg(b"ab", length=10)),
        "compressed": head + request() + frame(0, 1, 1, msg(b"x", compressed=1)),
        "oversized": head + request() + frame(0, 0, 1, msg(b"", length=1 << 20)),
        "no_body": head + frame(1, 5, 1, request()[9:]),
        "get": head + request(method=b"GET") + frame(0, 1, 1, msg(b"x")),
        "json": head + request(ctype=b"application/json") + frame(0, 1, 1, msg(b"x")),
        "timeout": head + request(extra=[(b"grpc-timeout", b"100m")]) + frame(0, 1, 1, msg(b"x")),
        "rst": head + request() + frame(3, 0, 1, b"\x00\x00\x00\x08"),
    }
    for name, data in seeds.items():
        chunk = b"\x07" if name.endswith("_chunked") else b"\x00"
        with open(os.path.join(out, name), "wb") as f:
            f.write(chunk + data)
    grpcio = capture()
    if grpcio:
        with open(os.path.join(out, "grpcio_monitor"), "wb") as f:
            f.write(b"\x00" + grpcio)
    else:
        print("note: no grpcio, its capture not written", file=sys.stderr)


if __name__ == "__main__":
    main()
