#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""grpcio, a client we did not write, against the transport that
test_grpc_server.c serves (its main thread answers as the owner):
generic unary calls with raw bytes. Exits 0 when every check held,
1 when one failed, 77 when grpcio is missing.

Usage: grpc_client.py ADDR:PORT
"""
import sys
import time
from concurrent import futures

try:
    import grpc
except ImportError:
    print("SKIP: python3-grpcio is not installed")
    sys.exit(77)

failures = 0


def check(ok, what, detail=""):
    global failures
    if not ok:
        failures += 1
        print(f"FAIL: {what} {detail}", file=sys.stderr)


def call(ch, method, req, timeout=10):
    return ch.unary_unary(f"/test.Echo/{method}")(req, timeout=timeout)


def code_of(fn):
    try:
        fn()
    except grpc.RpcError as e:
        return e.code(), e.details()
    return grpc.StatusCode.OK, None


def wait_for(what, cond, timeout=10):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(0.02)
    check(False, what, "did not happen")
    return False


def main():
    target = sys.argv[1]
    ch = grpc.insecure_channel(target)
    grpc.channel_ready_future(ch).result(timeout=10)

    payload = bytes(range(256)) * 7
    check(call(ch, "Echo", payload) == payload, "echo: the same bytes back")
    check(call(ch, "Echo", b"") == b"", "echo: an empty message")
    big = b"\xa5" * (64 * 1024)
    check(call(ch, "Echo", big) == big, "echo: a message of the limit")
    code, details = code_of(lambda: call(ch, "Echo", big + b"x"))
    check(code == grpc.StatusCode.RESOURCE_EXHAUSTED, "one byte over the limit",
          f"{code} {details}")
    check("65537 bytes" in (details or ""), "the limit's message", details)

    # Codes and messages, percent-encoded on the wire, decoded by grpcio.
    for code_num, name in ((3, "INVALID_ARGUMENT"), (5, "NOT_FOUND"), (9, "FAILED_PRECONDITION"),
                           (14, "UNAVAILABLE")):
        msg = f"code {name}: 100% café ☕\tdone"
        code, details = code_of(lambda: call(ch, "Fail", f"{code_num}:{msg}".encode()))
        check(code == getattr(grpc.StatusCode, name), f"status {name}", str(code))
        check(details == msg, f"status {name}'s message round trip", repr(details))
    note = "not honoured: tools ü 100% \t"
    resp, c = ch.unary_unary("/test.Echo/Note").with_call(note.encode(), timeout=10)
    check(resp == note.encode(), "OK with a status message: the response", repr(resp))
    check(c.details() == note, "OK with a status message: its grpc-message",
          repr(c.details()))
    code, details = code_of(lambda: call(ch, "NoSuchMethod", b""))
    check(code == grpc.StatusCode.UNIMPLEMENTED and details == "/test.Echo/NoSuchMethod",
          "an unknown method: the owner's UNIMPLEMENTED", f"{code} {details}")

    # grpc-timeout reaches the owner as a deadline.
    before = time.monotonic_ns()
    deadline = int(call(ch, "Deadline", b"", timeout=30))
    check(before + 25e9 < deadline < time.monotonic_ns() + 31e9,
          "grpc-timeout as a CLOCK_MONOTONIC deadline", f"{deadline} vs {before}")
    check(int(call(ch, "Deadline", b"", timeout=None)) == 0, "no grpc-timeout: no deadline")

    def cancelled():
        seen, held = call(ch, "Cancelled", b"").split()
        return int(seen), int(held)

    # The owner never answers: the client's deadline, then the owner sees
    # the call cancelled.
    t0 = time.monotonic()
    code, _ = code_of(lambda: call(ch, "Never", b"", timeout=0.5))
    check(code == grpc.StatusCode.DEADLINE_EXCEEDED, "deadline exceeded", str(code))
    check(time.monotonic() - t0 < 5, "deadline exceeded in time")
    wait_for("the call past its deadline cancelled for the owner", lambda: cancelled()[0] >= 1)

    # The client cancels: the owner sees it.
    fut = ch.unary_unary("/test.Echo/Never").future(b"", timeout=30)
    wait_for("the call held by the owner", lambda: cancelled()[1] >= 1)
    fut.cancel()
    wait_for("the client's cancel seen by the owner", lambda: cancelled() == (2, 0))

    # Many at once on one channel: more than a connection's stream limit.
    with futures.ThreadPoolExecutor(max_workers=48) as pool:
        reqs = [f"call {i}".encode() * (i + 1) for i in range(200)]
        got = list(pool.map(lambda r: call(ch, "Echo", r), reqs))
    check(got == reqs, "200 concurrent calls on one channel answered, each its own")

    # Stop with a call waiting: UNAVAILABLE with the owner's reason.
    fut = ch.unary_unary("/test.Echo/Never").future(b"", timeout=30)
    wait_for("the call held by the owner", lambda: cancelled()[1] >= 1)
    call(ch, "Stop", b"")
    try:
        fut.result(timeout=10)
        code, details = grpc.StatusCode.OK, None
    except grpc.RpcError as e:
        code, details = e.code(), e.details()
    check(code == grpc.StatusCode.UNAVAILABLE, "a waiting call at stop: UNAVAILABLE", str(code))
    check(details == "the test stops the server", "stop's reason", repr(details))
    ch.close()
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
